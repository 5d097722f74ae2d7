// Test helpers shared by every test executable: a temporary folder that cleans up after itself,
// and small file helpers.
#ifndef NUMPROBE_TESTING_TEMP_DIR_H_
#define NUMPROBE_TESTING_TEMP_DIR_H_

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace numprobe::test {

// A new, empty folder under the system's temporary folder (mkdtemp: unique even when tests run
// in parallel), removed with everything in it when the object goes away.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "numprobe_test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }
  // Writes `bytes` to `name` (a path relative to the folder; parent folders are created).
  std::filesystem::path Write(const std::filesystem::path& name, std::string_view bytes) const;
  // Entries directly in the folder.
  size_t EntryCount() const;

 private:
  std::filesystem::path path_;
};

// The whole file as bytes ("" when it cannot be read).
std::string ReadFile(const std::filesystem::path& path);
// Writes `bytes` to `path`, creating parent folders.
void WriteFile(const std::filesystem::path& path, std::string_view bytes);

}  // namespace numprobe::test

#endif  // NUMPROBE_TESTING_TEMP_DIR_H_
