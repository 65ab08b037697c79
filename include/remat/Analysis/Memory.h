//===- Memory.h - Liveness and memory simulation of a schedule ---*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Simulates the memory of a graph's schedule under the memory model of
/// docs/memory-model.md: a value occupies numel x sizeof(dtype) bytes from the
/// step its producer runs to the step its last reader runs; views alias their
/// operand and extend its lifetime; an op may write its result in place of an
/// operand that nothing reads after it (`inPlaceOperands`); inputs, params and
/// outputs live throughout. Linear in ops + edges.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_MEMORY_H
#define REMAT_ANALYSIS_MEMORY_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <vector>

namespace remat {

class Graph;
class Op;
class Value;

/// Whether result `i` of `op` shares the storage of the op's operand 0: result
/// 0 of a view op (reshape, identity, stop_gradient, ...) that has operands.
/// The one alias rule of the memory model; everything that counts bytes
/// (simulation, schedule, planners, executor) asks here.
bool isAlias(const Op &op, unsigned i);

/// The value owning `value`'s storage: itself, or through chains of views
/// the first value that is no alias. O(length of the view chain).
const Value *storageOwner(const Value *value);

/// The bytes `value` adds to memory when it is produced: its size, or 0 for
/// an alias.
int64_t ownedBytes(const Value &value);

/// The operands, by index, whose storage result 0 of `op` takes over when
/// nothing reads that storage after `op`'s step: those an `extern` op lists
/// in `inplace` (a fusing compiler writes a pointwise kernel's result into a
/// dead operand's buffer of the same type). Empty for every other op. Only
/// the simulation (`computeLiveness`) applies it, as it depends on the
/// schedule; the scheduler and the planners count the result's bytes, so
/// they plan at most the peak the simulation finds.
llvm::ArrayRef<int64_t> inPlaceOperands(const Op &op);

/// What the live bytes at one step are made of.
struct MemoryBreakdown {
  int64_t params = 0;
  /// Storage of values that are gradients of params (graph outputs named
  /// after a param, see docs/memory-model.md); zero on a forward graph.
  int64_t paramGrads = 0;
  int64_t inputs = 0;
  /// Everything else: activations and temporaries.
  int64_t activations = 0;

  int64_t total() const { return params + paramGrads + inputs + activations; }
};

/// The result of simulating a schedule.
struct MemoryProfile {
  /// Maximum over steps of the live bytes.
  int64_t peakBytes = 0;
  /// Index in the schedule of the first step that reaches the peak; -1 for an
  /// empty graph.
  int64_t peakStep = -1;
  /// Values whose storage is live at the peak step, in schedule order of
  /// their producers (views are represented by the value owning the storage).
  std::vector<const Value *> liveAtPeak;
  /// Live bytes at every step of the schedule.
  std::vector<int64_t> timeline;
  /// The split of `peakBytes`.
  MemoryBreakdown peakBreakdown;
};

/// Simulates the memory of `graph`'s schedule. The graph must be verified.
MemoryProfile simulateMemory(const Graph &graph);

/// Which storage each value uses and the steps at which each storage is live,
/// as `simulateMemory` counts them. Side tables are indexed by value id;
/// entries of ids not in the graph are null / -1.
struct Liveness {
  /// The value owning each value's storage: the value itself, for a view
  /// the owner of the view's operand 0, and for a result written in place
  /// the owner of the operand it overwrites.
  std::vector<const Value *> owner;
  /// For owners: the first and last step (inclusive) at which the storage is
  /// live. Entries of the other values are -1.
  std::vector<int64_t> firstStep;
  std::vector<int64_t> lastStep;
  /// Number of steps of the schedule.
  int64_t numSteps = 0;
};

/// The storage owners and live ranges of `graph`'s schedule. The graph must
/// be verified. Linear in ops + edges.
Liveness computeLiveness(const Graph &graph);

/// What a storage holds, for live bytes split by kind. The first three are
/// the `MemoryBreakdown` fields of the same names; the last three split its
/// `activations` by the role of the op that owns the storage (OpRoles.h).
enum class StorageKind : uint8_t {
  Param,
  Input,
  ParamGrad,
  /// Forward values (kept, or temporaries of the forward pass).
  Activation,
  /// Values of the recompute rewrite's copies.
  Recomputed,
  /// Values of the backward pass other than param gradients.
  Gradient,
};
inline constexpr unsigned kNumStorageKinds = 6;

/// Live bytes at one step, indexed by `StorageKind`.
using KindBytes = std::array<int64_t, kNumStorageKinds>;

/// The live bytes of every step of `graph`'s schedule split by
/// `StorageKind`: at each step the kinds sum to `simulateMemory`'s timeline.
/// The graph must be verified. Linear in ops + edges.
std::vector<KindBytes> profileMemoryByKind(const Graph &graph);

} // namespace remat

#endif // REMAT_ANALYSIS_MEMORY_H
