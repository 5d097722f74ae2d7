// config-check compare: two snapshots item by item, with msprobe's rules where it has them (env
// variable pairs between Ascend and CUDA runs with their defaults, hyperparameter aliases,
// weights and datasets that count as equal when their tensor statistics are) and a level per
// item: pass, warning (a difference that rarely changes numerics) or error.
#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#ifdef NUMPROBE_WITH_XLSX
#include <xlsxwriter.h>
#endif

#include "numprobe/app/config_check.h"

#include "config_check/config_check_internal.h"
#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/json_writer.h"
#include "core/xlsx_workbook.h"

namespace numprobe {

Verdict CheckReport::Summary(CheckCategory category) const {
  Verdict level = Verdict::kPass;
  for (const CheckItem& item : items) {
    if (item.category == category) level = Worse(level, item.level);
  }
  return level;
}

bool CheckReport::differs() const {
  return std::any_of(items.begin(), items.end(),
                     [](const CheckItem& i) { return i.level != Verdict::kPass; });
}

namespace {

using Items = std::map<std::string, std::string>;

// msprobe's config_check/resource/env.yaml: the same setting under its Ascend and CUDA names,
// and the value it has when unset.
struct EnvPair {
  std::string_view npu;
  std::string_view gpu;
  std::string_view unset;
};
constexpr std::array<EnvPair, 4> kEnvPairs = {{
    {"HCCL_DETERMINISTIC", "NCCL_DETERMINISTIC", "False"},
    {"HCCL_ALGO", "NCCL_ALGO", "None"},
    {"ASCEND_LAUNCH_BLOCKING", "CUDA_LAUNCH_BLOCKING", "0"},
    {"ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "None"},
}};

bool IsAscend(const Snapshot& s) {
  for (CheckCategory c : {CheckCategory::kEnv, CheckCategory::kRandom}) {
    for (const auto& [k, v] : s.of(c)) {
      if (k.find("ASCEND") != std::string::npos) return true;
    }
  }
  return false;
}

const std::string* FindEnv(const Snapshot& s, std::string_view name) {
  for (CheckCategory c : {CheckCategory::kEnv, CheckCategory::kRandom}) {
    const auto it = s.of(c).find(std::string(name));
    if (it != s.of(c).end()) return &it->second;
  }
  return nullptr;
}

bool IsMasked(const std::optional<std::string>& v) { return v && v->starts_with("<masked"); }

Verdict LevelOf(CheckCategory category, const std::string& name,
                const std::optional<std::string>& a, const std::optional<std::string>& b,
                std::string* note) {
  if (a == b) return Verdict::kPass;
  const bool one_sided = !a || !b;
  if (one_sided) *note = !a ? "only in B" : "only in A";
  switch (category) {
    case CheckCategory::kEnv:
      if (detail::IsSessionEnvName(name)) {
        *note = "session-specific; ignored";
        return Verdict::kPass;
      }
      return detail::IsNumericsEnvName(name) ? Verdict::kError : Verdict::kWarning;
    case CheckCategory::kPip:
      return detail::IsKeyLibrary(name) ? Verdict::kError : Verdict::kWarning;
    case CheckCategory::kRandom:
    case CheckCategory::kHyperparameters:
      return one_sided ? Verdict::kWarning : Verdict::kError;
    case CheckCategory::kDataset:
    case CheckCategory::kWeights:
      return Verdict::kError;
  }
  return Verdict::kError;
}

void AddItem(CheckReport* report, CheckCategory category, std::string name, std::string name_b,
             std::optional<std::string> a, std::optional<std::string> b, std::string note = {}) {
  CheckItem item;
  item.category = category;
  item.level = LevelOf(category, name, a, b, &note);
  if (note.empty() && (IsMasked(a) || IsMasked(b))) note = "secret: compared by hash";
  item.name = std::move(name);
  item.name_b = std::move(name_b);
  item.a = std::move(a);
  item.b = std::move(b);
  item.note = std::move(note);
  report->items.push_back(std::move(item));
}

std::optional<std::string> Get(const Items& items, const std::string& name) {
  const auto it = items.find(name);
  if (it == items.end()) return std::nullopt;
  return it->second;
}

std::string PrefixOf(std::string_view dotted) {
  const size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? std::string() : std::string(dotted.substr(0, dot));
}

// A dataset or weights file whose bytes differ but whose every tensor has equal statistics on
// both sides: msprobe compares these by statistics, so it is a warning, not an error.
void SoftenEqualStatistics(CheckReport* report, CheckCategory category, const Items& a,
                           const Items& b) {
  for (CheckItem& item : report->items) {
    if (item.category != category || item.level != Verdict::kError || !item.a || !item.b) {
      continue;
    }
    const bool file_item = item.a->starts_with("sha256:") || item.a->starts_with("size:");
    if (!file_item) continue;
    const std::string prefix = item.name + ":";
    bool any = false;
    bool equal = true;
    for (const Items* side : {&a, &b}) {
      for (auto it = side->lower_bound(prefix); it != side->end() && it->first.starts_with(prefix);
           ++it) {
        any = true;
        equal = equal && Get(a, it->first) == Get(b, it->first);
      }
    }
    if (any && equal) {
      item.level = Verdict::kWarning;
      item.note = "bytes differ, tensor statistics equal";
    }
  }
}

}  // namespace

CheckReport CompareSnapshots(const Snapshot& a, const Snapshot& b, std::string a_label,
                             std::string b_label) {
  CheckReport report;
  report.a_label = std::move(a_label);
  report.b_label = std::move(b_label);
  std::set<std::string> consumed_a;  // env names already compared as an Ascend/CUDA pair
  std::set<std::string> consumed_b;
  const bool a_npu = IsAscend(a);
  const bool b_npu = IsAscend(b);
  if (a_npu != b_npu) {
    for (const EnvPair& pair : kEnvPairs) {
      const std::string name_a(a_npu ? pair.npu : pair.gpu);
      const std::string name_b(b_npu ? pair.npu : pair.gpu);
      const std::string* va = FindEnv(a, name_a);
      const std::string* vb = FindEnv(b, name_b);
      consumed_a.insert(name_a);
      consumed_b.insert(name_b);
      const CheckCategory c =
          detail::IsDeterminismEnvName(name_a) ? CheckCategory::kRandom : CheckCategory::kEnv;
      AddItem(&report, c, name_a, name_b, std::string(va != nullptr ? *va : pair.unset),
              std::string(vb != nullptr ? *vb : pair.unset),
              (va != nullptr) && (vb != nullptr) ? "" : "unset means its default");
      // An error for a setting known to change results, whatever its name.
      if (report.items.back().level == Verdict::kWarning) {
        report.items.back().level = Verdict::kError;
      }
    }
  }
  for (int ci = 0; ci < kCheckCategoryCount; ++ci) {
    const auto category = static_cast<CheckCategory>(ci);
    const Items& ia = a.of(category);
    const Items& ib = b.of(category);
    std::set<std::string> matched_b;
    std::vector<std::string> unmatched_a;
    for (const auto& [name, value] : ia) {
      if (consumed_a.count(name) > 0) continue;
      if (ib.count(name) > 0 && consumed_b.count(name) == 0) {
        AddItem(&report, category, name, "", value, ib.at(name));
        matched_b.insert(name);
      } else {
        unmatched_a.push_back(name);
      }
    }
    for (const std::string& name : unmatched_a) {
      std::string alias;
      if (category == CheckCategory::kHyperparameters || category == CheckCategory::kRandom) {
        // msprobe's aliases: lr ~ learning_rate, bs ~ batch_size, ... under the same parent.
        const std::string canonical = detail::CanonicalHyperparameterName(name);
        for (const auto& [other, value] : ib) {
          if (matched_b.count(other) > 0 || ia.count(other) > 0) continue;
          if (detail::CanonicalHyperparameterName(other) == canonical &&
              PrefixOf(other) == PrefixOf(name)) {
            alias = other;
            break;
          }
        }
      }
      if (!alias.empty()) {
        matched_b.insert(alias);
        AddItem(&report, category, name, alias, ia.at(name), ib.at(alias),
                fmt::format("matched as {}", detail::CanonicalHyperparameterName(name)));
      } else {
        AddItem(&report, category, name, "", ia.at(name), std::nullopt);
      }
    }
    for (const auto& [name, value] : ib) {
      if (matched_b.count(name) > 0 || consumed_b.count(name) > 0) continue;
      AddItem(&report, category, name, "", std::nullopt, value);
    }
    if (category == CheckCategory::kDataset || category == CheckCategory::kWeights) {
      SoftenEqualStatistics(&report, category, ia, ib);
    }
  }
  std::stable_sort(report.items.begin(), report.items.end(),
                   [](const CheckItem& x, const CheckItem& y) {
                     const int rx = CheckCategoryRank(x.category);
                     const int ry = CheckCategoryRank(y.category);
                     return std::tie(rx, x.name) < std::tie(ry, y.name);
                   });
  return report;
}

namespace {

constexpr std::string_view kAbsent = "(absent)";

}  // namespace

Status WriteCheckCsv(const CheckReport& report, const std::filesystem::path& path) {
  std::string out = "Category,Name,Name B,Value A,Value B,Level,Note\n";
  for (const CheckItem& i : report.items) {
    const std::string cells[] = {std::string(EnumName(i.category)),
                                 i.name,
                                 i.name_b,
                                 i.a ? *i.a : std::string(kAbsent),
                                 i.b ? *i.b : std::string(kAbsent),
                                 std::string(EnumName(i.level)),
                                 i.note};
    detail::AppendCsvLine(cells, &out);
  }
  return detail::WriteFileAtomically(path, out);
}

Status WriteCheckJson(const CheckReport& report, const std::filesystem::path& path) {
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer, /*kPretty=*/true> w(buffer, JsonFileKind::kResult);
  w.SetIndent(' ', 1);
  auto str = [&](std::string_view v) { w.String(v); };
  w.StartObject();
  w.Key("numprobe_config_check");
  w.Int(1);
  w.Key("a");
  str(report.a_label);
  w.Key("b");
  str(report.b_label);
  w.Key("summary");
  w.StartObject();
  for (const CheckCategory category : kCheckCategoryOrder) {
    const std::string_view name = EnumName(category);
    w.Key(name);
    str(EnumName(report.Summary(category)));
  }
  w.EndObject();
  w.Key("counts");
  w.StartObject();
  for (Verdict level : {Verdict::kPass, Verdict::kWarning, Verdict::kError}) {
    const std::string_view name = EnumName(level);
    w.Key(name);
    w.Int64(std::count_if(report.items.begin(), report.items.end(),
                          [&](const CheckItem& i) { return i.level == level; }));
  }
  w.EndObject();
  w.Key("items");
  w.StartArray();
  for (const CheckItem& i : report.items) {
    w.StartObject();
    w.Key("category");
    str(EnumName(i.category));
    w.Key("name");
    str(i.name);
    w.Key("name_b");
    str(i.name_b);
    w.Key("a");
    i.a ? str(*i.a) : static_cast<void>(w.Null());
    w.Key("b");
    i.b ? str(*i.b) : static_cast<void>(w.Null());
    w.Key("level");
    str(EnumName(i.level));
    w.Key("note");
    str(i.note);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return detail::WriteFileAtomically(path,
                                     std::string(buffer.GetString(), buffer.GetSize()) + "\n");
}

Status WriteCheckXlsx(const CheckReport& report, const std::filesystem::path& path) {
#ifdef NUMPROBE_WITH_XLSX
  NUMPROBE_ASSIGN_OR_RETURN(detail::XlsxWorkbook workbook,
                            detail::XlsxWorkbook::Create(path, /*constant_memory=*/false));
  lxw_workbook* wb = workbook.get();
  lxw_format* bold = workbook_add_format(wb);
  format_set_bold(bold);
  lxw_format* red = workbook_add_format(wb);  // msprobe's highlight colours
  format_set_bg_color(red, 0xFF0000);
  lxw_format* yellow = workbook_add_format(wb);
  format_set_bg_color(yellow, 0xFFFF00);
  auto level_format = [&](Verdict level) {
    return level == Verdict::kError ? red : level == Verdict::kWarning ? yellow : nullptr;
  };
  lxw_worksheet* summary = workbook_add_worksheet(wb, "summary");
  worksheet_write_string(summary, 0, 0, "file_name", bold);
  worksheet_write_string(summary, 0, 1, "pass_check", bold);
  for (int c = 0; c < kCheckCategoryCount; ++c) {
    const CheckCategory category = kCheckCategoryOrder[c];
    const Verdict level = report.Summary(category);
    const auto row = static_cast<lxw_row_t>(c + 1);
    worksheet_write_string(summary, row, 0, std::string(EnumName(category)).c_str(), nullptr);
    worksheet_write_string(summary, row, 1, std::string(EnumName(level)).c_str(),
                           level_format(level));
  }
  const char* const header[] = {"name", "name_b", "value_a", "value_b", "level", "note"};
  for (const CheckCategory category : kCheckCategoryOrder) {
    lxw_worksheet* sheet = workbook_add_worksheet(wb, std::string(EnumName(category)).c_str());
    for (size_t col = 0; col < std::size(header); ++col) {
      worksheet_write_string(sheet, 0, static_cast<lxw_col_t>(col), header[col], bold);
    }
    lxw_row_t row = 1;
    for (const CheckItem& i : report.items) {
      if (i.category != category) continue;
      // Excel caps a cell at 32767 characters.
      auto cell = [](std::string_view v) { return std::string(v.substr(0, 32767)); };
      worksheet_write_string(sheet, row, 0, cell(i.name).c_str(), nullptr);
      worksheet_write_string(sheet, row, 1, cell(i.name_b).c_str(), nullptr);
      worksheet_write_string(sheet, row, 2, cell(i.a ? *i.a : kAbsent).c_str(), nullptr);
      worksheet_write_string(sheet, row, 3, cell(i.b ? *i.b : kAbsent).c_str(), nullptr);
      worksheet_write_string(sheet, row, 4, std::string(EnumName(i.level)).c_str(),
                             level_format(i.level));
      worksheet_write_string(sheet, row, 5, cell(i.note).c_str(), nullptr);
      ++row;
    }
  }
  return workbook.Close();
#else
  (void)report;
  return Status::Unsupported(path.string() +
                             ": XLSX needs a build with NUMPROBE_WITH_XLSX (libxlsxwriter)");
#endif
}

}  // namespace numprobe
