// Pointing a mistyped command line the right way: the nearest subcommand or option name, and the
// messages that name the unknown word first.
#ifndef NUMPROBE_TOOLS_SUGGEST_H_
#define NUMPROBE_TOOLS_SUGGEST_H_

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace numprobe::cli {

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
// two neighbours each cost 1 ("comapre" is one edit from "compare").
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is close enough to be a typo of it (at most a third of
// its letters changed, leading dashes not counted), or the only candidate `word` is a prefix of;
// "" otherwise.
std::string Nearest(std::string_view word, const std::vector<std::string>& candidates);

// "unknown option '--dtyp'; did you mean '--dtype'?" (the hint only when one is near).
std::string UnknownOptionText(std::string_view option, const std::vector<std::string>& candidates);

// Every spelling of every option of `app` ("-o", "--output", ...), help included.
std::vector<std::string> OptionNames(const CLI::App& app);

// The subcommands of `app` with their one-line descriptions, one per line, aligned.
std::string SubcommandList(const CLI::App& app);

}  // namespace numprobe::cli

#endif  // NUMPROBE_TOOLS_SUGGEST_H_
