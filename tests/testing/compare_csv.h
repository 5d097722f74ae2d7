// Test helpers: read a CSV file (RFC 4180 quoting, as pandas and numprobe write it) and hold
// numprobe's compare CSV against msprobe's: same header prefix, same rows in the same order,
// identical text columns, metric columns equal to 1e-6 relative with identical tokens.
#ifndef NUMPROBE_TESTING_COMPARE_CSV_H_
#define NUMPROBE_TESTING_COMPARE_CSV_H_

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe::test {

using CsvRows = std::vector<std::vector<std::string>>;

// The first .csv file in `folder` (msprobe's result files carry a timestamp in their names).
inline std::string FirstCsvIn(const std::filesystem::path& folder) {
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    if (e.path().extension() == ".csv") return e.path().string();
  }
  return {};
}

inline CsvRows ReadCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  CsvRows rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\n') {
      row.push_back(field);
      field.clear();
      rows.push_back(row);
      row.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

// A metric cell: a number (optionally with "%") or a token.
inline bool ParseMetric(const std::string& text, double* value, bool* percent) {
  std::string t = text;
  *percent = !t.empty() && t.back() == '%';
  if (*percent) t.pop_back();
  if (t.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return false;
  if (t.find_first_of("nN") != std::string::npos &&
      t.find_first_of("0123456789") == std::string::npos) {
    return false;  // "nan"/"Nan" are tokens, not numbers
  }
  *value = v;
  return true;
}

// Compares numprobe's CSV (`ours`) with msprobe's (`theirs`). `metric_columns` are compared
// numerically; every other column of msprobe's header must match exactly, except the rows named
// in `result_exceptions` for the Result and Err_message columns (documented in docs/compat.md).
inline void ExpectSameCompareCsv(const CsvRows& ours, const CsvRows& theirs,
                                 const std::set<std::string>& metric_columns,
                                 const std::set<std::string>& result_exceptions = {}) {
  ASSERT_FALSE(theirs.empty());
  ASSERT_FALSE(ours.empty());
  const auto& header = theirs[0];
  ASSERT_GE(ours[0].size(), header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    ASSERT_EQ(ours[0][c], header[c]) << "column " << c;
  }
  ASSERT_EQ(ours.size(), theirs.size()) << "row count";
  int metric_cells = 0;
  for (size_t r = 1; r < theirs.size(); ++r) {
    ASSERT_GE(ours[r].size(), header.size()) << "row " << r;
    const std::string& name = theirs[r][0];
    EXPECT_EQ(ours[r][0], name) << "row " << r;
    for (size_t c = 0; c < header.size(); ++c) {
      const std::string& col = header[c];
      const std::string& a = ours[r][c];
      const std::string& b = theirs[r][c];
      if ((col == "Result" || col == "Err_message") && result_exceptions.count(name) > 0) continue;
      if (metric_columns.count(col) == 0) {
        EXPECT_EQ(a, b) << name << " / " << col;
        continue;
      }
      double va = 0;
      double vb = 0;
      bool pa = false;
      bool pb = false;
      const bool na = ParseMetric(a, &va, &pa);
      const bool nb = ParseMetric(b, &vb, &pb);
      if (!nb || !na) {
        EXPECT_EQ(a, b) << name << " / " << col << " (token)";
        continue;
      }
      ++metric_cells;
      EXPECT_EQ(pa, pb) << name << " / " << col << ": " << a << " vs " << b;
      if (std::isinf(vb) || std::isinf(va)) {
        EXPECT_EQ(a, b) << name << " / " << col;
        continue;
      }
      const double tol = 1e-6 * std::max(std::fabs(va), std::fabs(vb));
      EXPECT_LE(std::fabs(va - vb), tol) << name << " / " << col << ": " << a << " vs " << b;
    }
  }
  EXPECT_GT(metric_cells, 0);
}

}  // namespace numprobe::test

#endif  // NUMPROBE_TESTING_COMPARE_CSV_H_
