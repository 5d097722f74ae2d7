// safetensors files: u64 header length, a JSON header, a byte buffer. Every validation rule of the
// reference implementation is applied (header cap, offsets tiling the buffer exactly with no
// holes or overlap, sizes equal to dtype x shape, no trailing bytes, no duplicate names).
#ifndef NUMPROBE_SAFETENSORS_H_
#define NUMPROBE_SAFETENSORS_H_

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/tensor_file.h"

namespace numprobe {

Result<TensorFile> ReadSafetensors(std::shared_ptr<const Buffer> file, const ReadOptions& options);

// Writes `tensors` as the reference writer does (sorted by alignment then name, header padded to
// 8 bytes), with `metadata` as __metadata__.
Status WriteSafetensors(const std::filesystem::path& path, std::span<const NamedView> tensors,
                        const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace numprobe

#endif  // NUMPROBE_SAFETENSORS_H_
