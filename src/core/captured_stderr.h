// Keeping a C library's own diagnostics off the terminal. libxlsxwriter prints "[ERROR] ..." lines
// to stderr when a write fails (a full disk) and has no switch to stop it; numprobe's library
// never prints, so those lines are captured and become part of numprobe's one error message.
#ifndef NUMPROBE_CORE_CAPTURED_STDERR_H_
#define NUMPROBE_CORE_CAPTURED_STDERR_H_

#include <mutex>
#include <string>
#include <string_view>

namespace numprobe::detail {

// From construction to Finish() (or destruction), file descriptor 2 points at an in-memory file
// (memfd: capturing works on a full disk). The redirection is process-wide, so only the foreign
// library's calls belong in that span; captures are serialised. When the redirection cannot be
// set up, stderr stays as it is and Finish() returns "".
class CapturedStderr {
 public:
  CapturedStderr();
  ~CapturedStderr();
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;

  // Restores stderr and returns what was written meanwhile (at most 64 KiB); "" after the first
  // call.
  std::string Finish();

 private:
  std::unique_lock<std::mutex> lock_;
  int sink_ = -1;
  int saved_ = -1;
};

// " (LIBRARY: LINE)", LINE being the first non-empty line of `captured` without libxlsxwriter's
// "[ERROR][file:line]: " prefix, or "" when nothing was captured: a suffix for numprobe's message.
std::string CapturedSuffix(const std::string& captured, std::string_view library);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_CAPTURED_STDERR_H_
