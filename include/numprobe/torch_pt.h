// PyTorch .pt/.pth files without Python: the zip format (torch >= 1.6) and the legacy stream,
// read through a restricted pickle interpreter (pickle.h) that can only build tensors and plain
// containers. Nested containers are flattened into dotted names ("optimizer.state.0.exp_avg").
#ifndef NUMPROBE_TORCH_PT_H_
#define NUMPROBE_TORCH_PT_H_

#include <filesystem>
#include <memory>
#include <span>

#include "numprobe/file_sync.h"
#include "numprobe/tensor_file.h"

namespace numprobe {

Result<TensorFile> ReadTorch(std::shared_ptr<const Buffer> file, const ReadOptions& options);

// Writes `tensors` as torch.save writes a state_dict (an OrderedDict of tensors), in the
// zip format, so that torch.load reads them back exactly. A single tensor with an empty name is
// written as a bare tensor (as msprobe's dump files are). `sync`: see file_sync.h.
Status WriteTorch(const std::filesystem::path& path, std::span<const NamedView> tensors,
                  FileSync sync = FileSync::kNow);

}  // namespace numprobe

#endif  // NUMPROBE_TORCH_PT_H_
