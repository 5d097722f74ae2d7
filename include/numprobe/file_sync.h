// FileSync: when a written file is flushed to disk. Every file is written under a temporary name
// and renamed into place complete (a crashed process never leaves a half-written file under its
// final name); FileSync says whether it is also flushed (fsync) before the rename.
#ifndef NUMPROBE_FILE_SYNC_H_
#define NUMPROBE_FILE_SYNC_H_

#include <cstdint>

namespace numprobe {

enum class FileSync : uint8_t {
  kNow,       // fsync before the rename: durable when the write returns
  kDeferred,  // no fsync: the caller makes a batch of files durable at once (one syncfs)
};

}  // namespace numprobe

#endif  // NUMPROBE_FILE_SYNC_H_
