//===- Allocator.cpp - Allocation that counts its bytes ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Allocator.h"

#include <algorithm>
#include <cassert>
#include <new>

namespace remat {
namespace {

constexpr std::align_val_t kAlignment{64};

} // namespace

TrackingAllocator::~TrackingAllocator() {
  assert(numLive_ == 0 && currentBytes_ == 0 &&
         "tracking allocator destroyed with live allocations");
}

void *TrackingAllocator::allocate(int64_t bytes) {
  assert(bytes >= 0 && "negative allocation size");
  if (bytes <= 0)
    return nullptr;
  void *data = ::operator new(static_cast<size_t>(bytes), kAlignment);
  charge(bytes);
  ++numAllocations_;
  return data;
}

void TrackingAllocator::charge(int64_t bytes) {
  assert(bytes >= 0 && "negative charge");
  currentBytes_ += bytes;
  peakBytes_ = std::max(peakBytes_, currentBytes_);
  ++numLive_;
}

void TrackingAllocator::refund(int64_t bytes) {
  assert(numLive_ > 0 && currentBytes_ >= bytes && "refunding too much");
  currentBytes_ -= bytes;
  --numLive_;
}

void TrackingAllocator::deallocate(void *data, int64_t bytes) {
  if (!data) {
    assert(bytes == 0 && "null storage of a nonzero size");
    return;
  }
  ::operator delete(data, kAlignment);
  refund(bytes);
}

} // namespace remat
