// EncodeRankScan / DecodeRankScan (scan_units.h): a RankScan as little-endian bytes, to move it
// between MPI processes. Numbers are written as their bits (doubles exactly, NaN and Inf too), so
// a decoded RankScan gives the same report, byte for byte, as the one that was encoded. Every
// length is checked against the bytes left before anything is allocated.
#include <bit>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/byte_codec.h"
#include "scan/scan_units.h"

namespace numprobe::detail {
namespace {

// Format version: the first bytes of every encoded RankScan. Version 2: a headroom row carries no
// fits (FitOf derives them). Version 3: nor its unit (the RankScan's).
constexpr uint64_t kMagic = 0x336e61637370'6e4eULL;  // "NnpscAn3"

class Writer : public ByteWriter {
 public:
  void Tensor(const ScanTensor& t) {
    Str(t.name);
    Str(t.dtype);
    Str(t.shape);
    for (bool b :
         {t.is_tensor, t.exact, t.has_max, t.has_min, t.has_mean, t.has_norm, t.nonfinite}) {
      Bool(b);
    }
    for (double d : {t.max, t.min, t.mean, t.norm, t.max_abs, t.min_nonzero_abs}) F64(d);
    for (int64_t n : {t.count, t.nan_count, t.inf_count, t.zero_count}) I64(n);
    Str(t.file);
  }
  void Tensors(const std::vector<ScanTensor>& v) {
    U64(v.size());
    for (const ScanTensor& t : v) Tensor(t);
  }
  void Node(const AnomalyNode& n) {
    U64(static_cast<uint64_t>(n.kind));
    Str(n.scope);
    I64(n.step);
    Str(n.rank_folder);
    I64(n.rank);
    Str(n.op_name);
    U64(n.entry_index);
    F64(n.time);
    Strs(n.module_path);
    Strs(n.stack);
    Tensors(n.inputs);
    Tensors(n.outputs);
    Str(n.raw_entry);
  }
  void Hit(const WatchpointHit& h) {
    U64(static_cast<uint64_t>(h.watchpoint));
    Str(h.scope);
    I64(h.step);
    Str(h.rank_folder);
    I64(h.rank);
    Str(h.tensor);
    Str(h.op_name);
    Str(h.condition);
    F64(h.actual);
    F64(h.threshold);
    Bool(h.exact);
    Str(h.detail);
  }
  void Headroom(const HeadroomRow& r) {
    Str(r.tensor);
    Str(r.op_name);
    Str(r.layer);
    Str(r.dtype);
    Bool(r.exact);
    Bool(r.nonfinite);
    F64(r.max_abs);
    F64(r.min_nonzero_abs);
  }
  void Comm(const CommNode& n) {
    I64(n.rank_slot);
    U64(n.entry);
    Str(n.op_name);
    Str(n.api);
    U64(static_cast<uint64_t>(n.direction));
    OptI64(n.peer);
    U64(n.group.size());
    for (int64_t g : n.group) I64(g);
    Bool(n.input_bad);
    Bool(n.output_bad);
    I64(n.instance);
    I64(n.level);
  }
};

class Reader : public ByteReader {
 public:
  using ByteReader::ByteReader;

  ScanTensor Tensor() {
    ScanTensor t;
    t.name = Str();
    t.dtype = Str();
    t.shape = Str();
    for (bool* b :
         {&t.is_tensor, &t.exact, &t.has_max, &t.has_min, &t.has_mean, &t.has_norm, &t.nonfinite}) {
      *b = Bool();
    }
    for (double* d : {&t.max, &t.min, &t.mean, &t.norm, &t.max_abs, &t.min_nonzero_abs}) {
      *d = F64();
    }
    for (int64_t* n : {&t.count, &t.nan_count, &t.inf_count, &t.zero_count}) *n = I64();
    t.file = Str();
    return t;
  }
  std::vector<ScanTensor> Tensors() {
    std::vector<ScanTensor> v(Count(8));
    for (ScanTensor& t : v) t = Tensor();
    return v;
  }
  AnomalyNode Node() {
    AnomalyNode n;
    n.kind = Enum<AnomalyKind>(std::size(kAnomalyKindNames));
    n.scope = Str();
    n.step = I64();
    n.rank_folder = Str();
    n.rank = I64();
    n.op_name = Str();
    n.entry_index = U32();
    n.time = F64();
    n.module_path = Strs();
    n.stack = Strs();
    n.inputs = Tensors();
    n.outputs = Tensors();
    n.raw_entry = Str();
    return n;
  }
  WatchpointHit Hit() {
    WatchpointHit h;
    h.watchpoint = Enum<Watchpoint>(kWatchpointCount);
    h.scope = Str();
    h.step = I64();
    h.rank_folder = Str();
    h.rank = I64();
    h.tensor = Str();
    h.op_name = Str();
    h.condition = Str();
    h.actual = F64();
    h.threshold = F64();
    h.exact = Bool();
    h.detail = Str();
    return h;
  }
  // The row's texts go into `texts`.
  HeadroomRow Headroom(TextArena* texts) {
    HeadroomRow r;  // of the RankScan's unit (unit 0)
    r.tensor = texts->Store(Str());
    r.op_name = texts->Store(Str());
    r.layer = texts->Store(Str());
    r.dtype = texts->Store(Str());
    r.exact = Bool();
    r.nonfinite = Bool();
    r.max_abs = F64();
    r.min_nonzero_abs = F64();
    return r;
  }
  CommNode Comm() {
    CommNode n;
    n.rank_slot = Int();
    n.entry = U32();
    n.op_name = Str();
    n.api = Str();
    n.direction = Enum<CommDirection>(3);
    n.peer = OptI64();
    n.group.resize(Count(8));
    for (int64_t& g : n.group) g = I64();
    n.input_bad = Bool();
    n.output_bad = Bool();
    n.instance = Int();
    n.level = Int();
    return n;
  }
};

}  // namespace

std::string EncodeRankScan(const RankScan& r) {
  Writer w;
  w.U64(kMagic);
  w.Str(r.scope);
  w.Str(r.prefix);
  w.I64(r.step);
  w.Str(r.rank_folder);
  w.I64(r.rank);
  w.Str(r.task);
  w.Str(r.framework);
  w.Str(r.level);
  w.Bool(r.checksums_only);
  for (int64_t n : {r.entries, r.tensors, r.tensor_files_read, r.files_missing}) w.I64(n);
  w.Strs(r.warnings);
  w.I64(r.range_warning_at);
  w.U64(r.hits.size());
  for (const WatchpointHit& h : r.hits) w.Hit(h);
  w.U64(r.headroom.size());
  for (const HeadroomRow& h : r.headroom) w.Headroom(h);
  w.U64(r.births.size());
  for (size_t b = 0; b < r.births.size(); ++b) {
    w.Node(r.births[b]);
    w.I64(b < r.birth_segment.size() ? r.birth_segment[b] : 0);
  }
  w.U64(r.comm_nodes.size());
  for (const CommNode& n : r.comm_nodes) w.Comm(n);
  w.U64(r.comm_anomalies.size());
  for (const auto& [index, node] : r.comm_anomalies) {
    w.I64(index);
    w.Node(node);
  }
  w.U64(r.param_order.size());
  for (const std::string& key : r.param_order) {
    const ParamSnapshot& p = r.params.at(key);
    w.Str(key);
    w.Str(p.op_name);
    w.Tensor(p.tensor);
    w.OptStr(p.md5);
    w.Bool(p.trainable);
  }
  return w.Take();
}

Result<RankScan> DecodeRankScan(std::string_view bytes) {
  Reader in(bytes);
  if (in.U64() != kMagic) return Status::Corrupt("not an encoded rank scan");
  RankScan r;
  r.scope = in.Str();
  r.prefix = in.Str();
  r.step = in.I64();
  r.rank_folder = in.Str();
  r.rank = in.I64();
  r.task = in.Str();
  r.framework = in.Str();
  r.level = in.Str();
  r.checksums_only = in.Bool();
  for (int64_t* n : {&r.entries, &r.tensors, &r.tensor_files_read, &r.files_missing}) {
    *n = in.I64();
  }
  r.warnings = in.Strs();
  r.range_warning_at = in.I64();
  r.hits.resize(in.Count(8));
  for (WatchpointHit& h : r.hits) h = in.Hit();
  r.headroom.resize(in.Count(8));
  for (HeadroomRow& h : r.headroom) h = in.Headroom(r.texts.get());
  const size_t births = in.Count(8);
  for (size_t b = 0; b < births && in.ok(); ++b) {
    r.births.push_back(in.Node());
    r.birth_segment.push_back(in.Int());
  }
  r.comm_nodes.resize(in.Count(8));
  for (CommNode& n : r.comm_nodes) n = in.Comm();
  const size_t anomalies = in.Count(8);
  for (size_t a = 0; a < anomalies && in.ok(); ++a) {
    const int index = in.Int();
    if (index < 0 || static_cast<size_t>(index) >= r.comm_nodes.size()) {
      return Status::Corrupt("an encoded rank scan names a communication op it does not hold");
    }
    r.comm_anomalies.emplace_back(index, in.Node());
  }
  const size_t params = in.Count(8);
  for (size_t p = 0; p < params && in.ok(); ++p) {
    std::string key = in.Str();
    ParamSnapshot s;
    s.op_name = in.Str();
    s.tensor = in.Tensor();
    s.md5 = in.OptStr();
    s.trainable = in.Bool();
    if (!r.params.emplace(key, std::move(s)).second) {
      return Status::Corrupt("an encoded rank scan repeats a parameter");
    }
    r.param_order.push_back(std::move(key));
  }
  if (!in.ok() || !in.at_end()) return Status::Corrupt("a truncated or malformed rank scan");
  const auto warnings = static_cast<int64_t>(r.warnings.size());
  if (r.range_warning_at < -1 || r.range_warning_at > warnings) {
    return Status::Corrupt("a malformed rank scan: warning position out of range");
  }
  return r;
}

}  // namespace numprobe::detail
