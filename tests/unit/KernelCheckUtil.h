//===- KernelCheckUtil.h - Comparing kernel results in tests ----*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Checks shared by the kernel tests of the Matmul, Convolution, Pooling and
/// Normalization families: element-wise closeness with a mixed tolerance,
/// dtype casts for f32-vs-f64 comparisons, and a backward kernel's result
/// against central differences of its forward kernel.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_KERNELCHECKUTIL_H
#define REMAT_TESTS_UNIT_KERNELCHECKUTIL_H

#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace remat::test {

/// The shape of `t` as a vector, for `makeTensor`.
inline std::vector<int64_t> shapeOf(const HostTensor &t) {
  return {t.type().shape().begin(), t.type().shape().end()};
}

/// `t` with its values converted to `dtype`.
inline HostTensor castTo(const HostTensor &t, DType dtype) {
  return makeTensor(dtype, shapeOf(t), toDoubles(t));
}

/// Expects `actual` to hold `expected` element-wise, each within
/// `tolerance * (1 + |expected|)`.
inline void expectAllClose(const HostTensor &actual,
                           const std::vector<double> &expected,
                           double tolerance, const std::string &what) {
  ASSERT_EQ(actual.numel(), int64_t(expected.size())) << what;
  int failures = 0;
  for (int64_t i = 0; i < actual.numel() && failures < 5; ++i) {
    double want = expected[size_t(i)];
    if (std::abs(actual.at(i) - want) <= tolerance * (1 + std::abs(want)))
      continue;
    ++failures;
    ADD_FAILURE() << what << ": element " << i << " is " << actual.at(i)
                  << ", expected " << want;
  }
}

/// Expects the backward result `grad` to match d/d operands[wrt] of
/// sum(forward(operands) * dy), by central differences of the forward kernel
/// `forward` in f64.
inline void
expectMatchesFiniteDifferences(const HostTensor &grad, llvm::StringRef forward,
                               const std::vector<HostTensor> &operands,
                               unsigned wrt, const HostTensor &dy,
                               const AttrList &attrs, const std::string &what) {
  std::vector<double> numeric =
      numericGradient(forward, operands, wrt, dy, attrs);
  expectAllClose(grad, numeric, 1e-6, what + " vs finite differences");
}

/// Runs `kind` on `operands` (f64) and on their f32 casts, and expects every
/// result of the two runs to agree within `tolerance` (mixed, as above).
inline void expectF32MatchesF64(llvm::StringRef kind,
                                const std::vector<HostTensor> &operands,
                                const AttrList &attrs, double tolerance) {
  std::vector<HostTensor> narrow;
  for (const HostTensor &t : operands)
    narrow.push_back(castTo(t, DType::F32));
  absl::StatusOr<std::vector<HostTensor>> wide =
      runKernel(kind, operands, attrs);
  absl::StatusOr<std::vector<HostTensor>> single =
      runKernel(kind, narrow, attrs);
  ASSERT_TRUE(wide.ok()) << wide.status();
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_EQ(wide->size(), single->size());
  for (size_t r = 0; r < wide->size(); ++r) {
    EXPECT_EQ((*single)[r].dtype(), DType::F32);
    expectAllClose((*single)[r], toDoubles((*wide)[r]), tolerance,
                   kind.str() + " f32 result " + std::to_string(r));
  }
}

} // namespace remat::test

#endif // REMAT_TESTS_UNIT_KERNELCHECKUTIL_H
