// ClusterCompareDumpTrees (app/cluster.h): CompareDumpTrees' steps (compare/compare_trees_parts.h)
// spread over MPI processes.
//   1. every process plans (lists the folders; cheap, and needs no communication);
//   2. the pairs' bytes are measured round-robin and summed across processes; a tensor-mode pair
//      larger than its fair share (total / processes) is split (tensor_split.h);
//   3. every process pairs the rows of each split pair and locates its tensor files (the same
//      tensor pairs everywhere), and derives the same byte-balanced shares of the whole pairs and
//      the split pairs' tensor pairs together (byte_shares.h);
//   4. each process compares and analyses its whole pairs and compares its tensor pairs;
//   5. the tensor pairs' outcomes go to process 0, which applies them in row order to the split
//      pairs' tables (so each is the table one process makes) and analyses them; failures are
//      agreed (the first in rank order wins, as in one process) before anything is written;
//   6. each process writes its ranks' tables with the same writers (each file is one rank's, so
//      it is the same whichever process writes it), and sends process 0 the per-rank facts;
//   7. process 0 finds the earliest divergence across ranks and writes the cross-rank files.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/app/cluster.h"
#include "numprobe/memory_limit.h"

#include "cluster/byte_shares.h"
#include "cluster/dump_bytes.h"
#include "cluster/tensor_split.h"
#include "compare/compare_internal.h"
#include "compare/compare_split.h"
#include "compare/compare_trees_parts.h"
#include "compare/divergence_file.h"
#include "core/json.h"
#include "core/json_writer.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

// The bytes a process reads to compare `pair`: both sides' dump files and tensor files.
uint64_t PairBytes(const DumpPair& pair) {
  return detail::DumpBytes(*pair.target, true) + detail::DumpBytes(*pair.golden, true);
}

// A rank whose tensor pairs are shared out, as every process prepares it.
struct SplitRank {
  size_t index = 0;  // into TreePlan::complete
  Status status;     // PairDumps' error
  CompareTable table;
  std::vector<detail::TensorJob> jobs;
};

// A process's compared ranks, as sent to process 0: their analyses in the divergence file's own
// form (DivergenceJsonText, read back by ParseDivergenceJson: the one home of that encoding) and
// what the terminal summary and diff_analyze need besides.
std::string EncodeFacts(const std::vector<size_t>& indices, const std::vector<RankCompare>& ranks,
                        bool diff_analyze) {
  std::vector<RankDivergence> divergences;
  divergences.reserve(ranks.size());
  for (const RankCompare& r : ranks) divergences.push_back(detail::DivergenceOf(r));
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kResult);
  w.StartObject();
  w.Key("divergence");
  w.String(DivergenceJsonText(divergences, {}));
  w.Key("ranks");
  w.StartArray();
  for (size_t k = 0; k < ranks.size(); ++k) {
    const RankCompare& r = ranks[k];
    w.StartObject();
    w.Key("index");
    w.Uint64(indices[k]);
    w.Key("mode");
    w.Int(static_cast<int>(r.table.mode));
    w.Key("rows");
    w.Uint64(r.table.rows.size());
    std::map<Verdict, int64_t> verdicts;
    for (const CompareRow& row : r.table.rows) ++verdicts[row.result];
    w.Key("verdicts");
    w.StartArray();
    for (const auto& [verdict, count] : verdicts) {
      w.Int(static_cast<int>(verdict));
      w.Int64(count);
    }
    w.EndArray();
    w.Key("warnings");
    w.StartArray();
    for (const std::string& warning : r.table.warnings) w.String(warning);
    w.EndArray();
    w.Key("table_file");
    w.String(r.table_file.string());
    w.Key("diff_analyze");
    w.String(diff_analyze ? DiffAnalyzeMember(divergences[k]) : std::string());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

int64_t IntOf(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.Find(key);
  return m != nullptr && m->kind() == JsonValue::Kind::kInt ? m->int_value() : -1;
}

std::string TextOf(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.Find(key);
  return m != nullptr && m->is_string() ? m->string_value() : std::string();
}

// Puts a process's facts into `ranks` / `members` (indexed by compared pair).
Status DecodeFacts(const std::string& text, int process, std::vector<ClusterRank>* ranks,
                   std::vector<std::string>* members, std::vector<bool>* seen) {
  const auto fail = [&](std::string_view what) {
    return Status::Internal(fmt::format("the facts MPI process {} sent: {}", process, what));
  };
  NUMPROBE_ASSIGN_OR_RETURN(const JsonValue doc, ParseJson(text));
  const JsonValue* list = doc.Find("ranks");
  if (list == nullptr || !list->is_array()) return fail("no ranks");
  NUMPROBE_ASSIGN_OR_RETURN(const DivergenceFile analyses,
                            ParseDivergenceJson(TextOf(doc, "divergence")));
  if (analyses.ranks.size() != list->array().size()) return fail("analyses and ranks disagree");
  for (size_t k = 0; k < list->array().size(); ++k) {
    const JsonValue& r = list->array()[k];
    const int64_t index = IntOf(r, "index");
    if (index < 0 || static_cast<size_t>(index) >= ranks->size() ||
        (*seen)[static_cast<size_t>(index)]) {
      return fail("a rank index out of range");
    }
    const auto i = static_cast<size_t>(index);
    (*seen)[i] = true;
    ClusterRank& out = (*ranks)[i];
    out.mode = static_cast<CompareMode>(IntOf(r, "mode"));
    out.rows = IntOf(r, "rows");
    if (const JsonValue* v = r.Find("verdicts"); v != nullptr && v->is_array()) {
      for (size_t j = 0; j + 1 < v->array().size(); j += 2) {
        if (v->array()[j].kind() != JsonValue::Kind::kInt ||
            v->array()[j + 1].kind() != JsonValue::Kind::kInt) {
          return fail("a verdict count is not an integer");
        }
        out.verdicts[static_cast<Verdict>(v->array()[j].int_value())] =
            v->array()[j + 1].int_value();
      }
    }
    if (const JsonValue* v = r.Find("warnings"); v != nullptr && v->is_array()) {
      for (const JsonValue& w : v->array()) {
        if (w.is_string()) out.warnings.push_back(w.string_value());
      }
    }
    out.table_file = TextOf(r, "table_file");
    out.report = analyses.ranks[k].report;
    out.process = process;
    (*members)[i] = TextOf(r, "diff_analyze");
  }
  return Status::Ok();
}

}  // namespace

Result<ClusterCompareResult> ClusterCompareDumpTrees(const ClusterSession& session,
                                                     const fs::path& target, const fs::path& golden,
                                                     const CompareTreesOptions& options) {
  Status invalid;
  if (!options.output.empty() && options.timestamp.empty()) {
    invalid = Status::InvalidArgument("compare: an output folder needs a timestamp for file names");
  }
  NUMPROBE_RETURN_IF_ERROR(session.Agree(invalid, 0));

  // 1. The plan, in every process (only process 0 is expected to warn).
  auto planned = detail::PlanTreeCompare(target, golden, options);
  NUMPROBE_RETURN_IF_ERROR(session.Agree(planned.ok() ? Status::Ok() : planned.error(), 0));
  detail::TreePlan& plan = *planned;
  const size_t n = plan.complete.size();
  const auto processes = static_cast<size_t>(session.processes());

  // 2. The pairs' bytes (all, then those of tensor files) and the ranks too large for one process.
  std::vector<uint64_t> sizes(2 * n, 0);
  for (size_t i = static_cast<size_t>(session.process()); i < n; i += processes) {
    const DumpPair& p = plan.pairs[plan.complete[i]];
    sizes[i] = PairBytes(p);
    const uint64_t files =
        detail::DumpBytes(*p.target, false) + detail::DumpBytes(*p.golden, false);
    sizes[n + i] = sizes[i] > files ? sizes[i] - files : 0;
  }
  sizes = session.SumAcross(sizes);
  const std::vector<uint64_t> bytes(sizes.begin(), sizes.begin() + static_cast<ptrdiff_t>(n));
  const std::vector<uint64_t> tensor_bytes(sizes.begin() + static_cast<ptrdiff_t>(n), sizes.end());
  const std::vector<bool> split = detail::SplitRanks(bytes, tensor_bytes, session.processes());

  // 3. A split rank's rows are paired and its tensor files located in every process (the same
  //    jobs everywhere); its tensor pairs join the whole ranks in the byte-balanced shares.
  std::vector<SplitRank> splits;
  std::vector<std::vector<uint64_t>> job_bytes(n);
  std::vector<uint64_t> common_bytes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!split[i]) continue;
    const DumpPair& p = plan.pairs[plan.complete[i]];
    SplitRank s;
    s.index = i;
    auto table = detail::PairDumps(*p.target, *p.golden, plan.mapping, options.compare.pool);
    if (table) {
      s.table = std::move(*table);
      if (s.table.mode == CompareMode::kTensor) {
        s.jobs = detail::LocateTensorPairs(&s.table, *p.target, *p.golden);
      }
    } else {
      s.status = table.error();
    }
    for (const detail::TensorJob& job : s.jobs) job_bytes[i].push_back(job.bytes);
    common_bytes[i] = bytes[i] - tensor_bytes[i];
    splits.push_back(std::move(s));
  }
  const detail::WorkShares shares =
      detail::ShareWork(bytes, split, job_bytes, common_bytes, session.processes());
  ClusterCompareResult result;
  result.bytes_per_process = shares.bytes_per_process;

  // 4. This process's share: its whole ranks compared and analysed, its tensor pairs compared.
  std::vector<size_t> mine;
  std::vector<const DumpPair*> my_pairs;
  for (size_t i = 0; i < n; ++i) {
    if (split[i] || shares.rank_owner[i] != session.process()) continue;
    mine.push_back(i);
    my_pairs.push_back(&plan.pairs[plan.complete[i]]);
  }
  std::vector<RankCompare> compared;
  size_t failed = 0;
  const Status status =
      detail::CompareTreePairs(my_pairs, plan.mapping, options, &compared, &failed);
  // The first failure in rank order is this process's answer (as one process meets it first).
  Status local = status;
  int64_t local_key = status.ok() ? 0 : static_cast<int64_t>(mine[failed]);
  const auto fail_at = [&](const Status& s, size_t index) {
    if (!s.ok() && (local.ok() || static_cast<int64_t>(index) < local_key)) {
      local = s;
      local_key = static_cast<int64_t>(index);
    }
  };
  std::vector<std::pair<size_t, std::string>> outcomes;  // by job number over the split ranks
  size_t job_base = 0;
  for (const SplitRank& s : splits) {
    fail_at(s.status, s.index);
    std::vector<size_t> which;
    const std::vector<int>& owner = shares.job_owner[s.index];
    for (size_t k = 0; k < owner.size(); ++k) {
      if (owner[k] == session.process()) which.push_back(k);
    }
    if (!which.empty()) {
      const std::vector<detail::TensorOutcome> done =
          detail::CompareTensorJobs(s.jobs, which, options.compare.pool, options.compare.progress,
                                    EffectiveMaxMemory(options.compare.max_memory));
      for (size_t k = 0; k < which.size(); ++k) {
        outcomes.emplace_back(job_base + which[k], detail::EncodeTensorOutcome(done[k]));
      }
    }
    job_base += s.jobs.size();
  }
  session.IdleUntilAll();  // processes done early wait asleep for the others

  // 5. The split ranks' outcomes to process 0, which applies them in row order and analyses them.
  auto gathered = session.GatherToLeader(detail::FrameRecords(outcomes));
  outcomes.clear();
  NUMPROBE_RETURN_IF_ERROR(session.Agree(gathered.ok() ? Status::Ok() : gathered.error(), 0));
  std::vector<std::pair<size_t, RankCompare>> split_ranks;
  if (session.leader() && !splits.empty()) {
    std::vector<std::string> by_job(job_base);
    const Status unframed = detail::UnframeRecords(*gathered, &by_job);
    size_t base = 0;
    for (SplitRank& s : splits) {
      if (!s.status.ok()) continue;  // agreed below
      Status assembled = unframed;
      if (!assembled.ok()) {
        fail_at(assembled, s.index);
        continue;
      }
      if (s.table.mode == CompareMode::kStatistics) {
        for (CompareRow& row : s.table.rows) detail::FillStatisticsCells(s.table, &row);
      } else if (s.table.mode == CompareMode::kTensor) {
        std::vector<detail::TensorOutcome> done(s.jobs.size());
        for (size_t k = 0; k < done.size() && assembled.ok(); ++k) {
          assembled = detail::DecodeTensorOutcome(by_job[base + k], &done[k]);
        }
        base += s.jobs.size();
        if (!assembled.ok()) {
          fail_at(assembled, s.index);
          continue;
        }
        detail::ApplyTensorOutcomes(&s.table, s.jobs, done);
      }
      detail::FinishTable(&s.table, nullptr);
      RankCompare rank;
      std::string warning;
      assembled = detail::MakeRank(plan.pairs[plan.complete[s.index]], std::move(s.table), options,
                                   &rank, &warning);
      if (!warning.empty() && options.warning) options.warning(warning);
      fail_at(assembled, s.index);
      if (assembled.ok()) split_ranks.emplace_back(s.index, std::move(rank));
    }
  }
  splits.clear();
  // A failure anywhere (a split rank's is met in every process) is agreed, the first in rank
  // order as one process meets it, before anything is written.
  NUMPROBE_RETURN_IF_ERROR(session.Agree(local, local_key));
  if (!split_ranks.empty()) {
    // In rank order with this process's whole ranks.
    std::vector<std::pair<size_t, RankCompare>> all;
    all.reserve(mine.size() + split_ranks.size());
    for (size_t k = 0; k < mine.size(); ++k) all.emplace_back(mine[k], std::move(compared[k]));
    for (auto& r : split_ranks) all.push_back(std::move(r));
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    mine.clear();
    compared.clear();
    for (auto& [index, rank] : all) {
      mine.push_back(index);
      compared.push_back(std::move(rank));
    }
  }

  // 6. This process's ranks' files, then the facts to process 0.
  Status written;
  int64_t written_key = 0;
  if (!options.output.empty()) {
    for (size_t k = 0; k < compared.size() && written.ok(); ++k) {
      written = detail::WriteRankFiles(options, &compared[k]);
      written_key = static_cast<int64_t>(mine[k]);
    }
  }
  NUMPROBE_RETURN_IF_ERROR(session.Agree(written, written_key));
  NUMPROBE_ASSIGN_OR_RETURN(
      const std::vector<std::string> facts,
      session.GatherToLeader(EncodeFacts(mine, compared, options.diff_analyze)));
  compared.clear();  // the tables are no longer needed

  // 7. Process 0: the cross-rank answer and files.
  Status leader_status;
  if (session.leader()) {
    result.ranks.resize(n);
    std::vector<std::string> members(n);
    std::vector<bool> seen(n, false);
    for (size_t p = 0; p < facts.size() && leader_status.ok(); ++p) {
      leader_status = DecodeFacts(facts[p], static_cast<int>(p), &result.ranks, &members, &seen);
    }
    std::vector<RankDivergence> divergences;
    divergences.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const DumpPair& p = plan.pairs[plan.complete[i]];
      result.ranks[i].label = detail::PairLabel(p);
      divergences.push_back(
          {p.scope, p.rank, nullptr, result.ranks[i].report, result.ranks[i].mode});
    }
    result.missing = std::move(plan.missing);
    result.earliest = EarliestDivergence(divergences);
    if (leader_status.ok() && !options.output.empty()) {
      CompareTreesResult files;
      leader_status =
          detail::WriteCrossRankFiles(options, divergences, members, result.missing, &files);
      result.divergence_file = files.divergence_file;
      result.diff_analyze_file = files.diff_analyze_file;
    }
  }
  session.IdleUntilAll();
  NUMPROBE_RETURN_IF_ERROR(session.Agree(leader_status, 0));
  return result;
}

}  // namespace numprobe
