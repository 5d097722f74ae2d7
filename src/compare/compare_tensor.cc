// Tensor-mode rows: locate both tensor files as msprobe does (dump_tensor_data/ beside dump.json,
// "-1" = no file), read them (memory-mapped), and compute the pair's metrics. Rows run in parallel
// over the thread pool; a row whose files are large runs alone with its chunks spread over the
// pool instead, so memory stays bounded by a few tensors and every row uses every thread. Results
// do not depend on the thread count (compare_metrics.h). Each finished pair is reported to the
// caller's progress callback.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/memory_limit.h"
#include "numprobe/tensor_file.h"
#include "numprobe/thread_pool.h"

#include "compare/compare_internal.h"
#include "msprobe/data_file.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;
using Kind = MetricCell::Kind;

// Rows whose two files together exceed this are compared one at a time with chunk parallelism.
constexpr uintmax_t kLargePairBytes = uintmax_t{64} << 20;
constexpr size_t kMaxWarnings = 20;

struct Job {
  size_t row = 0;
  DataFileRef target_file;
  DataFileRef golden_file;
  uintmax_t bytes = 0;
};

class TensorRows {
 public:
  TensorRows(CompareTable* table, const DumpLocation& target, const DumpLocation& golden,
             ThreadPool* pool, const ProgressCallback& progress, uint64_t max_memory)
      : table_(*table),
        target_(target),
        golden_(golden),
        pool_(pool),
        progress_(progress),
        max_memory_(max_memory) {}

  void Run() {
    std::vector<Job> small;
    std::vector<Job> large;
    for (size_t i = 0; i < table_.rows.size(); ++i) {
      auto job = Locate(i);
      if (!job.has_value()) continue;
      (job->bytes > kLargePairBytes ? large : small).push_back(std::move(*job));
    }
    total_ = small.size() + large.size();
    pool_->ParallelFor(static_cast<int64_t>(small.size()),
                       [&](int64_t k) { Compare(small[static_cast<size_t>(k)], nullptr); });
    for (const Job& job : large) Compare(job, pool_);
    if (failures_ > kMaxWarnings) {
      table_.warnings.push_back(
          fmt::format("{} more tensor files could not be read", failures_ - kMaxWarnings));
    }
  }

 private:
  // msprobe's locate_dump_file: "-1" (no file) or an unmatched bench make the row unsupported.
  std::optional<Job> Locate(size_t i) {
    CompareRow& row = table_.rows[i];
    row.metrics.fill(MetricCell::Of(Kind::kUnsupported));
    const DumpRow& t = table_.target->rows[row.target];
    if (!row.paired() || t.data_name.empty()) return std::nullopt;
    const DumpRow& g = table_.golden->rows[static_cast<size_t>(row.golden)];
    if (g.data_name.empty()) return std::nullopt;
    Job job;
    job.row = i;
    // The data-file rule (msprobe/data_file.h): a refused name or link leaves the row uncompared
    // with a warning; a missing file is reported when read, as msprobe does.
    for (auto [dir, name, file] :
         {std::tuple{&target_.tensor_dir, &t.data_name, &job.target_file},
          std::tuple{&golden_.tensor_dir, &g.data_name, &job.golden_file}}) {
      // Its own file or an entry of the packed container (data_file.h).
      auto located = LocateDataFile(*dir, *name);
      if (!located && located.error().code() == ErrorCode::kRejected) {
        Warn(fmt::format("{}; row {} not compared", located.error().message(), t.name));
        return std::nullopt;
      }
      if (located) {
        *file = std::move(*located);
      } else {
        file->path = *dir / *name;  // read, and reported missing, as msprobe does
      }
    }
    job.bytes = job.target_file.bytes + job.golden_file.bytes;
    return job;
  }

  Result<Tensor> ReadOne(const DataFileRef& ref) {
    // The file's warnings (CRC mismatches) are not kept, so its CRCs are not computed.
    ReadOptions options;
    options.check_crc = false;
    options.max_inflated_bytes = max_memory_;
    // Large deflated storages stay compressed: the pair is streamed in lockstep (CompareTensors).
    options.stream_deflated_over = kStreamDeflatedOver;
    NUMPROBE_ASSIGN_OR_RETURN(TensorFile file, ReadDataFile(ref, options));
    if (file.tensors.size() != 1) {
      return Status::Unsupported(
          fmt::format("{}: holds {} tensors, not one", ref.path.string(), file.tensors.size()));
    }
    return std::move(file.tensors[0].tensor);
  }

  void Compare(const Job& job, ThreadPool* inner) {
    CompareRow& row = table_.rows[job.row];
    auto t = ReadOne(job.target_file);
    auto g = t.ok() ? ReadOne(job.golden_file) : Result<Tensor>(t.error());
    if (!t.ok() || !g.ok()) {
      // msprobe: "Dump file ... not found or read failed." -> unsupported.
      ++failures_;
      Warn((t.ok() ? g.error() : t.error()).message());
    } else if (auto m = CompareTensors(*t, *g, inner, max_memory_); !m.ok()) {
      ++failures_;
      Warn(fmt::format("{} vs {}: {}", job.target_file.path.string(), job.golden_file.path.string(),
                       m.error().message()));
    } else {
      std::copy(m->msprobe.begin(), m->msprobe.end(), row.metrics.begin());
      if (m->extras.has_value()) row.extras = std::make_shared<const TensorExtras>(*m->extras);
      if (m->extras.has_value()) row.error = m->rel_l2;
    }
    const size_t done = ++done_;
    if (progress_) progress_(done, total_, "tensor pairs");
  }

  void Warn(std::string message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (table_.warnings.size() < kMaxWarnings) table_.warnings.push_back(std::move(message));
  }

  CompareTable& table_;
  const DumpLocation& target_;
  const DumpLocation& golden_;
  ThreadPool* pool_;
  std::mutex mu_;
  std::atomic<size_t> done_{0};
  std::atomic<size_t> failures_{0};
  size_t total_ = 0;
  const ProgressCallback& progress_;
  uint64_t max_memory_ = 0;
};

}  // namespace

void FillTensorCells(CompareTable* table, const DumpLocation& target, const DumpLocation& golden,
                     ThreadPool* pool, const ProgressCallback& progress, uint64_t max_memory) {
  TensorRows(table, target, golden, pool != nullptr ? pool : &ThreadPool::Default(), progress,
             EffectiveMaxMemory(max_memory))
      .Run();
}

}  // namespace numprobe::detail
