// Statistics-mode inputs (precheck_inputs.h). The random stream is SplitMix64 (a counter hashed:
// tiny, portable and good enough for test inputs); written here because the C++ library's
// distributions are implementation-defined and would give other values on other platforms.
#include "numprobe/app/precheck_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "numprobe/float_convert.h"

namespace numprobe {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }
  // Roughly normal noise without libm: the sum of four uniforms, centred (it is standardized
  // afterwards, so only its shape matters).
  double Noise() { return Uniform() + Uniform() + Uniform() + Uniform() - 2.0; }

 private:
  uint64_t state_;
};

// Shifts and scales values[first, last) to mean mu and variance var (sequential sums, so the
// same bits on every run).
void Standardize(std::vector<double>* values, const std::vector<size_t>& free, double mu,
                 double var) {
  if (free.empty()) return;
  double sum = 0;
  for (size_t i : free) sum += (*values)[i];
  const double mean = sum / static_cast<double>(free.size());
  double sq = 0;
  for (size_t i : free) sq += ((*values)[i] - mean) * ((*values)[i] - mean);
  const double sd = std::sqrt(sq / static_cast<double>(free.size()));
  const double target_sd = std::sqrt(std::max(var, 0.0));
  for (size_t i : free) {
    const double z = sd > 0 ? ((*values)[i] - mean) / sd : 0.0;
    (*values)[i] = mu + target_sd * z;
  }
}

// Interior values in [lo, hi] whose sum and sum of squares approach s1 and s2.
void MatchMoments(std::vector<double>* v, double lo, double hi, double s1, double s2) {
  const size_t m = v->size();
  std::vector<char> fixed(m, 0);
  double fixed_sum = 0;
  double fixed_sq = 0;
  for (int round = 0; round < 32; ++round) {
    std::vector<size_t> free;
    for (size_t i = 0; i < m; ++i) {
      if (fixed[i] == 0) free.push_back(i);
    }
    if (free.empty()) return;
    const auto k = static_cast<double>(free.size());
    const double mu = std::clamp((s1 - fixed_sum) / k, lo, hi);
    const double var = (s2 - fixed_sq) / k - mu * mu;
    Standardize(v, free, mu, var);
    bool clipped = false;
    for (size_t i : free) {
      double& x = (*v)[i];
      if (x < lo || x > hi) {
        x = x < lo ? lo : hi;
        fixed[i] = 1;
        fixed_sum += x;
        fixed_sq += x * x;
        clipped = true;
      }
    }
    if (!clipped) return;
  }
  for (double& x : *v) x = std::clamp(x, lo, hi);
}

template <DType D>
void Store(const std::vector<double>& values, std::byte* out) {
  using T = typename StorageType<D>::type;
  for (size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    T v{};
    if constexpr (D == DType::kF16) {
      v = F32ToF16(static_cast<float>(x));
    } else if constexpr (D == DType::kBF16) {
      v = F32ToBF16(static_cast<float>(x));
    } else if constexpr (IsFloat8(D)) {
      v = F32ToF8(D, static_cast<float>(x));
    } else if constexpr (D == DType::kBool) {
      v = x != 0 ? 1 : 0;
    } else if constexpr (D == DType::kC64) {
      v.re = static_cast<float>(x);
    } else if constexpr (D == DType::kC128) {
      v.re = x;
    } else {
      v = static_cast<T>(x);
    }
    std::memcpy(out + i * sizeof(T), &v, sizeof(T));
  }
}

}  // namespace

uint64_t PrecheckSeed(uint64_t seed, std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the key
  for (const char c : key) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  SplitMix64 mix(seed ^ (h * 0x9e3779b97f4a7c15ULL));
  return mix.Next();
}

Status GenerateFromStatistics(const RecordedStatistics& stats, uint64_t seed, std::byte* out) {
  const int64_t n = stats.numel;
  if (n <= 0) return Status::Ok();
  if (!stats.max || !stats.min) {
    return Status::InvalidArgument("no Max/Min recorded for the tensor: its values are unknown");
  }
  const DType dtype = stats.dtype;
  const auto count = static_cast<size_t>(n);
  std::vector<double> values(count);
  SplitMix64 rng(seed);
  const double hi = *stats.max;
  const double lo = *stats.min;
  if (dtype == DType::kBool) {
    // msprobe's statistics of a bool tensor: Max = any, Min = all.
    for (size_t i = 0; i < count; ++i) {
      if (hi == 0) {
        values[i] = 0;
      } else if (lo != 0) {
        values[i] = 1;
      } else {
        values[i] = i == 0 ? 0 : (i + 1 == count ? 1 : static_cast<double>(rng.Next() & 1));
      }
    }
  } else if (!IsFloating(dtype) && !IsComplex(dtype)) {
    if (!std::isfinite(hi) || !std::isfinite(lo) || lo > hi) {
      return Status::InvalidArgument(fmt::format("integer tensor with Max {} and Min {}", hi, lo));
    }
    const double span = std::floor(hi) - std::ceil(lo) + 1;
    for (size_t i = 0; i < count; ++i) {
      values[i] = std::ceil(lo) + std::floor(rng.Uniform() * span);
    }
    values.front() = lo;
    values.back() = hi;
  } else if (std::isnan(hi) || std::isnan(lo)) {
    std::fill(values.begin(), values.end(), std::numeric_limits<double>::quiet_NaN());
  } else if (n == 1) {
    values[0] = hi;
  } else {
    // The interior's range: a non-finite bound is replaced by one the other bound suggests.
    double flo = lo;
    double fhi = hi;
    if (!std::isfinite(flo) && !std::isfinite(fhi)) {
      flo = -1;
      fhi = 1;
    } else if (!std::isfinite(fhi)) {
      fhi = flo + std::max(1.0, std::fabs(flo));
    } else if (!std::isfinite(flo)) {
      flo = fhi - std::max(1.0, std::fabs(fhi));
    }
    std::vector<double> interior(count - 2);
    const bool moments = stats.mean && stats.norm && std::isfinite(*stats.mean) &&
                         std::isfinite(*stats.norm) && std::isfinite(lo) && std::isfinite(hi);
    if (moments && !interior.empty()) {
      for (double& x : interior) x = rng.Noise();
      const double s1 = static_cast<double>(n) * *stats.mean - lo - hi;
      const double s2 = *stats.norm * *stats.norm - lo * lo - hi * hi;
      MatchMoments(&interior, flo, fhi, s1, s2);
    } else {
      for (double& x : interior) x = flo + rng.Uniform() * (fhi - flo);
    }
    values.front() = lo;
    std::copy(interior.begin(), interior.end(), values.begin() + 1);
    values.back() = hi;
  }
  Dispatch(dtype, [&]<DType D>() { Store<D>(values, out); });
  return Status::Ok();
}

}  // namespace numprobe
