// NumPy .npz archives: a zip of .npy members, stored (np.savez) or deflated
// (np.savez_compressed). Tensors are named after their member without ".npy".
#ifndef NUMPROBE_NPZ_H_
#define NUMPROBE_NPZ_H_

#include <filesystem>
#include <memory>
#include <span>

#include "numprobe/tensor_file.h"

namespace numprobe {

Result<TensorFile> ReadNpz(std::shared_ptr<const Buffer> file, const ReadOptions& options);

// Writes `tensors` as members "<name>.npy"; deflated when `compress`.
Status WriteNpz(const std::filesystem::path& path, std::span<const NamedView> tensors,
                bool compress);

}  // namespace numprobe

#endif  // NUMPROBE_NPZ_H_
