// Writing a large ordered output (a table of millions of rows) over the thread pool: chunks of a
// fixed size are formatted in parallel, and each chunk's text is written after the chunk before
// it, so formatting one chunk overlaps writing another, memory stays a few chunks whatever the
// output, and the bytes do not depend on the thread count.
#ifndef NUMPROBE_CORE_ORDERED_CHUNKS_H_
#define NUMPROBE_CORE_ORDERED_CHUNKS_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "numprobe/status.h"
#include "numprobe/thread_pool.h"

namespace numprobe::detail {

// How many chunks WriteChunksInOrder formats ahead of the one it writes, at most.
inline int64_t ChunksAhead(const ThreadPool& pool) { return 2 * int64_t{pool.threads()} + 2; }

// For each chunk in [0, chunks): format(chunk, &text) over `pool` (may be null: in turn on the
// caller), then write(text) in chunk order. A thread that has formatted a chunk leaves its text
// and goes on to the next chunk; the thread that completes the chunk next in turn writes it and
// every chunk after it that is ready, so no thread waits for another's write (at most
// ChunksAhead(pool) chunks are formatted and not yet written). Texts are reused: `text` may hold
// an earlier chunk's text, cleared (its clear(), else a fresh Text). Returns the first write error;
// the chunks after it are formatted but not written.
template <typename Text, typename Format, typename Write>
Status WriteChunksInOrder(ThreadPool* pool, int64_t chunks, const Format& format,
                          const Write& write) {
  const auto reset = [](Text* text) {
    if constexpr (requires { text->clear(); }) {
      text->clear();
    } else {
      *text = Text{};
    }
  };
  if (pool == nullptr) {
    Text text{};
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      reset(&text);
      format(chunk, &text);
      NUMPROBE_RETURN_IF_ERROR(write(text));
    }
    return Status::Ok();
  }
  const int64_t ahead = ChunksAhead(*pool);
  std::mutex mu;
  std::condition_variable written_cv;  // `next` moved on
  // Under mu: the texts of formatted chunks not yet written (chunk % ahead), spare texts, the
  // next chunk to write and whether a thread is writing.
  std::vector<std::optional<Text>> ready(static_cast<size_t>(ahead));
  std::vector<Text> spare;
  int64_t next = 0;
  bool writing = false;
  Status failed;  // written by the writing thread only, read after ParallelFor
  auto run = [&](int64_t chunk) {
    Text text{};
    {
      std::unique_lock<std::mutex> lock(mu);
      written_cv.wait(lock, [&] { return chunk - next < ahead; });
      if (!spare.empty()) {
        text = std::move(spare.back());
        spare.pop_back();
      }
    }
    reset(&text);
    format(chunk, &text);
    std::unique_lock<std::mutex> lock(mu);
    ready[static_cast<size_t>(chunk % ahead)] = std::move(text);
    if (writing) return;  // the writing thread takes it in its turn
    writing = true;
    while (ready[static_cast<size_t>(next % ahead)].has_value()) {
      std::optional<Text>& slot = ready[static_cast<size_t>(next % ahead)];
      Text turn = std::move(*slot);
      slot.reset();
      lock.unlock();
      if (failed.ok()) failed = write(turn);
      lock.lock();
      spare.push_back(std::move(turn));
      ++next;
      written_cv.notify_all();
    }
    writing = false;
  };
  pool->ParallelFor(chunks, run);
  return failed;
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_ORDERED_CHUNKS_H_
