// Internal entry point of the safetensors reader, shared by ReadSafetensors and the fuzz target.
// It parses bytes that the caller keeps alive: tensors that view the bytes in place hold `owner`
// (which may be null when the caller guarantees the bytes outlive the result, as the fuzzer does,
// so that AddressSanitizer sees reads past the exact end of the input).
#ifndef NUMPROBE_FORMATS_SAFETENSORS_INTERNAL_H_
#define NUMPROBE_FORMATS_SAFETENSORS_INTERNAL_H_

#include <cstddef>
#include <memory>
#include <span>

#include "numprobe/tensor_file.h"

namespace numprobe::detail {

Result<TensorFile> ParseSafetensors(std::span<const std::byte> file,
                                    const std::shared_ptr<const Buffer>& owner,
                                    const ReadOptions& options);

}  // namespace numprobe::detail

#endif  // NUMPROBE_FORMATS_SAFETENSORS_INTERNAL_H_
