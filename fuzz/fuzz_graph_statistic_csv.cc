// Fuzz target for MindSpore's graph-mode statistic.csv (mindspore/graph_dump.cc), read when
// compare or scan is given a MindSpore dump tree: any bytes must give tensors or an error; never
// a crash, a hang or an out-of-bounds access. An accepted file is also compared with itself and
// scanned, as compare and scan would, through the number formatting of msprobe's cells: every
// row of the table has the header's width, and a file compared with itself pairs every tensor.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "numprobe/app/mindspore_dump.h"
#include "numprobe/thread_pool.h"

#include "mindspore/graph_units.h"
#include "testing/temp_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const numprobe::test::TempDir kFolder("numprobe_fuzz");  // removed at exit
  if (kFolder.path().empty()) std::abort();
  kFolder.Write("statistic.csv", std::string_view(reinterpret_cast<const char*>(data), size));
  auto read = numprobe::ReadGraphDump({kFolder.path()});
  if (!read.ok()) {
    if (read.error().message().empty()) std::abort();  // every error says what is wrong
    return 0;
  }
  numprobe::ThreadPool pool(1);
  numprobe::mindspore_detail::GraphUnit unit;
  unit.rank = 0;
  unit.step = 0;
  unit.target = {kFolder.path()};
  unit.golden = {kFolder.path()};
  auto table = numprobe::mindspore_detail::CompareGraphUnit(unit, &pool);
  if (!table.ok()) std::abort();  // it was read once already
  if (table->rows.size() != read->tensors.size()) std::abort();
  for (const auto& row : table->rows) {
    if (row.size() != table->header.size() || row[0].empty() != row[1].empty()) std::abort();
  }
  auto scan = numprobe::mindspore_detail::ScanGraphUnit(unit, &pool);
  if (!scan.ok()) std::abort();
  return 0;
}
