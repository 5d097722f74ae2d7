#include "core/captured_stderr.h"

#include <cstdio>
#include <mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace numprobe::detail {

namespace {

constexpr size_t kMaxCaptured = size_t{64} << 10;

std::mutex& CaptureMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

CapturedStderr::CapturedStderr() : lock_(CaptureMutex()) {
  std::fflush(stderr);
  sink_ = ::memfd_create("numprobe-stderr", MFD_CLOEXEC);
  if (sink_ < 0) return;
  saved_ = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
  if (saved_ < 0 || ::dup2(sink_, 2) < 0) {
    if (saved_ >= 0) ::close(saved_);
    ::close(sink_);
    sink_ = saved_ = -1;
  }
}

CapturedStderr::~CapturedStderr() { Finish(); }

std::string CapturedStderr::Finish() {
  if (sink_ < 0) return {};
  std::fflush(stderr);
  ::dup2(saved_, 2);
  ::close(saved_);
  std::string text(kMaxCaptured, '\0');
  const ssize_t n = ::pread(sink_, text.data(), text.size(), 0);
  ::close(sink_);
  sink_ = saved_ = -1;
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

std::string CapturedSuffix(const std::string& captured, std::string_view library) {
  size_t start = 0;
  while (start < captured.size()) {
    size_t end = captured.find('\n', start);
    if (end == std::string::npos) end = captured.size();
    std::string line = captured.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("[ERROR]") || line.starts_with("[WARNING]")) {
      const size_t colon = line.find("]: ");
      line.erase(0, colon != std::string::npos ? colon + 3 : line.find(']') + 1);
    }
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (!line.empty()) return " (" + std::string(library) + ": " + line + ")";
  }
  return {};
}

}  // namespace numprobe::detail
