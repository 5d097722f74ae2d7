// Golden: planted divergences (tests/golden/gen_compare_divergence.py). Two runs agree until one
// op whose output is perturbed (or made NaN, or perturbed after inputs that already carry noise);
// the first-divergence analysis must name that op first, with its module and stack. Runs that
// differ only by bf16 rounding, or not at all, must give no divergence.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/dump_layout.h"

namespace numprobe {
namespace {

std::string GoldenDir() {
  const char* env = std::getenv("NUMPROBE_GOLDEN_DIR");
  return std::string(env != nullptr ? env : NUMPROBE_GOLDEN_DIR) + "/compare_divergence/";
}

TEST(CompareDivergenceGoldenTest, NamesThePlantedOpFirst) {
  std::ifstream in(GoldenDir() + "expected.json");
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(ss.str().c_str());
  ASSERT_TRUE(doc.IsObject()) << "missing " << GoldenDir() << "expected.json";
  int cases = 0;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const std::string name = it->name.GetString();
    SCOPED_TRACE(name);
    auto pairs = DiscoverDumpPairs(GoldenDir() + name + "/target", GoldenDir() + name + "/golden");
    ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
    ASSERT_EQ(pairs->size(), 1u);
    const DumpPair& pair = (*pairs)[0];
    EXPECT_EQ(pair.scope, "step0");
    EXPECT_EQ(pair.rank, "rank0");
    auto table = CompareDumps(*pair.target, *pair.golden);
    ASSERT_TRUE(table.ok()) << table.error().ToString();
    EXPECT_EQ(std::string(EnumName(table->mode)), it->value["mode"].GetString());
    auto construct = ReadConstructJson(pair.target->construct_json);
    ASSERT_TRUE(construct.ok()) << construct.error().ToString();
    const DivergenceReport report = FindDivergence(*table, &*construct);
    EXPECT_GT(report.ops_examined, 10);
    if (it->value["first"].IsNull()) {
      EXPECT_FALSE(report.first.has_value())
          << report.first->op_name << ": " << report.first->reason;
    } else {
      ASSERT_TRUE(report.first.has_value());
      EXPECT_EQ(report.first->op_name, it->value["first"].GetString()) << report.first->reason;
      EXPECT_FALSE(report.first->backward);
      ASSERT_EQ(report.first->module_path.size(), 1u);
      EXPECT_EQ(report.first->module_path[0], it->value["module"].GetString());
      EXPECT_FALSE(report.first->stack.empty());
      EXPECT_EQ(report.first->worst_output, report.first->op_name + ".output.0");
      EXPECT_GT(report.first->output_error, report.first->tolerance);
      if (name == "nan_stats") {
        EXPECT_TRUE(report.first->non_finite);
      }
      // Later ops that only pass the divergence on are not introducers.
      for (const DivergenceOp& op : report.next) {
        EXPECT_NE(op.op_name, "Functional.linear.2.forward");
        EXPECT_NE(op.op_name, "Functional.softmax.0.forward");
      }
    }
    ++cases;
  }
  EXPECT_EQ(cases, 7);
}

}  // namespace
}  // namespace numprobe
