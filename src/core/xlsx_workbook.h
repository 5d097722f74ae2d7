// XlsxWorkbook: a libxlsxwriter workbook written as every numprobe output is. The three xlsx
// writers (compare's tables, config-check's report, merge's workbook) open and close their
// workbooks through it, so that each of them:
// - writes through an AtomicOutput (libxlsxwriter writes by name, into the temporary file);
// - keeps libxlsxwriter's own "[ERROR]" lines off the terminal and in numprobe's one message;
// - is byte-reproducible: the only varying part of an .xlsx is its creation time
//   (docProps/core.xml; libxlsxwriter dates the zip members 1980-01-01), which is taken from
//   SOURCE_DATE_EPOCH when that is set (the reproducible-builds convention), else the clock.
#ifndef NUMPROBE_CORE_XLSX_WORKBOOK_H_
#define NUMPROBE_CORE_XLSX_WORKBOOK_H_

#ifdef NUMPROBE_WITH_XLSX

#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include <xlsxwriter.h>

#include "numprobe/result.h"

#include "core/atomic_file.h"
#include "core/captured_stderr.h"

namespace numprobe::detail {

class XlsxWorkbook {
 public:
  // kIoError (with libxlsxwriter's words) when the workbook cannot be created. With
  // `constant_memory`, rows stream to disk in order and memory does not grow with the table.
  static Result<XlsxWorkbook> Create(const std::filesystem::path& path, bool constant_memory);

  ~XlsxWorkbook();
  XlsxWorkbook(XlsxWorkbook&& other) noexcept;
  XlsxWorkbook& operator=(XlsxWorkbook&&) = delete;
  XlsxWorkbook(const XlsxWorkbook&) = delete;
  XlsxWorkbook& operator=(const XlsxWorkbook&) = delete;

  lxw_workbook* get() const { return workbook_; }

  // Closes the workbook and renames it into place. `cells_written` false (a cell failed) makes
  // it kIoError "PATH: a cell could not be written" and nothing is written.
  Status Close(bool cells_written = true);

 private:
  XlsxWorkbook(AtomicOutput out, std::unique_ptr<CapturedStderr> library_stderr,
               lxw_workbook* workbook, std::filesystem::path path);

  AtomicOutput out_;
  std::unique_ptr<CapturedStderr> library_stderr_;
  lxw_workbook* workbook_ = nullptr;
  std::filesystem::path path_;  // as the caller named it, for messages
};

// SOURCE_DATE_EPOCH's value when it holds a non-negative decimal number of seconds.
std::optional<std::time_t> SourceDateEpoch();

}  // namespace numprobe::detail

#endif  // NUMPROBE_WITH_XLSX
#endif  // NUMPROBE_CORE_XLSX_WORKBOOK_H_
