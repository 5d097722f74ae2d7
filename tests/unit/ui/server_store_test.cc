// The data side of `numprobe serve`: the columnar store's queries (filters, sorts, paging) checked
// against brute force, a million-row result paged through the JSON API, the model tree and the
// findings on msprobe's real fixtures, the compare JSON twin reader (including malformed files),
// Python list parsing, and the tensor detail computed from real tensor files.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"

#include "compare/compare_writer.h"
#include "testing/temp_dir.h"
#include "ui/api.h"
#include "ui/model_tree.h"
#include "ui/result_store.h"
#include "ui/tensor_detail.h"
#include "ui/workspace.h"

namespace numprobe::ui {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseFullPrecisionFlag>(body.c_str(), body.size());
  EXPECT_FALSE(d.HasParseError()) << body.substr(0, 200);
  return d;
}

// A synthetic result: row i is op (i / 4), leaf i % 4 (inputs 0-1, outputs 2-3); Cosine and
// MaxAbsErr are distinct per row; every 10th row is an error, every 7th a warning; a few cells are
// msprobe tokens ("N/A", "unsupported").
std::unique_ptr<ResultStore> MakeStore(uint32_t rows) {
  ResultStoreBuilder b({"NPU Name", "Cosine", "MaxAbsErr", "Result"});
  std::vector<Cell> cells(4);
  for (uint32_t i = 0; i < rows; ++i) {
    const std::string entry = "Functional.op" + std::to_string(i / 4) + ".0.forward";
    const std::string name = entry + ((i % 4) < 2 ? ".input." : ".output.") + std::to_string(i % 2);
    cells[0] = Cell::Text(name);
    cells[1] = (i % 97 == 5) ? Cell::Text("unsupported")
                             : Cell::Number(static_cast<double>((i * 7919ULL) % rows) / rows);
    cells[2] = (i % 89 == 3) ? Cell::Text("N/A")
                             : Cell::Number(static_cast<double>((i * 104729ULL) % rows));
    cells[3] = Cell::Text(i % 10 == 0 ? "error" : (i % 7 == 0 ? "warning" : "pass"));
    EXPECT_TRUE(b.AddRow(cells, entry).ok());
  }
  return b.Finish();
}

// Brute-force reference of ResultStore's order: numbers first (by value in the direction),
// then texts (by bytes in the direction), ties by row.
std::vector<uint32_t> ReferenceOrder(const ResultStore& s, int column, bool desc) {
  std::vector<uint32_t> rows(s.row_count());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    const Cell ca = s.Get(a, column);
    const Cell cb = s.Get(b, column);
    if (ca.is_number != cb.is_number) return ca.is_number;
    if (ca.is_number) return desc ? ca.number > cb.number : ca.number < cb.number;
    return desc ? ca.text > cb.text : ca.text < cb.text;
  });
  return rows;
}

TEST(ResultStoreTest, SortsMatchBruteForceInBothDirections) {
  const auto store = MakeStore(5000);
  for (int column = 0; column < 4; ++column) {
    for (const bool desc : {false, true}) {
      RowQuery q;
      q.sort_column = column;
      q.descending = desc;
      const auto view = store->Select(q);
      EXPECT_EQ(*view, ReferenceOrder(*store, column, desc)) << column << " " << desc;
    }
  }
}

TEST(ResultStoreTest, FiltersMatchBruteForce) {
  const auto store = MakeStore(5000);
  RowQuery q;
  q.levels = {Verdict::kError, Verdict::kWarning};
  q.pattern = "*OP1*OUTPUT.1";  // glob, case-insensitive, over the whole name
  q.ranges.push_back({store->ColumnIndex("Cosine"), 0.25, 0.75});
  q.sort_column = store->ColumnIndex("MaxAbsErr");
  q.descending = true;
  const auto view = store->Select(q);
  std::vector<uint32_t> expected;
  for (const uint32_t row : ReferenceOrder(*store, q.sort_column, true)) {
    const Cell name = store->Get(row, 0);
    const Cell cosine = store->Get(row, 1);
    const bool level =
        store->level(row) == Verdict::kError || store->level(row) == Verdict::kWarning;
    const bool glob =
        name.text.find("op1") != std::string_view::npos && name.text.ends_with("output.1");
    const bool range = cosine.is_number && cosine.number >= 0.25 && cosine.number <= 0.75;
    if (level && glob && range) expected.push_back(row);
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(*view, expected);

  RowQuery sub;
  sub.pattern = "op12.";  // substring
  size_t count = 0;
  for (uint32_t i = 0; i < store->row_count(); ++i) {
    count += store->Get(i, 0).text.find("op12.") != std::string_view::npos ? 1 : 0;
  }
  EXPECT_EQ(store->Select(sub)->size(), count);
  EXPECT_EQ(count, 4u);

  // A range never matches a text cell.
  RowQuery open_range;
  open_range.ranges.push_back({store->ColumnIndex("Cosine"), std::nullopt, std::nullopt});
  size_t numbers = 0;
  for (uint32_t i = 0; i < store->row_count(); ++i) numbers += store->Get(i, 1).is_number ? 1 : 0;
  EXPECT_EQ(store->Select(open_range)->size(), numbers);
  EXPECT_LT(numbers, store->row_count());
}

TEST(ResultStoreTest, EntryFilterAndNameLookup) {
  const auto store = MakeStore(400);
  RowQuery q;
  q.entry = 7;
  const auto page = store->Query(q, 0, 100);
  EXPECT_EQ(page.total, 4u);
  EXPECT_EQ(page.rows, (std::vector<uint32_t>{28, 29, 30, 31}));
  EXPECT_EQ(store->FindByName("Functional.op7.0.forward.output.1"), 31u);
  EXPECT_EQ(store->FindByName("Functional.op7.0.forward.output.9"), std::nullopt);
  EXPECT_EQ(store->entry_names()[7], "Functional.op7.0.forward");
}

TEST(ResultStoreTest, InputRowNames) {
  EXPECT_TRUE(
      IsInputRowName("Functional.relu.0.forward.input.inplace", "Functional.relu.0.forward"));
  EXPECT_TRUE(
      IsInputRowName("Module.fc1.Linear.forward.0.parameters.bias", "Module.fc1.Linear.forward.0"));
  EXPECT_FALSE(IsInputRowName("Functional.relu.0.forward.output.0", "Functional.relu.0.forward"));
}

TEST(ResultStoreTest, ParsesPythonStringLists) {
  EXPECT_EQ(ParsePyStrList("['a.pt', 'b.pt']"), (std::vector<std::string>{"a.pt", "b.pt"}));
  EXPECT_EQ(ParsePyStrList("[]"), std::vector<std::string>{});
  EXPECT_EQ(ParsePyStrList(R"(["it's", 'x\ny', '\x41\u00e9'])"),
            (std::vector<std::string>{"it's", "x\ny", "A\xc3\xa9"}));
  EXPECT_EQ(ParsePyStrList("N/A"), std::nullopt);
  EXPECT_EQ(ParsePyStrList("['a', 'b'"), std::nullopt);
  EXPECT_EQ(ParsePyStrList("['a' 'b']"), std::nullopt);
  EXPECT_EQ(ParsePyStrList("['a'] trailing"), std::nullopt);
}

// A million rows through the JSON API, as the browser pages them.
TEST(ResultStoreTest, MillionRowsPageCorrectlyThroughTheApi) {
  constexpr uint32_t kRows = 1'000'000;
  auto ws = std::make_shared<Workspace>();
  ws->kind = "compare";
  auto run = std::make_unique<ui::Run>();
  run->label = "big";
  run->mode = "tensor";
  run->store = MakeStore(kRows);
  run->tree = ModelTree::Build(*run->store, nullptr);
  run->findings = AnalyzeFindings(*run->store);
  ws->runs.push_back(std::move(run));
  const Api api(ws);

  auto page = [&](Params params) {
    const ApiResponse r = api.Handle("/api/rows", params);
    EXPECT_EQ(r.status, 200) << r.body;
    return Parse(r.body);
  };
  // The last page of execution order.
  auto last = page({{"run", "0"}, {"offset", "999950"}, {"limit", "100"}});
  EXPECT_EQ(last["total"].GetUint64(), kRows);
  ASSERT_EQ(last["rows"].Size(), 50u);
  EXPECT_EQ(last["rows"][0]["i"].GetUint(), 999950u);
  EXPECT_EQ(last["rows"][49]["i"].GetUint(), 999999u);
  EXPECT_STREQ(last["rows"][49]["c"][0].GetString(), "Functional.op249999.0.forward.output.1");
  // Beyond the end: empty, total still reported.
  auto beyond = page({{"run", "0"}, {"offset", "1000000"}, {"limit", "100"}});
  EXPECT_EQ(beyond["rows"].Size(), 0u);
  EXPECT_EQ(beyond["total"].GetUint64(), kRows);

  // Sorted by MaxAbsErr, largest first: pages continue each other without gaps or repeats.
  const int col = 2;  // MaxAbsErr among the page columns
  std::vector<double> values;
  for (uint32_t i = 0; i < kRows; ++i) {
    const Cell c = api.workspace().runs[0]->store->Get(i, col);
    if (c.is_number) values.push_back(c.number);
  }
  std::sort(values.rbegin(), values.rend());
  double previous = INFINITY;
  std::set<uint32_t> seen;
  for (const char* offset : {"0", "1000", "2000"}) {
    auto p = page({{"run", "0"},
                   {"sort", "MaxAbsErr"},
                   {"desc", "1"},
                   {"offset", offset},
                   {"limit", "1000"}});
    ASSERT_EQ(p["rows"].Size(), 1000u);
    for (const auto& r : p["rows"].GetArray()) {
      const double v = r["c"][col].GetDouble();
      EXPECT_LT(v, previous);
      previous = v;
      EXPECT_TRUE(seen.insert(r["i"].GetUint()).second);
    }
  }
  EXPECT_EQ(previous, values[2999]);

  // Filtered by result: every 10th row is an error.
  auto errors = page({{"run", "0"}, {"result", "error"}, {"offset", "99990"}, {"limit", "100"}});
  EXPECT_EQ(errors["total"].GetUint64(), kRows / 10);
  ASSERT_EQ(errors["rows"].Size(), 10u);
  for (const auto& r : errors["rows"].GetArray()) {
    EXPECT_EQ(r["i"].GetUint() % 10, 0u);
    EXPECT_STREQ(r["l"].GetString(), "error");
  }
  // Name pattern, range and op filters combine.
  auto narrow = page({{"run", "0"}, {"q", "*op12345.*output*"}, {"range", "Cosine:0:1"}});
  EXPECT_EQ(narrow["total"].GetUint64(), 2u);
  auto op = page({{"run", "0"}, {"op", "Functional.op249999.0.forward"}});
  EXPECT_EQ(op["total"].GetUint64(), 4u);
  // Bad parameters are refused with a message, not served.
  for (const Params& bad : std::vector<Params>{{{"run", "1"}},
                                               {{"run", "0"}, {"sort", "nope"}},
                                               {{"run", "0"}, {"limit", "1001"}},
                                               {{"run", "0"}, {"offset", "-1"}},
                                               {{"run", "0"}, {"range", "Cosine:x:1"}},
                                               {{"run", "0"}, {"result", "fine"}}}) {
    const ApiResponse r = api.Handle("/api/rows", bad);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_TRUE(Parse(r.body).HasMember("error"));
  }
  EXPECT_EQ(api.Handle("/api/nothing", {}).status, 404);
}

// msprobe's bf16-vs-fp32 tensor fixtures compared on the fly: the tree nests the APIs under their
// modules, the first divergence is conv2d (bf16 starts there), and the tensor detail is read from
// the .pt files.
class FixtureWorkspaceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LoadOptions options;
    options.golden = kFixtures / "dump_tensor_base" / "step0";
    auto ws = LoadWorkspace(kFixtures / "dump_tensor_bf16" / "step0", options);
    ASSERT_TRUE(ws.ok()) << ws.error().message();
    workspace_ = std::shared_ptr<const Workspace>(std::move(*ws));
  }
  static void TearDownTestSuite() { workspace_.reset(); }
  static std::shared_ptr<const Workspace> workspace_;
};
std::shared_ptr<const Workspace> FixtureWorkspaceTest::workspace_;

TEST_F(FixtureWorkspaceTest, TreeNestsApisUnderTheirModules) {
  ASSERT_EQ(workspace_->runs.size(), 1u);
  const ui::Run& run = *workspace_->runs[0];
  EXPECT_EQ(run.mode, "tensor");
  EXPECT_TRUE(run.has_construct);
  const ModelTree& tree = run.tree;
  const auto conv = tree.Find("Functional.conv2d.0.forward");
  ASSERT_TRUE(conv.has_value());
  EXPECT_EQ(tree.ModulePath(*conv), std::vector<std::string>{"Module.conv1.Conv2d.forward.0"});
  const auto module = tree.Find("Module.conv1.Conv2d.forward.0");
  ASSERT_TRUE(module.has_value());
  const TreeNode& m = tree.node(*module);
  EXPECT_EQ(m.worst, Verdict::kError);
  EXPECT_EQ(m.rows, 15u);  // 11 rows of conv2d + 4 of the module itself
  // The module's subtree span selects exactly those rows.
  RowQuery q;
  q.node_span = std::make_pair(m.position, m.end);
  EXPECT_EQ(run.store->Select(q)->size(), 15u);
  EXPECT_EQ(tree.root().rows, run.store->row_count());
  // Children in execution order: conv1 comes first.
  EXPECT_EQ(tree.node(tree.root().children[0]).name, "Module.conv1.Conv2d.forward.0");
  const auto hits = tree.Search("CONV2D", 10);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(tree.node(hits[0]).name, "Module.conv1.Conv2d.forward.0");
}

// Dumps compared on the fly carry numprobe compare's own first-divergence analysis; the bf16
// fixture's outputs stay within bf16's tolerance, so whatever it names must be ops of the run.
TEST_F(FixtureWorkspaceTest, OnTheFlyCompareCarriesTheAnalysis) {
  const ui::Run& run = *workspace_->runs[0];
  EXPECT_EQ(run.findings.divergence_source, "analysis");
  for (const Culprit& c : run.findings.divergence) {
    ASSERT_LT(c.entry, run.store->entry_names().size());
    ASSERT_TRUE(c.analysis.has_value());
    EXPECT_EQ(c.analysis->op_name, run.store->entry_names()[c.entry]);
  }
  EXPECT_FALSE(run.findings.first_anomaly.has_value());  // all statistics are finite
  const Api api(workspace_);
  const auto info = Parse(api.InfoJson());
  EXPECT_STREQ(info["runs"][0]["divergence_source"].GetString(), "analysis");
}

// The analysis' ops become the overview's culprits: the worst output first, then the op's other
// outputs over tolerance; ops the table does not hold are skipped.
TEST_F(FixtureWorkspaceTest, AnalysedOpsBecomeCulprits) {
  const ui::Run& run = *workspace_->runs[0];
  DivergenceReport report;
  DivergenceOp& op = report.first.emplace();
  op.op_name = "Functional.conv2d.0.forward";
  op.reason = "planted";
  op.output_error = 0.25;
  op.tolerance = 1e-7;
  op.worst_output = "Functional.conv2d.0.forward.output.0";
  op.module_path = {"Module.conv1.Conv2d.forward.0"};
  DivergenceOp& unknown = report.next.emplace_back();
  unknown.op_name = "Functional.nothing.0.forward";
  report.first_over_tolerance = "Functional.conv2d.0.forward";
  Findings findings;
  ApplyAnalysis(*run.store, report, &findings);
  EXPECT_EQ(findings.divergence_source, "analysis");
  ASSERT_EQ(findings.divergence.size(), 1u);
  const Culprit& c = findings.divergence[0];
  EXPECT_EQ(run.store->entry_names()[c.entry], "Functional.conv2d.0.forward");
  ASSERT_FALSE(c.rows.empty());
  EXPECT_EQ(run.store->Get(c.rows[0], 0).text, "Functional.conv2d.0.forward.output.0");
  EXPECT_EQ(c.level, Verdict::kError);  // msprobe's rules call that output an error
  EXPECT_EQ(c.why, "planted");
  EXPECT_EQ(findings.first_over_tolerance, "Functional.conv2d.0.forward");
}

TEST_F(FixtureWorkspaceTest, TensorDetailFromTheDumpedFiles) {
  const ui::Run& run = *workspace_->runs[0];
  const auto row = run.store->FindByName("Functional.conv2d.0.forward.output.0");
  ASSERT_TRUE(row.has_value());
  const Api api(workspace_);
  const ApiResponse r =
      api.Handle("/api/tensor", {{"run", "0"}, {"row", std::to_string(*row)}, {"slice", "5"}});
  ASSERT_EQ(r.status, 200) << r.body;
  const auto d = Parse(r.body);
  EXPECT_STREQ(d["target"]["dtype"].GetString(), "bf16");
  EXPECT_STREQ(d["golden"]["dtype"].GetString(), "f32");
  EXPECT_EQ(d["target"]["stats"]["count"].GetInt64(), 4 * 4 * 6 * 6);
  // Each histogram counts every finite value once.
  for (const char* side : {"target", "golden"}) {
    int64_t total = 0;
    for (const auto& c : d[side]["histogram"].GetArray()) total += c.GetInt64();
    EXPECT_EQ(total, 576) << side;
  }
  EXPECT_EQ(d["edges"].Size(), 65u);
  EXPECT_TRUE(d["paired"].GetBool());
  // bf16 rounding of values below 2 in magnitude: errors are small but not zero.
  EXPECT_GT(d["max_abs_err"].GetDouble(), 0.0);
  EXPECT_LT(d["max_abs_err"].GetDouble(), 0.02);
  EXPECT_EQ(d["heatmap"]["slice"].GetInt64(), 5);
  EXPECT_EQ(d["heatmap"]["slices"].GetInt64(), 16);
  EXPECT_EQ(d["heatmap"]["rows"].GetInt64(), 6);
  EXPECT_EQ(d["heatmap"]["values"].Size(), 36u);
  // Worst elements: largest first, with 4-D indices, |t - g| as reported.
  const auto& worst = d["worst"];
  ASSERT_EQ(worst.Size(), 20u);
  EXPECT_DOUBLE_EQ(worst[0]["abs_err"].GetDouble(), d["max_abs_err"].GetDouble());
  for (rapidjson::SizeType k = 0; k < worst.Size(); ++k) {
    EXPECT_EQ(worst[k]["index"].Size(), 4u);
    EXPECT_DOUBLE_EQ(worst[k]["abs_err"].GetDouble(),
                     std::fabs(worst[k]["target"].GetDouble() - worst[k]["golden"].GetDouble()));
    if (k > 0) {
      EXPECT_LE(worst[k]["abs_err"].GetDouble(), worst[k - 1]["abs_err"].GetDouble());
    }
  }
  // A row without tensor files (an int argument) says so.
  const auto scalar = run.store->FindByName("Functional.conv2d.0.forward.input.3.0");
  ASSERT_TRUE(scalar.has_value());
  EXPECT_EQ(api.Handle("/api/tensor", {{"run", "0"}, {"row", std::to_string(*scalar)}}).status,
            404);
}

TEST(TensorDetailTest, RefusesFileNamesThatLeaveTheDump) {
  TensorDetailOptions options;
  auto d = ComputeTensorDetail(kFixtures / "dump_tensor_bf16", "../../../../etc/passwd", {}, "",
                               options);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->target.error.find("not a plain file name"), std::string::npos);
  EXPECT_TRUE(d->target.histogram.empty());
}

// A dump whose dump.json names tensor files outside its folder: the API refuses to read them.
TEST(TensorDetailTest, HostileDataNamesAreRefusedThroughTheApi) {
  const test::TempDir dir_dir("numprobe_ui_hostile");
  const fs::path& dir = dir_dir.path();
  const fs::path src = kFixtures / "dump_tensor_bf16" / "step0" / "proc17044";
  fs::copy(src, dir / "proc17044", fs::copy_options::recursive);
  const fs::path dump_json = dir / "proc17044" / "dump.json";
  std::ifstream in(dump_json);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string victim = "\"Functional.conv2d.0.forward.output.0.pt\"";
  const size_t at = text.find(victim);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, victim.size(), "\"../../../../../../etc/passwd\"");
  std::ofstream(dump_json) << text;
  LoadOptions options;
  options.golden = kFixtures / "dump_tensor_base" / "step0" / "proc17038";
  auto ws = LoadWorkspace(dir / "proc17044", options);
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  const Api api(std::shared_ptr<const Workspace>(std::move(*ws)));
  // msprobe names a row after its data_name, so the hostile row is found by its Data_name cell.
  const ResultStore& store = *api.workspace().runs[0]->store;
  const int data_column = store.ColumnIndex("Data_name");
  ASSERT_GE(data_column, 0);
  std::optional<uint32_t> row;
  for (uint32_t i = 0; i < store.row_count(); ++i) {
    if (store.Get(i, data_column).text.find("etc/passwd") != std::string_view::npos) row = i;
  }
  ASSERT_TRUE(row.has_value());
  const ApiResponse r = api.Handle("/api/tensor", {{"run", "0"}, {"row", std::to_string(*row)}});
  ASSERT_EQ(r.status, 200);
  const auto d = Parse(r.body);
  EXPECT_NE(std::string(d["target"]["error"].GetString()).find("not a plain file name"),
            std::string::npos);
  EXPECT_EQ(d["target"]["histogram"].Size(), 0u);
  EXPECT_FALSE(d["paired"].GetBool());
}

// The JSON twin written by `numprobe compare` reads back cell for cell.
TEST(CompareJsonTest, TwinRoundTripsAndMalformedFilesAreRefused) {
  const test::TempDir dir_dir("numprobe_ui_twin");
  const fs::path& dir = dir_dir.path();
  auto pairs = DiscoverDumpPairs(kFixtures / "dump_statistics_bf16" / "step0",
                                 kFixtures / "dump_statistics_base" / "step0");
  ASSERT_TRUE(pairs.ok());
  ASSERT_EQ(pairs->size(), 1u);
  auto table = CompareDumps(*(*pairs)[0].target, *(*pairs)[0].golden);
  ASSERT_TRUE(table.ok());
  const fs::path twin = dir / "compare_result_proc17032_20260101000000.json";
  ASSERT_TRUE(WriteCompareJson(*table, twin, "t/dump.json", "g/dump.json").ok());
  auto loaded = ReadCompareJson(twin);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const ResultStore& s = *loaded->store;
  EXPECT_EQ(loaded->mode, "statistics");
  EXPECT_EQ(loaded->target, "t/dump.json");
  ASSERT_EQ(s.row_count(), table->rows.size());
  const auto header = table->Header();
  ASSERT_EQ(s.columns().size(), header.size());
  for (uint32_t r = 0; r < s.row_count(); ++r) {
    const auto cells = table->CsvCells(r);
    for (size_t c = 0; c < cells.size(); ++c) {
      const Cell cell = s.Get(r, static_cast<int>(c));
      if (cell.is_number) {
        EXPECT_DOUBLE_EQ(cell.number, std::stod(cells[c])) << header[c];
      } else {
        EXPECT_EQ(cell.text, cells[c]) << header[c];
      }
    }
  }
  int64_t errors = 0;
  for (const CompareRow& row : table->rows) errors += row.result == Verdict::kError ? 1 : 0;
  EXPECT_EQ(s.LevelCount(Verdict::kError), errors);
  EXPECT_GT(errors, 0);
  // Without numprobe's analysis (no divergence file), the overview reads the Result column: the
  // first op whose inputs pass and whose output fails is conv2d (bf16 starts there).
  const Findings findings = AnalyzeFindings(s);
  EXPECT_EQ(findings.divergence_source, "result");
  ASSERT_FALSE(findings.divergence.empty());
  EXPECT_EQ(s.entry_names()[findings.divergence[0].entry], "Functional.conv2d.0.forward");
  EXPECT_FALSE(findings.divergence_fallback);

  // The folder loads as a compare output; stale results of the same rank are skipped.
  fs::copy_file(twin, dir / "compare_result_proc17032_20250101000000.json");
  auto ws = LoadWorkspace(dir);
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  EXPECT_EQ((*ws)->kind, "compare");
  ASSERT_EQ((*ws)->runs.size(), 1u);
  EXPECT_EQ((*ws)->runs[0]->rank_folder, "proc17032");
  ASSERT_EQ((*ws)->warnings.size(), 2u);  // the stale file, and the dump paths that do not exist
  EXPECT_NE((*ws)->warnings[0].find("20250101000000"), std::string::npos);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"numprobe_compare": 1, "columns": ["NPU Name", "Result"], "rows": [["a"]]})",
       "row 1 has 1 cells, expected 2"},
      {R"({"numprobe_compare": 1, "columns": ["NPU Name"], "rows": [["a", "b"]]})", "more cells"},
      {R"({"numprobe_compare": 1, "rows": [["a"]], "columns": ["NPU Name"]})",
       "\"rows\" comes before \"columns\""},
      {R"({"numprobe_compare": 1, "columns": ["NPU Name"], "rows": [[["a"]]]})", "nested"},
      {R"({"numprobe_compare": 1, "columns": ["NPU Name"], "rows": ["a"]})", "not an array"},
      {R"({"columns": ["NPU Name"], "rows": [["a"]]})", "not a numprobe compare result"},
      {R"({"numprobe_compare": 1, "columns": ["NPU Name"], "rows": [["a"])", "malformed JSON"},
      {R"([1, 2])", "root is not an object"},
      // Found by fuzz_compare_json: the second list was appended to the first and the table
      // handed its columns twice (the workspace then dropped the rows read before).
      {R"({"numprobe_compare": 1, "columns": ["NPU Name"], "rows": [["a"]], "columns": ["B"],
          "rows": [["a", "b"]]})",
       "\"columns\" appears twice"},
      {R"({"numprobe_compare": 1, "columns": ["NPU Name"], "rows": [["a"]], "rows": [["b"]]})",
       "\"rows\" appears twice"},
  };
  for (const auto& [text, phrase] : bad) {
    const fs::path p = dir / "bad.json";
    std::ofstream(p) << text;
    auto r = ReadCompareJson(p);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << text;
    EXPECT_NE(r.error().message().find(phrase), std::string::npos) << r.error().message();
  }
}

TEST(WorkspaceTest, OneDumpShowsItsStatisticsAndTheFirstNonFiniteOp) {
  auto ws = LoadWorkspace(kFixtures / "dump_statistics_nan");
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  EXPECT_EQ((*ws)->kind, "dump");
  ASSERT_EQ((*ws)->runs.size(), 1u);
  const ui::Run& run = *(*ws)->runs[0];
  EXPECT_EQ(run.mode, "dump");
  EXPECT_EQ(run.step, 0);
  ASSERT_TRUE(run.findings.first_anomaly.has_value());
  // The fixture's README: Tensor.__mul__.0.forward is the first op with finite inputs and a
  // non-finite output.
  EXPECT_EQ(run.store->entry_names()[run.findings.first_anomaly->entry],
            "Tensor.__mul__.0.forward");
  EXPECT_GT(run.store->LevelCount(Verdict::kError), 0);

  auto missing = LoadWorkspace(kFixtures / "no_such_folder");
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  const test::TempDir empty_dir("numprobe_ui_empty");
  const fs::path& empty = empty_dir.path();
  auto nothing = LoadWorkspace(empty);
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.error().message().find("holds no compare results"), std::string::npos);
}

}  // namespace
}  // namespace numprobe::ui
