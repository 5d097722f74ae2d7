#include "msprobe/packed_tensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/checked.h"
#include "core/json.h"
#include "core/regular_file.h"
#include "msprobe/data_file.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText() { return std::strerror(errno); }

Status WriteAll(int fd, const std::byte* p, size_t n, const fs::path& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(fmt::format("{}: write failed: {}", path.string(), ErrnoText()));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status LineError(const fs::path& index, size_t line, std::string_view what) {
  return Status::Corrupt(fmt::format("{}: line {}: {}", index.string(), line, what));
}

// One index line, checked against the data file's size `data_bytes`.
Result<PackedEntry> ParseLine(std::string_view text, const fs::path& index, size_t line,
                              uint64_t data_bytes) {
  auto parsed = ParseJson(text, kStandardJson);
  if (!parsed) return LineError(index, line, parsed.error().message());
  const JsonValue& v = *parsed;
  if (!v.is_object()) return LineError(index, line, "not a JSON object");
  const JsonValue* name = v.Find("name");
  const JsonValue* dtype = v.Find("dtype");
  const JsonValue* shape = v.Find("shape");
  const JsonValue* offsets = v.Find("offsets");
  if (name == nullptr || !name->is_string() || dtype == nullptr || !dtype->is_string() ||
      shape == nullptr || !shape->is_array() || offsets == nullptr || !offsets->is_array()) {
    return LineError(index, line, "lacks a string name and dtype, a shape and offsets");
  }
  PackedEntry e;
  e.name = name->string_value();
  if (Status s = CheckDataFileName(e.name); !s.ok()) {
    return Status::Rejected(fmt::format("{}: line {}: {}", index.string(), line, s.message()));
  }
  const std::optional<DType> dt = DTypeFromName(dtype->string_value());
  if (!dt) {
    return LineError(index, line,
                     fmt::format("unknown dtype '{}'", dtype->string_value().substr(0, 40)));
  }
  e.dtype = *dt;
  if (shape->array().size() > 64) return LineError(index, line, "more than 64 dimensions");
  for (const JsonValue& d : shape->array()) {
    if (d.kind() != JsonValue::Kind::kInt || d.int_value() < 0) {
      return LineError(index, line, "a shape element is not a non-negative integer");
    }
    e.shape.push_back(d.int_value());
  }
  if (offsets->array().size() != 2) return LineError(index, line, "offsets is not [begin, end]");
  for (const JsonValue& o : offsets->array()) {
    if (o.kind() != JsonValue::Kind::kInt || o.int_value() < 0) {
      return LineError(index, line, "an offset is not a non-negative integer");
    }
  }
  e.begin = static_cast<uint64_t>(offsets->array()[0].int_value());
  e.end = static_cast<uint64_t>(offsets->array()[1].int_value());
  if (e.end < e.begin) {
    return LineError(index, line, fmt::format("offsets end {} is before begin {}", e.end, e.begin));
  }
  const std::optional<int64_t> numel = CheckedNumel(e.shape);
  const auto bytes =
      numel ? CheckedMul<int64_t>(*numel, ItemSize(e.dtype)) : std::optional<int64_t>();
  if (!bytes) return LineError(index, line, "shape overflows 64 bits");
  if (static_cast<uint64_t>(*bytes) != e.end - e.begin) {
    return LineError(index, line,
                     fmt::format("offsets [{}, {}] hold {} bytes but {} {} needs {}", e.begin,
                                 e.end, e.end - e.begin, Name(e.dtype),
                                 fmt::format("[{}]", fmt::join(e.shape, ", ")), *bytes));
  }
  e.truncated = e.end > data_bytes;
  return e;
}

}  // namespace

Result<PackedIndex> ParsePackedIndex(std::string_view text, uint64_t data_bytes,
                                     const fs::path& index_path) {
  PackedIndex out;
  size_t pos = 0;
  size_t line = 0;
  uint64_t expected = 0;  // where the next tensor's bytes begin
  std::unordered_map<uint64_t, uint64_t> ranges;  // begin -> end of the ranges entries appended
  while (pos < text.size()) {
    ++line;
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.torn_tail = true;  // a record cut short by a crash: never referenced by the journal
      break;
    }
    const std::string_view one = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (one.size() > kMaxPackedIndexLine) {
      return LineError(index_path, line, fmt::format("longer than {} bytes", kMaxPackedIndexLine));
    }
    if (line == 1) {
      auto head = ParseJson(one, kStandardJson);
      const JsonValue* version =
          head && head->is_object() ? head->Find("numprobe_packed") : nullptr;
      if (version == nullptr || version->kind() != JsonValue::Kind::kInt ||
          version->int_value() != 1) {
        return LineError(index_path, line,
                         "not a numprobe packed index ({\"numprobe_packed\": 1})");
      }
      continue;
    }
    NUMPROBE_ASSIGN_OR_RETURN(PackedEntry e, ParseLine(one, index_path, line, data_bytes));
    // The writer appends: each tensor begins where the previous one ends, or names the range
    // of an earlier one (a tensor recorded again; an empty one holds no bytes to overlap).
    const auto earlier = e.begin < expected ? ranges.find(e.begin) : ranges.end();
    if ((e.begin < expected && e.begin == e.end) ||
        (earlier != ranges.end() && earlier->second == e.end)) {
      out.by_name[e.name] = out.entries.size();
      out.entries.push_back(std::move(e));
      continue;
    }
    if (e.begin < expected) {
      return LineError(index_path, line,
                       fmt::format("'{}' at [{}, {}] overlaps the tensor before it (ends at {})",
                                   e.name, e.begin, e.end, expected));
    }
    if (e.begin > expected) {
      return LineError(
          index_path, line,
          fmt::format("'{}' begins at {}, leaving a hole after {}", e.name, e.begin, expected));
    }
    expected = e.end;
    if (e.end > e.begin) ranges.emplace(e.begin, e.end);
    out.by_name[e.name] = out.entries.size();
    out.entries.push_back(std::move(e));
  }
  if (line == 0 || (line == 1 && out.torn_tail)) {
    return Status::Corrupt(index_path.string() + ": empty packed index (no header line)");
  }
  return out;
}

Result<std::shared_ptr<const PackedIndex>> ReadPackedIndex(const fs::path& tensor_dir) {
  // The data-file rule: both files, links followed, lie inside the dump folder.
  NUMPROBE_ASSIGN_OR_RETURN(fs::path index_path, ResolveDataFile(tensor_dir, kPackedIndexName));
  auto data_path = ResolveDataFile(tensor_dir, kPackedDataName);
  if (!data_path) {
    if (data_path.error().code() == ErrorCode::kNotFound) {
      return Status::Corrupt(fmt::format("{}: the packed container has an index but no {}",
                                         tensor_dir.string(), kPackedDataName));
    }
    return data_path.error();
  }
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const Buffer> data, Buffer::MapFile(*data_path));
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const Buffer> index, Buffer::MapFile(index_path));
  const std::string_view text(reinterpret_cast<const char*>(index->data()), index->size());
  NUMPROBE_ASSIGN_OR_RETURN(PackedIndex parsed, ParsePackedIndex(text, data->size(), index_path));
  auto out = std::make_shared<PackedIndex>(std::move(parsed));
  out->tensor_dir = tensor_dir;
  out->data = std::move(data);
  return std::shared_ptr<const PackedIndex>(std::move(out));
}

Result<std::shared_ptr<const PackedIndex>> CachedPackedIndex(const fs::path& tensor_dir) {
  struct Key {
    std::string dir;
    uint64_t index_size, data_size;
    int64_t index_mtime, data_mtime;
    uint64_t index_inode = 0, data_inode = 0;
    bool operator==(const Key&) const = default;
  };
  Key key{fs::absolute(tensor_dir).lexically_normal().string(), 0, 0, 0, 0};
  struct stat si {};
  struct stat sd {};
  if (::stat((tensor_dir / kPackedIndexName).c_str(), &si) != 0) {
    return Status::NotFound(
        fmt::format("{}: no such file", (tensor_dir / kPackedIndexName).string()));
  }
  const bool have_data = ::stat((tensor_dir / kPackedDataName).c_str(), &sd) == 0;
  key.index_size = static_cast<uint64_t>(si.st_size);
  key.index_inode = static_cast<uint64_t>(si.st_ino);
  key.index_mtime = static_cast<int64_t>(si.st_mtim.tv_sec) * 1'000'000'000 + si.st_mtim.tv_nsec;
  if (have_data) {
    key.data_size = static_cast<uint64_t>(sd.st_size);
    key.data_inode = static_cast<uint64_t>(sd.st_ino);
    key.data_mtime = static_cast<int64_t>(sd.st_mtim.tv_sec) * 1'000'000'000 + sd.st_mtim.tv_nsec;
  }
  static std::mutex mu;
  static std::list<std::pair<Key, std::shared_ptr<const PackedIndex>>> cache;  // most recent first
  constexpr size_t kCached = 8;
  {
    std::lock_guard lock(mu);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first == key) {
        cache.splice(cache.begin(), cache, it);
        return cache.front().second;
      }
    }
  }
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const PackedIndex> index, ReadPackedIndex(tensor_dir));
  std::lock_guard lock(mu);
  cache.emplace_front(std::move(key), index);
  if (cache.size() > kCached) cache.pop_back();
  return index;
}

Result<Tensor> PackedTensor(const std::shared_ptr<const PackedIndex>& index, size_t i) {
  const PackedEntry& e = index->entries[i];
  if (e.truncated) {
    return Status::Corrupt(
        fmt::format("{}: '{}' is cut short: its bytes [{}, {}] go past the end of {} ({} bytes)",
                    (index->tensor_dir / kPackedIndexName).string(), e.name, e.begin, e.end,
                    kPackedDataName, index->data->size()));
  }
  const std::byte* first = index->data->data() + e.begin;
  TensorView view = TensorView::Contiguous(first, e.dtype, e.shape);
  if (reinterpret_cast<uintptr_t>(first) % static_cast<uintptr_t>(ItemSize(e.dtype)) == 0) {
    return Tensor(index->data, std::move(view));  // zero copy
  }
  return Tensor::CopyOf(view);  // the kernels need naturally aligned elements
}

Status PackedTensorWriter::Open(const fs::path& tensor_dir) {
  Close();
  const fs::path data = tensor_dir / kPackedDataName;
  const fs::path index = tensor_dir / kPackedIndexName;
  std::error_code ec;
  const bool fresh = !fs::exists(index, ec);
  NUMPROBE_ASSIGN_OR_RETURN(RegularFile d, OpenRegularFileForWriting(data, WriteMode::kAppend));
  NUMPROBE_ASSIGN_OR_RETURN(RegularFile x, OpenRegularFileForWriting(index, WriteMode::kAppend));
  struct stat st {};
  if (::fstat(d.fd(), &st) != 0) {
    return Status::IoError(fmt::format("{}: {}", data.string(), ErrnoText()));
  }
  end_ = static_cast<uint64_t>(st.st_size);
  writeback_from_ = end_;
  if (fresh) {
    static constexpr std::string_view kHead = "{\"numprobe_packed\": 1}\n";
    NUMPROBE_RETURN_IF_ERROR(
        WriteAll(x.fd(), reinterpret_cast<const std::byte*>(kHead.data()), kHead.size(), index));
  }
  data_fd_ = d.Release();
  index_fd_ = x.Release();
  dir_ = tensor_dir;
  return Status::Ok();
}

void PackedTensorWriter::Close() {
  if (data_fd_ >= 0) ::close(data_fd_);
  if (index_fd_ >= 0) ::close(index_fd_);
  data_fd_ = index_fd_ = -1;
  dir_.clear();
  end_ = writeback_from_ = 0;
  appended_.clear();
}

Status PackedTensorWriter::Append(const fs::path& tensor_dir, std::string_view name,
                                  const TensorView& view, FileSync sync) {
  if (data_fd_ < 0 || tensor_dir != dir_) NUMPROBE_RETURN_IF_ERROR(Open(tensor_dir));
  if (!view.is_contiguous()) return Status::InvalidArgument("packed tensors must be contiguous");
  const auto bytes = static_cast<uint64_t>(std::max<int64_t>(view.span_bytes(), 0));
  const auto end = CheckedAdd<uint64_t>(end_, bytes);
  if (!end) return Status::OutOfRange("packed container larger than 2^64 bytes");
  const fs::path data = dir_ / kPackedDataName;
  // Bytes first, then the index line that names them (packed_tensors.h: crash safety).
  Status wrote = WriteAll(data_fd_, view.first(), static_cast<size_t>(bytes), data);
  if (!wrote.ok()) {
    // A partial write leaves bytes nobody indexes; the next tensor starts after them.
    struct stat st {};
    if (::fstat(data_fd_, &st) == 0) end_ = static_cast<uint64_t>(st.st_size);
    return wrote;
  }
  if (sync == FileSync::kNow && ::fdatasync(data_fd_) != 0) {
    return Status::IoError(fmt::format("{}: fdatasync failed: {}", data.string(), ErrnoText()));
  }
  if (sync == FileSync::kDeferred && *end - writeback_from_ >= kWritebackEvery) {
    // The step's sync makes these bytes durable at its end; their writeback starts now, so the
    // disk works during the step's compute (that sync took 18-25 ms of a 170 ms step without).
    StartWriteback(data_fd_, writeback_from_, *end);
    writeback_from_ = *end;
  }
  Appended range{view.dtype, view.shape, end_, *end};
  end_ = *end;
  return AppendIndexLine(name, std::move(range), sync);
}

Status PackedTensorWriter::AppendRepeat(const fs::path& tensor_dir, std::string_view name,
                                        std::string_view earlier, FileSync sync) {
  const auto it =
      data_fd_ >= 0 && tensor_dir == dir_ ? appended_.find(std::string(earlier)) : appended_.end();
  if (it == appended_.end()) {
    return Status::Internal(fmt::format("{}: '{}' repeats '{}', which is not in the container",
                                        (tensor_dir / kPackedIndexName).string(), name, earlier));
  }
  return AppendIndexLine(name, it->second, sync);
}

Status PackedTensorWriter::AppendIndexLine(std::string_view name, Appended range, FileSync sync) {
  const fs::path index = dir_ / kPackedIndexName;
  std::string line = "{\"name\": ";
  line += ToJson(JsonValue::String(std::string(name)), -1);
  line += fmt::format(", \"dtype\": \"{}\", \"shape\": [{}], \"offsets\": [{}, {}]}}\n",
                      Name(range.dtype), fmt::join(range.shape, ", "), range.begin, range.end);
  NUMPROBE_RETURN_IF_ERROR(
      WriteAll(index_fd_, reinterpret_cast<const std::byte*>(line.data()), line.size(), index));
  if (sync == FileSync::kNow && ::fdatasync(index_fd_) != 0) {
    return Status::IoError(fmt::format("{}: fdatasync failed: {}", index.string(), ErrnoText()));
  }
  appended_.insert_or_assign(std::string(name), std::move(range));
  return Status::Ok();
}

void RemovePackedContainer(const fs::path& tensor_dir) {
  std::error_code ec;
  fs::remove(tensor_dir / kPackedIndexName, ec);
  fs::remove(tensor_dir / kPackedDataName, ec);
}

}  // namespace numprobe::detail
