// Checked arithmetic (checked.h), view validation and strided copies (tensor.h) at their edges.
#include "core/checked.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/tensor.h"

namespace numprobe {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr uint64_t kUMax = std::numeric_limits<uint64_t>::max();

TEST(CheckedTest, Add) {
  EXPECT_EQ(CheckedAdd<int64_t>(kMax, 0), kMax);
  EXPECT_EQ(CheckedAdd<int64_t>(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd<int64_t>(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd<int64_t>(kMax, kMax), std::nullopt);
  EXPECT_EQ(CheckedAdd<int64_t>(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedAdd<int64_t>(kMin, kMax), -1);
  EXPECT_EQ(CheckedAdd<int64_t>(-5, 3), -2);
  EXPECT_EQ(CheckedAdd<uint64_t>(kUMax, 0), kUMax);
  EXPECT_EQ(CheckedAdd<uint64_t>(kUMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd<uint32_t>(0xFFFFFFFFu, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd<size_t>(1, 2), 3u);
  static_assert(*CheckedAdd<int>(1, 2) == 3);  // usable in constant expressions
}

TEST(CheckedTest, Mul) {
  EXPECT_EQ(CheckedMul<int64_t>(kMax, 1), kMax);
  EXPECT_EQ(CheckedMul<int64_t>(kMax, 0), 0);
  EXPECT_EQ(CheckedMul<int64_t>(0, kMax), 0);
  EXPECT_EQ(CheckedMul<int64_t>(kMax, 2), std::nullopt);
  EXPECT_EQ(CheckedMul<int64_t>(kMax, -1), -kMax);
  EXPECT_EQ(CheckedMul<int64_t>(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedMul<int64_t>(kMin, 1), kMin);
  EXPECT_EQ(CheckedMul<int64_t>(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul<int64_t>(int64_t{1} << 31, int64_t{1} << 32), std::nullopt);  // 2^63
  EXPECT_EQ(CheckedMul<int64_t>(-(int64_t{1} << 31), int64_t{1} << 32), kMin);       // -2^63
  EXPECT_EQ(CheckedMul<int64_t>(3037000499, 3037000499), 9223372030926249001);
  EXPECT_EQ(CheckedMul<int64_t>(3037000500, 3037000500), std::nullopt);
  EXPECT_EQ(CheckedMul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32), std::nullopt);
  EXPECT_EQ(CheckedMul<uint64_t>(uint64_t{1} << 32, (uint64_t{1} << 32) - 1),
            kUMax - (uint64_t{1} << 32) + 1);
}

TEST(CheckedTest, Sub) {
  EXPECT_EQ(CheckedSub<uint64_t>(5, 5), 0u);
  EXPECT_EQ(CheckedSub<uint64_t>(0, 1), std::nullopt);
  EXPECT_EQ(CheckedSub<uint64_t>(kUMax, kUMax), 0u);
  EXPECT_EQ(CheckedSub<int64_t>(kMin, 1), std::nullopt);
  EXPECT_EQ(CheckedSub<int64_t>(kMax, -1), std::nullopt);
  EXPECT_EQ(CheckedSub<int64_t>(0, kMin), std::nullopt);
  EXPECT_EQ(CheckedSub<int64_t>(-1, kMin), kMax);
  EXPECT_EQ(CheckedSub<int64_t>(0, kMax), -kMax);
}

std::optional<int64_t> Numel(std::vector<int64_t> dims) { return CheckedNumel(dims); }

TEST(CheckedTest, Numel) {
  EXPECT_EQ(Numel({}), 1);
  EXPECT_EQ(Numel({0}), 0);
  EXPECT_EQ(Numel({1}), 1);
  EXPECT_EQ(Numel({3, 4, 5}), 60);
  EXPECT_EQ(Numel({kMax}), kMax);
  EXPECT_EQ(Numel({kMax, 1}), kMax);
  EXPECT_EQ(Numel({kMax, 2}), std::nullopt);
  EXPECT_EQ(Numel({int64_t{1} << 32, int64_t{1} << 31}), std::nullopt);  // 2^63
  EXPECT_EQ(Numel({int64_t{1} << 31, int64_t{1} << 31, 2}), std::nullopt);
  EXPECT_EQ(Numel({3037000499, 3037000499}), 9223372030926249001);
  // Negative dims are never valid, wherever they are.
  EXPECT_EQ(Numel({-1}), std::nullopt);
  EXPECT_EQ(Numel({2, -3}), std::nullopt);
  EXPECT_EQ(Numel({0, -1}), std::nullopt);
  EXPECT_EQ(Numel({kMin}), std::nullopt);
  // A zero dim makes the count 0, but the other dims must still multiply within 64 bits.
  EXPECT_EQ(Numel({0, int64_t{1} << 31, int64_t{1} << 31}), 0);
  EXPECT_EQ(Numel({int64_t{1} << 40, 0, int64_t{1} << 40}), std::nullopt);
  EXPECT_EQ(Numel({0, kMax}), 0);
}

TEST(CheckedTest, WholeInt64TakesOnlyWholeNumbersThatInt64Holds) {
  EXPECT_EQ(WholeInt64(12.0), 12);
  EXPECT_EQ(WholeInt64(-3.0), -3);
  EXPECT_EQ(WholeInt64(-0.0), 0);
  EXPECT_EQ(WholeInt64(-0x1p63), kMin);                 // exactly INT64_MIN
  EXPECT_EQ(WholeInt64(0x1p63 - 1024), kMax - 1023);    // the largest double below 2^63
  EXPECT_EQ(WholeInt64(0x1p63), std::nullopt);          // INT64_MAX rounds up to it
  EXPECT_EQ(WholeInt64(-0x1p63 - 2048), std::nullopt);  // the next double below INT64_MIN
  EXPECT_EQ(WholeInt64(8.88889e+41), std::nullopt);
  EXPECT_EQ(WholeInt64(1.5), std::nullopt);
  EXPECT_EQ(WholeInt64(-0.5), std::nullopt);
  EXPECT_EQ(WholeInt64(NAN), std::nullopt);
  EXPECT_EQ(WholeInt64(INFINITY), std::nullopt);
  EXPECT_EQ(WholeInt64(-INFINITY), std::nullopt);
}

TEST(CheckedTest, RangeInside) {
  EXPECT_TRUE(RangeInside(0, 0, 0));
  EXPECT_FALSE(RangeInside(0, 1, 0));
  EXPECT_TRUE(RangeInside(0, 5, 5));
  EXPECT_TRUE(RangeInside(5, 0, 5));  // an empty range at the end
  EXPECT_FALSE(RangeInside(6, 0, 5));
  EXPECT_FALSE(RangeInside(1, 5, 5));
  EXPECT_TRUE(RangeInside(2, 3, 5));
  // offset + length would wrap around 64 bits.
  EXPECT_FALSE(RangeInside(1, kUMax, kUMax));
  EXPECT_FALSE(RangeInside(kUMax, 1, kUMax));
  EXPECT_FALSE(RangeInside(kUMax, kUMax, 100));
  EXPECT_TRUE(RangeInside(0, kUMax, kUMax));
  EXPECT_TRUE(RangeInside(kUMax, 0, kUMax));
  static_assert(RangeInside(1, 2, 3) && !RangeInside(2, 2, 3));
}

void ExpectError(const Status& s, ErrorCode code, const std::string& phrase) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(phrase), std::string::npos) << s.ToString();
}

TEST(ValidateViewTest, AcceptsViewsInsideTheStorage) {
  EXPECT_TRUE(ValidateView(DType::kF32, {2, 3}, {3, 1}, 0, 24).ok());
  EXPECT_TRUE(ValidateView(DType::kF32, {3, 2}, {1, 3}, 0, 24).ok());  // transposed
  EXPECT_TRUE(ValidateView(DType::kF32, {2, 3}, {3, 1}, 4, 28).ok());
  EXPECT_TRUE(ValidateView(DType::kF32, {4}, {0}, 0, 4).ok());        // broadcast
  EXPECT_TRUE(ValidateView(DType::kC128, {}, {}, 16, 32).ok());       // 0-d
  EXPECT_TRUE(ValidateView(DType::kF32, {0, 5}, {5, 1}, 0, 0).ok());  // empty
  EXPECT_TRUE(ValidateView(DType::kU8, {kMax}, {1}, 0, kUMax).ok());
}

TEST(ValidateViewTest, RejectsViewsOutsideTheStorage) {
  ExpectError(ValidateView(DType::kF32, {2, 3}, {3, 1}, 0, 23), ErrorCode::kOutOfRange,
              "view needs 24 bytes but storage has 23");
  ExpectError(ValidateView(DType::kF32, {2, 3}, {3, 1}, 4, 24), ErrorCode::kOutOfRange,
              "view needs 28 bytes but storage has 24");
  ExpectError(ValidateView(DType::kF64, {}, {}, 0, 7), ErrorCode::kOutOfRange,
              "view needs 8 bytes");
  ExpectError(ValidateView(DType::kF32, {2}, {4}, 0, 16), ErrorCode::kOutOfRange,
              "view needs 20 bytes");
}

TEST(ValidateViewTest, RejectsMalformedAndOverflowingViews) {
  ExpectError(ValidateView(DType::kF32, {2, 3}, {1}, 0, 100), ErrorCode::kCorrupt,
              "shape has 2 dims but strides 1");
  ExpectError(ValidateView(DType::kF32, {2}, {1}, -4, 100), ErrorCode::kCorrupt,
              "negative storage offset");
  ExpectError(ValidateView(DType::kF32, {2, 2}, {-1, 1}, 0, 100), ErrorCode::kCorrupt,
              "negative stride");
  EXPECT_FALSE(ValidateView(DType::kF32, {-2}, {1}, 0, 100).ok());
  ExpectError(ValidateView(DType::kF32, {kMax, 2}, {1, 1}, 0, kUMax), ErrorCode::kOutOfRange,
              "shape product overflows 64 bits");
  ExpectError(ValidateView(DType::kF32, {3}, {kMax}, 0, kUMax), ErrorCode::kOutOfRange,
              "stride * size overflows 64 bits");
  ExpectError(ValidateView(DType::kF32, {2, 2}, {kMax, 1}, 0, kUMax), ErrorCode::kOutOfRange,
              "view extent overflows 64 bits");
  // Element count fits, bytes do not.
  ExpectError(ValidateView(DType::kF32, {kMax}, {1}, 0, kUMax), ErrorCode::kOutOfRange,
              "view extent overflows 64 bits");
  ExpectError(ValidateView(DType::kF32, {}, {}, kMax, kUMax), ErrorCode::kOutOfRange,
              "view extent overflows 64 bits");
}

TEST(TensorTest, ZerosIsContiguousAndZeroFilled) {
  Result<Tensor> t = Tensor::Zeros(DType::kI32, {2, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->numel(), 6);
  EXPECT_TRUE(t->view().is_contiguous());
  EXPECT_EQ(t->view().strides, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t->view().span_bytes(), 24);
  std::vector<int32_t> values(6, -1);
  std::memcpy(values.data(), t->view().first(), 24);
  EXPECT_EQ(values, std::vector<int32_t>(6, 0));
  ASSERT_NE(t->mutable_data(), nullptr);
  EXPECT_EQ(Tensor().mutable_data(), nullptr);

  ExpectError(Tensor::Zeros(DType::kF32, {kMax, 2}).error(), ErrorCode::kOutOfRange,
              "shape product overflows 64 bits");
  ExpectError(Tensor::Zeros(DType::kF32, {kMax}).error(), ErrorCode::kOutOfRange,
              "tensor size overflows 64 bits");
  EXPECT_FALSE(Tensor::Zeros(DType::kF32, {-1}).ok());
}

template <typename T>
std::vector<T> Elements(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.view().first(), out.size() * sizeof(T));
  return out;
}

TEST(TensorTest, CopyOfContiguous) {
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};
  const TensorView v = TensorView::Contiguous(data.data(), DType::kF32, {2, 3});
  Result<Tensor> t = Tensor::CopyOf(v);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Elements<float>(*t), data);
  EXPECT_NE(static_cast<const void*>(t->view().first()), static_cast<const void*>(data.data()));
}

TEST(TensorTest, CopyOfTransposeOffsetAndBroadcast) {
  // Storage 0..23 as a 2x3x4 array.
  std::vector<int16_t> storage(24);
  for (int i = 0; i < 24; ++i) storage[i] = static_cast<int16_t>(i);

  // Transpose of the 3x4 slice at [1]: shape (4, 3), strides (1, 4), offset 12 elements.
  TensorView t;
  t.data = reinterpret_cast<const std::byte*>(storage.data());
  t.dtype = DType::kI16;
  t.shape = {4, 3};
  t.strides = {1, 4};
  t.byte_offset = int64_t{12} * 2;
  ASSERT_TRUE(ValidateView(t.dtype, t.shape, t.strides, t.byte_offset, 48).ok());
  EXPECT_FALSE(t.is_contiguous());
  Result<Tensor> copy = Tensor::CopyOf(t);
  ASSERT_TRUE(copy.ok());
  EXPECT_TRUE(copy->view().is_contiguous());
  EXPECT_EQ(Elements<int16_t>(*copy),
            (std::vector<int16_t>{12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23}));

  // Every odd element: shape (2, 3, 2), strides (12, 4, 2), starting at element 1.
  TensorView s = t;
  s.shape = {2, 3, 2};
  s.strides = {12, 4, 2};
  s.byte_offset = int64_t{1} * 2;
  copy = Tensor::CopyOf(s);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(Elements<int16_t>(*copy),
            (std::vector<int16_t>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}));

  // A broadcast row: stride 0 repeats element 5.
  TensorView b = t;
  b.shape = {2, 3};
  b.strides = {0, 1};
  b.byte_offset = int64_t{5} * 2;
  copy = Tensor::CopyOf(b);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(Elements<int16_t>(*copy), (std::vector<int16_t>{5, 6, 7, 5, 6, 7}));
}

TEST(TensorTest, CopyOfWideElementsZeroDAndEmpty) {
  // c128 elements (16 bytes) taken in a strided order.
  std::vector<double> storage = {0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5};  // 4 complex values
  TensorView c;
  c.data = reinterpret_cast<const std::byte*>(storage.data());
  c.dtype = DType::kC128;
  c.shape = {2, 2};
  c.strides = {1, 2};
  Result<Tensor> copy = Tensor::CopyOf(c);
  ASSERT_TRUE(copy.ok());
  std::vector<double> got(8);
  std::memcpy(got.data(), copy->view().first(), 64);
  EXPECT_EQ(got, (std::vector<double>{0, 0.5, 2, 2.5, 1, 1.5, 3, 3.5}));

  // 0-d: one element.
  const double scalar = 7.25;
  copy = Tensor::CopyOf(TensorView::Contiguous(&scalar, DType::kF64, {}));
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->numel(), 1);
  EXPECT_EQ(Elements<double>(*copy), std::vector<double>{7.25});

  // Empty: no element is read, even through a null data pointer.
  TensorView e;
  e.dtype = DType::kF32;
  e.shape = {3, 0};
  e.strides = {5, 1};
  copy = Tensor::CopyOf(e);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->numel(), 0);
  EXPECT_EQ(copy->view().span_bytes(), 0);
}

TEST(ContiguousBytesTest, SizesAreCheckedBeforeUse) {
  auto bytes = ContiguousBytes(DType::kF32, {2, 3});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 24U);
  EXPECT_EQ(*ContiguousBytes(DType::kBF16, {}), 2U);  // a scalar
  EXPECT_EQ(*ContiguousBytes(DType::kF64, {0, 7}), 0U);
  EXPECT_EQ(ContiguousBytes(DType::kF32, {2, -1}).error().code(), ErrorCode::kInvalidArgument);
  const int64_t big = int64_t{1} << 62;
  EXPECT_EQ(ContiguousBytes(DType::kF32, {big}).error().code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(ContiguousBytes(DType::kU8, {big, 4}).error().code(), ErrorCode::kOutOfRange);
}

}  // namespace
}  // namespace numprobe
