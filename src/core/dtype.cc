#include "numprobe/dtype.h"

#include <string>

namespace numprobe {
namespace {

template <typename Field>
std::optional<DType> FindBy(std::string_view name, Field field) {
  if (name.empty()) return std::nullopt;
  for (const DTypeTraits& t : kDTypeTraits) {
    if (t.*field == name) return t.dtype;
  }
  return std::nullopt;
}

bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::optional<DType> DTypeFromName(std::string_view name) {
  return FindBy(name, &DTypeTraits::name);
}

std::optional<DType> DTypeFromTorchName(std::string_view name) {
  ConsumePrefix(name, "torch.");
  if (auto d = FindBy(name, &DTypeTraits::torch_name)) return d;
  // torch's aliases.
  if (name == "float") return DType::kF32;
  if (name == "double") return DType::kF64;
  if (name == "half") return DType::kF16;
  if (name == "long") return DType::kI64;
  if (name == "int") return DType::kI32;
  if (name == "short") return DType::kI16;
  if (name == "cfloat") return DType::kC64;
  if (name == "cdouble") return DType::kC128;
  return std::nullopt;
}

std::optional<DType> DTypeFromTorchStorage(std::string_view name) {
  ConsumePrefix(name, "torch.");
  if (name.size() <= 7 || name.substr(name.size() - 7) != "Storage") return std::nullopt;
  name.remove_suffix(7);
  return FindBy(name, &DTypeTraits::torch_storage);
}

std::optional<DType> DTypeFromSafetensors(std::string_view name) {
  return FindBy(name, &DTypeTraits::safetensors_name);
}

std::optional<DType> DTypeFromMindSpore(std::string_view name) {
  if (auto d = FindBy(name, &DTypeTraits::mindspore_name)) return d;
  if (name == "Uint8") return DType::kU8;
  if (name == "Uint16") return DType::kU16;
  if (name == "Uint32") return DType::kU32;
  if (name == "Uint64") return DType::kU64;
  return std::nullopt;
}

std::optional<DType> DTypeFromNumpyCode(std::string_view code) {
  return FindBy(code, &DTypeTraits::numpy_descr);
}

std::string TorchDTypeString(DType dtype) {
  return "torch." + std::string(Traits(dtype).torch_name);
}

}  // namespace numprobe
