//===- Allocator.h - Allocation that counts its bytes ------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The executor takes every tensor's storage from a `TrackingAllocator`, which
/// counts the bytes held now and the most ever held: the measured peak that
/// must equal the memory simulation's (docs/memory-model.md).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_ALLOCATOR_H
#define REMAT_RUNTIME_ALLOCATOR_H

#include <cstdint>

namespace remat {

class TrackingAllocator {
public:
  TrackingAllocator() = default;
  TrackingAllocator(const TrackingAllocator &) = delete;
  TrackingAllocator &operator=(const TrackingAllocator &) = delete;
  /// Asserts that every allocation was returned.
  ~TrackingAllocator();

  /// 64-byte aligned storage of `bytes` bytes, counted as exactly `bytes`.
  /// Zero bytes gives null and counts nothing.
  void *allocate(int64_t bytes);
  /// Returns storage from `allocate`; `bytes` must be what was asked for.
  void deallocate(void *data, int64_t bytes);
  /// Counts `bytes` of storage held elsewhere as allocated, and `refund`
  /// uncounts them: for tensors the caller lends (feeds read in place).
  void charge(int64_t bytes);
  void refund(int64_t bytes);

  int64_t currentBytes() const { return currentBytes_; }
  int64_t peakBytes() const { return peakBytes_; }
  int64_t numAllocations() const { return numAllocations_; }

private:
  int64_t currentBytes_ = 0;
  int64_t peakBytes_ = 0;
  int64_t numAllocations_ = 0;
  int64_t numLive_ = 0;
};

} // namespace remat

#endif // REMAT_RUNTIME_ALLOCATOR_H
