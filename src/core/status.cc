#include "numprobe/status.h"

#include <string>

namespace numprobe {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "OK";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kIoError:
      return "I/O error";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kOutOfRange:
      return "out of range";
    case ErrorCode::kRejected:
      return "rejected";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(ErrorCodeName(state_->code));
  out += ": ";
  out += state_->message;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += state_->message;
  return {state_->code, std::move(message)};
}

Status Status::WithNote(std::string_view note) const {
  if (ok()) return *this;
  std::string message = state_->message;
  message += "; ";
  message += note;
  return {state_->code, std::move(message)};
}

}  // namespace numprobe
