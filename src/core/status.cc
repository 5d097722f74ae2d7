#include "numprobe/status.h"

#include <string>

namespace numprobe {

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
