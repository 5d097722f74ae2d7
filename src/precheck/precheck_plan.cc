// The static precision plan (precheck_plan.h): scan's headroom for the ranges, the dump's forward
// API entries for the precision-sensitive ops, and the run's settings for the optimizer and loss
// scaling. The op lists are facts of PyTorch: which ops lose accuracy in a 16-bit float (those
// that exponentiate, take logarithms, normalise, or accumulate many terms), and which of them
// torch.autocast runs in float32 (its documented "ops that autocast to float32").
#include "numprobe/app/precheck_plan.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"
#include "numprobe/float_convert.h"
#include "numprobe/scan.h"

#include "core/atomic_file.h"
#include "core/byte_codec.h"
#include "core/json.h"
#include "core/json_writer.h"
#include "msprobe/entry_name.h"
#include "precheck/precheck_plan_parts.h"
#include "precheck/precheck_text.h"

namespace numprobe {
namespace fs = std::filesystem;
namespace {

// Ops whose accuracy suffers in a 16-bit float, by why.
constexpr std::string_view kExpLog[] = {"exp",  "exp2",    "expm1",    "log",
                                        "log2", "log10",   "log1p",    "logsumexp",
                                        "pow",  "__pow__", "__rpow__", "softplus"};
constexpr std::string_view kNormalize[] = {"softmax",       "log_softmax", "softmin",
                                           "layer_norm",    "group_norm",  "batch_norm",
                                           "instance_norm", "normalize",   "local_response_norm"};
constexpr std::string_view kCumulative[] = {"cumsum", "cumprod", "logcumsumexp"};
constexpr std::string_view kReduce[] = {"sum",      "mean",     "norm", "var",    "std",
                                        "var_mean", "std_mean", "prod", "nansum", "nanmean"};
constexpr std::string_view kLosses[] = {"cross_entropy",
                                        "nll_loss",
                                        "kl_div",
                                        "binary_cross_entropy",
                                        "binary_cross_entropy_with_logits",
                                        "mse_loss"};
// Divisions: the argument index of the divisor.
constexpr std::array<std::pair<std::string_view, int>, 9> kDivisions = {{
    {"div", 1},
    {"divide", 1},
    {"true_divide", 1},
    {"__truediv__", 1},
    {"__div__", 1},
    {"__rtruediv__", 0},
    {"__rdiv__", 0},
    {"reciprocal", 0},
    {"rsqrt", 0},
}};
// torch.autocast's ops that autocast to float32.
constexpr std::string_view kAutocastFp32[] = {"__pow__",
                                              "__rdiv__",
                                              "__rpow__",
                                              "__rtruediv__",
                                              "acos",
                                              "asin",
                                              "binary_cross_entropy_with_logits",
                                              "cosh",
                                              "cosine_embedding_loss",
                                              "cdist",
                                              "cosine_similarity",
                                              "cross_entropy",
                                              "cumprod",
                                              "cumsum",
                                              "dist",
                                              "erfinv",
                                              "exp",
                                              "expm1",
                                              "group_norm",
                                              "hinge_embedding_loss",
                                              "kl_div",
                                              "l1_loss",
                                              "layer_norm",
                                              "log",
                                              "log_softmax",
                                              "log10",
                                              "log1p",
                                              "log2",
                                              "margin_ranking_loss",
                                              "mse_loss",
                                              "multilabel_margin_loss",
                                              "multi_margin_loss",
                                              "nll_loss",
                                              "norm",
                                              "normalize",
                                              "pdist",
                                              "poisson_nll_loss",
                                              "pow",
                                              "prod",
                                              "reciprocal",
                                              "rsqrt",
                                              "sinh",
                                              "smooth_l1_loss",
                                              "soft_margin_loss",
                                              "softmax",
                                              "softmin",
                                              "softplus",
                                              "sum",
                                              "renorm",
                                              "tan",
                                              "triplet_margin_loss"};

// Reductions at least this long lose digits in a 16-bit accumulator.
constexpr double kLongReduction = 4096;
// A divisor whose magnitude reaches below this amplifies the numerator's rounding error.
constexpr double kSmallDivisor = 1e-3;

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

std::string Target(DType t) { return std::string(HeadroomTargetName(t)); }

std::optional<int64_t> Numel(std::string_view shape) {
  if (shape.size() < 2 || shape.front() != '[' || shape.back() != ']') return std::nullopt;
  int64_t n = 1;
  size_t start = 1;
  while (start < shape.size() - 1) {
    size_t end = shape.find(',', start);
    if (end == std::string_view::npos) end = shape.size() - 1;
    std::string_view dim = shape.substr(start, end - start);
    while (!dim.empty() && dim.front() == ' ') dim.remove_prefix(1);
    if (!dim.empty()) {
      int64_t d = 0;
      const auto [end_ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), d);
      if (ec != std::errc() || end_ptr != dim.data() + dim.size() || d < 0) return std::nullopt;
      if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
      n *= d;
    }
    start = end + 1;
  }
  return n;
}

bool IsGradient(std::string_view op) {
  return op.find(".backward") != std::string_view::npos ||
         op.find("parameters_grad") != std::string_view::npos;
}

// The bare API name of a forward API entry ("softmax" of "Functional.softmax.0.forward",
// "linalg.inv" of "Torch.linalg.inv.0.forward"), or "" for modules and backward entries.
std::string ForwardApi(std::string_view entry) {
  const detail::EntryNameParts parts = detail::ParseEntryName(entry);
  if (!parts.forward() || parts.prefix == "Module") return {};
  return std::string(parts.api);  // empty unless API-shaped
}

struct OpFacts {
  std::string entry;
  std::string api;
  std::optional<int64_t> in_numel, out_numel;
  // Floating scalar arguments (row name, value): constants the op is called with.
  std::vector<std::pair<std::string, double>> scalars;
  // The divisor, when the op divides: tensor range or scalar value.
  bool divisor_known = false;
  double divisor_lo = 0, divisor_hi = 0;
};

std::vector<OpFacts> ForwardOps(const DumpFile& dump) {
  std::vector<OpFacts> ops;
  for (const DumpEntry& e : dump.entries) {
    std::string api = ForwardApi(e.name);
    if (api.empty()) continue;
    OpFacts f;
    f.entry = e.name;
    f.api = std::move(api);
    int divisor = -1;
    for (const auto& [name, index] : kDivisions) {
      if (name == f.api) divisor = index;
    }
    int input = 0;
    for (uint32_t i = e.first_row; i < e.first_row + e.row_count; ++i) {
      const DumpRow& r = dump.rows[i];
      if (r.state == RowState::kInput) {
        if (input == 0 && r.is_tensor) f.in_numel = Numel(dump.Text(r.shape));
        if (!r.is_tensor && r.stats[kStatMax].kind() == PyValue::Kind::kFloat) {
          f.scalars.emplace_back(r.name, r.stats[kStatMax].as_float());
        }
        if (input == divisor) {
          const PyValue& mx = r.stats[kStatMax];
          const PyValue& mn = r.stats[kStatMin];
          auto num = [](const PyValue& v) -> std::optional<double> {
            if (v.kind() == PyValue::Kind::kFloat) return v.as_float();
            if (v.kind() == PyValue::Kind::kInt) return static_cast<double>(v.as_int());
            return std::nullopt;
          };
          if (num(mx) && (num(mn) || !r.is_tensor)) {
            f.divisor_known = true;
            f.divisor_hi = *num(mx);
            f.divisor_lo = r.is_tensor ? *num(mn) : *num(mx);
          }
        }
        ++input;
      } else if (r.state == RowState::kOutput && !f.out_numel && r.is_tensor) {
        f.out_numel = Numel(dump.Text(r.shape));
      }
    }
    ops.push_back(std::move(f));
  }
  return ops;
}

void AddOpFindings(const std::vector<OpFacts>& ops, DType target, const PlanSettings& settings,
                   std::vector<PlanFinding>* out) {
  const bool autocast = settings.autocast.value_or(false);
  const std::string t = Target(target);
  for (const OpFacts& f : ops) {
    std::string why;
    double value = 0;
    if (In(kExpLog, f.api)) {
      why = "exponentials and logarithms magnify the input's rounding error";
    } else if (In(kNormalize, f.api)) {
      why = "normalisation sums exponentials or squares over a whole axis";
    } else if (In(kCumulative, f.api)) {
      why = "a running sum carries every earlier rounding error forward";
    } else if (In(kLosses, f.api)) {
      why = "the loss takes logarithms of (or sums squares over) the whole batch";
    } else if (In(kReduce, f.api) && f.in_numel && f.out_numel && *f.out_numel > 0) {
      value = static_cast<double>(*f.in_numel) / static_cast<double>(*f.out_numel);
      if (value < kLongReduction) continue;
      why = fmt::format("a reduction over {:g} terms accumulates their rounding errors", value);
    } else if (f.divisor_known) {
      const bool spans_zero = f.divisor_lo <= 0 && f.divisor_hi >= 0;
      const double smallest = std::min(std::fabs(f.divisor_lo), std::fabs(f.divisor_hi));
      if (!spans_zero && smallest >= kSmallDivisor) continue;
      value = spans_zero ? 0 : smallest;
      why = spans_zero ? "the divisor's range reaches zero"
                       : fmt::format("the divisor reaches {:g}", smallest);
    } else {
      continue;
    }
    const bool kept_fp32 = autocast && In(kAutocastFp32, f.api);
    if (kept_fp32) continue;  // torch.autocast runs it in float32
    PlanFinding finding;
    finding.severity = PlanSeverity::kWarning;
    finding.kind = "sensitive_op";
    finding.op = f.entry;
    finding.value = value;
    finding.detail = autocast ? fmt::format("{} stays in {} under autocast: {}", f.api, t, why)
                              : fmt::format("{} would run in {}: {}", f.api, t, why);
    finding.advice = autocast ? fmt::format(
                                    "run it in float32: cast its inputs with .float() inside "
                                    "torch.autocast(enabled=False)")
                              : fmt::format(
                                    "keep {} in float32 (torch.autocast does so for softmax, "
                                    "log_softmax, layer_norm, exp, log, pow, sum, cumsum and the "
                                    "losses), or cast its inputs up",
                                    f.api);
    out->push_back(std::move(finding));
  }
}

// Constants an op is called with that the target cannot hold (a scale of 1e38 in fp16).
void AddScalarFindings(const std::vector<OpFacts>& ops, DType target,
                       std::vector<PlanFinding>* out) {
  const std::string t = Target(target);
  for (const OpFacts& f : ops) {
    for (const auto& [name, value] : f.scalars) {
      if (!std::isfinite(value) || std::isfinite(RoundToDType(target, value))) continue;
      PlanFinding finding;
      finding.severity = PlanSeverity::kError;
      finding.kind = "overflow";
      finding.op = f.entry;
      finding.tensor = name;
      finding.value = value;
      finding.detail = fmt::format("the constant {:g} overflows {} (largest finite {:g})", value, t,
                                   RangeOf(target).max_finite);
      finding.advice = fmt::format("apply it in float32, or fold it into a scale that {} holds", t);
      out->push_back(std::move(finding));
    }
  }
}

// One finding per tensor, then grouped per (severity, kind, layer): the optimizer's state updates
// or a layer's every call read as one line each, with the count and the worst example.
void AddRangeFindings(const ScanReport& scan, DType target, const PlanSettings& settings,
                      std::vector<PlanFinding>* out, int64_t* tensors) {
  struct Group {
    PlanFinding first;
    std::string layer;
    int64_t count = 0;
    double extreme = 0;
  };
  std::vector<Group> groups;
  std::map<std::tuple<PlanSeverity, std::string, std::string>, size_t> index;
  const std::string t = Target(target);
  const FloatRange range = RangeOf(target);
  const bool scaling = settings.loss_scaling.value_or(false);
  for (const HeadroomRow& row : scan.headroom) {
    if (row.nonfinite) continue;
    ++*tensors;
    const TargetFit fit = FitOf(row, target);
    const bool grad = IsGradient(row.op_name);
    PlanFinding f;
    f.op = row.op_name;
    f.tensor = row.tensor;
    if (fit.overflow) {
      f.severity = PlanSeverity::kError;
      f.kind = "overflow";
      f.value = row.max_abs;
      f.detail = fmt::format("max |x| = {:g} overflows {} (largest finite {:g}; headroom 2^{:.1f})",
                             row.max_abs, t, range.max_finite, fit.headroom_log2);
      f.advice = grad
                     ? "lower the loss scale or clip gradients before they are cast"
                     : fmt::format("keep {} in float32 (or rescale its inputs): it does not fit {}",
                                   row.layer, t);
    } else if (grad && row.max_abs > 0 && RoundToDType(target, row.max_abs) == 0) {
      const double k = std::ceil(std::log2(range.min_normal / row.max_abs));
      const bool too_small = scaling && settings.loss_scale && *settings.loss_scale < std::exp2(k);
      if (scaling && !too_small) continue;
      f.severity = PlanSeverity::kError;
      f.kind = "gradient_underflow";
      f.value = row.max_abs;
      f.detail =
          fmt::format("the whole gradient (max |g| = {:g}) flushes to zero in {}{}", row.max_abs, t,
                      too_small ? fmt::format(" even at loss scale {:g}", *settings.loss_scale)
                                : std::string(" without loss scaling"));
      f.advice = fmt::format(
          "scale the loss (torch.cuda.amp.GradScaler); a scale of at least "
          "2^{:.0f} brings it to {}'s normal range",
          k, t);
    } else if (fit.underflow || (row.max_abs > 0 && row.max_abs < range.min_normal)) {
      if (grad && scaling) continue;
      f.severity = PlanSeverity::kWarning;
      f.kind = fit.underflow ? "underflow" : "subnormal";
      f.value = fit.underflow ? row.min_nonzero_abs : row.max_abs;
      f.detail = fit.underflow
                     ? fmt::format("its smallest non-zero |x| = {:g} flushes to zero in {}",
                                   row.min_nonzero_abs, t)
                     : fmt::format(
                           "all its values (max |x| = {:g}) are subnormal in {}: most "
                           "digits are lost",
                           row.max_abs, t);
      f.advice = grad ? "scale the loss (torch.cuda.amp.GradScaler)"
                      : fmt::format("keep {} in float32, or rescale it", row.layer);
    } else if (fit.subnormal) {
      f.severity = PlanSeverity::kInfo;
      f.kind = "subnormal";
      f.value = row.min_nonzero_abs;
      f.detail = fmt::format("its smallest non-zero |x| = {:g} is subnormal in {}",
                             row.min_nonzero_abs, t);
      f.advice = "small values lose relative precision; usually harmless";
    } else {
      continue;
    }
    const std::string layer(row.layer);
    auto [it, added] = index.try_emplace({f.severity, f.kind, layer}, groups.size());
    if (added) groups.push_back({f, layer, 0, f.value});
    Group& g = groups[it->second];
    ++g.count;
    // The group's extreme: the largest magnitude that overflows, the smallest that underflows.
    g.extreme = f.kind == "overflow" ? std::max(g.extreme, f.value) : std::min(g.extreme, f.value);
  }
  for (Group& g : groups) {
    if (g.count > 1) {
      g.first.detail = fmt::format("{} tensors of {} (extreme {:g}); e.g. {}", g.count, g.layer,
                                   g.extreme, g.first.detail);
      g.first.value = g.extreme;
    }
    out->push_back(std::move(g.first));
  }
}

void AddOptimizerFindings(const PlanSettings& s, DType target, std::vector<PlanFinding>* out) {
  const std::string t = Target(target);
  const FloatRange range = RangeOf(target);
  const std::string name = s.optimizer.empty() ? std::string("the optimizer") : s.optimizer;
  if (s.eps && *s.eps > 0) {
    PlanFinding f;
    f.kind = "optimizer";
    f.value = *s.eps;
    if (RoundToDType(target, *s.eps) == 0) {
      f.severity = PlanSeverity::kError;
      f.detail = fmt::format(
          "{} eps = {:g} rounds to 0 in {} (smallest value {:g}): "
          "update / (sqrt(v) + eps) divides by zero where v vanishes",
          name, *s.eps, t, range.min_subnormal);
    } else if (*s.eps < range.min_normal) {
      f.severity = PlanSeverity::kWarning;
      f.detail = fmt::format("{} eps = {:g} is subnormal in {} (smallest normal {:g})", name,
                             *s.eps, t, range.min_normal);
    }
    if (!f.detail.empty()) {
      f.advice = fmt::format(
          "keep the optimizer's states and update in float32 (master weights), "
          "or raise eps to at least {:.0e}",
          range.min_normal);
      out->push_back(std::move(f));
    }
  }
  if (s.lr && s.weight_decay && *s.weight_decay > 0) {
    const double step = *s.lr * *s.weight_decay;
    const double roundoff = UnitRoundoff(target);
    if (step < roundoff) {
      PlanFinding f;
      f.severity = PlanSeverity::kWarning;
      f.kind = "optimizer";
      f.value = step;
      f.detail = fmt::format(
          "weight decay step lr * weight_decay = {:g} is below {}'s unit "
          "roundoff {:g}: w * (1 - lr * wd) rounds back to w",
          step, t, roundoff);
      f.advice = "apply the weight decay to float32 master weights";
      out->push_back(std::move(f));
    }
  }
}

Result<PlanSettings> ParseSettings(std::string_view text, const fs::path& path) {
  JsonSyntaxError syntax;
  JsonReadOptions options = kStandardJson;
  options.syntax_error = &syntax;
  auto parsed = ParseJson(text, options);
  if (!parsed && parsed.error().code() == ErrorCode::kCorrupt) {
    return Status::Corrupt(fmt::format("{}: malformed JSON: {}", path.string(), syntax.reason));
  }
  if (!parsed) return parsed.error().WithContext(path.string());
  const JsonValue& doc = *parsed;
  if (!doc.is_object()) return Status::Corrupt(fmt::format("{}: malformed JSON", path.string()));
  PlanSettings s;
  auto bad = [&](std::string_view key) {
    return Status::Corrupt(fmt::format("{}: \"{}\" has the wrong type", path.string(), key));
  };
  // A member that is absent or null is left unset.
  auto present = [](const JsonValue& obj, const char* key) -> const JsonValue* {
    const JsonValue* v = obj.Find(key);
    return v != nullptr && !v->is_null() ? v : nullptr;
  };
  auto number = [&](const JsonValue& obj, const char* key, std::optional<double>* out) -> Status {
    const JsonValue* v = present(obj, key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_number()) return bad(key);
    *out = v->number_value();
    return Status::Ok();
  };
  if (const JsonValue* o = present(doc, "optimizer")) {
    if (!o->is_object()) return bad("optimizer");
    if (const JsonValue* type = o->Find("type")) {
      if (!type->is_string()) return bad("type");
      s.optimizer = type->string_value();
    }
    NUMPROBE_RETURN_IF_ERROR(number(*o, "lr", &s.lr));
    NUMPROBE_RETURN_IF_ERROR(number(*o, "eps", &s.eps));
    NUMPROBE_RETURN_IF_ERROR(number(*o, "weight_decay", &s.weight_decay));
  }
  for (const char* key : {"loss_scaling", "autocast"}) {
    const JsonValue* v = present(doc, key);
    if (v == nullptr) continue;
    if (v->kind() != JsonValue::Kind::kBool) return bad(key);
    (std::string_view(key) == "autocast" ? s.autocast : s.loss_scaling) = v->bool_value();
  }
  NUMPROBE_RETURN_IF_ERROR(number(doc, "loss_scale", &s.loss_scale));
  return s;
}

Result<std::string> ReadText(const fs::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Status::NotFound(fmt::format("{}: cannot open", path.string()));
  std::string text;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > (size_t{1} << 20)) {
      return Status::OutOfRange(fmt::format("{}: larger than 1 MiB", path.string()));
    }
  }
  return text;
}

int Rank(PlanSeverity s) {
  return s == PlanSeverity::kError ? 0 : s == PlanSeverity::kWarning ? 1 : 2;
}

}  // namespace

int64_t PlanReport::Count(PlanSeverity severity) const {
  return std::count_if(findings.begin(), findings.end(),
                       [&](const PlanFinding& f) { return f.severity == severity; });
}

Result<PlanSettings> ReadPlanSettings(const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  return ParseSettings(text, path);
}

namespace detail {

Status CheckPlanTarget(DType target) {
  if (!ParseHeadroomTarget(HeadroomTargetName(target))) {
    return Status::InvalidArgument("the planned dtype must be fp16, bf16, fp8_e4m3 or fp8_e5m2");
  }
  return Status::Ok();
}

ScanOptions PlanScanOptions(DType target) {
  ScanOptions options;
  options.targets = {target};
  options.watch.fill(false);
  return options;
}

Result<PlanInputs> PlanInputsOf(const fs::path& path, DType target, const PlanSettings* settings) {
  PlanInputs inputs;
  PlanReport& report = inputs.report;
  report.target = target;
  report.dump = path.string();
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<DumpPair> pairs, DiscoverDumpPairs(path, path));
  if (settings != nullptr) {
    report.settings = *settings;
    report.settings_known = true;
  } else if (!pairs.empty() && pairs.front().target) {
    const fs::path file = pairs.front().target->dir / std::string(kPlanSettingsFile);
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) {
      NUMPROBE_ASSIGN_OR_RETURN(report.settings, ReadPlanSettings(file));
      report.settings_known = true;
    }
  }
  for (DumpPair& p : pairs) {
    if (p.target) inputs.pairs.push_back(std::move(p));
  }
  return inputs;
}

Result<PlanPairFacts> PlanPair(const DumpLocation& location, DType target,
                               const PlanSettings& settings) {
  NUMPROBE_ASSIGN_OR_RETURN(DumpFile dump, ReadDumpJson(location.dump_json));
  const std::vector<OpFacts> ops = ForwardOps(dump);
  PlanPairFacts facts;
  facts.ops = static_cast<int64_t>(ops.size());
  AddScalarFindings(ops, target, &facts.findings);
  AddOpFindings(ops, target, settings, &facts.findings);
  return facts;
}

std::string EncodePlanPairFacts(const PlanPairFacts& facts) {
  ByteWriter w;
  w.I64(facts.ops);
  w.U64(facts.findings.size());
  for (const PlanFinding& f : facts.findings) {
    w.U64(static_cast<uint64_t>(f.severity));
    w.Str(f.kind);
    w.Str(f.op);
    w.Str(f.tensor);
    w.Str(f.detail);
    w.Str(f.advice);
    w.F64(f.value);
  }
  return w.Take();
}

Result<PlanPairFacts> DecodePlanPairFacts(std::string_view bytes) {
  ByteReader in(bytes);
  PlanPairFacts facts;
  facts.ops = in.I64();
  facts.findings.resize(in.Count(8));
  for (PlanFinding& f : facts.findings) {
    f.severity = in.Enum<PlanSeverity>(std::size(kPlanSeverityNames));
    f.kind = in.Str();
    f.op = in.Str();
    f.tensor = in.Str();
    f.detail = in.Str();
    f.advice = in.Str();
    f.value = in.F64();
  }
  if (!in.ok() || !in.at_end()) return Status::Corrupt("a truncated or malformed plan record");
  return facts;
}

PlanReport FinishPlan(PlanInputs inputs, const ScanReport& scan,
                      const std::vector<PlanPairFacts>& pairs) {
  PlanReport report = std::move(inputs.report);
  report.warnings = scan.warnings;
  std::vector<PlanFinding> findings;
  AddRangeFindings(scan, report.target, report.settings, &findings, &report.tensors);
  for (const PlanPairFacts& p : pairs) {
    report.ops += p.ops;
    findings.insert(findings.end(), p.findings.begin(), p.findings.end());
  }
  if (report.settings_known) {
    AddOptimizerFindings(report.settings, report.target, &findings);
  } else {
    report.warnings.push_back(fmt::format(
        "no {} beside the dump: optimizer settings unchecked, loss scaling taken as off",
        kPlanSettingsFile));
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const PlanFinding& a, const PlanFinding& b) {
                     return Rank(a.severity) < Rank(b.severity);
                   });
  report.findings = std::move(findings);
  return report;
}

}  // namespace detail

Result<PlanReport> PlanPrecision(const fs::path& path, DType target, const PlanSettings* settings) {
  NUMPROBE_RETURN_IF_ERROR(detail::CheckPlanTarget(target));
  NUMPROBE_ASSIGN_OR_RETURN(const ScanReport scan, ScanDump(path, detail::PlanScanOptions(target)));
  NUMPROBE_ASSIGN_OR_RETURN(detail::PlanInputs inputs,
                            detail::PlanInputsOf(path, target, settings));
  std::vector<detail::PlanPairFacts> pairs;
  pairs.reserve(inputs.pairs.size());
  for (const DumpPair& p : inputs.pairs) {
    NUMPROBE_ASSIGN_OR_RETURN(detail::PlanPairFacts facts,
                              detail::PlanPair(*p.target, target, inputs.report.settings));
    pairs.push_back(std::move(facts));
  }
  return detail::FinishPlan(std::move(inputs), scan, pairs);
}

Status WritePlanReport(const PlanReport& report, const fs::path& dir, std::string_view timestamp) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  const std::string stem = fmt::format("precheck_plan_{}_{}", Target(report.target), timestamp);
  std::string csv(detail::kUtf8Bom);
  csv += detail::CsvWriterLine({"Severity", "Kind", "Op", "Tensor", "Detail", "Advice", "Value"});
  for (const PlanFinding& f : report.findings) {
    csv += detail::CsvWriterLine({std::string(EnumName(f.severity)), f.kind, f.op, f.tensor,
                                  f.detail, f.advice, fmt::format("{:g}", f.value)});
  }
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kResult);
  auto str = [&](std::string_view s) { w.String(s); };
  w.StartObject();
  str("numprobe_precheck_plan");
  w.Int(1);
  str("target");
  str(Target(report.target));
  str("dump");
  str(report.dump);
  str("settings_known");
  w.Bool(report.settings_known);
  str("tensors");
  w.Int64(report.tensors);
  str("ops");
  w.Int64(report.ops);
  str("counts");
  w.StartObject();
  for (PlanSeverity s : {PlanSeverity::kError, PlanSeverity::kWarning, PlanSeverity::kInfo}) {
    str(EnumName(s));
    w.Int64(report.Count(s));
  }
  w.EndObject();
  str("findings");
  w.StartArray();
  for (const PlanFinding& f : report.findings) {
    w.StartObject();
    str("severity");
    str(EnumName(f.severity));
    str("kind");
    str(f.kind);
    str("op");
    str(f.op);
    str("tensor");
    str(f.tensor);
    str("detail");
    str(f.detail);
    str("advice");
    str(f.advice);
    str("value");
    w.Double(f.value);
    w.EndObject();
  }
  w.EndArray();
  str("warnings");
  w.StartArray();
  for (const std::string& warning : report.warnings) str(warning);
  w.EndArray();
  w.EndObject();
  const std::pair<fs::path, std::string_view> outputs[] = {
      {dir / (stem + ".csv"), csv},
      {dir / (stem + ".json"), std::string_view(buffer.GetString(), buffer.GetSize())}};
  for (const auto& [path, text] : outputs) {
    NUMPROBE_RETURN_IF_ERROR(detail::WriteFileAtomically(path, text));
  }
  return Status::Ok();
}

}  // namespace numprobe
