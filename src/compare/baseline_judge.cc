// BaselineJudge: one record against the golden, through compare's own pieces (the dump.json
// reader's row names, msprobe's dtype rule, AssessRows' error and tolerance), so that the live
// judgement and a later `numprobe compare` agree.
#include "numprobe/baseline_judge.h"

#include <fmt/format.h>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"

#include "compare/compare_internal.h"

namespace numprobe {

Result<std::unique_ptr<BaselineJudge>> BaselineJudge::Open(
    const std::filesystem::path& golden_dump_json) {
  NUMPROBE_ASSIGN_OR_RETURN(DumpFile golden, ReadDumpJson(golden_dump_json));
  if (golden.task != "statistics" && golden.task != "tensor") {
    return Status::InvalidArgument(
        fmt::format("{}: bench_path needs a statistics or tensor dump, this one has task \"{}\"",
                    golden_dump_json.string(), golden.task));
  }
  std::unique_ptr<BaselineJudge> judge(new BaselineJudge());
  judge->path_ = golden_dump_json;
  for (size_t i = 0; i < golden.rows.size(); ++i)
    judge->rows_by_name_.emplace(golden.rows[i].name, i);
  judge->golden_ = std::make_shared<const DumpFile>(std::move(golden));
  return judge;
}

Result<std::vector<JudgedRow>> BaselineJudge::Judge(std::string_view name, const JsonValue& part,
                                                    bool md5) const {
  // The record as a one-entry dump, flattened by the reader compare uses.
  NUMPROBE_ASSIGN_OR_RETURN(DumpFile target, DumpFileOfEntry(golden_->task, name, part));

  CompareTable table;
  table.mode =
      md5 && golden_->has_md5 && target.has_md5 ? CompareMode::kMd5 : CompareMode::kStatistics;
  table.target = std::make_shared<const DumpFile>(std::move(target));
  table.golden = golden_;
  const DumpFile& t = *table.target;
  for (uint32_t i = 0; i < t.rows.size(); ++i) {
    CompareRow row;
    row.target = i;
    auto it = rows_by_name_.find(t.rows[i].name);
    if (it != rows_by_name_.end()) {
      row.golden = static_cast<int64_t>(it->second);
      row.match = detail::DtypesComparable(t.Text(t.rows[i].dtype),
                                           golden_->Text(golden_->rows[it->second].dtype))
                      ? MatchKind::kExact
                      : MatchKind::kDtypeMismatch;
    }
    table.rows.push_back(row);
  }
  AssessRows(&table);

  std::vector<JudgedRow> out;
  out.reserve(table.rows.size());
  for (const CompareRow& row : table.rows) {
    const DumpRow& r = t.rows[row.target];
    JudgedRow j;
    j.name = r.name;
    j.data_name = r.data_name;
    j.paired = row.paired();
    j.over = row.over_tolerance();
    j.error = row.error;
    j.tolerance = row.tolerance;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace numprobe
