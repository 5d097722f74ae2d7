#include "compare/compare_writer.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <rapidjson/filewritestream.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include "core/csv.h"
#include "core/py_format.h"

namespace numprobe {
namespace fs = std::filesystem;

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// Writes through a temporary file beside `path` and renames it into place on Commit().
class AtomicFile {
 public:
  explicit AtomicFile(fs::path path)
      : path_(std::move(path)),
        temp_(path_.string() + fmt::format(".tmp{}", static_cast<long>(::getpid()))) {}
  ~AtomicFile() {
    if (file_) {
      file_.reset();
      std::error_code ec;
      fs::remove(temp_, ec);
    }
  }
  Status Open() {
    file_.reset(std::fopen(temp_.c_str(), "wb"));
    if (!file_) return Status::IoError(fmt::format("{}: {}", temp_.string(), std::strerror(errno)));
    return Status::Ok();
  }
  std::FILE* get() const { return file_.get(); }
  Status Commit() {
    const bool write_error = std::ferror(file_.get()) != 0;
    const bool close_error = std::fclose(file_.release()) != 0;
    std::error_code ec;
    if (write_error || close_error) {
      fs::remove(temp_, ec);
      return Status::IoError(fmt::format("{}: write failed", path_.string()));
    }
    fs::rename(temp_, path_, ec);
    if (ec) {
      fs::remove(temp_, ec);
      return Status::IoError(fmt::format("{}: {}", path_.string(), ec.message()));
    }
    return Status::Ok();
  }

 private:
  fs::path path_;
  fs::path temp_;
  FilePtr file_;
};

// True when `s` is a number in JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

Status WriteCompareCsv(const CompareTable& table, const fs::path& path) {
  AtomicFile file(path);
  NUMPROBE_RETURN_IF_ERROR(file.Open());
  std::string buffer;
  detail::AppendCsvLine(table.Header(), &buffer);
  std::vector<std::string> cells;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    table.CsvCells(i, &cells);
    detail::AppendCsvLine(cells, &buffer);
    if (buffer.size() > (1 << 20)) {
      std::fwrite(buffer.data(), 1, buffer.size(), file.get());
      buffer.clear();
    }
  }
  std::fwrite(buffer.data(), 1, buffer.size(), file.get());
  return file.Commit();
}

Status WriteCompareJson(const CompareTable& table, const fs::path& path,
                        const std::string& target_label, const std::string& golden_label) {
  AtomicFile file(path);
  NUMPROBE_RETURN_IF_ERROR(file.Open());
  char buffer[1 << 16];
  rapidjson::FileWriteStream stream(file.get(), buffer, sizeof(buffer));
  rapidjson::Writer<rapidjson::FileWriteStream> w(stream);
  auto str = [&](const std::string& s) {
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("numprobe_compare");
  w.Int(1);
  w.Key("mode");
  str(std::string(EnumName(table.mode)));
  w.Key("target");
  str(target_label);
  w.Key("golden");
  str(golden_label);
  w.Key("columns");
  w.StartArray();
  for (const std::string& h : table.Header()) str(h);
  w.EndArray();
  std::array<int64_t, std::size(kVerdictNames)> counts{};  // by Verdict
  w.Key("rows");
  w.StartArray();
  std::vector<std::string> cells;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    ++counts[static_cast<size_t>(table.rows[i].result)];
    w.StartArray();
    table.CsvCells(i, &cells);
    for (const std::string& cell : cells) {
      // Python's repr of a finite number is a JSON number as it stands: no re-formatting.
      if (IsJsonNumber(cell)) {
        w.RawValue(cell.c_str(), cell.size(), rapidjson::kNumberType);
      } else {
        str(cell);
      }
    }
    w.EndArray();
  }
  w.EndArray();
  w.Key("counts");
  w.StartObject();
  // The verdicts of the Result column, in msprobe's order, then numprobe's.
  for (const Verdict v :
       {Verdict::kPass, Verdict::kWarning, Verdict::kError, Verdict::kUnmatched}) {
    const std::string name(EnumName(v));
    w.Key(name.c_str());
    w.Int64(counts[static_cast<size_t>(v)]);
  }
  w.EndObject();
  w.EndObject();
  stream.Flush();
  return file.Commit();
}

}  // namespace numprobe
