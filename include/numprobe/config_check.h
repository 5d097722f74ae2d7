// Environment snapshots of training runs and their comparison (msprobe's config_check): a
// snapshot records the environment variables (secrets masked), Python and library versions and
// framework build flags, determinism settings and seeds, hyperparameters from config files and
// the command line, and fingerprints (SHA-256, tensor statistics) of dataset and weight files.
// Two snapshots compare item by item into pass/warning/error per msprobe's categories: env, pip,
// dataset, weights, hyperparameters, random. Snapshots are JSON files (docs/config-check.md).
// All types own their memory.
#ifndef NUMPROBE_CONFIG_CHECK_H_
#define NUMPROBE_CONFIG_CHECK_H_

#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numprobe/enum_names.h"
#include "numprobe/result.h"
#include "numprobe/stats.h"
#include "numprobe/tensor.h"
#include "numprobe/verdict.h"

namespace numprobe {

enum class CheckCategory : uint8_t { kEnv, kPip, kDataset, kWeights, kHyperparameters, kRandom };
inline constexpr EnumNameEntry<CheckCategory> kCheckCategoryNames[] = {
    {CheckCategory::kEnv, "env"},
    {CheckCategory::kPip, "pip"},
    {CheckCategory::kDataset, "dataset"},
    {CheckCategory::kWeights, "weights"},
    {CheckCategory::kHyperparameters, "hyperparameters"},
    {CheckCategory::kRandom, "random"}};
constexpr const auto& EnumNameTable(CheckCategory /*unused*/) { return kCheckCategoryNames; }
inline constexpr int kCheckCategoryCount = std::size(kCheckCategoryNames);
// The order reports list categories in, the likeliest actionable difference first:
// hyperparameters, random (seeds and RNG), env, pip (packages), dataset, weights.
inline constexpr CheckCategory kCheckCategoryOrder[kCheckCategoryCount] = {
    CheckCategory::kHyperparameters,
    CheckCategory::kRandom,
    CheckCategory::kEnv,
    CheckCategory::kPip,
    CheckCategory::kDataset,
    CheckCategory::kWeights};
// The position of `category` in kCheckCategoryOrder.
int CheckCategoryRank(CheckCategory category);

// A snapshot: per category, item name -> value (text). Missing libraries are recorded as
// "not installed"; masked secrets as "<masked sha256:0123abcd>".
struct Snapshot {
  int version = 1;
  std::string created;  // ISO 8601, UTC
  std::string host;
  std::vector<std::string> command;  // the run's argv (after "--"), secrets masked
  std::map<std::string, std::string> items[kCheckCategoryCount];
  std::vector<std::string> warnings;

  std::map<std::string, std::string>& of(CheckCategory c) { return items[static_cast<int>(c)]; }
  const std::map<std::string, std::string>& of(CheckCategory c) const {
    return items[static_cast<int>(c)];
  }
};

struct CollectOptions {
  std::vector<std::filesystem::path> configs;  // JSON, YAML or shell files of hyperparameters
  // Dataset and weight files or folders, each "PATH" or "LABEL=PATH". Their items are named by
  // role, not by file name: LABEL, or "data1", "weights2", ... by position among the paths
  // (a folder's files as "<role>/<relative path>", a tensor file's tensors as "<role>:<tensor>"),
  // so that runs keeping their files under different names still compare item by item.
  std::vector<std::filesystem::path> data;
  std::vector<std::filesystem::path> weights;
  std::vector<std::string> command;  // the run's argv (hyperparameters from flags)
  // The interpreter asked for versions and torch flags; empty = do not ask.
  std::string python = "/usr/bin/python3";
  int python_timeout_s = 120;
  // "CATEGORY.NAME=VALUE" facts added by the caller (e.g. a script's seed); they win.
  std::vector<std::string> set;
  // Environment as NAME=VALUE strings; nullopt = this process's environment.
  std::optional<std::vector<std::string>> environment;
  bool tensor_stats = true;  // statistics of tensor files among data/weights
};

// Collects a snapshot. kNotFound / kIoError for config, data or weight paths that cannot be read;
// kCorrupt for a malformed config file; kInvalidArgument for a malformed --set. A Python that
// cannot be run is a warning in the snapshot, not an error.
Result<Snapshot> CollectSnapshot(const CollectOptions& options);

// The snapshot as JSON text, and back. ParseSnapshot: kCorrupt for malformed JSON or a document
// that is not a snapshot.
std::string SnapshotToJson(const Snapshot& snapshot);
Result<Snapshot> ParseSnapshot(std::string_view json);
Status WriteSnapshot(const Snapshot& snapshot, const std::filesystem::path& path);
Result<Snapshot> ReadSnapshot(const std::filesystem::path& path);

// A tensor's fingerprint item as snapshots record it: "f32 [10, 144] max=0.083 min=-0.083
// mean=-0.00055 norm=1.86" (numbers in shortest form; mean and norm only for float tensors).
std::string TensorFingerprintText(const TensorView& view, const TensorStats& stats);

// Secret handling: a name is secret when it contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL, AUTH, PRIVATE, COOKIE, SESSION, SIGNATURE or SALT (any case). Its value becomes
// "<masked sha256:XXXXXXXX>" (the first 8 hex digits of the value's SHA-256), so that two
// snapshots still show whether it differs. Passwords inside URLs (scheme://user:pass@host) are
// masked the same way in any value.
bool IsSecretName(std::string_view name);
std::string MaskValue(std::string_view value);
std::string MaskUrlPasswords(std::string_view value);

// Hyperparameters of one config file, flattened to dotted names with canonical values (numbers
// in shortest form, booleans as true/false, lists as JSON text). By extension: .json, .yaml/.yml,
// .sh/.bash (the --flag value pairs of its commands).
Result<std::map<std::string, std::string>> ReadHyperparameters(const std::filesystem::path& path);
Result<std::map<std::string, std::string>> ParseJsonHyperparameters(std::string_view text);
Result<std::map<std::string, std::string>> ParseYamlHyperparameters(std::string_view text);
// --name value, --name=value, -n value, --flag (true) and name=value (Hydra) from an argv.
std::map<std::string, std::string> ArgvHyperparameters(const std::vector<std::string>& argv);

// SHA-256 of a file as 64 hex digits. kUnsupported in a build without OpenSSL.
Result<std::string> Sha256OfFile(const std::filesystem::path& path);

struct CheckItem {
  CheckCategory category = CheckCategory::kEnv;
  std::string name;    // in snapshot A
  std::string name_b;  // in snapshot B when matched under another name (alias, NPU/GPU pair)
  std::optional<std::string> a;
  std::optional<std::string> b;
  Verdict level = Verdict::kPass;  // pass, warning or error
  std::string note;
};

struct CheckReport {
  std::string a_label;
  std::string b_label;
  std::vector<CheckItem> items;                   // by category (in kCheckCategoryOrder), then name
  Verdict Summary(CheckCategory category) const;  // the worst level of the category
  bool differs() const;                           // any warning or error
};

CheckReport CompareSnapshots(const Snapshot& a, const Snapshot& b, std::string a_label = "A",
                             std::string b_label = "B");

// Report files: CSV (one row per item), JSON, and XLSX (a summary sheet as msprobe's result.xlsx
// plus the items, errors red and warnings yellow). kIoError when a file cannot be written;
// kUnsupported for XLSX in a build without libxlsxwriter.
Status WriteCheckCsv(const CheckReport& report, const std::filesystem::path& path);
Status WriteCheckJson(const CheckReport& report, const std::filesystem::path& path);
Status WriteCheckXlsx(const CheckReport& report, const std::filesystem::path& path);

}  // namespace numprobe

#endif  // NUMPROBE_CONFIG_CHECK_H_
