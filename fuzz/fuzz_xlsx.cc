// Fuzz target for the .xlsx reader of merge (merge/xlsx_reader.h: the project's zip reader and
// Expat over msprobe's compare_result_*.xlsx workbooks, which merge is handed): any bytes must give
// a grid or an error; never a crash, a hang or an out-of-bounds access. A grid keeps its promise:
// every row is padded to one width.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "merge/xlsx_reader.h"
#include "testing/temp_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const numprobe::test::TempDir kFolder("numprobe_fuzz");  // removed at exit
  if (kFolder.path().empty()) std::abort();
  const auto path = kFolder.Write("compare_result_rank0_20260101000000.xlsx",
                                  std::string_view(reinterpret_cast<const char*>(data), size));
  auto grid = numprobe::merge_detail::ReadXlsxFirstSheet(path);
  if (!grid.ok()) {
    if (grid.error().message().empty()) std::abort();  // every error says what is wrong
    return 0;
  }
  for (const auto& row : *grid) {
    if (row.size() != grid->front().size()) std::abort();
  }
  return 0;
}
