//===- ElementwiseKernelsTest.cpp - Elementwise kernels ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

namespace remat::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ElementwiseKernelsTest, BinaryOpsOnEqualShapes) {
  HostTensor a = f32({3}, {1, 2, 3});
  HostTensor b = f32({3}, {10, 20, 30});
  EXPECT_THAT(toDoubles(runOne("add", {a, b})), ElementsAre(11, 22, 33));
  EXPECT_THAT(toDoubles(runOne("sub", {a, b})), ElementsAre(-9, -18, -27));
  EXPECT_THAT(toDoubles(runOne("mul", {a, b})), ElementsAre(10, 40, 90));
  // 1/10, 2/20, 3/30 are all 0.1f.
  EXPECT_THAT(toDoubles(runOne("div", {a, b})),
              ElementsAre(double(0.1f), double(0.1f), double(0.1f)));
}

TEST(ElementwiseKernelsTest, BroadcastsRowAndColumn) {
  // [2,3] + [3]: the row [10,20,30] is added to both rows.
  HostTensor m = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor row = f64({3}, {10, 20, 30});
  EXPECT_THAT(toDoubles(runOne("add", {m, row})),
              ElementsAre(11, 22, 33, 14, 25, 36));
  // [3] - [2,3]: the operand that broadcasts can come first.
  EXPECT_THAT(toDoubles(runOne("sub", {row, m})),
              ElementsAre(9, 18, 27, 6, 15, 24));
  // [2,1] * [1,3]: the outer product [[1*1,1*2,1*3],[2*1,2*2,2*3]].
  HostTensor col = f64({2, 1}, {1, 2});
  HostTensor r13 = f64({1, 3}, {1, 2, 3});
  HostTensor outer = runOne("mul", {col, r13});
  EXPECT_EQ(outer.type(), Type(DType::F64, {2, 3}));
  EXPECT_THAT(toDoubles(outer), ElementsAre(1, 2, 3, 2, 4, 6));
  // A scalar divides every element: [2,4,6,8,10,12] / 2.
  HostTensor two = f64({}, {2});
  EXPECT_THAT(toDoubles(runOne("div", {m, two})),
              ElementsAre(0.5, 1, 1.5, 2, 2.5, 3));
}

TEST(ElementwiseKernelsTest, BroadcastsMiddleDims) {
  // a [2,1,3] + b [4,1] -> [2,4,3]; y[i,j,k] = a[i,0,k] + b[j,0], with
  // a = 100*i + k and b = 10*j, so y[i,j,k] = 100*i + 10*j + k.
  HostTensor a = i32({2, 1, 3}, {0, 1, 2, 100, 101, 102});
  HostTensor b = i32({4, 1}, {0, 10, 20, 30});
  HostTensor y = runOne("add", {a, b});
  ASSERT_EQ(y.type(), Type(DType::I32, {2, 4, 3}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k)
        EXPECT_EQ(y.at((i * 4 + j) * 3 + k), 100 * i + 10 * j + k);
}

/// Element `index` (row-major in `outShape`) of a tensor of `shape` read
/// numpy-broadcast to `outShape`, computed from first principles.
double broadcastRead(const HostTensor &t, llvm::ArrayRef<int64_t> outShape,
                     int64_t index) {
  llvm::ArrayRef<int64_t> shape = t.type().shape();
  std::vector<int64_t> outIndex(outShape.size());
  for (size_t d = outShape.size(); d-- > 0;) {
    outIndex[d] = index % outShape[d];
    index /= outShape[d];
  }
  int64_t flat = 0;
  size_t lead = outShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : outIndex[lead + d]);
  return t.at(flat);
}

TEST(ElementwiseKernelsTest, BroadcastingMatchesFirstPrinciples) {
  // Shape pairs that exercise dim merging: size-1 dims inside, leading
  // dims missing, both sides broadcasting, scalars.
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 1, 3, 1}, {4, 1, 5}}, {{3, 4, 5}, {1, 4, 1}}, {{1, 1, 6}, {6}},
      {{5, 1}, {1, 1, 7}},       {{}, {2, 3}},           {{2, 3, 4}, {2, 3, 4}},
      {{1, 3, 1, 2}, {4, 3, 5, 1}}};
  uint32_t seed = 100;
  for (const auto &[shapeA, shapeB] : cases) {
    HostTensor a = randomTensor(DType::F64, shapeA, ++seed);
    HostTensor b = randomTensor(DType::F64, shapeB, ++seed);
    HostTensor y = runOne("sub", {a, b});
    llvm::ArrayRef<int64_t> out = y.type().shape();
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_EQ(y.at(i), broadcastRead(a, out, i) - broadcastRead(b, out, i))
          << "element " << i << " of " << y.type().str();
  }
}

TEST(ElementwiseKernelsTest, IntegerDivisionNeverTraps) {
  // Truncating division; x / 0 is 0; INT_MIN / -1 wraps to INT_MIN.
  constexpr double kMin = std::numeric_limits<int32_t>::min();
  HostTensor a = i32({5}, {7, -7, 5, kMin, 9});
  HostTensor b = i32({5}, {2, 2, 0, -1, -3});
  EXPECT_THAT(toDoubles(runOne("div", {a, b})),
              ElementsAre(3, -3, 0, kMin, -3));
  HostTensor a8 = makeTensor(DType::I8, {2}, {-128, 100});
  HostTensor b8 = makeTensor(DType::I8, {2}, {-1, 0});
  EXPECT_THAT(toDoubles(runOne("div", {a8, b8})), ElementsAre(-128, 0));
}

TEST(ElementwiseKernelsTest, IntegerArithmeticWraps) {
  // i8: 127 + 1 = -128, -128 - 1 = 127, 16 * 16 = 256 = 0 mod 256.
  HostTensor a = makeTensor(DType::I8, {3}, {127, -128, 16});
  HostTensor b = makeTensor(DType::I8, {3}, {1, 1, 16});
  EXPECT_THAT(toDoubles(runOne("add", {a, b})), ElementsAre(-128, -127, 32));
  EXPECT_THAT(toDoubles(runOne("sub", {a, b})), ElementsAre(126, 127, 0));
  EXPECT_THAT(toDoubles(runOne("mul", {a, b})), ElementsAre(127, -128, 0));
  // i64: 2^62 * 4 = 2^64 = 0; -(-2^63) = -2^63.
  HostTensor big = i64({2}, {std::ldexp(1, 62), -std::ldexp(1, 63)});
  HostTensor four = i64({2}, {4, 1});
  EXPECT_THAT(toDoubles(runOne("mul", {big, four})),
              ElementsAre(0, -std::ldexp(1, 63)));
  EXPECT_THAT(toDoubles(runOne("neg", {big})),
              ElementsAre(-std::ldexp(1, 62), -std::ldexp(1, 63)));
  // i32 square: 65536^2 = 2^32 = 0 mod 2^32; 3^2 = 9.
  EXPECT_THAT(toDoubles(runOne("square", {i32({2}, {65536, -3})})),
              ElementsAre(0, 9));
}

TEST(ElementwiseKernelsTest, IntegerPow) {
  // 2^10 = 1024, 3^0 = 1, 2^-1 = 1/2 truncates to 0, (-1)^-3 = -1,
  // 1^-5 = 1, 0^-1 = 0 (no division by zero), (-2)^3 = -8.
  HostTensor a = i32({7}, {2, 3, 2, -1, 1, 0, -2});
  HostTensor b = i32({7}, {10, 0, -1, -3, -5, -1, 3});
  EXPECT_THAT(toDoubles(runOne("pow", {a, b})),
              ElementsAre(1024, 1, 0, -1, 1, 0, -8));
  // i8: 2^7 = 128 wraps to -128.
  HostTensor a8 = makeTensor(DType::I8, {1}, {2});
  HostTensor b8 = makeTensor(DType::I8, {1}, {7});
  EXPECT_THAT(toDoubles(runOne("pow", {a8, b8})), ElementsAre(-128));
}

TEST(ElementwiseKernelsTest, FloatPow) {
  HostTensor a = f64({3}, {2, 9, 2});
  HostTensor b = f64({3}, {0.5, 0.5, -2});
  EXPECT_THAT(toDoubles(runOne("pow", {a, b})),
              ElementsAre(std::sqrt(2.0), 3, 0.25));
}

TEST(ElementwiseKernelsTest, UnaryFloatOps) {
  constexpr double e = std::numbers::e;
  constexpr double pi = std::numbers::pi;
  EXPECT_THAT(toDoubles(runOne("exp", {f64({2}, {0, 1})})), ElementsAre(1, e));
  EXPECT_THAT(toDoubles(runOne("log", {f64({2}, {1, e})})), ElementsAre(0, 1));
  EXPECT_THAT(toDoubles(runOne("sqrt", {f64({2}, {4, 2.25})})),
              ElementsAre(2, 1.5));
  EXPECT_THAT(toDoubles(runOne("sin", {f64({2}, {0, pi / 2})})),
              ElementsAre(0, 1));
  EXPECT_THAT(toDoubles(runOne("cos", {f64({1}, {0})})), ElementsAre(1));
  // tanh(x) = (e^2x - 1) / (e^2x + 1): tanh(ln 2) = (4 - 1) / (4 + 1) = 0.6.
  expectAllClose(runOne("tanh", {f64({2}, {0, std::log(2.0)})}), {0, 0.6},
                 1e-15, "tanh");
  // sigmoid(ln 3) = 1 / (1 + 1/3) = 0.75; sigmoid(-ln 3) = 0.25; far tails
  // give exactly 0 and 1, never NaN.
  expectAllClose(
      runOne("sigmoid", {f64({5}, {0, std::log(3.0), -std::log(3.0), -1000,
                                   1000})}),
      {0.5, 0.75, 0.25, 0, 1}, 1e-15, "sigmoid");
  // gelu(x) = x * Phi(x): Phi(0) = 1/2, Phi(1) = 0.8413447460685429,
  // Phi(-1) = 1 - Phi(1).
  constexpr double phi1 = 0.8413447460685429;
  expectAllClose(runOne("gelu", {f64({3}, {0, 1, -1})}),
                 {0, phi1, -(1 - phi1)}, 1e-15, "gelu");
}

TEST(ElementwiseKernelsTest, NumericUnaryOps) {
  EXPECT_THAT(toDoubles(runOne("relu", {f32({4}, {-2, -0.5, 0, 3})})),
              ElementsAre(0, 0, 0, 3));
  EXPECT_THAT(toDoubles(runOne("relu", {i32({3}, {-5, 0, 7})})),
              ElementsAre(0, 0, 7));
  EXPECT_THAT(toDoubles(runOne("neg", {f32({2}, {1.5, -2})})),
              ElementsAre(-1.5, 2));
  EXPECT_THAT(toDoubles(runOne("square", {f64({2}, {-3, 0.5})})),
              ElementsAre(9, 0.25));
  // relu lets NaN through rather than hiding it.
  EXPECT_TRUE(std::isnan(
      runOne("relu", {f64({1}, {std::numeric_limits<double>::quiet_NaN()})})
          .at(0)));
}

TEST(ElementwiseKernelsTest, F32RoundsInF32) {
  // 1/3 in f32 is 0.3333333432674408, not the f64 quotient.
  HostTensor y = runOne("div", {f32({1}, {1}), f32({1}, {3})});
  EXPECT_EQ(y.dtype(), DType::F32);
  EXPECT_EQ(y.at(0), double(1.0f / 3.0f));
}

TEST(ElementwiseKernelsTest, ZeroElementTensors) {
  HostTensor empty = f32({0, 3}, {});
  HostTensor row = f32({3}, {1, 2, 3});
  HostTensor y = runOne("add", {empty, row});
  EXPECT_EQ(y.type(), Type(DType::F32, {0, 3}));
  EXPECT_THAT(toDoubles(runOne("exp", {empty})), IsEmpty());
}

TEST(ElementwiseKernelsTest, DispatchesOnRuntimeDType) {
  // A graph typed f32 run on f64 tensors (the gradient check's widened runs):
  // the kernel computes in f64, so 1/3 is the f64 quotient.
  absl::StatusOr<std::vector<HostTensor>> y =
      runKernelWidened("div", {f64({1}, {1}), f64({1}, {3})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dtype(), DType::F64);
  EXPECT_EQ((*y)[0].at(0), 1.0 / 3.0);
}

TEST(ElementwiseKernelsTest, RejectsHalfPrecision) {
  HostTensor h = makeTensor(DType::F16, {2}, {1, 2});
  EXPECT_THAT(kernelError("add", {h, h}), HasSubstr("'add' has no f16 kernel"));
  HostTensor bf = makeTensor(DType::BF16, {1}, {1});
  EXPECT_THAT(kernelError("exp", {bf}), HasSubstr("'exp' has no bf16 kernel"));
}

// Backward ops: each is checked against central differences of its forward
// op in f64, weighted by a random dy, away from non-differentiable points.

TEST(ElementwiseKernelsTest, ReluGradMatchesFiniteDifferences) {
  // |x| >= 0.1 keeps the differences away from relu's kink at 0.
  HostTensor x = f64({2, 3}, {-1.5, -0.3, 0.2, 0.7, -0.9, 1.1});
  HostTensor dy = randomTensor(DType::F64, {2, 3}, 1);
  HostTensor y = runOne("relu", {x});
  expectMatchesFiniteDifferences(runOne("relu_grad", {y, dy}), "relu", {x}, 0,
                                 dy, {}, "relu_grad");
  // By hand: dy where y > 0.
  std::vector<double> d = toDoubles(dy);
  EXPECT_THAT(toDoubles(runOne("relu_grad", {y, dy})),
              ElementsAre(0, 0, d[2], d[3], 0, d[5]));
}

TEST(ElementwiseKernelsTest, GeluGradMatchesFiniteDifferences) {
  HostTensor x = randomTensor(DType::F64, {7}, 2, -3, 3);
  HostTensor dy = randomTensor(DType::F64, {7}, 3);
  expectMatchesFiniteDifferences(runOne("gelu_grad", {x, dy}), "gelu", {x}, 0,
                                 dy, {}, "gelu_grad");
  // gelu'(0) = Phi(0) + 0 = 1/2.
  EXPECT_EQ(runOne("gelu_grad", {f64({1}, {0}), f64({1}, {1})}).at(0), 0.5);
}

TEST(ElementwiseKernelsTest, SigmoidAndTanhGradsMatchFiniteDifferences) {
  HostTensor x = randomTensor(DType::F64, {3, 2}, 4, -2, 2);
  HostTensor dy = randomTensor(DType::F64, {3, 2}, 5);
  expectMatchesFiniteDifferences(
      runOne("sigmoid_grad", {runOne("sigmoid", {x}), dy}), "sigmoid", {x}, 0,
      dy, {}, "sigmoid_grad");
  expectMatchesFiniteDifferences(runOne("tanh_grad", {runOne("tanh", {x}), dy}),
                                 "tanh", {x}, 0, dy, {}, "tanh_grad");
  // By hand: y = 0.5 gives dy * 0.5 * 0.5 and dy * (1 - 0.25).
  HostTensor half = f32({1}, {0.5});
  HostTensor four = f32({1}, {4});
  EXPECT_EQ(runOne("sigmoid_grad", {half, four}).at(0), 1);
  EXPECT_EQ(runOne("tanh_grad", {half, four}).at(0), 3);
}

} // namespace
} // namespace remat::test
