// Suggestions for mistyped subcommands and options. CLI11 (2.1) reports an unknown subcommand as
// a missing one and lists unexpected arguments in reverse; it has no "did you mean", and no Debian
// library offers a nearest-word lookup for a dozen names, hence the few lines of edit distance.
#include "suggest.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace numprobe::cli {

size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  const size_t m = b.size();
  // Three rows of the dynamic programme: i-2, i-1, i.
  std::vector<size_t> two(m + 1);
  std::vector<size_t> one(m + 1);
  std::vector<size_t> row(m + 1);
  for (size_t j = 0; j <= m; ++j) one[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    row[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({one[j] + 1, row[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], two[j - 2] + 1);
      }
    }
    std::swap(two, one);
    std::swap(one, row);
  }
  return one[m];
}

namespace {

std::string_view Undashed(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return s;
}

}  // namespace

std::string Nearest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string_view bare = Undashed(word);
  if (bare.empty()) return "";
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  std::vector<std::string> prefixed;
  for (const std::string& c : candidates) {
    const std::string_view cb = Undashed(c);
    if (cb.empty()) continue;
    if (cb.size() > bare.size() && cb.starts_with(bare)) prefixed.push_back(c);
    const size_t d = EditDistance(bare, cb);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  const size_t allowed = std::max<size_t>(1, bare.size() / 3);
  if (best_distance <= allowed) return best;
  if (prefixed.size() == 1) return prefixed[0];
  return "";
}

std::string UnknownOptionText(std::string_view option, const std::vector<std::string>& candidates) {
  std::string text = fmt::format("unknown option '{}'", option);
  const size_t eq = option.find('=');
  const std::string near =
      Nearest(eq == std::string_view::npos ? option : option.substr(0, eq), candidates);
  if (!near.empty()) text += fmt::format("; did you mean '{}'?", near);
  return text;
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

std::string SubcommandList(const CLI::App& app) {
  size_t width = 0;
  for (const CLI::App* sub : app.get_subcommands({}))
    width = std::max(width, sub->get_name().size());
  std::string text;
  for (const CLI::App* sub : app.get_subcommands({})) {
    text += fmt::format("  {:<{}}  {}\n", sub->get_name(), width, sub->get_description());
  }
  return text;
}

}  // namespace numprobe::cli
