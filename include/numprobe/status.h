// Status: the outcome of a fallible library call. numprobe's library never throws; every call
// that can fail returns a Status or a Result<T> (result.h). A Status is cheap when OK (no
// allocation) and carries a closed error code plus a one-line message otherwise. Messages name
// the file, what is wrong and where ("m.npy: header length 70000 exceeds file size 120").
#ifndef NUMPROBE_STATUS_H_
#define NUMPROBE_STATUS_H_

#include <memory>
#include <string>
#include <string_view>

#include "numprobe/enum_names.h"

namespace numprobe {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // the caller asked for something impossible (bad option, bad map file)
  kNotFound,         // a file, entry or name does not exist
  kIoError,          // the operating system refused (open, read, write, mmap)
  kCorrupt,          // the input is malformed or truncated
  kUnsupported,      // well-formed, but a feature numprobe does not read (e.g. a qint8 storage)
  kOutOfRange,       // a size, count or offset exceeds a limit or overflows 64 bits
  kRejected,         // refused on safety grounds (a pickle global outside the allowlist)
  kInternal,         // a bug in numprobe
};

inline constexpr EnumNameEntry<ErrorCode> kErrorCodeNames[] = {
    {ErrorCode::kOk, "OK"},
    {ErrorCode::kInvalidArgument, "invalid argument"},
    {ErrorCode::kNotFound, "not found"},
    {ErrorCode::kIoError, "I/O error"},
    {ErrorCode::kCorrupt, "corrupt"},
    {ErrorCode::kUnsupported, "unsupported"},
    {ErrorCode::kOutOfRange, "out of range"},
    {ErrorCode::kRejected, "rejected"},
    {ErrorCode::kInternal, "internal error"}};
constexpr const auto& EnumNameTable(ErrorCode /*unused*/) { return kErrorCodeNames; }

// The name of `code`, e.g. "corrupt"; "unknown" for a value outside the enum.
constexpr std::string_view ErrorCodeName(ErrorCode code) {
  return NameIn(kErrorCodeNames, code, "unknown");
}

class [[nodiscard]] Status {
 public:
  // OK.
  Status() = default;

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string message) {
    return {ErrorCode::kInvalidArgument, std::move(message)};
  }
  static Status NotFound(std::string message) { return {ErrorCode::kNotFound, std::move(message)}; }
  static Status IoError(std::string message) { return {ErrorCode::kIoError, std::move(message)}; }
  static Status Corrupt(std::string message) { return {ErrorCode::kCorrupt, std::move(message)}; }
  static Status Unsupported(std::string message) {
    return {ErrorCode::kUnsupported, std::move(message)};
  }
  static Status OutOfRange(std::string message) {
    return {ErrorCode::kOutOfRange, std::move(message)};
  }
  static Status Rejected(std::string message) { return {ErrorCode::kRejected, std::move(message)}; }
  static Status Internal(std::string message) { return {ErrorCode::kInternal, std::move(message)}; }

  bool ok() const { return state_ == nullptr; }
  ErrorCode code() const { return state_ ? state_->code : ErrorCode::kOk; }
  // The message without the code name; empty when OK.
  const std::string& message() const;
  // "corrupt: m.npy: ..." or "OK".
  std::string ToString() const;

  // Returns this status with "context: " put before the message (no-op when OK). Used to add
  // the file name or the tensor name as an error travels up.
  Status WithContext(std::string_view context) const;
  // Returns this status with "; note" put after the message (no-op when OK): what to do about it.
  Status WithNote(std::string_view note) const;

 private:
  struct State {
    ErrorCode code;
    std::string message;
  };
  Status(ErrorCode code, std::string message)
      : state_(std::make_shared<const State>(State{code, std::move(message)})) {}

  std::shared_ptr<const State> state_;  // null when OK
};

}  // namespace numprobe

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define NUMPROBE_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::numprobe::Status numprobe_status_ = (expr);        \
    if (!numprobe_status_.ok()) return numprobe_status_; \
  } while (false)

#endif  // NUMPROBE_STATUS_H_
