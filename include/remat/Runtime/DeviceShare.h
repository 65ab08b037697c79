//===- DeviceShare.h - One device's part of a run ----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The hook through which the executor runs one device's share of a
/// multi-device graph: it holds only the values the share says are here and
/// leaves the cross-device ops (`transfer`, `all_reduce`) to the share, which
/// moves the bytes (src/Runtime/Distributed/ does it over MPI).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_DEVICESHARE_H
#define REMAT_RUNTIME_DEVICESHARE_H

#include "remat/Runtime/Tensor.h"

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"

namespace remat {

class Op;
class Value;

class DeviceShare {
public:
  virtual ~DeviceShare() = default;
  /// Whether this process holds `value`: computes, receives or is fed it.
  virtual bool holds(const Value &value) const = 0;
  /// Runs cross-device `op`. Operands and results this process does not
  /// hold are empty tensors; held results are allocated, to be filled.
  virtual absl::Status exchange(const Op &op, llvm::ArrayRef<Tensor> operands,
                                llvm::ArrayRef<Tensor> results) = 0;
};

} // namespace remat

#endif // REMAT_RUNTIME_DEVICESHARE_H
