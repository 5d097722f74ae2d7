// Fuzz target for the compare JSON twin read back (compare/compare_json.h ReadCompareJson, what
// report and serve load from a results folder they are given): any bytes must give a table or an
// error; never a crash (deep nesting included), a hang or an out-of-bounds access. The table the
// reader hands over must keep its promises: the columns come once and before any row, and every
// row has as many cells as there are columns.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compare/compare_json.h"
#include "testing/temp_dir.h"

namespace {

class CheckedTable final : public numprobe::CompareJsonTable {
 public:
  numprobe::Status Columns(const std::vector<std::string>& columns) override {
    if (have_columns_) std::abort();
    have_columns_ = true;
    columns_ = columns.size();
    return numprobe::Status::Ok();
  }
  numprobe::Status Row(std::span<const numprobe::CompareJsonCell> cells) override {
    if (!have_columns_ || cells.size() != columns_) std::abort();
    for (const numprobe::CompareJsonCell& cell : cells) {
      for (char c : cell.text) checksum_ += static_cast<unsigned char>(c);  // every byte readable
    }
    return numprobe::Status::Ok();
  }
  unsigned checksum() const { return checksum_; }

 private:
  bool have_columns_ = false;
  size_t columns_ = 0;
  unsigned checksum_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const numprobe::test::TempDir kFolder("numprobe_fuzz");  // removed at exit
  if (kFolder.path().empty()) std::abort();
  const std::filesystem::path path =
      kFolder.Write("compare_result_rank0_20260101000000.json",
                    std::string_view(reinterpret_cast<const char*>(data), size));
  CheckedTable table;
  auto info = numprobe::ReadCompareJson(path, table);
  if (!info.ok() && info.error().message().empty()) std::abort();  // every error says what
  volatile unsigned sink = table.checksum();
  (void)sink;
  return 0;
}
