// Fuzz target for the msprobe JSON readers (dump.json, stack.json, construct.json): any bytes must
// give a model or an error; never a crash, a hang or an out-of-bounds access. Accepted dumps are
// also checked for internal consistency (abort otherwise): every entry's rows lie inside the row
// table, in order, and refer back to the entry; every interned text id is valid; and comparing
// the dump with itself pairs every row with itself and gives "0" for equal statistics. The same
// bytes read from a file entry by entry (StreamDumpJson, as scan reads) must give the same entries
// and rows, or an error of the same kind.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/dump.h"

#include "compare/compare_internal.h"
#include "testing/temp_dir.h"

namespace {

bool SameValue(const numprobe::DumpFile& a, const numprobe::PyValue& x, const numprobe::DumpFile& b,
               const numprobe::PyValue& y) {
  using Kind = numprobe::PyValue::Kind;
  if (x.kind() != y.kind()) return false;
  switch (x.kind()) {
    case Kind::kNone:
      return true;
    case Kind::kStr:
    case Kind::kBigInt:
      return a.Text(x.text_id()) == b.Text(y.text_id());
    case Kind::kFloat:  // NaN's bits too
      return std::bit_cast<uint64_t>(x.as_float()) == std::bit_cast<uint64_t>(y.as_float());
    default:
      return x.as_int() == y.as_int();
  }
}

bool SameRow(const numprobe::DumpFile& a, const numprobe::DumpRow& x, const numprobe::DumpFile& b,
             const numprobe::DumpRow& y) {
  if (x.name != y.name || x.data_name != y.data_name || x.md5 != y.md5 || x.entry != y.entry ||
      x.state != y.state || x.is_tensor != y.is_tensor || a.Text(x.dtype) != b.Text(y.dtype) ||
      a.Text(x.shape) != b.Text(y.shape) || !SameValue(a, x.requires_grad, b, y.requires_grad)) {
    return false;
  }
  for (int k = 0; k < 4; ++k) {
    if (!SameValue(a, x.stats[k], b, y.stats[k])) return false;
  }
  return true;
}

// `bytes` as a dump.json in a folder of this process's own, read entry by entry: the same
// entries and rows as `whole` (ParseDumpJson's result), or an error of the same code.
void CheckStreamed(std::span<const char> bytes, const numprobe::Result<numprobe::DumpFile>& whole) {
  static const numprobe::test::TempDir kFolder("numprobe_fuzz");  // removed at exit
  if (kFolder.path().empty()) std::abort();
  const std::filesystem::path path = kFolder.Write("dump.json", {bytes.data(), bytes.size()});
  std::vector<std::pair<size_t, std::vector<numprobe::DumpRow>>> seen;
  auto streamed = numprobe::StreamDumpJson(
      path,
      [&](const numprobe::DumpFile& f, const numprobe::DumpEntry& entry,
          std::span<const numprobe::DumpRow> rows) {
        seen.emplace_back(static_cast<size_t>(&entry - f.entries.data()),
                          std::vector<numprobe::DumpRow>(rows.begin(), rows.end()));
        return numprobe::Status::Ok();
      },
      [&] { seen.clear(); });
  if (streamed.ok() != whole.ok()) std::abort();
  if (!whole.ok()) {
    if (streamed.error().code() != whole.error().code()) std::abort();
    return;
  }
  if (seen.size() != whole->entries.size() || streamed->entries.size() != whole->entries.size() ||
      streamed->has_md5 != whole->has_md5 || streamed->task != whole->task) {
    std::abort();
  }
  for (size_t e = 0; e < seen.size(); ++e) {
    const numprobe::DumpEntry& entry = whole->entries[e];
    if (seen[e].first != e || seen[e].second.size() != entry.row_count ||
        streamed->entries[e].name != entry.name) {
      std::abort();
    }
    for (uint32_t r = 0; r < entry.row_count; ++r) {
      // A repeated entry's rows were read again whole: their texts are in `streamed`.
      if (!SameRow(*streamed, seen[e].second[r], *whole, whole->rows[entry.first_row + r])) {
        std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const char> bytes(reinterpret_cast<const char*>(data), size);
  auto file = numprobe::ParseDumpJson(bytes);
  CheckStreamed(bytes, file);
  if (file.ok()) {
    uint32_t next = 0;
    for (size_t e = 0; e < file->entries.size(); ++e) {
      const numprobe::DumpEntry& entry = file->entries[e];
      if (entry.first_row != next) std::abort();
      next += entry.row_count;
      for (uint32_t r = entry.first_row; r < next; ++r) {
        if (r >= file->rows.size() || file->rows[r].entry != e) std::abort();
      }
    }
    if (next != file->rows.size()) std::abort();
    for (const numprobe::DumpRow& row : file->rows) {
      if (row.dtype >= file->text_count() || row.shape >= file->text_count()) std::abort();
      for (const numprobe::PyValue& v : row.stats) {
        const auto kind = v.kind();
        if ((kind == numprobe::PyValue::Kind::kStr || kind == numprobe::PyValue::Kind::kBigInt) &&
            v.text_id() >= file->text_count()) {
          std::abort();
        }
      }
      for (int k = 0; k < 4; ++k) {
        const auto a = numprobe::detail::SummaryOf(*file, row.stats[k]);
        const auto b = numprobe::detail::SummaryOf(*file, row.stats[k]);
        if (a.Text() != b.Text() || !a.SameText(b)) std::abort();
      }
    }
    const auto keys = numprobe::detail::CompareKeys(*file, true, false);
    if (keys.size() != file->rows.size()) std::abort();
  }
  (void)numprobe::ParseStackJson(bytes);
  (void)numprobe::ParseConstructJson(bytes);
  return 0;
}
