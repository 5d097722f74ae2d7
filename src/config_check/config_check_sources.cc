// Where config-check's facts come from: hyperparameters in JSON, YAML and shell files and in an
// argv; SHA-256 of files (OpenSSL); the Python probe, run as a child process with a deadline; and
// the name classes that decide categories and levels.
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef NUMPROBE_WITH_YAML
#include <yaml-cpp/yaml.h>
#endif

#include "config_check/config_check_internal.h"
#include "core/json.h"
#include "core/sha256.h"

extern char** environ;

namespace numprobe {
namespace detail {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWithAny(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

}  // namespace

std::string CanonicalDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

std::string CanonicalBigInt(const JsonValue& v) {
  // Integers up to 2^64 - 1 keep their digits (as RapidJSON's Uint64 read them before); larger
  // ones are read as a double.
  uint64_t u = 0;
  const std::string& digits = v.big_int_digits();
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u);
  if (ec == std::errc() && end == digits.data() + digits.size()) return digits;
  return CanonicalDouble(v.number_value());
}

std::optional<std::string> CanonicalNumber(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  bool digit = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '+' && c != '-' && c != '.' && c != 'e' && c != 'E') {
      return std::nullopt;
    }
  }
  if (!digit) return std::nullopt;
  std::string_view body = text;
  const bool negative = body.front() == '-';
  if (body.front() == '+' || body.front() == '-') body.remove_prefix(1);
  if (!body.empty() &&
      std::all_of(body.begin(), body.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    while (body.size() > 1 && body.front() == '0') body.remove_prefix(1);
    return (negative && body != "0" ? "-" : "") + std::string(body);
  }
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return CanonicalDouble(v);
}

bool IsDeterminismEnvName(std::string_view name) {
  const std::string u = Upper(name);
  static const std::array<std::string_view, 6> kExact = {
      "PYTHONHASHSEED",         "CUBLAS_WORKSPACE_CONFIG", "CUDA_LAUNCH_BLOCKING",
      "ASCEND_LAUNCH_BLOCKING", "TF_CUDNN_DETERMINISTIC",  "TF_DETERMINISTIC_OPS"};
  return std::find(kExact.begin(), kExact.end(), u) != kExact.end() ||
         u.find("SEED") != std::string::npos || u.find("DETERMINISTIC") != std::string::npos;
}

bool IsNumericsEnvName(std::string_view name) {
  const std::string u = Upper(name);
  return StartsWithAny(
             u, {"NCCL_",    "HCCL_",       "CUDA_",     "CUBLAS",  "CUDNN", "NVIDIA_TF32",
                 "OMP_",     "MKL_",        "OPENBLAS_", "KMP_",    "GOMP_", "TORCH_",
                 "PYTORCH_", "XLA_",        "TF_",       "ASCEND_", "MS_",   "HIP_",
                 "ROCM_",    "MIOPEN_",     "ACL_",      "NVTE_",   "TE_",   "FLASH_ATTENTION",
                 "ATB_",     "INF_NAN_MODE"}) ||
         u == "LD_PRELOAD" || u == "LD_LIBRARY_PATH" || u == "PYTHONPATH";
}

bool IsSessionEnvName(std::string_view name) {
  static const std::array<std::string_view, 28> kExact = {"HOSTNAME",
                                                          "PWD",
                                                          "OLDPWD",
                                                          "SHLVL",
                                                          "_",
                                                          "TERM",
                                                          "COLORTERM",
                                                          "DISPLAY",
                                                          "LS_COLORS",
                                                          "PS1",
                                                          "PS2",
                                                          "PROMPT_COMMAND",
                                                          "TMUX",
                                                          "TMUX_PANE",
                                                          "STY",
                                                          "WINDOW",
                                                          "WINDOWID",
                                                          "MAIL",
                                                          "DBUS_SESSION_BUS_ADDRESS",
                                                          "GPG_TTY",
                                                          "INVOCATION_ID",
                                                          "JOURNAL_STREAM",
                                                          "MOTD_SHOWN",
                                                          "SLURM_JOB_ID",
                                                          "SLURM_JOBID",
                                                          "SLURM_TASK_PID",
                                                          "PBS_JOBID",
                                                          "LSB_JOBID"};
  const std::string u = Upper(name);
  return std::find(kExact.begin(), kExact.end(), u) != kExact.end() ||
         StartsWithAny(u, {"SSH_", "XDG_", "HIST", "TERM_", "VSCODE_", "KITTY_"});
}

const std::vector<std::string>& KeyLibraries() {
  static const std::vector<std::string> kLibraries = {
      "torch",  "numpy",       "transformers", "deepspeed",         "megatron-core", "datasets",
      "peft",   "accelerate",  "torch-npu",    "mindspore",         "apex",          "flash-attn",
      "triton", "safetensors", "tokenizers",   "transformer-engine"};
  return kLibraries;
}

bool IsKeyLibrary(std::string_view name) {
  std::string n = Lower(name);
  std::replace(n.begin(), n.end(), '_', '-');
  if (n == "python" || n.starts_with("torch.") || n.starts_with("python.")) return true;
  if (n == "megatron") return true;
  const auto& libs = KeyLibraries();
  return std::find(libs.begin(), libs.end(), n) != libs.end();
}

bool IsSeedName(std::string_view dotted_name) {
  const size_t dot = dotted_name.rfind('.');
  const std::string last =
      Lower(dot == std::string_view::npos ? dotted_name : dotted_name.substr(dot + 1));
  return last.find("seed") != std::string::npos;
}

std::string CanonicalHyperparameterName(std::string_view dotted_name) {
  const size_t dot = dotted_name.rfind('.');
  std::string last =
      Lower(dot == std::string_view::npos ? dotted_name : dotted_name.substr(dot + 1));
  std::replace(last.begin(), last.end(), '-', '_');
  // msprobe's config_check/resource/hyperparameter.yaml.
  static const std::array<std::pair<std::string_view, std::string_view>, 13> kAliases = {{
      {"lr", "learning_rate"},
      {"learningrate", "learning_rate"},
      {"batch", "batch_size"},
      {"bs", "batch_size"},
      {"batch_size_per_gpu", "batch_size"},
      {"num_epochs", "epochs"},
      {"max_epochs", "epochs"},
      {"epoch", "epochs"},
      {"wd", "weight_decay"},
      {"weightdecay", "weight_decay"},
      {"dropout", "dropout_rate"},
      {"drop_rate", "dropout_rate"},
      {"seed", "seed"},
  }};
  for (const auto& [alias, canonical] : kAliases) {
    if (last == alias) return std::string(canonical);
  }
  return last;
}

std::string Sha256Hex(std::string_view bytes) {
  auto hex = Sha256::Hex(bytes);
  return hex ? *hex : std::string();
}

Result<std::string> ReadCappedFile(const std::filesystem::path& path, uint64_t max_bytes,
                                   std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound(path.string() + ": no such file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IoError(path.string() + ": " + ec.message());
  if (size > max_bytes) {
    return Status::OutOfRange(fmt::format("{}: {} bytes exceeds the {} limit of {}", path.string(),
                                          size, what, max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path.string() + ": cannot open");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) {
    return Status::IoError(path.string() + ": short read");
  }
  return text;
}

Result<std::string> RunAndCapture(const std::vector<std::string>& argv, int timeout_s,
                                  size_t max_output) {
  if (argv.empty()) return Status::InvalidArgument("no command to run");
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Status::IoError(std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Status::IoError(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawned != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return Status::NotFound(fmt::format("{}: cannot run: {}", argv[0], std::strerror(spawned)));
  }
  std::string out;
  std::string err;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  Status failure;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      failure =
          Status::OutOfRange(fmt::format("{}: no answer within {} s; stopped", argv[0], timeout_s));
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) {
      failure = Status::IoError(std::strerror(errno));
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[65536];
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string& target = i == 0 ? out : err;
      target.append(buf, static_cast<size_t>(n));
      if (i == 1 && err.size() > 65536) err.erase(0, err.size() - 65536);
    }
    if (out.size() > max_output) {
      failure = Status::OutOfRange(
          fmt::format("{}: more than {} bytes of output; stopped", argv[0], max_output));
      break;
    }
  }
  for (pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (!failure.ok()) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!failure.ok()) return failure;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    const size_t nl = err.rfind('\n');
    const std::string last = nl == std::string::npos ? err : err.substr(nl + 1);
    return Status::IoError(fmt::format("{} exited with {} {}{}", argv[0],
                                       WIFEXITED(status) ? "status" : "signal",
                                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                                       last.empty() ? "" : ": " + last));
  }
  return out;
}

std::string_view PythonProbeScript() {
  return R"PY(
import json, platform, sys
out = {"pip": {}, "random": {}, "packages": {}, "errors": []}
out["pip"]["python"] = platform.python_version()
out["pip"]["python.implementation"] = platform.python_implementation()
try:
    import importlib.metadata as md
    for d in md.distributions():
        name = d.metadata.get("Name")
        if name:
            out["packages"][name.lower().replace("_", "-")] = d.version
except Exception as e:
    out["errors"].append("packages: %r" % (e,))
if "megatron-core" not in out["packages"]:
    try:
        import megatron.core
        out["packages"]["megatron-core"] = str(getattr(megatron.core, "__version__", "unknown"))
    except Exception:
        pass
try:
    import torch
    p, r = out["pip"], out["random"]
    p["torch.version.cuda"] = str(torch.version.cuda)
    p["torch.version.hip"] = str(getattr(torch.version, "hip", None))
    p["torch.version.git"] = str(getattr(torch.version, "git_version", None))
    p["torch.backends.cudnn.version"] = str(torch.backends.cudnn.version())
    p["torch.backends.mkl.is_available"] = str(torch.backends.mkl.is_available())
    p["torch.backends.mkldnn.is_available"] = str(torch.backends.mkldnn.is_available())
    p["torch.backends.openmp.is_available"] = str(torch.backends.openmp.is_available())
    p["torch.backends.cuda.matmul.allow_tf32"] = str(torch.backends.cuda.matmul.allow_tf32)
    p["torch.backends.cudnn.allow_tf32"] = str(torch.backends.cudnn.allow_tf32)
    p["torch.get_default_dtype"] = str(torch.get_default_dtype())
    p["torch.get_num_threads"] = str(torch.get_num_threads())
    p["torch.cuda.is_available"] = str(torch.cuda.is_available())
    if torch.cuda.is_available():
        p["torch.cuda.device_count"] = str(torch.cuda.device_count())
        for i in range(torch.cuda.device_count()):
            p["torch.cuda.device_name.%d" % i] = torch.cuda.get_device_name(i)
    for line in torch.__config__.show().splitlines():
        line = line.strip()
        if not line.startswith("- "):
            continue
        line = line[2:]
        if line.startswith("Build settings:"):
            for kv in line[len("Build settings:"):].split(","):
                if "=" in kv:
                    k, v = kv.split("=", 1)
                    p["torch.build." + k.strip()] = v.strip()
        elif ": " in line:
            k, v = line.split(": ", 1)
            p["torch.config." + k.strip()] = v.strip()
        else:
            p["torch.config." + line] = "yes"
    r["torch.are_deterministic_algorithms_enabled"] = str(
        torch.are_deterministic_algorithms_enabled())
    r["torch.backends.cudnn.deterministic"] = str(torch.backends.cudnn.deterministic)
    r["torch.backends.cudnn.benchmark"] = str(torch.backends.cudnn.benchmark)
except ImportError:
    pass
except Exception as e:
    out["errors"].append("torch: %r" % (e,))
sys.stdout.write(json.dumps(out))
)PY";
}

}  // namespace detail

namespace {

using detail::CanonicalNumber;

constexpr size_t kMaxConfigBytes = size_t{64} << 20;
constexpr int kMaxConfigDepth = 64;

// A value as canonical text: numbers in shortest form, booleans true/false.
std::string JsonScalarText(const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kString:
      return v.string_value();
    case JsonValue::Kind::kBool:
      return v.bool_value() ? "true" : "false";
    case JsonValue::Kind::kInt:
      return std::to_string(v.int_value());
    case JsonValue::Kind::kBigInt:
      return detail::CanonicalBigInt(v);
    case JsonValue::Kind::kDouble:
      return detail::CanonicalDouble(v.double_value());
    default:
      return "null";
  }
}

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

Status JsonNested(const JsonValue& v, int depth, std::string* out) {
  if (depth > kMaxConfigDepth) return Status::OutOfRange("nested deeper than 64 levels");
  if (v.is_array()) {
    *out += '[';
    bool first = true;
    for (const auto& item : v.array()) {
      if (!first) *out += ", ";
      first = false;
      NUMPROBE_RETURN_IF_ERROR(JsonNested(item, depth + 1, out));
    }
    *out += ']';
  } else if (v.is_object()) {
    *out += '{';
    bool first = true;
    for (const auto& [key, member] : v.object()) {
      if (!first) *out += ", ";
      first = false;
      *out += Quoted(key) + ": ";
      NUMPROBE_RETURN_IF_ERROR(JsonNested(member, depth + 1, out));
    }
    *out += '}';
  } else if (v.is_string()) {
    *out += Quoted(v.string_value());
  } else {
    *out += JsonScalarText(v);
  }
  return Status::Ok();
}

Status FlattenJson(const JsonValue& v, const std::string& prefix, int depth,
                   std::map<std::string, std::string>* out) {
  if (depth > kMaxConfigDepth) return Status::OutOfRange("nested deeper than 64 levels");
  if (v.is_object()) {
    for (const auto& [key, member] : v.object()) {
      NUMPROBE_RETURN_IF_ERROR(FlattenJson(
          member, prefix.empty() ? key : fmt::format("{}.{}", prefix, key), depth + 1, out));
    }
    return Status::Ok();
  }
  std::string text;
  if (v.is_array()) {
    NUMPROBE_RETURN_IF_ERROR(JsonNested(v, depth, &text));
  } else {
    text = JsonScalarText(v);
  }
  (*out)[prefix.empty() ? "(value)" : prefix] = std::move(text);
  return Status::Ok();
}

#ifdef NUMPROBE_WITH_YAML
std::string YamlScalarText(const YAML::Node& n, bool nested) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return nested ? Quoted(s) : s;  // quoted: a string
  // PyYAML's booleans (YAML 1.1), since Python training scripts read their YAML with it.
  static const std::array<std::string_view, 9> kTrue = {"true", "True", "TRUE", "yes", "Yes",
                                                        "YES",  "on",   "On",   "ON"};
  static const std::array<std::string_view, 9> kFalse = {"false", "False", "FALSE", "no", "No",
                                                         "NO",    "off",   "Off",   "OFF"};
  if (std::find(kTrue.begin(), kTrue.end(), s) != kTrue.end()) return "true";
  if (std::find(kFalse.begin(), kFalse.end(), s) != kFalse.end()) return "false";
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return "null";
  if (auto number = CanonicalNumber(s)) return *number;
  return nested ? Quoted(s) : s;
}

// What one YAML file may expand to. An alias names a node again without copying it, so a few lines
// name a great many values (nine lines of nine aliases each: 9^9 = 387 million, all within the
// depth limit): the walk counts the values it visits and the text it makes.
struct YamlBudget {
  int64_t values_left = 1'000'000;
  size_t text_bytes_left = kMaxConfigBytes;  // as much text as the largest file read holds

  Status Visit() {
    if (--values_left < 0) {
      return Status::OutOfRange(
          "expands to more than 1,000,000 values (YAML aliases repeat nodes)");
    }
    return Status::Ok();
  }
  Status Made(size_t bytes) {
    if (bytes > text_bytes_left) {
      return Status::OutOfRange(fmt::format(
          "expands to more than {} bytes of values (YAML aliases repeat nodes)", kMaxConfigBytes));
    }
    text_bytes_left -= bytes;
    return Status::Ok();
  }
};

Status YamlNested(const YAML::Node& n, int depth, YamlBudget& budget, std::string* out) {
  if (depth > kMaxConfigDepth) return Status::OutOfRange("nested deeper than 64 levels");
  NUMPROBE_RETURN_IF_ERROR(budget.Visit());
  // Appends `text` to *out, counted.
  const auto put = [&](std::string_view text) {
    out->append(text);
    return budget.Made(text.size());
  };
  if (n.IsSequence()) {
    NUMPROBE_RETURN_IF_ERROR(put("["));
    for (size_t i = 0; i < n.size(); ++i) {
      if (i > 0) NUMPROBE_RETURN_IF_ERROR(put(", "));
      NUMPROBE_RETURN_IF_ERROR(YamlNested(n[i], depth + 1, budget, out));
    }
    return put("]");
  }
  if (n.IsMap()) {
    NUMPROBE_RETURN_IF_ERROR(put("{"));
    bool first = true;
    for (const auto& kv : n) {
      if (!first) NUMPROBE_RETURN_IF_ERROR(put(", "));
      first = false;
      NUMPROBE_RETURN_IF_ERROR(put(Quoted(kv.first.Scalar()) + ": "));
      NUMPROBE_RETURN_IF_ERROR(YamlNested(kv.second, depth + 1, budget, out));
    }
    return put("}");
  }
  return put(n.IsScalar() ? YamlScalarText(n, true) : "null");
}

Status FlattenYaml(const YAML::Node& n, const std::string& prefix, int depth, YamlBudget& budget,
                   std::map<std::string, std::string>* out) {
  if (depth > kMaxConfigDepth) return Status::OutOfRange("nested deeper than 64 levels");
  if (n.IsMap()) {
    NUMPROBE_RETURN_IF_ERROR(budget.Visit());
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
      std::string path = prefix.empty() ? key : fmt::format("{}.{}", prefix, key);
      NUMPROBE_RETURN_IF_ERROR(budget.Made(path.size()));
      NUMPROBE_RETURN_IF_ERROR(FlattenYaml(kv.second, path, depth + 1, budget, out));
    }
    return Status::Ok();
  }
  std::string text;
  if (n.IsSequence()) {
    NUMPROBE_RETURN_IF_ERROR(YamlNested(n, depth, budget, &text));
  } else {
    NUMPROBE_RETURN_IF_ERROR(budget.Visit());
    text = n.IsScalar() ? YamlScalarText(n, false) : "null";
    NUMPROBE_RETURN_IF_ERROR(budget.Made(text.size()));
  }
  (*out)[prefix.empty() ? "(value)" : prefix] = std::move(text);
  return Status::Ok();
}
#endif

// Shell words of a script: line continuations joined, comments dropped, quotes removed.
std::vector<std::string> ShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') {
        ++i;  // line continuation
        continue;
      }
      word += text[++i];
      in_word = true;
      continue;
    }
    if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '|' || c == '&') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    word += c;
    in_word = true;
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

bool IsOptionToken(std::string_view t) {
  if (t.size() < 2 || t[0] != '-') return false;
  return !CanonicalNumber(t).has_value();  // -1, -0.5 and -1e-3 are values
}

// name=value with an identifier-like name (a Hydra override, an environment assignment).
bool IsAssignment(std::string_view t) {
  const size_t eq = t.find('=');
  if (eq == std::string_view::npos || eq == 0 || t[0] == '-') return false;
  const std::string_view key = t.substr(0, eq);
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '+' ||
           c == '~' || c == '-';
  });
}

std::string ArgValue(std::string_view v) {
  if (auto number = CanonicalNumber(v)) return *number;
  return std::string(v);
}

}  // namespace

Result<std::map<std::string, std::string>> ParseJsonHyperparameters(std::string_view text) {
  // Hyperparameter files written by Python's json may hold bare NaN/Infinity.
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text, kPythonJson));
  std::map<std::string, std::string> out;
  NUMPROBE_RETURN_IF_ERROR(FlattenJson(doc, "", 0, &out));
  return out;
}

Result<std::map<std::string, std::string>> ParseYamlHyperparameters(std::string_view text) {
#ifdef NUMPROBE_WITH_YAML
  std::map<std::string, std::string> out;
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    YamlBudget budget;
    NUMPROBE_RETURN_IF_ERROR(FlattenYaml(root, "", 0, budget, &out));
  } catch (const YAML::Exception& e) {
    return Status::Corrupt(fmt::format("malformed YAML at line {}, column {}: {}", e.mark.line + 1,
                                       e.mark.column + 1, e.msg));
  }
  return out;
#else
  (void)text;
  return Status::Unsupported("YAML needs a build with NUMPROBE_WITH_YAML");
#endif
}

std::map<std::string, std::string> ArgvHyperparameters(const std::vector<std::string>& argv) {
  std::map<std::string, std::string> out;
  auto name_of = [](std::string_view raw) {
    while (!raw.empty() && (raw.front() == '-' || raw.front() == '+' || raw.front() == '~')) {
      raw.remove_prefix(1);
    }
    std::string name(raw);
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string_view t = argv[i];
    const bool long_flag = t.starts_with("--") && t.size() > 2;
    const bool short_flag = !long_flag && t.size() == 2 && t[0] == '-' &&
                            std::isalpha(static_cast<unsigned char>(t[1])) != 0;
    if (long_flag || short_flag) {
      const size_t eq = t.find('=');
      if (long_flag && eq != std::string_view::npos) {
        out[name_of(t.substr(0, eq))] = ArgValue(t.substr(eq + 1));
      } else if (i + 1 < argv.size() && !IsOptionToken(argv[i + 1]) && !IsAssignment(argv[i + 1])) {
        out[name_of(t)] = ArgValue(argv[++i]);
      } else {
        out[name_of(t)] = "true";
      }
      continue;
    }
    // Hydra-style overrides: name=value, +name=value.
    if (IsAssignment(t)) {
      const size_t eq = t.find('=');
      out[name_of(t.substr(0, eq))] = ArgValue(t.substr(eq + 1));
    }
  }
  return out;
}

Result<std::map<std::string, std::string>> ReadHyperparameters(const std::filesystem::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text,
                            detail::ReadCappedFile(path, kMaxConfigBytes, "config file"));
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Result<std::map<std::string, std::string>> parsed = Status::Unsupported(
      fmt::format("{}: cannot tell its format; use .json, .yaml, .yml or .sh", path.string()));
  if (ext == ".json") {
    parsed = ParseJsonHyperparameters(text);
  } else if (ext == ".yaml" || ext == ".yml") {
    parsed = ParseYamlHyperparameters(text);
  } else if (ext == ".sh" || ext == ".bash" || ext == ".zsh") {
    parsed = ArgvHyperparameters(ShellWords(text));
  } else {
    return parsed.error();
  }
  if (!parsed) return parsed.error().WithContext(path.string());
  return parsed;
}

Result<std::string> Sha256OfFile(const std::filesystem::path& path) {
  if (!detail::Sha256::Available()) {
    return Status::Unsupported("SHA-256 needs a build with NUMPROBE_WITH_OPENSSL");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path.string() + ": cannot open");
  detail::Sha256 sha;
  std::vector<char> buf(size_t{1} << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n > 0) sha.Update(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  if (in.bad()) return Status::IoError(path.string() + ": read error");
  NUMPROBE_ASSIGN_OR_RETURN(const detail::Sha256::Digest digest, sha.Finish());
  return detail::Sha256::HexOf(digest);
}

}  // namespace numprobe
