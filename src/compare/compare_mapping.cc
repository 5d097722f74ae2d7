// Mapping files (yaml-cpp) and the built-in MindSpore -> PyTorch API table.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "compare/loaded_mapping.h"

#ifdef NUMPROBE_WITH_YAML
#include <yaml-cpp/yaml.h>
#endif

namespace numprobe::detail {
namespace {

#ifdef NUMPROBE_WITH_YAML
// yaml-cpp reports errors by throwing; the library does not, so every call is wrapped.
Result<YAML::Node> LoadYaml(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound(path.string() + ": no such file");
  }
  try {
    return YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}: line {}: {}", path.string(), e.mark.line + 1, e.msg));
  }
}

Result<std::string> Scalar(const YAML::Node& n, const std::filesystem::path& path) {
  if (!n.IsScalar()) {
    return Status::InvalidArgument(fmt::format("{}: line {}: expected a name, not a {}",
                                               path.string(), n.Mark().line + 1,
                                               n.IsSequence() ? "list" : "mapping"));
  }
  return n.Scalar();
}

Result<std::vector<std::string>> ScalarList(const YAML::Node& n,
                                            const std::filesystem::path& path) {
  std::vector<std::string> out;
  if (!n) return out;
  if (!n.IsSequence()) {
    return Status::InvalidArgument(
        fmt::format("{}: line {}: expected a list", path.string(), n.Mark().line + 1));
  }
  for (const YAML::Node& item : n) {
    NUMPROBE_ASSIGN_OR_RETURN(std::string s, Scalar(item, path));
    out.push_back(std::move(s));
  }
  return out;
}
#endif

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> LoadStringMap(
    const std::filesystem::path& path) {
#ifdef NUMPROBE_WITH_YAML
  NUMPROBE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(path));
  std::vector<std::pair<std::string, std::string>> out;
  if (root.IsNull()) return out;
  if (!root.IsMap()) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a mapping of names to names", path.string()));
  }
  try {
    for (const auto& kv : root) {
      NUMPROBE_ASSIGN_OR_RETURN(std::string key, Scalar(kv.first, path));
      NUMPROBE_ASSIGN_OR_RETURN(std::string value, Scalar(kv.second, path));
      out.emplace_back(std::move(key), std::move(value));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", path.string(), e.msg));
  }
  return out;
#else
  return Status::Unsupported(path.string() +
                             ": mapping files need yaml-cpp, which this build left out");
#endif
}

Result<std::vector<ApiArgMapping>> LoadApiArgMappings(const std::filesystem::path& path) {
#ifdef NUMPROBE_WITH_YAML
  NUMPROBE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(path));
  std::vector<ApiArgMapping> out;
  if (root.IsNull()) return out;
  if (!root.IsSequence()) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a list of {{ms_api, pt_api, ...}} entries", path.string()));
  }
  try {
    for (const YAML::Node& item : root) {
      if (!item.IsMap()) {
        return Status::InvalidArgument(
            fmt::format("{}: line {}: expected a mapping", path.string(), item.Mark().line + 1));
      }
      ApiArgMapping m;
      if (!item["ms_api"] || !item["pt_api"]) {
        return Status::InvalidArgument(fmt::format("{}: line {}: ms_api and pt_api are required",
                                                   path.string(), item.Mark().line + 1));
      }
      NUMPROBE_ASSIGN_OR_RETURN(m.ms_api, Scalar(item["ms_api"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.pt_api, Scalar(item["pt_api"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.ms_args, ScalarList(item["ms_args"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.pt_args, ScalarList(item["pt_args"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.ms_outputs, ScalarList(item["ms_outputs"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.pt_outputs, ScalarList(item["pt_outputs"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.ms_parameters, ScalarList(item["ms_parameters"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.pt_parameters, ScalarList(item["pt_parameters"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.ms_parameters_grad, ScalarList(item["ms_parameters_grad"], path));
      NUMPROBE_ASSIGN_OR_RETURN(m.pt_parameters_grad, ScalarList(item["pt_parameters_grad"], path));
      out.push_back(std::move(m));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", path.string(), e.msg));
  }
  return out;
#else
  return Status::Unsupported(path.string() +
                             ": mapping files need yaml-cpp, which this build left out");
#endif
}

#ifdef NUMPROBE_WITH_YAML
namespace {

// "language_model.embedding" -> {"language_model", "embedding"}; "" -> {}.
Result<std::vector<std::string>> LayerSegments(const std::string& name, bool allow_empty,
                                               const std::filesystem::path& path, int line) {
  std::vector<std::string> out;
  if (name.empty()) {
    if (allow_empty) return out;
    return Status::InvalidArgument(
        fmt::format("{}: line {}: empty layer name", path.string(), line));
  }
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    const std::string part = name.substr(start, dot == std::string::npos ? dot : dot - start);
    if (part.empty()) {
      return Status::InvalidArgument(
          fmt::format("{}: line {}: layer name '{}' has an empty part", path.string(), line, name));
    }
    out.push_back(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

}  // namespace
#endif

Result<LayerMapping> LoadLayerMapping(const std::filesystem::path& path) {
#ifdef NUMPROBE_WITH_YAML
  NUMPROBE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(path));
  LayerMapping out;
  if (root.IsNull()) return out;
  if (!root.IsMap()) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a mapping of layer classes to {{sub-layer: sub-layer}} mappings",
                    path.string()));
  }
  try {
    for (const auto& kv : root) {
      NUMPROBE_ASSIGN_OR_RETURN(std::string cls, Scalar(kv.first, path));
      const int line = kv.first.Mark().line + 1;
      if (cls.empty()) {
        return Status::InvalidArgument(
            fmt::format("{}: line {}: empty layer class", path.string(), line));
      }
      std::vector<LayerRename>& renames = out.classes[cls];
      if (kv.second.IsNull()) continue;
      if (!kv.second.IsMap()) {
        return Status::InvalidArgument(
            fmt::format("{}: line {}: layer class {} must map sub-layer names to names, not a {}",
                        path.string(), kv.second.Mark().line + 1, cls,
                        kv.second.IsSequence() ? "list" : "name"));
      }
      for (const auto& sub : kv.second) {
        const int sub_line = sub.first.Mark().line + 1;
        NUMPROBE_ASSIGN_OR_RETURN(std::string from, Scalar(sub.first, path));
        NUMPROBE_ASSIGN_OR_RETURN(std::string to, Scalar(sub.second, path));
        to = to.substr(0, to.find('('));  // msprobe drops a value's "(...)" part
        LayerRename r;
        NUMPROBE_ASSIGN_OR_RETURN(r.from, LayerSegments(from, false, path, sub_line));
        NUMPROBE_ASSIGN_OR_RETURN(r.to, LayerSegments(to, true, path, sub_line));
        renames.push_back(std::move(r));
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", path.string(), e.msg));
  }
  for (auto& [cls, renames] : out.classes) {
    // Longest first; equal lengths keep file order (the first of two equal names wins).
    std::stable_sort(
        renames.begin(), renames.end(),
        [](const LayerRename& a, const LayerRename& b) { return a.from.size() > b.from.size(); });
  }
  return out;
#else
  return Status::Unsupported(path.string() +
                             ": mapping files need yaml-cpp, which this build left out");
#endif
}

Result<LoadedMapping> LoadMapping(const CompareMapping& mapping) {
  LoadedMapping out;
  out.fuzzy = mapping.fuzzy;
  out.align = mapping.align;
  if (!mapping.data_mapping_file.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(out.data_map, LoadStringMap(mapping.data_mapping_file));
    out.data_mapping = true;
  }
  out.cell_mapping = mapping.cell_mapping;
  if (mapping.cell_mapping && !mapping.cell_mapping_file.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(out.cell_map, LoadStringMap(mapping.cell_mapping_file));
  }
  out.api_mapping = mapping.api_mapping;
  if (mapping.api_mapping && !mapping.api_mapping_file.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(out.api_args, LoadApiArgMappings(mapping.api_mapping_file));
  }
  if (!mapping.layer_mapping_file.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(out.layer_map, LoadLayerMapping(mapping.layer_mapping_file));
    out.layer_mapping = true;
  }
  return out;
}

const std::vector<std::pair<std::string_view, std::string_view>>& BuiltinMsToPtApis() {
  // MindSpore's mindspore.ops functions are dumped as "Functional.<name>"; their PyTorch
  // counterparts are torch.<name> ("Torch.") or torch.nn.functional.<name> ("Functional.").
  // Written from the two frameworks' API references: same-named functional ops need no entry.
  static const std::vector<std::pair<std::string_view, std::string_view>> kTable = [] {
    std::vector<std::pair<std::string_view, std::string_view>> t;
    // mindspore.ops.<x> == torch.<x>
    static constexpr std::string_view kTorchSame[] = {"abs",
                                                      "absolute",
                                                      "acos",
                                                      "acosh",
                                                      "add",
                                                      "addbmm",
                                                      "addcdiv",
                                                      "addcmul",
                                                      "addmm",
                                                      "addmv",
                                                      "addr",
                                                      "all",
                                                      "allclose",
                                                      "amax",
                                                      "amin",
                                                      "angle",
                                                      "any",
                                                      "arange",
                                                      "arccos",
                                                      "arccosh",
                                                      "arcsin",
                                                      "arcsinh",
                                                      "arctan",
                                                      "arctan2",
                                                      "arctanh",
                                                      "argmax",
                                                      "argmin",
                                                      "argsort",
                                                      "asin",
                                                      "asinh",
                                                      "atan",
                                                      "atan2",
                                                      "atanh",
                                                      "atleast_1d",
                                                      "atleast_2d",
                                                      "atleast_3d",
                                                      "baddbmm",
                                                      "bernoulli",
                                                      "bincount",
                                                      "bitwise_and",
                                                      "bitwise_left_shift",
                                                      "bitwise_or",
                                                      "bitwise_right_shift",
                                                      "bitwise_xor",
                                                      "block_diag",
                                                      "bmm",
                                                      "broadcast_to",
                                                      "bucketize",
                                                      "cartesian_prod",
                                                      "cat",
                                                      "cdist",
                                                      "ceil",
                                                      "chunk",
                                                      "clamp",
                                                      "clip",
                                                      "column_stack",
                                                      "combinations",
                                                      "conj",
                                                      "copysign",
                                                      "cos",
                                                      "cosh",
                                                      "count_nonzero",
                                                      "cov",
                                                      "cross",
                                                      "cummax",
                                                      "cummin",
                                                      "cumprod",
                                                      "cumsum",
                                                      "deg2rad",
                                                      "diag",
                                                      "diag_embed",
                                                      "diagflat",
                                                      "diagonal",
                                                      "diff",
                                                      "digamma",
                                                      "dist",
                                                      "div",
                                                      "divide",
                                                      "dot",
                                                      "dsplit",
                                                      "dstack",
                                                      "einsum",
                                                      "eq",
                                                      "equal",
                                                      "erf",
                                                      "erfc",
                                                      "erfinv",
                                                      "exp",
                                                      "exp2",
                                                      "expm1",
                                                      "eye",
                                                      "flatten",
                                                      "flip",
                                                      "fliplr",
                                                      "flipud",
                                                      "float_power",
                                                      "floor",
                                                      "fmax",
                                                      "fmin",
                                                      "fmod",
                                                      "frac",
                                                      "full",
                                                      "full_like",
                                                      "gcd",
                                                      "ge",
                                                      "greater",
                                                      "greater_equal",
                                                      "gt",
                                                      "heaviside",
                                                      "histc",
                                                      "hsplit",
                                                      "hstack",
                                                      "hypot",
                                                      "i0",
                                                      "igamma",
                                                      "igammac",
                                                      "imag",
                                                      "index_add",
                                                      "index_fill",
                                                      "index_select",
                                                      "inner",
                                                      "inverse",
                                                      "isclose",
                                                      "isfinite",
                                                      "isinf",
                                                      "isnan",
                                                      "isneginf",
                                                      "isposinf",
                                                      "isreal",
                                                      "kron",
                                                      "lcm",
                                                      "ldexp",
                                                      "le",
                                                      "lerp",
                                                      "less",
                                                      "less_equal",
                                                      "lgamma",
                                                      "linspace",
                                                      "log",
                                                      "log10",
                                                      "log1p",
                                                      "log2",
                                                      "logaddexp",
                                                      "logaddexp2",
                                                      "logcumsumexp",
                                                      "logdet",
                                                      "logical_and",
                                                      "logical_not",
                                                      "logical_or",
                                                      "logical_xor",
                                                      "logit",
                                                      "logspace",
                                                      "logsumexp",
                                                      "lt",
                                                      "masked_fill",
                                                      "masked_select",
                                                      "matmul",
                                                      "max",
                                                      "maximum",
                                                      "mean",
                                                      "median",
                                                      "meshgrid",
                                                      "min",
                                                      "minimum",
                                                      "mm",
                                                      "moveaxis",
                                                      "movedim",
                                                      "msort",
                                                      "mul",
                                                      "multinomial",
                                                      "multiply",
                                                      "mv",
                                                      "mvlgamma",
                                                      "nan_to_num",
                                                      "nanmean",
                                                      "nanmedian",
                                                      "nansum",
                                                      "narrow",
                                                      "ne",
                                                      "neg",
                                                      "negative",
                                                      "nextafter",
                                                      "nonzero",
                                                      "norm",
                                                      "not_equal",
                                                      "numel",
                                                      "ones",
                                                      "ones_like",
                                                      "orgqr",
                                                      "outer",
                                                      "permute",
                                                      "polar",
                                                      "polygamma",
                                                      "positive",
                                                      "pow",
                                                      "prod",
                                                      "rad2deg",
                                                      "rand",
                                                      "rand_like",
                                                      "randint",
                                                      "randint_like",
                                                      "randn",
                                                      "randn_like",
                                                      "randperm",
                                                      "ravel",
                                                      "real",
                                                      "reciprocal",
                                                      "remainder",
                                                      "renorm",
                                                      "repeat_interleave",
                                                      "reshape",
                                                      "roll",
                                                      "rot90",
                                                      "round",
                                                      "rsqrt",
                                                      "scatter",
                                                      "scatter_add",
                                                      "searchsorted",
                                                      "select",
                                                      "sgn",
                                                      "sigmoid",
                                                      "sign",
                                                      "signbit",
                                                      "sin",
                                                      "sinc",
                                                      "sinh",
                                                      "slogdet",
                                                      "sort",
                                                      "split",
                                                      "sqrt",
                                                      "square",
                                                      "squeeze",
                                                      "stack",
                                                      "std",
                                                      "std_mean",
                                                      "sub",
                                                      "subtract",
                                                      "sum",
                                                      "svd",
                                                      "swapaxes",
                                                      "swapdims",
                                                      "t",
                                                      "take",
                                                      "take_along_dim",
                                                      "tan",
                                                      "tanh",
                                                      "tensor_split",
                                                      "tile",
                                                      "topk",
                                                      "trace",
                                                      "transpose",
                                                      "trapz",
                                                      "tril",
                                                      "tril_indices",
                                                      "triu",
                                                      "triu_indices",
                                                      "true_divide",
                                                      "trunc",
                                                      "unbind",
                                                      "unique",
                                                      "unique_consecutive",
                                                      "unsqueeze",
                                                      "var",
                                                      "var_mean",
                                                      "vsplit",
                                                      "vstack",
                                                      "where",
                                                      "xlogy",
                                                      "zeros",
                                                      "zeros_like"};
    static std::vector<std::string> owned;
    owned.reserve(2 * std::size(kTorchSame) + 32);
    for (const std::string_view name : kTorchSame) {
      owned.push_back("Functional." + std::string(name));
      owned.push_back("Torch." + std::string(name));
    }
    for (size_t i = 0; i + 1 < owned.size(); i += 2) t.emplace_back(owned[i], owned[i + 1]);
    // Different names for the same operation.
    static constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
        {"Functional.expand_dims", "Torch.unsqueeze"},
        {"Functional.concat", "Torch.cat"},
        {"Functional.floor_div", "Torch.floor_divide"},
        {"Functional.floor_mod", "Torch.remainder"},
        {"Functional.tensor_dot", "Torch.tensordot"},
        {"Functional.reverse", "Torch.flip"},
        {"Functional.gather", "Torch.index_select"},
        {"Functional.gather_elements", "Torch.gather"},
        {"Functional.gather_d", "Torch.gather"},
        {"Functional.fill", "Torch.full"},
        {"Functional.matrix_inverse", "Torch.inverse"},
        {"Functional.dense", "Functional.linear"},
        {"Functional.cast", "Tensor.to"},
        {"Functional.tensor_scatter_elements", "Torch.scatter"},
        {"Functional.bias_add", "Torch.add"},
        {"Tensor.expand_dims", "Tensor.unsqueeze"},
        {"Tensor.astype", "Tensor.to"},
    };
    t.insert(t.end(), std::begin(kRenamed), std::end(kRenamed));
    return t;
  }();
  return kTable;
}

}  // namespace numprobe::detail
