#include "testing/dump_builder.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "testing/temp_dir.h"

namespace numprobe::test {

std::string JsonNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", v);
}

std::string TensorLeaf(std::string_view dtype, const std::vector<int64_t>& shape, double max,
                       double min, double mean, double norm) {
  return fmt::format(
      R"({{"type": "torch.Tensor", "dtype": "{}", "shape": [{}], "Max": {}, "Min": {}, )"
      R"("Mean": {}, "Norm": {}, "requires_grad": false}})",
      dtype, fmt::join(shape, ", "), JsonNumber(max), JsonNumber(min), JsonNumber(mean),
      JsonNumber(norm));
}

std::string ForwardEntry(std::string_view name, std::string_view inputs, std::string_view outputs) {
  return fmt::format(R"("{}": {{"input_args": [{}], "input_kwargs": {{}}, "output": [{}]}})", name,
                     inputs, outputs);
}

std::string BackwardEntry(std::string_view name, std::string_view inputs,
                          std::string_view outputs) {
  return fmt::format(R"("{}": {{"input": [{}], "output": [{}]}})", name, inputs, outputs);
}

std::string DumpJsonText(const DumpHeader& header, const std::vector<std::string>& entries) {
  std::string text = fmt::format(R"({{"task": "{}")", header.task);
  if (!header.level.empty()) text += fmt::format(R"(, "level": "{}")", header.level);
  if (!header.framework.empty()) text += fmt::format(R"(, "framework": "{}")", header.framework);
  return text + fmt::format(R"(, "data": {{{}}}}})", fmt::join(entries, ", "));
}

std::filesystem::path WriteDump(const std::filesystem::path& dir, const DumpHeader& header,
                                const std::vector<std::string>& entries) {
  WriteFile(dir / "dump.json", DumpJsonText(header, entries));
  return dir;
}

}  // namespace numprobe::test
