#include "capture/tensor_file_writer.h"

#include <algorithm>
#include <utility>

#include <unistd.h>

#include "numprobe/npy.h"
#include "numprobe/torch_pt.h"

#include "core/atomic_file.h"
#include "core/process_id.h"

namespace numprobe::detail {

void TensorFileWriter::Enqueue(std::filesystem::path path, Tensor tensor, TensorFileFormat format) {
  const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(tensor.view().span_bytes(), 0));
  Job job;
  job.path = std::move(path);
  job.tensor = std::move(tensor);
  job.format = format;
  job.bytes = bytes;
  Push(std::move(job));
}

void TensorFileWriter::EnqueueLink(std::filesystem::path path, std::filesystem::path existing) {
  Job job;
  job.path = std::move(path);
  job.link_to = std::move(existing);
  Push(std::move(job));
}

void TensorFileWriter::EnqueuePacked(std::filesystem::path tensor_dir, std::string name,
                                     Tensor tensor) {
  const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(tensor.view().span_bytes(), 0));
  Job job;
  job.path = std::move(tensor_dir);
  job.packed_name = std::move(name);
  job.tensor = std::move(tensor);
  job.bytes = bytes;
  Push(std::move(job));
}

void TensorFileWriter::EnqueuePackedRepeat(std::filesystem::path tensor_dir, std::string name,
                                           std::string earlier) {
  Job job;
  job.path = std::move(tensor_dir);
  job.packed_name = std::move(name);
  job.link_to = std::move(earlier);
  Push(std::move(job));
}

void TensorFileWriter::EnqueueJournalLine(std::string line) {
  Job job;
  job.bytes = line.size();
  job.journal_line = std::move(line);
  Push(std::move(job));
}

void TensorFileWriter::EnqueueTask(std::function<Status()> task, std::string what) {
  Job job;
  job.task = std::move(task);
  job.journal_line = std::move(what);
  Push(std::move(job));
}

void TensorFileWriter::Push(Job job) {
  std::unique_lock lock(mu_);
  if (!job.path.empty()) files_since_sync_ = true;
  if (!job.task) ++ordered_jobs_;
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  // Back-pressure: the training thread waits rather than letting copies pile up.
  space_cv_.wait(lock,
                 [&] { return pending_bytes_ == 0 || pending_bytes_ + job.bytes <= max_pending_; });
  pending_bytes_ += job.bytes;
  queue_.push_back(std::move(job));
  work_cv_.notify_one();
}

bool TensorFileWriter::Busy() {
  std::lock_guard lock(mu_);
  return ordered_jobs_ > 0;
}

Status TensorFileWriter::Drain() {
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  return std::exchange(error_, Status::Ok());
}

bool TensorFileWriter::TakeWrittenSinceSync() {
  std::lock_guard lock(mu_);
  return std::exchange(files_since_sync_, false);
}

bool TensorFileWriter::FilesSinceSync() {
  std::lock_guard lock(mu_);
  return files_since_sync_;
}

void TensorFileWriter::Shutdown() {
  if (detail::CurrentProcessId() != owner_pid_) {
    // A forked child has no copy of the writer thread: forget the handle without joining.
    if (thread_.joinable()) (void)new std::thread(std::move(thread_));
    return;
  }
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    work_cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

Status TensorFileWriter::Perform(const Job& job) {
  if (job.task) return job.task();
  if (job.path.empty()) return journal_->AppendFormatted(job.journal_line);
  if (!job.link_to.empty()) {
    if (!job.packed_name.empty()) {
      return packed_.AppendRepeat(job.path, job.packed_name, job.link_to.string(), sync_);
    }
    return AtomicOutput::CreateAsLinkTo(job.path, job.link_to, sync_);
  }
  if (!job.packed_name.empty()) {
    return packed_.Append(job.path, job.packed_name, job.tensor.view(), sync_);
  }
  if (job.format == TensorFileFormat::kNpy) return WriteNpy(job.path, job.tensor.view(), sync_);
  const NamedView view{"", job.tensor.view()};
  return WriteTorch(job.path, std::span<const NamedView>(&view, 1), sync_);
}

void TensorFileWriter::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Status st = Perform(job);
    const bool ordered = !job.task;
    const uint64_t bytes = job.bytes;
    const std::string what = job.task                  ? job.journal_line
                             : job.path.empty()        ? std::string("journal")
                             : job.packed_name.empty() ? job.path.string()
                                                       : (job.path / job.packed_name).string();
    job = Job();  // frees the copy before the space is released
    lock.lock();
    busy_ = false;
    if (ordered) --ordered_jobs_;
    pending_bytes_ -= bytes;
    if (!st.ok() && error_.ok()) error_ = st.WithContext(what);
    space_cv_.notify_all();
    if (queue_.empty()) done_cv_.notify_all();
  }
}

}  // namespace numprobe::detail
