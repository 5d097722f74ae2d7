// Hand-built msprobe dumps for tests: dump.json pieces as msprobe writes them (entries of tensor
// leaves with Max/Min/Mean/Norm, non-finite numbers as Python's bare tokens) and rank folders
// holding them.
#ifndef NUMPROBE_TESTING_DUMP_BUILDER_H_
#define NUMPROBE_TESTING_DUMP_BUILDER_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace numprobe::test {

// A number as Python's json module writes it: shortest round trip, NaN, Infinity, -Infinity.
std::string JsonNumber(double v);

// A tensor leaf: {"type": "torch.Tensor", "dtype", "shape", "Max", "Min", "Mean", "Norm",
// "requires_grad": false}.
std::string TensorLeaf(std::string_view dtype, const std::vector<int64_t>& shape, double max,
                       double min, double mean, double norm);

// Entries: "\"name\": {...}" members of dump.json's "data". `inputs` and `outputs` are leaves
// joined by ", ".
std::string ForwardEntry(std::string_view name, std::string_view inputs, std::string_view outputs);
std::string BackwardEntry(std::string_view name, std::string_view inputs, std::string_view outputs);

struct DumpHeader {
  std::string task = "statistics";
  std::string level;      // omitted when empty
  std::string framework;  // omitted when empty
};

// dump.json's text: the header's members, then "data" with the entries in order.
std::string DumpJsonText(const DumpHeader& header, const std::vector<std::string>& entries);

// Writes DIR/dump.json (creating DIR) and returns DIR.
std::filesystem::path WriteDump(const std::filesystem::path& dir, const DumpHeader& header,
                                const std::vector<std::string>& entries);

}  // namespace numprobe::test

#endif  // NUMPROBE_TESTING_DUMP_BUILDER_H_
