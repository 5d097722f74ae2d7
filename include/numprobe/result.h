// Result<T>: a value or a non-OK Status, shaped like std::expected (which GCC 12 lacks):
// has_value(), value(), error(), operator bool, operator*, operator->. Accessing value() of an
// error is a bug and aborts; it never throws.
#ifndef NUMPROBE_RESULT_H_
#define NUMPROBE_RESULT_H_

#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

#include "numprobe/status.h"

namespace numprobe {

template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Status>, "use Status directly");

 public:
  // NOLINTNEXTLINE(google-explicit-constructor): implicit, like std::expected.
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}
  // `status` must not be OK.
  // NOLINTNEXTLINE(google-explicit-constructor)
  Result(Status status) : storage_(std::in_place_index<1>, std::move(status)) {
    if (std::get<1>(storage_).ok()) {
      storage_.template emplace<1>(Status::Internal("Result built from an OK status"));
    }
  }

  bool has_value() const { return storage_.index() == 0; }
  bool ok() const { return has_value(); }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    CheckValue();
    return std::get<0>(storage_);
  }
  const T& value() const& {
    CheckValue();
    return std::get<0>(storage_);
  }
  T&& value() && {
    CheckValue();
    return std::get<0>(std::move(storage_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error; OK when this holds a value.
  Status error() const { return has_value() ? Status::Ok() : std::get<1>(storage_); }
  Status status() const { return error(); }

 private:
  void CheckValue() const {
    if (!has_value()) std::abort();  // a bug in the caller: value() of an error
  }
  std::variant<T, Status> storage_;
};

}  // namespace numprobe

#define NUMPROBE_CONCAT_INNER_(a, b) a##b
#define NUMPROBE_CONCAT_(a, b) NUMPROBE_CONCAT_INNER_(a, b)

// `NUMPROBE_ASSIGN_OR_RETURN(auto x, Expr());` declares x from a Result or returns its error.
#define NUMPROBE_ASSIGN_OR_RETURN(lhs, expr) \
  NUMPROBE_ASSIGN_OR_RETURN_IMPL_(NUMPROBE_CONCAT_(numprobe_result_, __LINE__), lhs, expr)
// tmp is a name and lhs a declaration, so neither can be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define NUMPROBE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.has_value()) return tmp.error();             \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

#endif  // NUMPROBE_RESULT_H_
