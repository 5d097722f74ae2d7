#include "compare/dataflow.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>

namespace numprobe::detail {
namespace {

// Mean and Norm of the same values reported in two dtypes differ by the rounding of the lower
// one (bf16: 2^-8 relative); 2^-7 leaves room for the sum's own rounding.
constexpr double kCrossDtypeRelative = 1.0 / 128;

std::optional<double> Number(const DumpFile& file, const PyValue& v) {
  switch (v.kind()) {
    case PyValue::Kind::kInt:
    case PyValue::Kind::kFloat:
      return v.as_float();
    case PyValue::Kind::kBool:
      return v.as_bool() ? 1.0 : 0.0;
    case PyValue::Kind::kBigInt:
      return std::strtod(file.Text(v.text_id()).c_str(), nullptr);
    case PyValue::Kind::kStr: {
      const std::string& t = file.Text(v.text_id());
      if (t == "True") return 1.0;
      if (t == "False") return 0.0;
      return std::nullopt;
    }
    case PyValue::Kind::kNone:
      break;
  }
  return std::nullopt;
}

bool Equal(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

uint64_t Bits(double v) {
  if (std::isnan(v)) return 0x7ff8000000000000ULL;  // every NaN alike
  if (v == 0) return 0;                             // -0.0 == 0.0
  return std::bit_cast<uint64_t>(v);
}

}  // namespace

RowStats StatsOfRow(const DumpFile& file, const DumpRow& row) {
  RowStats s;
  for (size_t k = 0; k < 4; ++k) s[k] = Number(file, row.stats[k]);
  return s;
}

bool SameValues(const RowStats& a, const RowStats& b, bool same_dtype) {
  for (size_t k = 0; k < 4; ++k) {
    if (a[k].has_value() != b[k].has_value()) return false;
    if (!a[k].has_value()) continue;
    const double x = *a[k];
    const double y = *b[k];
    if (Equal(x, y)) continue;
    if (k < 2 || same_dtype || !std::isfinite(x) || !std::isfinite(y)) return false;
    if (std::fabs(x - y) > kCrossDtypeRelative * std::max(std::fabs(x), std::fabs(y))) {
      return false;
    }
  }
  return true;
}

std::optional<ProducerIndex::Key> ProducerIndex::KeyOf(const RowStats& s) {
  if (!s[0].has_value() || !s[1].has_value()) return std::nullopt;
  return Key{Bits(*s[0]), Bits(*s[1])};
}

ProducerIndex::ProducerIndex(const DumpFile& file) : file_(file) {
  for (uint32_t i = 0; i < file.rows.size(); ++i) {
    const DumpRow& row = file.rows[i];
    if (!row.is_tensor || row.state != RowState::kOutput) continue;
    if (const auto key = KeyOf(StatsAt(i))) outputs_[*key].push_back(i);
  }
}

// Recomputed on demand rather than held per row: on a dump of millions of rows the table of
// statistics would cost more memory than the rows themselves.
RowStats ProducerIndex::StatsAt(uint32_t row) const {
  const DumpRow& r = file_.rows[row];
  return r.is_tensor ? StatsOfRow(file_, r) : RowStats{};
}

int64_t ProducerIndex::Producer(uint32_t row) const {
  if (row >= file_.rows.size()) return -1;
  const RowStats stats = StatsAt(row);
  const auto key = KeyOf(stats);
  if (!key) return -1;
  const auto it = outputs_.find(*key);
  if (it == outputs_.end()) return -1;
  const DumpRow& r = file_.rows[row];
  // The latest before r's entry: candidates are in row (execution) order, so their entries do
  // not decrease; a binary search skips the later ones (a linear skip made a dump whose tensors
  // share few distinct Max/Min pairs quadratic).
  const std::vector<uint32_t>& rows = it->second;
  const auto before = std::partition_point(
      rows.begin(), rows.end(), [&](uint32_t c) { return file_.rows[c].entry < r.entry; });
  for (auto c = before; c != rows.begin();) {
    --c;
    const DumpRow& out = file_.rows[*c];
    if (SameValues(StatsAt(*c), stats, out.dtype == r.dtype)) return *c;
  }
  return -1;
}

const CastNote* CastProducing(const CastRecord& record, const RowStats& row, int64_t before_entry) {
  const CastNote* found = nullptr;
  for (const CastNote& c : record.casts) {
    if (c.entries_before > before_entry) break;  // recorded in execution order
    if (SameValues(c.output.stats, row, false)) found = &c;
  }
  return found;
}

}  // namespace numprobe::detail
