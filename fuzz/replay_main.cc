// Replays fuzz inputs through LLVMFuzzerTestOneInput without libFuzzer, so the corpus runs under
// GCC, ctest and the sanitizers. Arguments are files or folders (walked recursively); a missing
// folder is an error so that a renamed corpus cannot silently run nothing.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Copy into an exactly-sized heap block so that ASan sees reads past the end.
  std::vector<uint8_t> exact(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(exact.data(), exact.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_regular_file(arg, ec)) {
      files += RunFile(arg);
    } else if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file() && entry.path().filename() != "manifest.tsv") {
          files += RunFile(entry.path());
        }
      }
    } else {
      std::fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
      return 2;
    }
  }
  if (files == 0) {
    std::fprintf(stderr, "replay: no inputs found\n");
    return 2;
  }
  std::printf("replayed %d inputs\n", files);
  return 0;
}
