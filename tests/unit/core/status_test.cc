// Status, Result<T> and the propagation macros.
#include "numprobe/status.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/result.h"

namespace numprobe {
namespace {

TEST(StatusTest, DefaultIsOk) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(StatusTest, FactoriesSetCodeAndMessage) {
  const std::pair<Status, ErrorCode> cases[] = {
      {Status::InvalidArgument("m"), ErrorCode::kInvalidArgument},
      {Status::NotFound("m"), ErrorCode::kNotFound},
      {Status::IoError("m"), ErrorCode::kIoError},
      {Status::Corrupt("m"), ErrorCode::kCorrupt},
      {Status::Unsupported("m"), ErrorCode::kUnsupported},
      {Status::OutOfRange("m"), ErrorCode::kOutOfRange},
      {Status::Rejected("m"), ErrorCode::kRejected},
      {Status::Internal("m"), ErrorCode::kInternal},
  };
  for (const auto& [status, code] : cases) {
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.code(), code);
    EXPECT_EQ(status.message(), "m");
    EXPECT_EQ(status.ToString(), std::string(ErrorCodeName(code)) + ": m");
  }
  // An error with an empty message is still an error.
  EXPECT_FALSE(Status::Corrupt("").ok());
  EXPECT_EQ(Status::Corrupt("").ToString(), "corrupt: ");
}

TEST(StatusTest, ErrorCodeNames) {
  EXPECT_EQ(ErrorCodeName(ErrorCode::kOk), "OK");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kInvalidArgument), "invalid argument");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kNotFound), "not found");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kIoError), "I/O error");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kCorrupt), "corrupt");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kUnsupported), "unsupported");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kOutOfRange), "out of range");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kRejected), "rejected");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kInternal), "internal error");
  EXPECT_EQ(ErrorCodeName(static_cast<ErrorCode>(99)), "unknown");
}

TEST(StatusTest, WithContextPrefixesAndKeepsCode) {
  const Status base = Status::Corrupt("header length 70000 exceeds file size 120");
  const Status once = base.WithContext("tensor 'w'");
  const Status twice = once.WithContext("m.safetensors");
  EXPECT_EQ(once.code(), ErrorCode::kCorrupt);
  EXPECT_EQ(once.message(), "tensor 'w': header length 70000 exceeds file size 120");
  EXPECT_EQ(twice.message(),
            "m.safetensors: tensor 'w': header length 70000 exceeds file size 120");
  EXPECT_EQ(twice.ToString(),
            "corrupt: m.safetensors: tensor 'w': header length 70000 exceeds file size 120");
  // The original is immutable, even though copies share their state.
  EXPECT_EQ(base.message(), "header length 70000 exceeds file size 120");
  // OK stays OK, with no message.
  const Status ok = Status::Ok().WithContext("m.npy");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(StatusTest, CopyAndMove) {
  Status a = Status::NotFound("x.npy");
  Status b = a;
  EXPECT_EQ(b.code(), ErrorCode::kNotFound);
  EXPECT_EQ(b.message(), "x.npy");
  Status c = std::move(a);
  EXPECT_EQ(c.message(), "x.npy");
  b = Status::Ok();
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(c.code(), ErrorCode::kNotFound);
}

TEST(ResultTest, HoldsAValue) {
  Result<int> r = 7;
  EXPECT_TRUE(r.has_value());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r.value(), 7);
  EXPECT_EQ(*r, 7);
  EXPECT_TRUE(r.error().ok());
  EXPECT_TRUE(r.status().ok());
  *r = 8;
  EXPECT_EQ(r.value(), 8);
  const Result<std::string> s = std::string("abc");
  EXPECT_EQ(s->size(), 3u);
  EXPECT_EQ(*s, "abc");
}

TEST(ResultTest, HoldsAnError) {
  const Result<int> r = Status::OutOfRange("count 5 exceeds 4");
  EXPECT_FALSE(r.has_value());
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(r.error().message(), "count 5 exceeds 4");
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfRange);
}

TEST(ResultTest, BuiltFromOkStatusBecomesInternalError) {
  const Result<int> r = Status::Ok();
  EXPECT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInternal);
  EXPECT_EQ(r.error().message(), "Result built from an OK status");
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(**r, 5);
  EXPECT_EQ(*r.value(), 5);
  std::unique_ptr<int> taken = std::move(r).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 5);

  Result<std::unique_ptr<int>> r2 = std::make_unique<int>(6);
  std::unique_ptr<int> taken2 = *std::move(r2);
  EXPECT_EQ(*taken2, 6);

  // A move-only Result moves as a whole, value or error.
  Result<std::unique_ptr<int>> r3 = std::make_unique<int>(9);
  Result<std::unique_ptr<int>> r4 = std::move(r3);
  EXPECT_EQ(**r4, 9);
  Result<std::unique_ptr<int>> e = Status::NotFound("gone");
  Result<std::unique_ptr<int>> e2 = std::move(e);
  EXPECT_EQ(e2.error().code(), ErrorCode::kNotFound);
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Result<int> r = Status::Corrupt("bad");
  EXPECT_DEATH((void)r.value(), "");
  EXPECT_DEATH((void)*r, "");
}

// Helpers for the macros. `steps` records how far each function got.
Status Fails(std::vector<std::string>* steps) {
  steps->push_back("fails");
  return Status::Corrupt("inner");
}
Status Succeeds(std::vector<std::string>* steps) {
  steps->push_back("succeeds");
  return Status::Ok();
}

Status TwoSteps(bool fail_first, std::vector<std::string>* steps) {
  NUMPROBE_RETURN_IF_ERROR(fail_first ? Fails(steps) : Succeeds(steps));
  NUMPROBE_RETURN_IF_ERROR(Succeeds(steps));
  steps->push_back("end");
  return Status::Ok();
}

TEST(MacroTest, ReturnIfErrorStopsAtTheFirstError) {
  std::vector<std::string> steps;
  const Status s = TwoSteps(true, &steps);
  EXPECT_EQ(s.code(), ErrorCode::kCorrupt);
  EXPECT_EQ(s.message(), "inner");
  EXPECT_EQ(steps, std::vector<std::string>({"fails"}));

  steps.clear();
  EXPECT_TRUE(TwoSteps(false, &steps).ok());
  EXPECT_EQ(steps, std::vector<std::string>({"succeeds", "succeeds", "end"}));
}

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument(std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x, int* reached) {
  NUMPROBE_ASSIGN_OR_RETURN(int half, Half(x));
  ++*reached;
  NUMPROBE_ASSIGN_OR_RETURN(const int quarter, Half(half));  // second use: distinct temporaries
  ++*reached;
  return quarter;
}

TEST(MacroTest, AssignOrReturnDeclaresOrReturns) {
  int reached = 0;
  const Result<int> r = Quarter(12, &reached);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 3);
  EXPECT_EQ(reached, 2);

  reached = 0;
  const Result<int> odd = Quarter(7, &reached);
  EXPECT_EQ(odd.error().message(), "7 is odd");
  EXPECT_EQ(reached, 0);

  reached = 0;
  const Result<int> odd_half = Quarter(6, &reached);
  EXPECT_EQ(odd_half.error().message(), "3 is odd");
  EXPECT_EQ(reached, 1);
}

Result<std::unique_ptr<int>> MakeBox(int v) {
  if (v < 0) return Status::OutOfRange("negative");
  return std::make_unique<int>(v);
}

// ASSIGN_OR_RETURN into an existing variable, with a move-only type, in a Status function.
Status Unbox(int v, int* out) {
  std::unique_ptr<int> box;
  NUMPROBE_ASSIGN_OR_RETURN(box, MakeBox(v));
  *out = *box;
  return Status::Ok();
}

TEST(MacroTest, AssignOrReturnMovesMoveOnlyValues) {
  int out = 0;
  EXPECT_TRUE(Unbox(11, &out).ok());
  EXPECT_EQ(out, 11);
  out = 0;
  const Status s = Unbox(-1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(out, 0);
}

// The error passes through with its context added by the caller.
Result<int> Load() {
  NUMPROBE_ASSIGN_OR_RETURN(int v, Half(3));
  return v;
}

TEST(MacroTest, ErrorsTravelWithContext) {
  const Result<int> r = Load();
  const Status s = r.error().WithContext("m.npy");
  EXPECT_EQ(s.ToString(), "invalid argument: m.npy: 3 is odd");
}

}  // namespace
}  // namespace numprobe
