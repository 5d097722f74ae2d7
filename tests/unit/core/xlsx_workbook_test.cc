// core/xlsx_workbook: how every xlsx output is opened and closed. A workbook appears only
// complete, a failed cell leaves nothing, and SOURCE_DATE_EPOCH fixes its creation time.
#ifdef NUMPROBE_WITH_XLSX

#include "core/xlsx_workbook.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::TempDir;

// Sets SOURCE_DATE_EPOCH for one test and restores what was there.
class ScopedEpoch {
 public:
  explicit ScopedEpoch(const char* value) {
    if (const char* old = std::getenv("SOURCE_DATE_EPOCH")) saved_ = old;
    if (value != nullptr) {
      setenv("SOURCE_DATE_EPOCH", value, 1);
    } else {
      unsetenv("SOURCE_DATE_EPOCH");
    }
  }
  ~ScopedEpoch() {
    if (saved_.empty()) {
      unsetenv("SOURCE_DATE_EPOCH");
    } else {
      setenv("SOURCE_DATE_EPOCH", saved_.c_str(), 1);
    }
  }
  ScopedEpoch(const ScopedEpoch&) = delete;
  ScopedEpoch& operator=(const ScopedEpoch&) = delete;

 private:
  std::string saved_;
};

Status WriteOneCell(const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(XlsxWorkbook workbook, XlsxWorkbook::Create(path, false));
  lxw_worksheet* sheet = workbook_add_worksheet(workbook.get(), nullptr);
  const bool ok = worksheet_write_string(sheet, 0, 0, "cell", nullptr) == LXW_NO_ERROR;
  return workbook.Close(ok);
}

TEST(SourceDateEpochTest, ReadsOnlyAWholeNonNegativeNumber) {
  {
    ScopedEpoch epoch("1700000000");
    EXPECT_EQ(SourceDateEpoch(), std::time_t{1700000000});
  }
  for (const char* bad : {"", "-5", "17e8", "12abc", "abc", "99999999999999999999999"}) {
    ScopedEpoch epoch(bad);
    EXPECT_FALSE(SourceDateEpoch().has_value()) << bad;
  }
  ScopedEpoch unset(nullptr);
  EXPECT_FALSE(SourceDateEpoch().has_value());
}

TEST(XlsxWorkbookTest, SameEpochSameBytesOtherEpochOtherBytes) {
  TempDir dir;
  {
    ScopedEpoch epoch("1700000000");
    ASSERT_TRUE(WriteOneCell(dir / "a.xlsx").ok());
    ASSERT_TRUE(WriteOneCell(dir / "b.xlsx").ok());
  }
  {
    ScopedEpoch epoch("1800000000");
    ASSERT_TRUE(WriteOneCell(dir / "c.xlsx").ok());
  }
  const std::string a = ReadFile(dir / "a.xlsx");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a.substr(0, 2), "PK");
  EXPECT_EQ(a, ReadFile(dir / "b.xlsx"));
  EXPECT_NE(a, ReadFile(dir / "c.xlsx"));
}

TEST(XlsxWorkbookTest, AFailedCellOrAnUnclosedWorkbookLeavesNothing) {
  TempDir dir;
  {
    auto workbook = XlsxWorkbook::Create(dir / "failed.xlsx", true);
    ASSERT_TRUE(workbook) << workbook.error().message();
    workbook_add_worksheet(workbook->get(), nullptr);
    const Status closed = workbook->Close(/*cells_written=*/false);
    EXPECT_EQ(closed.code(), ErrorCode::kIoError);
    EXPECT_NE(closed.message().find("failed.xlsx: a cell could not be written"), std::string::npos)
        << closed.message();
  }
  {
    auto workbook = XlsxWorkbook::Create(dir / "abandoned.xlsx", true);
    ASSERT_TRUE(workbook) << workbook.error().message();
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(XlsxWorkbookTest, ANonRegularFileIsNotReplaced) {
  TempDir dir;
  fs::create_directory(dir / "folder.xlsx");
  auto workbook = XlsxWorkbook::Create(dir / "folder.xlsx", false);
  ASSERT_FALSE(workbook);
  EXPECT_EQ(workbook.error().code(), ErrorCode::kIoError);
  EXPECT_TRUE(fs::is_directory(dir / "folder.xlsx"));
}

}  // namespace
}  // namespace numprobe::detail

#endif  // NUMPROBE_WITH_XLSX
