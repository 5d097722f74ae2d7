#include "core/xlsx_workbook.h"

#ifdef NUMPROBE_WITH_XLSX

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace numprobe::detail {

std::optional<std::time_t> SourceDateEpoch() {
  const char* text = std::getenv("SOURCE_DATE_EPOCH");
  if (text == nullptr || *text == '\0') return std::nullopt;
  const char* end = text + std::strlen(text);
  long long seconds = 0;
  const auto [ptr, ec] = std::from_chars(text, end, seconds);
  if (ec != std::errc() || ptr != end || seconds < 0) return std::nullopt;
  return static_cast<std::time_t>(seconds);
}

Result<XlsxWorkbook> XlsxWorkbook::Create(const std::filesystem::path& path, bool constant_memory) {
  NUMPROBE_ASSIGN_OR_RETURN(AtomicOutput out, AtomicOutput::Create(path));
  auto library_stderr = std::make_unique<CapturedStderr>();
  lxw_workbook_options options = {};
  options.constant_memory = constant_memory ? LXW_TRUE : LXW_FALSE;
  lxw_workbook* workbook = workbook_new_opt(out.LibraryPath().c_str(), &options);
  if (workbook == nullptr) {
    return Status::IoError(path.string() + ": cannot be created" +
                           CapturedSuffix(library_stderr->Finish(), "libxlsxwriter"));
  }
  lxw_doc_properties properties = {};
  properties.created = SourceDateEpoch().value_or(std::time(nullptr));
  // Only fails on a null argument or an allocation failure, which workbook_close reports again.
  (void)workbook_set_properties(workbook, &properties);
  return XlsxWorkbook(std::move(out), std::move(library_stderr), workbook, path);
}

XlsxWorkbook::XlsxWorkbook(AtomicOutput out, std::unique_ptr<CapturedStderr> library_stderr,
                           lxw_workbook* workbook, std::filesystem::path path)
    : out_(std::move(out)),
      library_stderr_(std::move(library_stderr)),
      workbook_(workbook),
      path_(std::move(path)) {}

XlsxWorkbook::XlsxWorkbook(XlsxWorkbook&& other) noexcept
    : out_(std::move(other.out_)),
      library_stderr_(std::move(other.library_stderr_)),
      workbook_(std::exchange(other.workbook_, nullptr)),
      path_(std::move(other.path_)) {}

XlsxWorkbook::~XlsxWorkbook() {
  // An unclosed workbook (an error on the way) is freed unwritten; its temporary file goes with
  // out_.
  if (workbook_ != nullptr) lxw_workbook_free(workbook_);
}

Status XlsxWorkbook::Close(bool cells_written) {
  const lxw_error closed = workbook_close(std::exchange(workbook_, nullptr));
  const std::string library_says = CapturedSuffix(library_stderr_->Finish(), "libxlsxwriter");
  if (!cells_written || closed != LXW_NO_ERROR) {
    return Status::IoError(
        fmt::format("{}: {}{}", path_.string(),
                    closed != LXW_NO_ERROR ? lxw_strerror(closed) : "a cell could not be written",
                    library_says));
  }
  return out_.Commit();
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_WITH_XLSX
