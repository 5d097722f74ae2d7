// Tensor-mode rows: locate both tensor files as msprobe does (dump_tensor_data/ beside dump.json,
// "-1" = no file), read them (memory-mapped), and compute the pair's metrics. Rows run in parallel
// over the thread pool; a row whose files are large runs alone with its chunks spread over the
// pool instead, so memory stays bounded by a few tensors and every row uses every thread. Results
// do not depend on the thread count (compare_metrics.h). Each finished pair is reported to the
// caller's progress callback. The outcomes are applied to the rows in row order once all are
// computed (compare_split.h), so the table, warnings included, is the same however the pairs were
// shared out between threads or processes.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/memory_limit.h"
#include "numprobe/tensor_file.h"
#include "numprobe/thread_pool.h"

#include "compare/compare_internal.h"
#include "compare/compare_split.h"
#include "msprobe/data_file.h"

namespace numprobe::detail {
namespace {

using Kind = MetricCell::Kind;

// Rows whose two files together exceed this are compared one at a time with chunk parallelism.
constexpr uintmax_t kLargePairBytes = uintmax_t{64} << 20;
constexpr size_t kMaxWarnings = 20;

void Warn(CompareTable* table, std::string message) {
  if (table->warnings.size() < kMaxWarnings) table->warnings.push_back(std::move(message));
}

Result<Tensor> ReadOne(const DataFileRef& ref, uint64_t max_memory) {
  // The file's warnings (CRC mismatches) are not kept, so its CRCs are not computed.
  ReadOptions options;
  options.check_crc = false;
  options.max_inflated_bytes = max_memory;
  // Large deflated storages stay compressed: the pair is streamed in lockstep (CompareTensors).
  options.stream_deflated_over = kStreamDeflatedOver;
  NUMPROBE_ASSIGN_OR_RETURN(TensorFile file, ReadDataFile(ref, options));
  if (file.tensors.size() != 1) {
    return Status::Unsupported(
        fmt::format("{}: holds {} tensors, not one", ref.path.string(), file.tensors.size()));
  }
  return std::move(file.tensors[0].tensor);
}

TensorOutcome CompareOne(const TensorJob& job, ThreadPool* inner, uint64_t max_memory) {
  TensorOutcome out;
  auto t = ReadOne(job.target_file, max_memory);
  auto g = t.ok() ? ReadOne(job.golden_file, max_memory) : Result<Tensor>(t.error());
  if (!t.ok() || !g.ok()) {
    // msprobe: "Dump file ... not found or read failed." -> unsupported.
    out.failed = true;
    out.warning = (t.ok() ? g.error() : t.error()).message();
  } else if (auto m = CompareTensors(*t, *g, inner, max_memory); !m.ok()) {
    out.failed = true;
    out.warning = fmt::format("{} vs {}: {}", job.target_file.path.string(),
                              job.golden_file.path.string(), m.error().message());
  } else {
    out.metrics = m->msprobe;
    out.extras = m->extras;
    out.rel_l2 = m->rel_l2;
  }
  return out;
}

}  // namespace

std::vector<TensorJob> LocateTensorPairs(CompareTable* table, const DumpLocation& target,
                                         const DumpLocation& golden) {
  std::vector<TensorJob> jobs;
  for (size_t i = 0; i < table->rows.size(); ++i) {
    // msprobe's locate_dump_file: "-1" (no file) or an unmatched bench make the row unsupported.
    CompareRow& row = table->rows[i];
    row.metrics.Fill(MetricCell::Of(Kind::kUnsupported));
    const DumpRow& t = table->target->rows[row.target];
    if (!row.paired() || t.data_name.empty()) continue;
    const DumpRow& g = table->golden->rows[static_cast<size_t>(row.golden)];
    if (g.data_name.empty()) continue;
    TensorJob job;
    job.row = i;
    bool refused = false;
    // The data-file rule (msprobe/data_file.h): a refused name or link leaves the row uncompared
    // with a warning; a missing file is reported when read, as msprobe does.
    for (auto [dir, name, file] :
         {std::tuple{&target.tensor_dir, &t.data_name, &job.target_file},
          std::tuple{&golden.tensor_dir, &g.data_name, &job.golden_file}}) {
      // Its own file or an entry of the packed container (data_file.h).
      auto located = LocateDataFile(*dir, *name);
      if (!located && located.error().code() == ErrorCode::kRejected) {
        Warn(table, fmt::format("{}; row {} not compared", located.error().message(), t.name));
        refused = true;
        break;
      }
      if (located) {
        *file = std::move(*located);
      } else {
        file->path = *dir / *name;  // read, and reported missing, as msprobe does
      }
    }
    if (refused) continue;
    job.bytes = job.target_file.bytes + job.golden_file.bytes;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<TensorOutcome> CompareTensorJobs(const std::vector<TensorJob>& jobs,
                                             const std::vector<size_t>& which, ThreadPool* pool,
                                             const ProgressCallback& progress,
                                             uint64_t max_memory) {
  ThreadPool& threads = pool != nullptr ? *pool : ThreadPool::Default();
  std::vector<TensorOutcome> outcomes(which.size());
  std::vector<size_t> small;  // positions in `which`
  std::vector<size_t> large;
  for (size_t k = 0; k < which.size(); ++k) {
    (jobs[which[k]].bytes > kLargePairBytes ? large : small).push_back(k);
  }
  std::atomic<size_t> done{0};
  const auto compare = [&](size_t k, ThreadPool* inner) {
    outcomes[k] = CompareOne(jobs[which[k]], inner, max_memory);
    const size_t finished = ++done;
    if (progress) progress(finished, which.size(), "tensor pairs");
  };
  threads.ParallelFor(static_cast<int64_t>(small.size()),
                      [&](int64_t k) { compare(small[static_cast<size_t>(k)], nullptr); });
  for (const size_t k : large) compare(k, &threads);
  return outcomes;
}

void ApplyTensorOutcomes(CompareTable* table, const std::vector<TensorJob>& jobs,
                         const std::vector<TensorOutcome>& outcomes) {
  size_t failures = 0;
  for (size_t k = 0; k < jobs.size() && k < outcomes.size(); ++k) {
    const TensorOutcome& o = outcomes[k];
    CompareRow& row = table->rows[jobs[k].row];
    if (o.failed) {
      ++failures;
      Warn(table, o.warning);
      continue;
    }
    for (size_t m = 0; m < o.metrics.size(); ++m) row.metrics.Set(m, o.metrics[m]);
    if (o.extras.has_value()) {
      row.extras = std::make_shared<const TensorExtras>(*o.extras);
      row.error = o.rel_l2;
    }
  }
  if (failures > kMaxWarnings) {
    table->warnings.push_back(
        fmt::format("{} more tensor files could not be read", failures - kMaxWarnings));
  }
}

void FillTensorCells(CompareTable* table, const DumpLocation& target, const DumpLocation& golden,
                     ThreadPool* pool, const ProgressCallback& progress, uint64_t max_memory) {
  const std::vector<TensorJob> jobs = LocateTensorPairs(table, target, golden);
  std::vector<size_t> all(jobs.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = k;
  ApplyTensorOutcomes(table, jobs,
                      CompareTensorJobs(jobs, all, pool, progress, EffectiveMaxMemory(max_memory)));
}

}  // namespace numprobe::detail
