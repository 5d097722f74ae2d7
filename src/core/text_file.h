// Reading a whole (small) text file into memory, with a size cap checked before reading.
#ifndef NUMPROBE_CORE_TEXT_FILE_H_
#define NUMPROBE_CORE_TEXT_FILE_H_

#include <cstdint>
#include <filesystem>
#include <string>

#include "numprobe/result.h"

namespace numprobe::detail {

// The bytes of `path`. kIoError when it cannot be read, kOutOfRange when it is larger than
// `max_bytes`; messages start with the path.
Result<std::string> ReadTextFile(const std::filesystem::path& path, uintmax_t max_bytes);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_TEXT_FILE_H_
