// ClusterCompareGraphDumps and ClusterScanGraphDump (app/cluster.h): the (rank, step) units of a
// MindSpore graph dump (mindspore/graph_units.h) shared out by bytes (shared_work.h), each
// compared or scanned by one process, the facts gathered to process 0 in the exact byte codec.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/app/cluster.h"

#include "cluster/dump_bytes.h"
#include "cluster/shared_work.h"
#include "core/byte_codec.h"
#include "mindspore/graph_units.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using mindspore_detail::GraphUnit;

// The bytes of the files in a unit's folders (graph dump folders are leaves: no recursion). A
// file that cannot be sized counts nothing: reading it reports the error.
uint64_t UnitBytes(const GraphUnit& unit) {
  uint64_t total = 0;
  for (const auto* dirs : {&unit.target, &unit.golden}) {
    for (const fs::path& dir : *dirs) {
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code size_ec;
        if (!it->is_regular_file(size_ec)) continue;
        const uintmax_t size = it->file_size(size_ec);
        if (!size_ec) total += size;
      }
    }
  }
  return total;
}

constexpr uint64_t kModes = 2;

void PutFinding(const GraphScanFinding& f, detail::ByteWriter* w) {
  w->I64(f.rank);
  w->I64(f.step);
  w->Str(f.op);
  w->Str(f.tensor);
  w->I64(f.timestamp);
}

GraphScanFinding GetFinding(detail::ByteReader* r) {
  GraphScanFinding f;
  f.rank = r->I64();
  f.step = r->I64();
  f.op = r->Str();
  f.tensor = r->Str();
  f.timestamp = r->I64();
  return f;
}

std::string EncodeUnitScan(const mindspore_detail::GraphUnitScan& s) {
  detail::ByteWriter w;
  w.U64(static_cast<uint64_t>(s.mode));
  w.I64(s.tensors);
  w.I64(s.kernels);
  w.U64(s.nonfinite.size());
  for (const GraphScanFinding& f : s.nonfinite) PutFinding(f, &w);
  w.Bool(s.first.has_value());
  if (s.first) PutFinding(*s.first, &w);
  return w.Take();
}

Result<mindspore_detail::GraphUnitScan> DecodeUnitScan(std::string_view bytes) {
  detail::ByteReader r(bytes);
  mindspore_detail::GraphUnitScan s;
  s.mode = r.Enum<GraphDumpMode>(kModes);
  s.tensors = r.I64();
  s.kernels = r.I64();
  s.nonfinite.resize(r.Count(40));  // five 8-byte fields at least
  for (GraphScanFinding& f : s.nonfinite) f = GetFinding(&r);
  if (r.Bool()) s.first = GetFinding(&r);
  if (!r.ok() || !r.at_end()) return Status::Internal("a graph scan record is malformed");
  return s;
}

std::string EncodeTable(const ClusterGraphTable& t) {
  detail::ByteWriter w;
  w.I64(t.rank);
  w.I64(t.step);
  w.U64(static_cast<uint64_t>(t.mode));
  w.I64(t.rows);
  w.I64(t.not_reached);
  w.I64(t.with_message);
  w.Strs(t.warnings);
  w.Str(t.file.string());
  return w.Take();
}

Result<ClusterGraphTable> DecodeTable(std::string_view bytes) {
  detail::ByteReader r(bytes);
  ClusterGraphTable t;
  t.rank = r.I64();
  t.step = r.I64();
  t.mode = r.Enum<GraphDumpMode>(kModes);
  t.rows = r.I64();
  t.not_reached = r.I64();
  t.with_message = r.I64();
  t.warnings = r.Strs();
  t.file = r.Str();
  if (!r.ok() || !r.at_end()) return Status::Internal("a graph compare record is malformed");
  return t;
}

}  // namespace

Result<ClusterGraphCompareResult> ClusterCompareGraphDumps(
    const ClusterSession& session, const fs::path& target, const fs::path& golden,
    const fs::path& output, const std::string& timestamp, bool xlsx) {
  auto planned = mindspore_detail::PlanGraphCompare(target, golden);
  NUMPROBE_RETURN_IF_ERROR(session.Agree(planned.ok() ? Status::Ok() : planned.error(), 0));
  const mindspore_detail::GraphComparePlan& plan = *planned;
  // Compared first, kept until every unit is known to compare: nothing is written on a failure.
  std::map<size_t, GraphCompareTable> mine;
  NUMPROBE_ASSIGN_OR_RETURN(
      detail::SharedWork shared,
      detail::RunSharedWork(
          session, plan.units.size(), [&](size_t i) { return UnitBytes(plan.units[i]); },
          [&](size_t i) -> Result<std::string> {
            NUMPROBE_ASSIGN_OR_RETURN(GraphCompareTable table,
                                      mindspore_detail::CompareGraphUnit(plan.units[i], nullptr));
            mine.emplace(i, std::move(table));
            return std::string();
          }));

  // Then written, each table by the process that compared it; the folder exactly as one process
  // creates it (process 0 always, the others when they hold tables).
  Status written;
  int64_t failed_item = -1;
  if (session.leader() || !mine.empty()) {
    std::error_code ec;
    fs::create_directories(output, ec);
    if (ec) written = Status::IoError(output.string() + ": " + ec.message());
  }
  std::vector<std::pair<size_t, std::string>> records;
  for (auto& [i, table] : mine) {
    if (!written.ok()) break;
    const fs::path path = output / GraphCompareFileName(table, timestamp, xlsx);
    written = xlsx ? WriteGraphCompareXlsx(table, path) : WriteGraphCompareCsv(table, path);
    if (!written.ok()) {
      failed_item = static_cast<int64_t>(i);
      break;
    }
    ClusterGraphTable summary{table.rank,
                              table.step,
                              table.mode,
                              static_cast<int64_t>(table.rows.size()),
                              table.not_reached,
                              table.with_message,
                              std::move(table.warnings),
                              path};
    records.emplace_back(i, EncodeTable(summary));
  }
  mine.clear();
  session.IdleUntilAll();
  // A folder that cannot be made is every process's first failure (key -1), as in one process.
  NUMPROBE_RETURN_IF_ERROR(session.Agree(written, failed_item));

  std::string framed = detail::FrameRecords(records);
  records.clear();
  auto gathered = session.GatherToLeader(framed);
  NUMPROBE_RETURN_IF_ERROR(session.Agree(gathered.ok() ? Status::Ok() : gathered.error(), 0));
  ClusterGraphCompareResult result;
  result.bytes_per_process = std::move(shared.bytes_per_process);
  Status leader_status;
  if (session.leader()) {
    std::vector<std::string> by_item(plan.units.size());
    leader_status = detail::UnframeRecords(*gathered, &by_item);
    for (size_t i = 0; i < by_item.size() && leader_status.ok(); ++i) {
      auto table = DecodeTable(by_item[i]);
      if (!table) {
        leader_status = table.error();
        break;
      }
      result.tables.push_back(std::move(*table));
    }
    result.missing = plan.missing;
  }
  NUMPROBE_RETURN_IF_ERROR(session.Agree(leader_status, 0));
  return result;
}

Result<ClusterGraphScanResult> ClusterScanGraphDump(const ClusterSession& session,
                                                    const fs::path& root) {
  auto planned = mindspore_detail::PlanGraphScan(root);
  NUMPROBE_RETURN_IF_ERROR(session.Agree(planned.ok() ? Status::Ok() : planned.error(), 0));
  const mindspore_detail::GraphScanPlan& plan = *planned;
  NUMPROBE_ASSIGN_OR_RETURN(
      detail::SharedWork shared,
      detail::RunSharedWork(
          session, plan.units.size(), [&](size_t i) { return UnitBytes(plan.units[i]); },
          [&](size_t i) -> Result<std::string> {
            NUMPROBE_ASSIGN_OR_RETURN(const mindspore_detail::GraphUnitScan scanned,
                                      mindspore_detail::ScanGraphUnit(plan.units[i], nullptr));
            return EncodeUnitScan(scanned);
          }));
  ClusterGraphScanResult result;
  result.bytes_per_process = std::move(shared.bytes_per_process);
  Status leader_status;
  if (session.leader()) {
    mindspore_detail::GraphScanAssembler assembler(plan.folders);
    for (std::string& record : shared.records) {
      auto scanned = DecodeUnitScan(record);
      std::string().swap(record);
      if (!scanned) {
        leader_status = scanned.error();
        break;
      }
      assembler.Add(std::move(*scanned));
    }
    if (leader_status.ok()) result.report = assembler.Finish();
  }
  session.IdleUntilAll();
  NUMPROBE_RETURN_IF_ERROR(session.Agree(leader_status, 0));
  return result;
}

}  // namespace numprobe
