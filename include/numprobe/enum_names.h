// Names of enum values, from one table per enum. Beside the enum, in the enum's namespace, its
// header declares the table and the hook that finds it by argument-dependent lookup:
//   inline constexpr EnumNameEntry<Verdict> kVerdictNames[] = {{Verdict::kPass, "pass"}, ...};
//   constexpr const auto& EnumNameTable(Verdict) { return kVerdictNames; }
// Then EnumName(Verdict::kPass) == "pass" and EnumFromName<Verdict>("pass") == Verdict::kPass.
// Several values may share a name (parsing gives the first); a second naming of the same enum (a
// description, another tool's spelling) is a table of its own, used with NameIn / FromNameIn.
#ifndef NUMPROBE_ENUM_NAMES_H_
#define NUMPROBE_ENUM_NAMES_H_

#include <optional>
#include <string_view>

namespace numprobe {

template <typename E>
struct EnumNameEntry {
  E value;
  std::string_view name;
};

// The name of `value` in `table` (an array of EnumNameEntry<E>); `fallback` when it is not there.
template <typename E, typename Table>
constexpr std::string_view NameIn(const Table& table, E value, std::string_view fallback = {}) {
  for (const EnumNameEntry<E>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

// The first value named `name` in `table`; nullopt when none is.
template <typename E, typename Table>
constexpr std::optional<E> FromNameIn(const Table& table, std::string_view name) {
  for (const EnumNameEntry<E>& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// The name of `value` in its enum's table (empty for a value the table lacks).
template <typename E>
constexpr std::string_view EnumName(E value) {
  return NameIn(EnumNameTable(value), value);
}

// The value of its enum's table named `name`; nullopt when none is.
template <typename E>
constexpr std::optional<E> EnumFromName(std::string_view name) {
  return FromNameIn<E>(EnumNameTable(E{}), name);
}

}  // namespace numprobe

#endif  // NUMPROBE_ENUM_NAMES_H_
