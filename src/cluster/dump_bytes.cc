// DumpBytes, FrameRecords, UnframeRecords (dump_bytes.h).
#include "cluster/dump_bytes.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;

void PutU64(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(std::string_view bytes, size_t pos) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[pos + static_cast<size_t>(i)]))
         << (8 * i);
  }
  return v;
}

}  // namespace

uint64_t DumpBytes(const DumpLocation& location, bool tensor_files) {
  uint64_t bytes = 0;
  for (const fs::path* file :
       {&location.dump_json, &location.stack_json, &location.construct_json}) {
    if (file->empty()) continue;
    std::error_code ec;
    const uintmax_t size = fs::file_size(*file, ec);
    if (!ec) bytes += size;
  }
  if (!tensor_files || location.tensor_dir.empty()) return bytes;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(location.tensor_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code size_ec;
    if (!it->is_regular_file(size_ec)) continue;
    const uintmax_t size = it->file_size(size_ec);
    if (!size_ec) bytes += size;
  }
  return bytes;
}

std::string FrameRecords(const std::vector<std::pair<size_t, std::string>>& records) {
  size_t total = 0;
  for (const auto& [item, text] : records) total += 16 + text.size();
  std::string out;
  out.reserve(total);
  for (const auto& [item, text] : records) {
    PutU64(item, &out);
    PutU64(text.size(), &out);
    out += text;
  }
  return out;
}

Status UnframeRecords(const std::vector<std::string>& texts, std::vector<std::string>* by_item) {
  std::vector<bool> seen(by_item->size(), false);
  for (size_t p = 0; p < texts.size(); ++p) {
    const std::string_view text = texts[p];
    const auto fail = [&](std::string_view what) {
      return Status::Internal(fmt::format("the records MPI process {} sent: {}", p, what));
    };
    size_t pos = 0;
    while (pos < text.size()) {
      if (text.size() - pos < 16) return fail("a truncated header");
      const uint64_t item = GetU64(text, pos);
      const uint64_t size = GetU64(text, pos + 8);
      pos += 16;
      if (item >= by_item->size()) return fail("an item out of range");
      if (seen[item]) return fail("an item sent twice");
      if (size > text.size() - pos) return fail("a truncated record");
      seen[item] = true;
      (*by_item)[item] = std::string(text.substr(pos, size));
      pos += size;
    }
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) return Status::Internal(fmt::format("no MPI process sent item {}", i));
  }
  return Status::Ok();
}

}  // namespace numprobe::detail
