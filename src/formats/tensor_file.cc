#include "numprobe/tensor_file.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "numprobe/npy.h"
#include "numprobe/npz.h"
#include "numprobe/safetensors.h"
#include "numprobe/torch_pt.h"

#include "formats/zip.h"
#ifdef NUMPROBE_WITH_PROTOBUF
#include "numprobe/ckpt.h"

#include "formats/ckpt_internal.h"
#endif

namespace numprobe {
namespace {

bool StartsWith(std::span<const std::byte> head, std::string_view magic) {
  return head.size() >= magic.size() && std::memcmp(head.data(), magic.data(), magic.size()) == 0;
}

std::string Extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// A zip is a torch file when its first entry is "<prefix>/data.pkl" or any entry ends in
// "/data.pkl"; an npz otherwise. Decided from the central directory, not from the extension.
FileFormat ClassifyZip(const std::shared_ptr<const Buffer>& buffer, const ReadOptions& options) {
  ZipLimits limits;
  limits.max_inflated_bytes = options.max_inflated_bytes;
  auto archive = ZipArchive::Open(buffer, limits);
  if (!archive) return FileFormat::kNpz;  // the npz reader reports the zip error
  for (const ZipEntry& e : archive->entries()) {
    const std::string_view name = e.name;
    if (name == "data.pkl" || (name.size() > 9 && name.substr(name.size() - 9) == "/data.pkl")) {
      return FileFormat::kTorch;
    }
  }
  return FileFormat::kNpz;
}

// A MindSpore checkpoint has no magic number, but every writer starts it with a Checkpoint.value
// record (byte 0x0A): a trial parse of that record with the reader's own rules decides
// (formats.md §0). A value must hold a tensor, as the reader requires; a MapTensor value
// (kUnsupported, reported only after the whole record parsed) is a checkpoint all the same.
bool LooksLikeCkpt(std::span<const std::byte> head) {
  if (head.empty() || head[0] != std::byte{0x0A}) return false;
#ifdef NUMPROBE_WITH_PROTOBUF
  const Result<detail::CkptRawValue> first = detail::DecodeFirstCkptValue(head);
  if (!first) return first.error().code() == ErrorCode::kUnsupported;
  return first->has_tensor;
#else
  return false;
#endif
}

}  // namespace

FileFormat DetectFormat(std::span<const std::byte> head, const std::filesystem::path& path) {
  const std::string ext = Extension(path);
  if (StartsWith(head, "\x93NUMPY")) return FileFormat::kNpy;
  if (StartsWith(head, "PK\x03\x04") || StartsWith(head, "PK\x05\x06")) {
    return ext == ".npz" ? FileFormat::kNpz : FileFormat::kTorch;  // refined by ClassifyZip
  }
  // Legacy torch.save: a protocol-2 pickle of the magic number (LONG1 of 10 bytes).
  if (StartsWith(head, "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")) {
    return FileFormat::kTorch;
  }
  if (ext == ".ckpt") return FileFormat::kMindSporeCkpt;
  if (ext == ".safetensors") return FileFormat::kSafetensors;
  if (ext == ".npy") return FileFormat::kNpy;
  if (ext == ".npz") return FileFormat::kNpz;
  if (ext == ".pt" || ext == ".pth" || ext == ".bin") return FileFormat::kTorch;
  // safetensors has no magic: u64 header length, then '{' (or whitespace) at byte 8.
  if (head.size() >= 9) {
    const char c = static_cast<char>(head[8]);
    if (c == '{' || c == ' ' || c == '\n' || c == '\t' || c == '\r')
      return FileFormat::kSafetensors;
  }
  if (LooksLikeCkpt(head)) return FileFormat::kMindSporeCkpt;
  return FileFormat::kUnknown;
}

Result<TensorFile> ReadTensorBuffer(std::shared_ptr<const Buffer> buffer,
                                    const std::filesystem::path& name_hint,
                                    const ReadOptions& options) {
  // The whole file: a checkpoint's trial parse needs its first record in full (the other checks
  // read a few bytes at the start).
  FileFormat format = DetectFormat(buffer->bytes(), name_hint);
  if (format == FileFormat::kTorch || format == FileFormat::kNpz) {
    if (StartsWith(buffer->bytes(), "PK")) format = ClassifyZip(buffer, options);
  }
  Result<TensorFile> result = Status::Unsupported("unrecognised file format");
  switch (format) {
    case FileFormat::kNpy:
      result = ReadNpy(std::move(buffer), options);
      break;
    case FileFormat::kNpz:
      result = ReadNpz(std::move(buffer), options);
      break;
    case FileFormat::kSafetensors:
      result = ReadSafetensors(std::move(buffer), options);
      break;
    case FileFormat::kTorch:
      result = ReadTorch(std::move(buffer), options);
      break;
    case FileFormat::kMindSporeCkpt:
#ifdef NUMPROBE_WITH_PROTOBUF
      result = ReadMindSporeCkpt(std::move(buffer), options);
#else
      result =
          Status::Unsupported("MindSpore .ckpt support was not built (NUMPROBE_WITH_PROTOBUF)");
#endif
      break;
    case FileFormat::kPacked:  // never detected: entries are read through their dump folder
    case FileFormat::kUnknown:
      result =
          Status::Unsupported("unrecognised file format (not npy, npz, safetensors, pt or ckpt)");
      break;
  }
  if (!result) return result.error().WithContext(name_hint.string());
  result->format = format;
  return result;
}

Result<TensorFile> ReadTensorFile(const std::filesystem::path& path, const ReadOptions& options) {
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Buffer::MapFile(path));
  return ReadTensorBuffer(std::move(buffer), path, options);
}

}  // namespace numprobe
