//===- KernelTestUtil.h - Running one kernel in a test ----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A small harness for kernel tests: build a one-op graph whose inputs have
/// the operands' types, allocate its results, run the op's registered kernel
/// and hand the results back; plus tensor construction from doubles and
/// central finite differences for checking backward kernels.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_KERNELTESTUTIL_H
#define REMAT_TESTS_UNIT_KERNELTESTUTIL_H

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/Runtime/Kernel.h"
#include "remat/Runtime/Tensor.h"

#include "absl/status/statusor.h"
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace remat::test {

/// A tensor of `dtype` and `shape` holding `values` (row-major, converted
/// from double); `values` must have one entry per element.
inline HostTensor makeTensor(DType dtype, std::vector<int64_t> shape,
                             std::vector<double> values) {
  HostTensor t(Type(dtype, shape));
  assert(int64_t(values.size()) == t.numel() && "wrong number of values");
  for (size_t i = 0; i < values.size(); ++i)
    setElementFromDouble(t.view(), int64_t(i), values[i]);
  return t;
}

/// Shorthands for the common dtypes.
inline HostTensor f32(std::vector<int64_t> shape, std::vector<double> values) {
  return makeTensor(DType::F32, std::move(shape), std::move(values));
}
inline HostTensor f64(std::vector<int64_t> shape, std::vector<double> values) {
  return makeTensor(DType::F64, std::move(shape), std::move(values));
}
inline HostTensor i32(std::vector<int64_t> shape, std::vector<double> values) {
  return makeTensor(DType::I32, std::move(shape), std::move(values));
}
inline HostTensor i64(std::vector<int64_t> shape, std::vector<double> values) {
  return makeTensor(DType::I64, std::move(shape), std::move(values));
}

/// A tensor with values uniform in [lo, hi) from a fixed-seed generator.
inline HostTensor randomTensor(DType dtype, std::vector<int64_t> shape,
                               uint32_t seed, double lo = -1, double hi = 1) {
  HostTensor t(Type(dtype, shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i)
    setElementFromDouble(t.view(), i, dist(gen));
  return t;
}

/// Every element of `t` as a double, row-major.
inline std::vector<double> toDoubles(const HostTensor &t) {
  std::vector<double> values(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    values[size_t(i)] = t.at(i);
  return values;
}

namespace detail {
inline absl::StatusOr<std::vector<HostTensor>>
runKernelImpl(llvm::StringRef kind, const std::vector<HostTensor> &operands,
              AttrList attrs, bool widened) {
  Graph graph("kernel_test");
  Builder b(graph);
  std::vector<Value *> inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    Type type = operands[i].type();
    if (widened && type.dtype() == DType::F64)
      type = type.withDType(DType::F32);
    inputs.push_back(b.input("x" + std::to_string(i), type));
  }
  absl::StatusOr<Op *> op = b.tryCreate(kind, inputs, std::move(attrs));
  if (!op.ok())
    return op.status();
  if (!(*op)->def().kernel)
    return absl::InvalidArgumentError("no kernel for '" + kind.str() + "'");
  std::vector<Tensor> operandViews;
  for (const HostTensor &t : operands)
    operandViews.push_back(t.view());
  std::vector<HostTensor> results;
  for (const Type &type : (*op)->resultTypes())
    results.emplace_back(widened && type.dtype() == DType::F32
                             ? type.withDType(DType::F64)
                             : type);
  // Poison the results (NaN, -1, ...): kernels must write every element.
  std::vector<Tensor> resultViews;
  for (const HostTensor &t : results) {
    if (t.numel() > 0)
      std::memset(t.view().raw(), 0xff, size_t(t.view().byteSize()));
    resultViews.push_back(t.view());
  }
  // The signature points into the operand types: keep them alive.
  llvm::SmallVector<Type, 4> operandTypes = (*op)->operandTypes();
  KernelContext ctx(**op, (*op)->signature(operandTypes), operandViews,
                    resultViews);
  absl::Status status = (*op)->def().kernel->run(ctx);
  if (!status.ok())
    return status;
  return results;
}
} // namespace detail

/// Runs the kernel of op `kind` on `operands` with `attrs`: builds a graph
/// with one input per operand (of the operand's type) and the op, allocates
/// results of the inferred types filled with 0xff bytes (so an element the
/// kernel forgets reads as NaN or -1), and calls the kernel. Fails if the
/// op does not build, has no kernel, or the kernel fails.
inline absl::StatusOr<std::vector<HostTensor>>
runKernel(llvm::StringRef kind, const std::vector<HostTensor> &operands,
          AttrList attrs = {}) {
  return detail::runKernelImpl(kind, operands, std::move(attrs),
                               /*widened=*/false);
}

/// As `runKernel`, but as the executor's widened runs do: the graph sees f64
/// operands as f32, and f32 results are allocated as f64.
inline absl::StatusOr<std::vector<HostTensor>>
runKernelWidened(llvm::StringRef kind, const std::vector<HostTensor> &operands,
                 AttrList attrs = {}) {
  return detail::runKernelImpl(kind, operands, std::move(attrs),
                               /*widened=*/true);
}

/// The single result of `runKernel`, or a test failure and an empty tensor.
inline HostTensor runOne(llvm::StringRef kind,
                         const std::vector<HostTensor> &operands,
                         AttrList attrs = {}) {
  absl::StatusOr<std::vector<HostTensor>> results =
      runKernel(kind, operands, std::move(attrs));
  if (!results.ok()) {
    ADD_FAILURE() << kind.str() << ": " << results.status();
    return HostTensor(Type(DType::F32, {0}));
  }
  return std::move((*results)[0]);
}

/// The error message of running `kind`, or "" if it succeeded.
inline std::string kernelError(llvm::StringRef kind,
                               const std::vector<HostTensor> &operands,
                               AttrList attrs = {}) {
  absl::StatusOr<std::vector<HostTensor>> results =
      runKernel(kind, operands, std::move(attrs));
  return results.ok() ? "" : std::string(results.status().message());
}

/// d/d operands[wrt] of sum(forward(operands) * weights) by central
/// differences with step `h`, for a single-result forward op `kind`; operand
/// `wrt` must be f64 (so the differences are not swamped by rounding).
inline std::vector<double>
numericGradient(llvm::StringRef kind, std::vector<HostTensor> operands,
                unsigned wrt, const HostTensor &weights, AttrList attrs = {},
                double h = 1e-6) {
  auto objective = [&]() {
    HostTensor y = runOne(kind, operands, attrs);
    double sum = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      sum += y.at(i) * weights.at(i);
    return sum;
  };
  Tensor x = operands[wrt].view();
  std::vector<double> grad(size_t(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    double saved = elementAsDouble(x, i);
    setElementFromDouble(x, i, saved + h);
    double plus = objective();
    setElementFromDouble(x, i, saved - h);
    double minus = objective();
    setElementFromDouble(x, i, saved);
    grad[size_t(i)] = (plus - minus) / (2 * h);
  }
  return grad;
}

} // namespace remat::test

#endif // REMAT_TESTS_UNIT_KERNELTESTUTIL_H
