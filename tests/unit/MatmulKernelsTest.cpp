//===- MatmulKernelsTest.cpp - The batched matmul kernel ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

using namespace remat;
using namespace remat::test;

namespace {

/// Element (i, j) of the matrix `batch` of `t` [..., rows, cols], read as its
/// transpose when `transposed`.
double matrixAt(const HostTensor &t, int64_t batch, int64_t i, int64_t j,
                bool transposed) {
  llvm::ArrayRef<int64_t> shape = t.type().shape();
  int64_t rows = shape.end()[-2], cols = shape.back();
  if (transposed)
    std::swap(i, j);
  return t.at((batch * rows + i) * cols + j);
}

/// The row-major index into `operand`'s batch of result batch multi-index
/// `index`, numpy broadcasting aligned at the trailing dims.
int64_t operandBatch(llvm::ArrayRef<int64_t> operand,
                     const std::vector<int64_t> &index) {
  llvm::ArrayRef<int64_t> batch = operand.drop_back(2);
  int64_t flat = 0;
  size_t lead = index.size() - batch.size();
  for (size_t d = 0; d < batch.size(); ++d)
    flat = flat * batch[d] + (batch[d] == 1 ? 0 : index[lead + d]);
  return flat;
}

/// matmul by its definition, with the result's batch dims `batch`.
std::vector<double> directMatmul(const HostTensor &a, const HostTensor &b,
                                 bool transposeA, bool transposeB,
                                 const std::vector<int64_t> &batch) {
  llvm::ArrayRef<int64_t> aShape = a.type().shape();
  llvm::ArrayRef<int64_t> bShape = b.type().shape();
  int64_t m = transposeA ? aShape.back() : aShape.end()[-2];
  int64_t k = transposeA ? aShape.end()[-2] : aShape.back();
  int64_t n = transposeB ? bShape.end()[-2] : bShape.back();
  int64_t count = 1;
  for (int64_t d : batch)
    count *= d;
  std::vector<double> result;
  std::vector<int64_t> index(batch.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat;
    for (size_t d = batch.size(); d-- > 0;) {
      index[d] = rest % batch[d];
      rest /= batch[d];
    }
    int64_t aBatch = operandBatch(aShape, index);
    int64_t bBatch = operandBatch(bShape, index);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += matrixAt(a, aBatch, i, p, transposeA) *
                 matrixAt(b, bBatch, p, j, transposeB);
        result.push_back(sum);
      }
  }
  return result;
}

AttrList transposes(bool a, bool b) {
  return {{"transpose_a", a}, {"transpose_b", b}};
}

TEST(MatmulKernelsTest, HandComputedProduct) {
  // [[1, 2, 3], [4, 5, 6]] x [[7, 8], [9, 10], [11, 12]]:
  //   1*7 + 2*9 + 3*11 = 58     1*8 + 2*10 + 3*12 = 64
  //   4*7 + 5*9 + 6*11 = 139    4*8 + 5*10 + 6*12 = 154
  HostTensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expectAllClose(runOne("matmul", {a, b}), {58, 64, 139, 154}, 0, "matmul");
}

TEST(MatmulKernelsTest, TransposeFlagsReadTransposedOperands) {
  // The same product with a and b stored transposed.
  HostTensor aT = f64({3, 2}, {1, 4, 2, 5, 3, 6});
  HostTensor bT = f64({2, 3}, {7, 9, 11, 8, 10, 12});
  HostTensor a = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = f64({3, 2}, {7, 8, 9, 10, 11, 12});
  std::vector<double> expected = {58, 64, 139, 154};
  expectAllClose(runOne("matmul", {aT, b}, transposes(true, false)), expected,
                 0, "transpose_a");
  expectAllClose(runOne("matmul", {a, bT}, transposes(false, true)), expected,
                 0, "transpose_b");
  expectAllClose(runOne("matmul", {aT, bT}, transposes(true, true)), expected,
                 0, "both");
}

TEST(MatmulKernelsTest, BroadcastBatchHandComputed) {
  // a holds two 1x2 matrices [1, 2] and [3, 4]; b is one 2x1 matrix [10, 100]
  // shared by both: results 1*10 + 2*100 = 210 and 3*10 + 4*100 = 430.
  HostTensor a = f64({2, 1, 2}, {1, 2, 3, 4});
  HostTensor b = f64({2, 1}, {10, 100});
  HostTensor y = runOne("matmul", {a, b});
  EXPECT_EQ(shapeOf(y), (std::vector<int64_t>{2, 1, 1}));
  expectAllClose(y, {210, 430}, 0, "matmul");
}

TEST(MatmulKernelsTest, BroadcastBatchesMatchDirectLoop) {
  // a [2, 1, 3, 4] and b [3, 4, 5] broadcast to batch [2, 3]; a [5, 3, 4]
  // against b [1, 4, 2] broadcasts b's unit dim.
  struct Case {
    std::vector<int64_t> a, b, batch;
  };
  for (const Case &c :
       {Case{{2, 1, 3, 4}, {3, 4, 5}, {2, 3}}, Case{{5, 3, 4}, {1, 4, 2}, {5}},
        Case{{3, 4}, {2, 2, 4, 3}, {2, 2}}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        std::vector<int64_t> aShape = c.a, bShape = c.b;
        if (ta)
          std::swap(aShape.end()[-1], aShape.end()[-2]);
        if (tb)
          std::swap(bShape.end()[-1], bShape.end()[-2]);
        HostTensor a = randomTensor(DType::F64, aShape, 1);
        HostTensor b = randomTensor(DType::F64, bShape, 2);
        HostTensor y = runOne("matmul", {a, b}, transposes(ta, tb));
        expectAllClose(y, directMatmul(a, b, ta, tb, c.batch), 1e-12,
                       "matmul ta=" + std::to_string(ta) +
                           " tb=" + std::to_string(tb));
      }
    }
  }
}

TEST(MatmulKernelsTest, LargeProductsMatchDirectLoop) {
  // Big enough for Eigen's blocked GEMM path: a shared b (the batch of a folds
  // into one product) and a batched b (one product per batch element).
  HostTensor a = randomTensor(DType::F64, {2, 70, 90}, 3);
  HostTensor shared = randomTensor(DType::F64, {90, 65}, 4);
  HostTensor batched = randomTensor(DType::F64, {2, 90, 65}, 5);
  expectAllClose(runOne("matmul", {a, shared}),
                 directMatmul(a, shared, false, false, {2}), 1e-12, "shared");
  expectAllClose(runOne("matmul", {a, batched}),
                 directMatmul(a, batched, false, false, {2}), 1e-12, "batched");
}

TEST(MatmulKernelsTest, EmptyContractionGivesZeros) {
  HostTensor a(Type(DType::F64, {2, 0}));
  HostTensor b(Type(DType::F64, {0, 3}));
  expectAllClose(runOne("matmul", {a, b}), {0, 0, 0, 0, 0, 0}, 0, "matmul");
}

TEST(MatmulKernelsTest, EmptyRowsOrBatch) {
  HostTensor a(Type(DType::F32, {0, 3}));
  HostTensor b = randomTensor(DType::F32, {3, 2}, 1);
  EXPECT_EQ(runOne("matmul", {a, b}).numel(), 0);
  HostTensor batch(Type(DType::F32, {4, 0, 2, 3}));
  EXPECT_EQ(runOne("matmul", {batch, b}).numel(), 0);
}

TEST(MatmulKernelsTest, F32MatchesF64) {
  HostTensor a = randomTensor(DType::F64, {3, 8, 16}, 5);
  HostTensor b = randomTensor(DType::F64, {3, 8, 12}, 6);
  expectF32MatchesF64("matmul", {a, b}, transposes(true, false), 1e-5);
}

TEST(MatmulKernelsTest, HalfPrecisionIsAnError) {
  HostTensor a(Type(DType::F16, {2, 2}));
  EXPECT_EQ(kernelError("matmul", {a, a}), "'matmul' has no f16 kernel");
}

} // namespace
