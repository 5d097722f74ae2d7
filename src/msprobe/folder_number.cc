#include "msprobe/folder_number.h"

#include <charconv>

#include "msprobe/entry_name.h"

namespace numprobe::detail {

std::optional<int64_t> FolderNumber(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  const std::string_view rest = name.substr(prefix.size());
  // ^(0|[1-9][0-9]*)$, bounded so that the number fits.
  if (!IsDigits(rest) || rest.size() > 15 || (rest.size() > 1 && rest[0] == '0')) {
    return std::nullopt;
  }
  int64_t n = 0;
  std::from_chars(rest.data(), rest.data() + rest.size(), n);
  return n;
}

std::optional<int64_t> ScopeStep(std::string_view scope) {
  const size_t slash = scope.rfind('/');
  return FolderNumber(slash == std::string_view::npos ? scope : scope.substr(slash + 1), "step");
}

}  // namespace numprobe::detail
