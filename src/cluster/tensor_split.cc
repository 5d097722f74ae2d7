// SplitRanks, ShareWork and the tensor-outcome codec (tensor_split.h).
#include "cluster/tensor_split.h"

#include <cstddef>
#include <numeric>
#include <utility>

#include "cluster/byte_shares.h"
#include "core/byte_codec.h"

namespace numprobe::detail {
namespace {

constexpr uint64_t kMagic = 0x3174'7570'7453'6e4eULL;  // "NnStput1"
constexpr uint64_t kCellKinds = static_cast<uint64_t>(MetricCell::Kind::kShapeUnmatched) + 1;

}  // namespace

std::vector<bool> SplitRanks(const std::vector<uint64_t>& bytes,
                             const std::vector<uint64_t>& tensor_bytes, int processes) {
  std::vector<bool> split(bytes.size(), false);
  if (processes <= 1) return split;
  const uint64_t total = std::accumulate(bytes.begin(), bytes.end(), uint64_t{0});
  // bytes > total / processes, in integers: b * P > T exactly when b > floor(T / P).
  const uint64_t fair = total / static_cast<uint64_t>(processes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    split[i] = i < tensor_bytes.size() && tensor_bytes[i] > 0 && bytes[i] > fair;
  }
  return split;
}

WorkShares ShareWork(const std::vector<uint64_t>& rank_bytes, const std::vector<bool>& split,
                     const std::vector<std::vector<uint64_t>>& job_bytes,
                     const std::vector<uint64_t>& common_bytes, int processes) {
  const size_t n = rank_bytes.size();
  const size_t p = static_cast<size_t>(processes < 1 ? 1 : processes);
  std::vector<uint64_t> items;
  for (size_t i = 0; i < n; ++i) {
    if (!split[i]) {
      items.push_back(rank_bytes[i]);
    } else {
      items.insert(items.end(), job_bytes[i].begin(), job_bytes[i].end());
    }
  }
  const std::vector<int> owner = ShareByBytes(items, static_cast<int>(p));
  WorkShares shares;
  shares.rank_owner.assign(n, 0);
  shares.job_owner.resize(n);
  shares.bytes_per_process.assign(p, 0);
  size_t item = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!split[i]) {
      shares.rank_owner[i] = owner[item];
      shares.bytes_per_process[static_cast<size_t>(owner[item])] += items[item];
      ++item;
      continue;
    }
    for (uint64_t& b : shares.bytes_per_process) b += common_bytes[i];
    for (size_t k = 0; k < job_bytes[i].size(); ++k, ++item) {
      shares.job_owner[i].push_back(owner[item]);
      shares.bytes_per_process[static_cast<size_t>(owner[item])] += items[item];
    }
  }
  return shares;
}

std::string EncodeTensorOutcome(const TensorOutcome& o) {
  ByteWriter w;
  w.U64(kMagic);
  w.Bool(o.failed);
  w.Str(o.warning);
  for (const MetricCell& c : o.metrics) {
    w.U64(static_cast<uint64_t>(c.kind));
    w.F64(c.value);
  }
  w.F64(o.rel_l2);
  w.Bool(o.extras.has_value());
  if (o.extras.has_value()) {
    const TensorExtras& e = *o.extras;
    for (double d : {e.mean_abs_err, e.mean_rel_err, e.rmse, e.sqnr_db, e.max_ulp, e.mean_ulp}) {
      w.F64(d);
    }
    w.Str(e.ulp_dtype);
    w.F64(e.allclose_ratio);
    for (int64_t v : {e.nan_mismatch, e.pos_inf_mismatch, e.neg_inf_mismatch, e.worst_index}) {
      w.I64(v);
    }
  }
  return w.Take();
}

Status DecodeTensorOutcome(std::string_view bytes, TensorOutcome* out) {
  ByteReader r(bytes);
  TensorOutcome o;
  const bool magic = r.U64() == kMagic;
  o.failed = r.Bool();
  o.warning = r.Str();
  for (MetricCell& c : o.metrics) {
    c.kind = r.Enum<MetricCell::Kind>(kCellKinds);
    c.value = r.F64();
  }
  o.rel_l2 = r.F64();
  if (r.Bool()) {
    TensorExtras e;
    for (double* d :
         {&e.mean_abs_err, &e.mean_rel_err, &e.rmse, &e.sqnr_db, &e.max_ulp, &e.mean_ulp}) {
      *d = r.F64();
    }
    e.ulp_dtype = r.Str();
    e.allclose_ratio = r.F64();
    for (int64_t* v : {&e.nan_mismatch, &e.pos_inf_mismatch, &e.neg_inf_mismatch, &e.worst_index}) {
      *v = r.I64();
    }
    o.extras = std::move(e);
  }
  if (!magic || !r.ok() || !r.at_end()) {
    return Status::Internal("a tensor pair's outcome sent between MPI processes is malformed");
  }
  *out = std::move(o);
  return Status::Ok();
}

}  // namespace numprobe::detail
