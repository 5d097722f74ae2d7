// config-check collect: the snapshot of a run's environment, and its JSON form.
#include "numprobe/config_check.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <ctime>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include "numprobe/stats.h"
#include "numprobe/tensor_file.h"

#include "config_check/config_check_internal.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "core/json_writer.h"

extern char** environ;

namespace numprobe {

namespace {

constexpr size_t kMaxProbeOutput = size_t{16} << 20;
constexpr size_t kMaxSnapshotBytes = size_t{256} << 20;

}  // namespace

int CheckCategoryRank(CheckCategory category) {
  for (int i = 0; i < kCheckCategoryCount; ++i) {
    if (kCheckCategoryOrder[i] == category) return i;
  }
  return kCheckCategoryCount;
}

bool IsSecretName(std::string_view name) {
  std::string u(name);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::array<std::string_view, 12> kWords = {
      "KEY",  "TOKEN",   "SECRET", "PASSWORD", "PASSWD",    "CREDENTIAL",
      "AUTH", "PRIVATE", "COOKIE", "SESSION",  "SIGNATURE", "SALT"};
  return std::any_of(kWords.begin(), kWords.end(),
                     [&](std::string_view w) { return u.find(w) != std::string::npos; });
}

std::string MaskValue(std::string_view value) {
  const std::string hex = detail::Sha256Hex(value);
  if (hex.empty()) return "<masked>";  // a build without OpenSSL: no fingerprint
  return fmt::format("<masked sha256:{}>", hex.substr(0, 8));
}

std::string MaskUrlPasswords(std::string_view value) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t scheme = value.find("://", pos);
    if (scheme == std::string_view::npos) break;
    const size_t start = scheme + 3;
    size_t end = value.find_first_of("/?# \t\n", start);
    if (end == std::string_view::npos) end = value.size();
    const size_t at = value.rfind('@', end == 0 ? 0 : end - 1);
    const size_t colon = value.find(':', start);
    if (at == std::string_view::npos || at < start || colon == std::string_view::npos ||
        colon > at) {
      out.append(value.substr(pos, start - pos));
      pos = start;
      continue;
    }
    out.append(value.substr(pos, colon + 1 - pos));
    out += MaskValue(value.substr(colon + 1, at - colon - 1));
    pos = at;
  }
  out.append(value.substr(pos));
  return out;
}

namespace {

std::string MaskedValueFor(std::string_view name, std::string_view value) {
  return IsSecretName(name) ? MaskValue(value) : MaskUrlPasswords(value);
}

// The run's argv with the values of secret flags masked.
std::vector<std::string> MaskArgv(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& t = argv[i];
    if (t.size() > 1 && t[0] == '-') {
      const size_t eq = t.find('=');
      const std::string name = t.substr(0, eq);
      if (IsSecretName(name)) {
        if (eq != std::string::npos) {
          out.push_back(name + "=" + MaskValue(std::string_view{t}.substr(eq + 1)));
        } else {
          out.push_back(t);
          if (i + 1 < argv.size()) out.push_back(MaskValue(argv[++i]));
        }
        continue;
      }
    }
    out.push_back(MaskUrlPasswords(t));
  }
  return out;
}

std::string NowIso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return {};
  return buf;
}

// A JSON value of a snapshot or probe as item text.
std::string ValueText(const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kString:
      return v.string_value();
    case JsonValue::Kind::kBool:
      return v.bool_value() ? "True" : "False";
    case JsonValue::Kind::kNull:
      return "None";
    case JsonValue::Kind::kInt:
      return std::to_string(v.int_value());
    case JsonValue::Kind::kBigInt:
      return detail::CanonicalBigInt(v);
    case JsonValue::Kind::kDouble:
      return detail::CanonicalDouble(v.double_value());
    case JsonValue::Kind::kArray:
    case JsonValue::Kind::kObject:
      break;
  }
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kResult);
  w.Value(v);
  return {buffer.GetString(), buffer.GetSize()};
}

void AddProbe(const std::string& json, Snapshot* s) {
  // The probe's json.dumps output, read as standard JSON (bare NaN/Infinity refused).
  auto doc = ParseJson(json, kStandardJson);
  if (!doc || !doc->is_object()) {
    s->warnings.emplace_back("the Python probe printed no JSON; no versions recorded");
    return;
  }
  auto section = [&](const char* key, CheckCategory category) {
    const JsonValue* it = doc->Find(key);
    if (it == nullptr || !it->is_object()) return;
    for (const auto& [name, value] : it->object()) s->of(category)[name] = ValueText(value);
  };
  section("pip", CheckCategory::kPip);
  section("packages", CheckCategory::kPip);
  section("random", CheckCategory::kRandom);
  for (const std::string& lib : detail::KeyLibraries()) {
    s->of(CheckCategory::kPip).try_emplace(lib, "not installed");
  }
  if (const JsonValue* errors = doc->Find("errors"); errors != nullptr && errors->is_array()) {
    for (const JsonValue& e : errors->array()) {
      if (e.is_string()) s->warnings.push_back("Python probe: " + e.string_value());
    }
  }
}

// "LABEL=PATH" -> (LABEL, PATH) when LABEL is a plain word and the whole text names no file;
// otherwise (`kind` + position, the text): items are named by the path's role in the run.
std::pair<std::string, std::filesystem::path> RoleOf(const std::filesystem::path& given,
                                                     std::string_view kind, size_t position) {
  const std::string text = given.string();
  const size_t eq = text.find('=');
  std::error_code ec;
  if (eq != std::string::npos && eq > 0 && eq + 1 < text.size() &&
      !std::filesystem::exists(given, ec)) {
    const std::string label = text.substr(0, eq);
    const bool plain = std::all_of(label.begin(), label.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
    });
    if (plain) return {label, text.substr(eq + 1)};
  }
  return {fmt::format("{}{}", kind, position + 1), given};
}

Status Fingerprint(const std::vector<std::filesystem::path>& roots, CheckCategory category,
                   bool tensor_stats, Snapshot* s) {
  namespace fs = std::filesystem;
  auto& items = s->of(category);
  const std::string_view kind = category == CheckCategory::kDataset ? "data" : "weights";
  for (size_t position = 0; position < roots.size(); ++position) {
    const auto [base, given] = RoleOf(roots[position], kind, position);
    const fs::path root = given.lexically_normal();
    std::error_code ec;
    if (!fs::exists(root, ec)) return Status::NotFound(given.string() + ": no such file or folder");
    std::vector<std::pair<std::string, fs::path>> files;
    if (fs::is_regular_file(root, ec)) {
      files.emplace_back(base, root);
    } else {
      for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_symlink()) {
          if (it->is_directory()) it.disable_recursion_pending();
          s->warnings.push_back(it->path().string() + ": symbolic link not followed");
          continue;
        }
        if (!it->is_regular_file()) continue;
        files.emplace_back(base + "/" + it->path().lexically_relative(root).generic_string(),
                           it->path());
      }
      if (ec) return Status::IoError(fmt::format("{}: {}", root.string(), ec.message()));
      std::sort(files.begin(), files.end());
    }
    for (auto& [key, path] : files) {
      std::string name = key;
      for (int n = 2; items.count(name) > 0; ++n) name = fmt::format("{}#{}", key, n);
      const auto size = fs::file_size(path, ec);
      if (ec) return Status::IoError(fmt::format("{}: {}", path.string(), ec.message()));
      auto sha = Sha256OfFile(path);
      if (!sha && sha.error().code() != ErrorCode::kUnsupported) return sha.error();
      items[name] =
          sha ? fmt::format("sha256:{} size:{}", *sha, size) : fmt::format("size:{}", size);
      if (!tensor_stats) continue;
      std::ifstream in(path, std::ios::binary);
      char head[64] = {};
      in.read(head, sizeof(head));
      const auto got = static_cast<size_t>(in.gcount());
      if (DetectFormat(std::as_bytes(std::span<const char>(head, got)), path) ==
          FileFormat::kUnknown) {
        continue;
      }
      auto file = ReadTensorFile(path);
      if (!file) {
        // (The reader's message names the file.)
        s->warnings.push_back(file.error().message() + "; no tensor statistics");
        continue;
      }
      for (const NamedTensor& t : file->tensors) {
        auto st = ComputeStats(t.tensor.view());
        if (!st) {
          s->warnings.push_back(
              fmt::format("{}: {}: {}", path.string(), t.name, st.error().message()));
          continue;
        }
        items[name + ":" + (t.name.empty() ? "(array)" : t.name)] =
            TensorFingerprintText(t.tensor.view(), *st);
      }
    }
  }
  return Status::Ok();
}

Status ApplySet(const std::string& spec, Snapshot* s) {
  const size_t dot = spec.find('.');
  const size_t eq = spec.find('=');
  if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot + 1 == eq) {
    return Status::InvalidArgument(fmt::format("--set {}: expected CATEGORY.NAME=VALUE", spec));
  }
  const auto category = EnumFromName<CheckCategory>(std::string_view{spec}.substr(0, dot));
  if (!category) {
    return Status::InvalidArgument(fmt::format(
        "--set {}: category must be env, pip, dataset, weights, hyperparameters or random", spec));
  }
  const std::string name = spec.substr(dot + 1, eq - dot - 1);
  s->of(*category)[name] = MaskedValueFor(name, std::string_view{spec}.substr(eq + 1));
  return Status::Ok();
}

}  // namespace

std::string TensorFingerprintText(const TensorView& view, const TensorStats& stats) {
  std::string text = fmt::format("{} [{}]", Name(view.dtype), fmt::join(view.shape, ", "));
  if (stats.has_minmax) {
    text += fmt::format(" max={} min={}", detail::CanonicalDouble(stats.max),
                        detail::CanonicalDouble(stats.min));
  }
  if (stats.has_mean_norm) {
    text += fmt::format(" mean={} norm={}", detail::CanonicalDouble(stats.mean),
                        detail::CanonicalDouble(stats.norm));
  }
  return text;
}

Result<Snapshot> CollectSnapshot(const CollectOptions& options) {
  Snapshot s;
  s.created = NowIso8601();
  s.host = HostName();
  // Environment.
  std::vector<std::string> env;
  if (options.environment) {
    env = *options.environment;
  } else {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  }
  for (const std::string& entry : env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = entry.substr(0, eq);
    const CheckCategory c =
        detail::IsDeterminismEnvName(name) ? CheckCategory::kRandom : CheckCategory::kEnv;
    s.of(c)[name] = MaskedValueFor(name, std::string_view{entry}.substr(eq + 1));
  }
  // Python, libraries and torch's flags.
  if (!options.python.empty()) {
    auto out =
        detail::RunAndCapture({options.python, "-c", std::string(detail::PythonProbeScript())},
                              options.python_timeout_s, kMaxProbeOutput);
    if (out) {
      AddProbe(*out, &s);
    } else {
      s.warnings.push_back("no library versions: " + out.error().message());
      s.of(CheckCategory::kPip)["python"] = "not available";
    }
  }
  // Hyperparameters: config files in order, then the command line (which overrides them).
  std::map<std::string, std::string> hyper;
  for (const auto& path : options.configs) {
    NUMPROBE_ASSIGN_OR_RETURN(auto h, ReadHyperparameters(path));
    for (auto& [k, v] : h) hyper[k] = std::move(v);
  }
  s.command = MaskArgv(options.command);
  for (auto& [k, v] : ArgvHyperparameters(options.command)) hyper[k] = std::move(v);
  for (const auto& [name, value] : hyper) {
    const CheckCategory c =
        detail::IsSeedName(name) ? CheckCategory::kRandom : CheckCategory::kHyperparameters;
    s.of(c)[name] = MaskedValueFor(name, value);
  }
  // Fingerprints.
  NUMPROBE_RETURN_IF_ERROR(
      Fingerprint(options.data, CheckCategory::kDataset, options.tensor_stats, &s));
  NUMPROBE_RETURN_IF_ERROR(
      Fingerprint(options.weights, CheckCategory::kWeights, options.tensor_stats, &s));
  for (const std::string& spec : options.set) NUMPROBE_RETURN_IF_ERROR(ApplySet(spec, &s));
  return s;
}

std::string SnapshotToJson(const Snapshot& snapshot) {
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer, /*kPretty=*/true> w(buffer, JsonFileKind::kResult);
  w.SetIndent(' ', 1);
  auto str = [&](std::string_view v) { w.String(v); };
  w.StartObject();
  w.Key("numprobe_config_snapshot");
  w.Int(snapshot.version);
  w.Key("created");
  str(snapshot.created);
  w.Key("host");
  str(snapshot.host);
  w.Key("command");
  w.StartArray();
  for (const auto& a : snapshot.command) str(a);
  w.EndArray();
  for (int c = 0; c < kCheckCategoryCount; ++c) {
    const std::string_view name = EnumName(static_cast<CheckCategory>(c));
    w.Key(name);
    w.StartObject();
    for (const auto& [k, v] : snapshot.items[c]) {
      w.Key(k);
      str(v);
    }
    w.EndObject();
  }
  w.Key("warnings");
  w.StartArray();
  for (const auto& warning : snapshot.warnings) str(warning);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

Result<Snapshot> ParseSnapshot(std::string_view json) {
  NUMPROBE_ASSIGN_OR_RETURN(
      JsonValue doc,
      ParseJson(json, kPythonJson));
  if (!doc.is_object()) return Status::Corrupt("not a numprobe config snapshot (not an object)");
  const JsonValue* version = doc.Find("numprobe_config_snapshot");
  if (version == nullptr || version->kind() != JsonValue::Kind::kInt ||
      version->int_value() != static_cast<int>(version->int_value())) {
    return Status::Corrupt(
        "not a numprobe config snapshot (no \"numprobe_config_snapshot\" version)");
  }
  if (version->int_value() != 1) {
    return Status::Unsupported(
        fmt::format("config snapshot version {} (this numprobe reads 1)", version->int_value()));
  }
  Snapshot s;
  s.version = 1;
  auto text_member = [&](const char* key, std::string* out) {
    const JsonValue* it = doc.Find(key);
    if (it != nullptr && it->is_string()) *out = it->string_value();
  };
  text_member("created", &s.created);
  text_member("host", &s.host);
  auto list_member = [&](const char* key, std::vector<std::string>* out) {
    const JsonValue* it = doc.Find(key);
    if (it == nullptr || !it->is_array()) return;
    for (const JsonValue& v : it->array()) out->push_back(ValueText(v));
  };
  list_member("command", &s.command);
  list_member("warnings", &s.warnings);
  for (int c = 0; c < kCheckCategoryCount; ++c) {
    const std::string name(EnumName(static_cast<CheckCategory>(c)));
    const JsonValue* it = doc.Find(name);
    if (it == nullptr) continue;
    if (!it->is_object()) return Status::Corrupt(fmt::format("\"{}\" is not an object", name));
    for (const auto& [key, value] : it->object()) s.items[c][key] = ValueText(value);
  }
  return s;
}

Status WriteSnapshot(const Snapshot& snapshot, const std::filesystem::path& path) {
  return detail::WriteFileAtomically(path, SnapshotToJson(snapshot));
}

Result<Snapshot> ReadSnapshot(const std::filesystem::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text,
                            detail::ReadCappedFile(path, kMaxSnapshotBytes, "snapshot"));
  auto s = ParseSnapshot(text);
  if (!s) return s.error().WithContext(path.string());
  return s;
}

}  // namespace numprobe
