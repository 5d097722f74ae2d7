// MindSpore .ckpt checkpoints (protobuf), read and written without MindSpore: all tensor types
// with both "UInt8" and "Uint8" spellings, dims=[0] scalars, tensors split over consecutive
// same-tag entries, the optional crc_num trailer, str values. Encrypted files are refused.
#ifndef NUMPROBE_CKPT_H_
#define NUMPROBE_CKPT_H_

#include <filesystem>
#include <memory>
#include <span>

#include "numprobe/tensor_file.h"

namespace numprobe {

Result<TensorFile> ReadMindSporeCkpt(std::shared_ptr<const Buffer> file,
                                     const ReadOptions& options);

// Writes `tensors` as MindSpore's save_checkpoint does (splitting tensors over 512 MiB, with the
// crc_num trailer when `with_crc`).
Status WriteMindSporeCkpt(const std::filesystem::path& path, std::span<const NamedView> tensors,
                          bool with_crc = false);

}  // namespace numprobe

#endif  // NUMPROBE_CKPT_H_
