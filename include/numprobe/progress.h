// Progress of long work. The library never prints: a feature whose options carry a
// ProgressCallback calls it as units of work finish, and the caller draws what it likes (the CLI
// draws a bar on a terminal).
#ifndef NUMPROBE_PROGRESS_H_
#define NUMPROBE_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <string_view>

namespace numprobe {

// `done` of `total` units of `what` ("tensor pairs") are finished; called once per unit, the last
// time with done == total. It may be called from several worker threads at once and must not
// throw.
using ProgressCallback = std::function<void(uint64_t done, uint64_t total, std::string_view what)>;

}  // namespace numprobe

#endif  // NUMPROBE_PROGRESS_H_
