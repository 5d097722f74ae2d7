// Name rules of numprobe scan: which dump entries are modules, communication ops, parameter
// gradients or activations, and how rows map to layers and parameters.
#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "core/ascii_case.h"
#include "core/checked.h"
#include "scan/scan_internal.h"

namespace numprobe::detail {
namespace {

// Calls visit(part) for each of name's dot-separated parts in order, until it returns true;
// whether one did. Without a vector: HasPart is asked for every row of a large scan.
template <typename Visit>
bool AnyPart(std::string_view name, const Visit& visit) {
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    if (visit(name.substr(start, dot == std::string_view::npos ? dot : dot - start))) return true;
    if (dot == std::string_view::npos) return false;
    start = dot + 1;
  }
}

std::vector<std::string_view> Parts(std::string_view name) {
  std::vector<std::string_view> parts;
  AnyPart(name, [&](std::string_view part) {
    parts.push_back(part);
    return false;
  });
  return parts;
}

bool HasPart(std::string_view name, std::string_view part) {
  return AnyPart(name, [&](std::string_view p) { return p == part; });
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// msprobe's nan_analyze COMMUNICATION_KEYWORDS, matched against the API name.
constexpr std::array<std::string_view, 21> kCommunicationApis = {"send",
                                                                 "recv",
                                                                 "broadcast",
                                                                 "all_reduce",
                                                                 "reduce",
                                                                 "all_gather",
                                                                 "gather",
                                                                 "isend",
                                                                 "irecv",
                                                                 "scatter",
                                                                 "reduce_scatter",
                                                                 "_reduce_scatter_base",
                                                                 "_all_gather_base",
                                                                 "all_to_all_single",
                                                                 "all_to_all",
                                                                 "all_gather_into_tensor",
                                                                 "reduce_scatter_tensor",
                                                                 "send_object_list",
                                                                 "recv_object_list",
                                                                 "batch_isend_irecv",
                                                                 "P2POp"};

constexpr std::array<std::string_view, 7> kEmptyApis = {
    "empty",         "empty_like",        "new_empty",  "new_empty_strided",
    "empty_strided", "empty_with_format", "empty_cache"};

constexpr std::array<std::string_view, 33> kActivations = {
    "relu", "relu6",   "relu_",       "leaky_relu", "leakyrelu",   "prelu",         "rrelu",
    "elu",  "selu",    "celu",        "gelu",       "fast_gelu",   "npu_fast_gelu", "fastgelu",
    "silu", "swish",   "mish",        "sigmoid",    "hardsigmoid", "hardswish",     "hardtanh",
    "tanh", "softmax", "log_softmax", "logsoftmax", "softplus",    "softsign",      "logsigmoid",
    "glu",  "swiglu",  "npu_swiglu",  "threshold",  "npu_gelu"};

}  // namespace

bool IsModuleEntry(std::string_view name) {
  return name.starts_with("Module.") || name.starts_with("Cell.");
}

bool IsParametersGradEntry(std::string_view name) { return HasPart(name, "parameters_grad"); }

bool IsCommunicationEntry(std::string_view name) {
  if (!name.starts_with("Distributed.") && !name.starts_with("MintDistributed.")) return false;
  const std::string_view api = ApiName(name);
  return std::find(kCommunicationApis.begin(), kCommunicationApis.end(), api) !=
         kCommunicationApis.end();
}

bool IsIgnoredEntry(std::string_view name) {
  if (IsModuleEntry(name)) return false;
  const std::string_view api = ApiName(name);
  return std::find(kEmptyApis.begin(), kEmptyApis.end(), api) != kEmptyApis.end();
}

bool IsBackwardEntry(std::string_view name) { return HasPart(name, "backward"); }

std::string_view ApiName(std::string_view name) {
  // The second part: between the first dot and the next (or the end).
  const size_t first = name.find('.');
  if (first == std::string_view::npos) return {};
  const std::string_view rest = name.substr(first + 1);
  return rest.substr(0, rest.find('.'));
}

std::string OpKindLower(std::string_view name) {
  if (!IsModuleEntry(name)) return AsciiLowered(ApiName(name));
  const std::string module = ModuleOfEntry(name);
  const size_t dot = module.rfind('.');
  return AsciiLowered(dot == std::string::npos ? module : std::string_view{module}.substr(dot + 1));
}

std::string ModuleOfEntry(std::string_view name) {
  auto parts = Parts(name);
  // Module.{path}.{Class}.{forward|backward}.{n} or Module.{path}.{Class}.parameters_grad[.n]
  while (!parts.empty() && AllDigits(parts.back())) parts.pop_back();
  if (!parts.empty() && (parts.back() == "forward" || parts.back() == "backward" ||
                         parts.back() == "parameters_grad")) {
    parts.pop_back();
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '.';
    out += parts[i];
  }
  return out;
}

std::string LayerOf(std::string_view name, const std::vector<std::string>& module_path) {
  if (IsModuleEntry(name)) return ModuleOfEntry(name);
  if (!module_path.empty()) return ModuleOfEntry(module_path.back());
  // {Prefix}.{api}.{count}.{direction}: the op without its count.
  const auto parts = Parts(name);
  if (parts.size() >= 2) return std::string(parts[0]) + "." + std::string(parts[1]);
  return std::string(name);
}

std::string ParameterKey(std::string_view entry, std::string_view row_name) {
  const size_t dot = row_name.rfind('.');
  const std::string_view param =
      dot == std::string_view::npos ? row_name : row_name.substr(dot + 1);
  return ModuleOfEntry(entry) + "." + std::string(param);
}

bool IsActivationOp(std::string_view name) {
  if (!IsModuleEntry(name)) {  // most entries: the API name, matched without a lowered copy
    const std::string_view api = ApiName(name);
    return std::any_of(kActivations.begin(), kActivations.end(),
                       [&](std::string_view a) { return EqualsLowered(api, a); });
  }
  const std::string kind = OpKindLower(name);
  return std::find(kActivations.begin(), kActivations.end(), kind) != kActivations.end();
}

bool IsFloatDTypeText(std::string_view dtype) {
  // Asked for every row of a large scan: matched in place, without a lowered copy.
  if (StartsWithLowered(dtype, "torch.")) dtype.remove_prefix(6);
  if (StartsWithLowered(dtype, "mindspore.")) dtype.remove_prefix(10);
  return StartsWithLowered(dtype, "float") || StartsWithLowered(dtype, "bfloat") ||
         EqualsLowered(dtype, "half") || EqualsLowered(dtype, "double");
}

std::optional<int64_t> NumelOfShapeText(std::string_view shape) {
  // "[2, 3]", "(2, 3)", "torch.Size([2, 3])", "[]"
  const size_t open = shape.find_first_of("[(");
  const size_t close = shape.find_first_of("])", open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
  std::string_view inner = shape.substr(open + 1, close - open - 1);
  int64_t numel = 1;
  while (!inner.empty()) {
    while (!inner.empty() && (inner.front() == ' ' || inner.front() == ',')) inner.remove_prefix(1);
    if (inner.empty()) break;
    int64_t dim = 0;
    const auto [ptr, ec] = std::from_chars(inner.data(), inner.data() + inner.size(), dim);
    if (ec != std::errc() || dim < 0) return std::nullopt;
    const std::optional<int64_t> product = CheckedMul(numel, dim);
    if (!product) return std::nullopt;
    numel = *product;
    inner.remove_prefix(static_cast<size_t>(ptr - inner.data()));
  }
  return numel;
}

}  // namespace numprobe::detail
