//===- Kernel.h - Reference executor kernels ---------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A kernel computes one op on the CPU. The executor allocates every result
/// (through its tracking allocator) before calling it; the kernel fills them.
/// Kernels dispatch on the tensors' runtime dtypes, not the op's static types:
/// the executor may run f32 graphs in f64 (gradient checks). Scratch memory a
/// kernel needs (im2col buffers, ...) comes from ordinary allocation and is not
/// part of the memory model. View ops (OpFlagView) and declarations need no
/// kernel: the executor aliases or feeds them.
///
/// Kernels are attached with `OpRegistry::setKernel`, one file per op family
/// under src/Runtime/Kernels/.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_KERNEL_H
#define REMAT_RUNTIME_KERNEL_H

#include "remat/IR/Op.h"
#include "remat/IR/OpRegistry.h"
#include "remat/Runtime/Tensor.h"

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"

#include <functional>

namespace remat {

/// The operands, results and attributes of one op being executed.
class KernelContext {
public:
  KernelContext(const Op &op, OpSignature signature,
                llvm::ArrayRef<Tensor> operands, llvm::ArrayRef<Tensor> results)
      : op_(op), signature_(signature), operands_(operands),
        results_(results) {}

  const Op &op() const { return op_; }
  /// Attributes with the schema's defaults (`getInt("axis")`, ...).
  const OpSignature &signature() const { return signature_; }
  unsigned numOperands() const { return operands_.size(); }
  const Tensor &operand(unsigned i) const { return operands_[i]; }
  unsigned numResults() const { return results_.size(); }
  /// Allocated, uninitialised storage for result `i`.
  const Tensor &result(unsigned i = 0) const { return results_[i]; }

private:
  const Op &op_;
  OpSignature signature_;
  llvm::ArrayRef<Tensor> operands_;
  llvm::ArrayRef<Tensor> results_;
};

/// Fills the results; a failure (an index out of range, an unsupported dtype)
/// is a plain message that the executor prefixes with the op's location.
using KernelFn = std::function<absl::Status(const KernelContext &)>;

struct Kernel {
  KernelFn run;
};

/// Attaches every built-in kernel to `registry`'s ops. Called by
/// `OpRegistry::global()`.
void registerAllKernels(OpRegistry &registry);

// One function per op family, each in its own file under src/Runtime/Kernels/.
void registerGraphOpKernels(OpRegistry &registry);
void registerElementwiseKernels(OpRegistry &registry);
void registerMatmulKernels(OpRegistry &registry);
void registerShapeKernels(OpRegistry &registry);
void registerReductionKernels(OpRegistry &registry);
void registerSoftmaxKernels(OpRegistry &registry);
void registerNormalizationKernels(OpRegistry &registry);
void registerConvolutionKernels(OpRegistry &registry);
void registerPoolingKernels(OpRegistry &registry);
void registerIndexingKernels(OpRegistry &registry);
void registerRandomKernels(OpRegistry &registry);
void registerLossKernels(OpRegistry &registry);
void registerCommunicationKernels(OpRegistry &registry);

} // namespace remat

#endif // REMAT_RUNTIME_KERNEL_H
