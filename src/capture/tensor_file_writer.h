// TensorFileWriter: the capture's background writer of tensor files. The training thread hands
// over private copies (Enqueue) and goes on; one thread writes them in order. The queue is bounded
// in bytes: Enqueue waits (back-pressure) rather than letting copies pile up in memory.
//
// Crash safety: the journal is the source of truth, and a journal record must only name files
// that are complete. A record whose files are still queued is therefore queued behind them
// (EnqueueJournalLine) and appended by this thread once they are written; while anything is
// queued, every later record takes the same path, so the journal keeps the recording order. Each
// file is renamed into place complete, so a SIGKILL leaves either the whole file or none under
// its name (and no journal record for a file never written).
//
// Durability: with FileSync::kDeferred files are not flushed one by one; the Dumper makes a
// step's files durable together after the step's end, with one sync that it queues here
// (EnqueueTask) behind the step's files, so that the training thread does not wait for the disk.
// FileSync::kNow flushes each file before it is renamed into place (config key
// tensor_durability: "file").
//
// A tensor the step has already queued is not written again: EnqueueLink makes its name a hard
// link to the first file, renamed into place like any file and journaled behind it alike;
// EnqueuePackedRepeat gives the container's entry a second index line.
//
// Packed layout (dump_layout "packed"): EnqueuePacked appends the tensor to its folder's container
// (msprobe/packed_tensors.h) instead of writing a file: bytes, then the index line, then the
// journal records queued behind it, so the same ordering argument holds.
#ifndef NUMPROBE_CAPTURE_TENSOR_FILE_WRITER_H_
#define NUMPROBE_CAPTURE_TENSOR_FILE_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <sys/types.h>

#include "numprobe/dump_config.h"
#include "numprobe/file_sync.h"
#include "numprobe/status.h"
#include "numprobe/tensor.h"

#include "msprobe/dump_journal.h"
#include "msprobe/packed_tensors.h"

namespace numprobe::detail {

class TensorFileWriter {
 public:
  // `journal` receives the queued records (it outlives the writer's thread: see Shutdown).
  TensorFileWriter(uint64_t max_pending_bytes, FileSync sync, DumpJournalWriter* journal)
      : max_pending_(max_pending_bytes), sync_(sync), journal_(journal) {}
  ~TensorFileWriter() { Shutdown(); }
  TensorFileWriter(const TensorFileWriter&) = delete;
  TensorFileWriter& operator=(const TensorFileWriter&) = delete;

  // Queues `tensor` to be written to `path`; waits while the queue holds too many bytes.
  void Enqueue(std::filesystem::path path, Tensor tensor, TensorFileFormat format);
  // Queues `path` to be made a hard link to `existing`, a file queued before it (a tensor
  // recorded again in the step: AtomicOutput::CreateAsLinkTo, a copy where links fail).
  void EnqueueLink(std::filesystem::path path, std::filesystem::path existing);
  // Queues `tensor` to be appended as `name` to the packed container in `tensor_dir`.
  void EnqueuePacked(std::filesystem::path tensor_dir, std::string name, Tensor tensor);
  // Queues `name` as a second name of the container's entry `earlier`, queued before it
  // (PackedTensorWriter::AppendRepeat: an index line, no bytes).
  void EnqueuePackedRepeat(std::filesystem::path tensor_dir, std::string name, std::string earlier);
  // Queues a journal line, appended once every file queued before it is written.
  void EnqueueJournalLine(std::string line);
  // Queues `task`, run once everything queued before it is done (a step's sync); its error is
  // reported, naming `what`, as a file's is.
  void EnqueueTask(std::function<Status()> task, std::string what);
  // Whether a file or journal line is queued or being written (a record must then queue behind
  // it). A task is not counted: records do not wait for a step's sync.
  bool Busy();
  // Waits until everything queued is done; returns the first error since the last Drain.
  Status Drain();
  // Whether a file was queued since the last call (after Drain: written; the step has files to
  // make durable).
  bool TakeWrittenSinceSync();
  // The same without resetting it.
  bool FilesSinceSync();
  // Finishes the queue and ends the thread (a forked child, which has no thread, only forgets it).
  void Shutdown();

 private:
  struct Job {
    std::filesystem::path path;  // empty: a journal line
    Tensor tensor;
    TensorFileFormat format = TensorFileFormat::kPt;
    std::string journal_line;
    std::string packed_name;       // not empty: append to the container in `path` (a folder)
    // Not empty: `path` becomes a link to this file (EnqueueLink); with packed_name, the entry
    // of this name in the container is given packed_name too (EnqueuePackedRepeat).
    std::filesystem::path link_to;
    std::function<Status()> task;  // set: run it (EnqueueTask; `journal_line` names it)
    uint64_t bytes = 0;
  };

  void Push(Job job);
  void Run();
  Status Perform(const Job& job);

  const uint64_t max_pending_;
  const FileSync sync_;
  DumpJournalWriter* const journal_;
  const pid_t owner_pid_ = ::getpid();
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_, space_cv_;
  std::deque<Job> queue_;
  uint64_t pending_bytes_ = 0;
  size_t ordered_jobs_ = 0;  // files and journal lines queued or being written (Busy)
  bool busy_ = false;
  bool stop_ = false;
  bool files_since_sync_ = false;
  Status error_;
  PackedTensorWriter packed_;  // used by the writer's thread only
  std::thread thread_;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CAPTURE_TENSOR_FILE_WRITER_H_
