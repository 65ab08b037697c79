//===- OrderList.cpp - A list with constant-time order queries ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Order maintenance after Bender, Cole, Demaine, Farach-Colton and Zito,
/// "Two simplified algorithms for maintaining order in a list" (ESA 2002):
/// each element carries a 64-bit label increasing along the list. An insert
/// takes the midpoint of its neighbours' labels; when they are adjacent, the
/// smallest aligned label range around the insertion point whose density is
/// at most (3/4)^k (k its log2 size) is relabelled evenly. Amortized
/// O(log n) per insert. Pushes at either end step by a fixed spacing that
/// leaves room for every op on each side of the marker.
///
//===----------------------------------------------------------------------===//

#include "MemoryOrder.h"

namespace remat::schedule {
namespace {

constexpr uint64_t kMiddle = uint64_t(1) << 63;

} // namespace

OrderList::OrderList(Index numOps)
    : marker_(numOps), next_(numOps + 1, kNone), prev_(numOps + 1, kNone),
      label_(numOps + 1, 0), head_(numOps), tail_(numOps) {
  // Room for every op on either side of the marker.
  spacing_ = (kMiddle >> 1) / (uint64_t(numOps) + 1);
  label_[marker_] = kMiddle;
}

void OrderList::pushFront(Index op) {
  if (label_[head_] < spacing_)
    relabelAll();
  label_[op] = label_[head_] - spacing_;
  link(op, kNone, head_);
}

void OrderList::pushBack(Index op) {
  if (label_[tail_] > UINT64_MAX - spacing_)
    relabelAll();
  label_[op] = label_[tail_] + spacing_;
  link(op, tail_, kNone);
}

void OrderList::insertBefore(Index op, Index next) {
  if (next == head_)
    return pushFront(op);
  insertAfter(op, prev_[next]);
}

void OrderList::insertAfter(Index op, Index prev) {
  if (prev == tail_)
    return pushBack(op);
  if (label_[next_[prev]] - label_[prev] < 2)
    relabelAround(prev);
  label_[op] = label_[prev] + (label_[next_[prev]] - label_[prev]) / 2;
  link(op, prev, next_[prev]);
}

std::vector<Index> OrderList::ops() const {
  std::vector<Index> ops;
  ops.reserve(size_);
  for (Index element = head_; element != kNone; element = next_[element])
    if (element != marker_)
      ops.push_back(element);
  return ops;
}

void OrderList::link(Index op, Index prev, Index next) {
  ++size_;
  prev_[op] = prev;
  next_[op] = next;
  if (prev == kNone)
    head_ = op;
  else
    next_[prev] = op;
  if (next == kNone)
    tail_ = op;
  else
    prev_[next] = op;
}

void OrderList::spread(Index first, Index last, uint64_t count,
                       unsigned __int128 low, unsigned __int128 high) {
  unsigned __int128 step = (high - low) / (count + 1);
  unsigned __int128 label = low + step;
  for (Index element = first;; element = next_[element]) {
    label_[element] = static_cast<uint64_t>(label);
    label += step;
    if (element == last)
      break;
  }
}

void OrderList::relabelAll() {
  // The middle half, leaving a quarter of the labels on each side for the
  // pushes to come, as the constructor does.
  spread(head_, tail_, size_ + 1, kMiddle >> 1, kMiddle + (kMiddle >> 1));
}

void OrderList::relabelAround(Index element) {
  // Grow an aligned label range [base, base + 2^bits) around `element` until
  // it holds at most 1.5^bits elements, then spread those evenly between
  // their outside neighbours (or the range's bounds at the list's ends).
  Index first = element;
  Index last = element;
  uint64_t count = 1;
  double capacity = 1.0;
  for (unsigned bits = 1; bits <= 64; ++bits) {
    unsigned __int128 size = (unsigned __int128)1 << bits;
    unsigned __int128 base = label_[element] & ~(uint64_t(size - 1));
    while (prev_[first] != kNone && label_[prev_[first]] >= base) {
      first = prev_[first];
      ++count;
    }
    while (next_[last] != kNone && label_[next_[last]] < base + size) {
      last = next_[last];
      ++count;
    }
    capacity *= 1.5;
    if (double(count) + 1 > capacity)
      continue;
    unsigned __int128 low =
        prev_[first] != kNone ? label_[prev_[first]] : base;
    unsigned __int128 high =
        next_[last] != kNone ? label_[next_[last]] : base + size - 1;
    spread(first, last, count, low, high);
    return;
  }
  relabelAll();
}

} // namespace remat::schedule
