// Fuzz target for what config-check reads from files it is handed: a snapshot written on another
// machine (ParseSnapshot) and hyperparameter files (JSON and YAML, whose aliases can name a node
// over and over). Any bytes must give a value or an error; never a crash, a hang, an escaped
// exception (yaml-cpp throws) or memory out of proportion. An accepted snapshot written back and
// read again is the same snapshot.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "numprobe/app/config_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto snapshot = numprobe::ParseSnapshot(text);
  if (snapshot.ok()) {
    const std::string written = numprobe::SnapshotToJson(*snapshot);
    auto again = numprobe::ParseSnapshot(written);
    if (!again.ok() || numprobe::SnapshotToJson(*again) != written) std::abort();
  } else if (snapshot.error().message().empty()) {
    std::abort();  // every error says what is wrong
  }
  (void)numprobe::ParseJsonHyperparameters(text);
  (void)numprobe::ParseYamlHyperparameters(text);
  return 0;
}
