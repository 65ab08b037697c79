//===- Executor.cpp - The reference executor --------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs the schedule op by op. Storage is reference counted by readers rather
/// than taken from `computeLiveness`: each owner of storage counts the ops
/// still to read it (directly or through a view) and is returned to the
/// tracking allocator when the count drops to zero after an op, unless it is a
/// leaf or holds an output. The measured peak is therefore an independent
/// check of the memory simulation (docs/executor.md).
///
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Executor.h"

#include "Feeds.h"

#include "remat/Analysis/Placement.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/Graph.h"
#include "remat/Analysis/Memory.h"
#include "remat/Runtime/Allocator.h"
#include "remat/Runtime/DeviceShare.h"
#include "remat/Runtime/Kernel.h"
#include "remat/Support/Status.h"
#include "remat/Support/Stopwatch.h"

#include "llvm/ADT/BitVector.h"

#include <fmt/format.h>


namespace remat {
namespace {

/// The storage of one run: a buffer per owning value, by value id. Whatever
/// is still held when the run ends (leaves, outputs, or everything after an
/// error) goes back to the allocator on destruction.
class Storage {
public:
  Storage(TrackingAllocator &allocator, size_t numValues)
      : allocator_(allocator), data_(numValues, nullptr),
        bytes_(numValues, 0), borrowed_(numValues) {}
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;
  ~Storage() {
    for (size_t id = 0; id < data_.size(); ++id)
      release(id);
  }

  void *allocate(unsigned id, int64_t bytes) {
    assert(!data_[id] && bytes_[id] == 0 && "storage allocated twice");
    data_[id] = allocator_.allocate(bytes);
    bytes_[id] = bytes;
    return data_[id];
  }

  /// Takes `data`, owned by the caller and outliving the run, as the storage
  /// of `id`: counted by the allocator like its own, never freed.
  void *borrow(unsigned id, void *data, int64_t bytes) {
    assert(!data_[id] && bytes_[id] == 0 && "storage allocated twice");
    allocator_.charge(bytes);
    data_[id] = data;
    bytes_[id] = bytes;
    borrowed_.set(id);
    return data;
  }

  void release(unsigned id) {
    if (borrowed_.test(id)) {
      borrowed_.reset(id);
      allocator_.refund(bytes_[id]);
    } else
      allocator_.deallocate(data_[id], bytes_[id]);
    data_[id] = nullptr;
    bytes_[id] = 0;
  }

private:
  TrackingAllocator &allocator_;
  std::vector<void *> data_;
  std::vector<int64_t> bytes_;
  llvm::BitVector borrowed_;
};

/// One run of one graph.
class Run {
public:
  Run(const Graph &graph, const RunOptions &options)
      : graph_(graph), options_(options),
        storage_(allocator_, graph.valueIdBound()),
        tensors_(graph.valueIdBound()), owner_(graph.valueIdBound(), 0),
        pendingReads_(graph.valueIdBound(), 0),
        pinned_(graph.valueIdBound()),
        releaseStamp_(graph.valueIdBound(), 0) {}

  absl::StatusOr<RunResult> execute() {
    Stopwatch stopwatch;
    REMAT_RETURN_IF_ERROR(checkRunnable());
    countReaders();
    REMAT_RETURN_IF_ERROR(feedLeaves());
    for (const Op &op : graph_.ops())
      if (!op.hasFlag(OpFlagLeaf) && runsHere(op))
        REMAT_RETURN_IF_ERROR(runOp(op));
    RunResult result;
    result.peakBytes = allocator_.peakBytes();
    for (const Value *output : graph_.outputs()) {
      if (!holds(*output))
        continue;
      const Tensor &tensor = tensors_[output->id()];
      HostTensor copy(tensor.type());
      copyConverting(tensor, copy.view());
      result.outputs.emplace_back(output->name().str(), std::move(copy));
    }
    result.seconds = stopwatch.seconds();
    return result;
  }

private:
  /// Whether this process holds `value` (always, without a device share).
  bool holds(const Value &value) const {
    return !options_.share || options_.share->holds(value);
  }

  /// Whether this process takes part in `op`: it holds a result, or for a
  /// cross-device op also an operand (it sends).
  bool runsHere(const Op &op) const {
    if (!options_.share)
      return true;
    auto held = [&](const Value *value) { return holds(*value); };
    return llvm::any_of(op.results(), held) ||
           (isExchange(op) && llvm::any_of(op.operands(), held));
  }

  /// Whether the device share runs `op` instead of a kernel.
  bool isExchange(const Op &op) const {
    return options_.share && Placement::isCrossDevice(op);
  }

  /// The type a value has in this run: f32 becomes f64 when widening.
  Type runtimeType(const Value &value) const {
    if (options_.widenFloats && value.type().dtype() == DType::F32)
      return value.type().withDType(DType::F64);
    return value.type();
  }

  /// Fails before anything runs on an op without a kernel or a leaf of a
  /// dtype the executor cannot hold.
  absl::Status checkRunnable() const {
    for (const Op &op : graph_.ops()) {
      if (op.hasFlag(OpFlagLeaf)) {
        DType dtype = op.result()->type().dtype();
        if (!isRunnableDType(dtype))
          return opError(op, fmt::format("the executor cannot hold {} data",
                                         dtypeName(dtype).str()));
        continue;
      }
      if (isAlias(op, 0) || !runsHere(op) || isExchange(op))
        continue;
      if (!op.def().kernel || !op.def().kernel->run)
        return opError(op,
                       fmt::format("no kernel for op '{}'", op.kind().str()));
    }
    return absl::OkStatus();
  }

  /// Resolves storage owners and counts, for each owner, the ops reading it.
  /// Leaves and the owners of outputs are pinned: never freed during the run.
  void countReaders() {
    // stamp[o] == step + 1 once the op at `step` has been counted for o.
    std::vector<int64_t> stamp(graph_.valueIdBound(), 0);
    int64_t step = 0;
    for (const Op &op : graph_.ops()) {
      ++step;
      for (const Value *operand : op.operands()) {
        if (!holds(*operand))
          continue;
        unsigned owner = owner_[operand->id()];
        if (stamp[owner] != step) {
          stamp[owner] = step;
          ++pendingReads_[owner];
        }
      }
      for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
        unsigned id = op.result(i)->id();
        owner_[id] = isAlias(op, i) ? owner_[op.operand(0)->id()] : id;
        if (op.hasFlag(OpFlagLeaf))
          pinned_.set(id);
      }
    }
    for (const Value *output : graph_.outputs())
      if (holds(*output))
        pinned_.set(owner_[output->id()]);
  }

  /// Allocates every input and param before the first step, as the memory
  /// model has them live from step 0, and fills them from the feeds or the
  /// seed.
  absl::Status feedLeaves() {
    std::vector<int64_t> bounds;
    for (const Op &op : graph_.ops()) {
      if (!op.hasFlag(OpFlagLeaf))
        continue;
      for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
        const Value &leaf = *op.result(i);
        Type type = runtimeType(leaf);
        const HostTensor *feed = findFeed(leaf);
        if (feed)
          REMAT_RETURN_IF_ERROR(checkFeed(op, leaf, *feed));
        // Kernels never write their operands, so a feed of the run's dtype
        // is read in place rather than copied.
        if (feed && feed->dtype() == type.dtype()) {
          void *data = storage_.borrow(leaf.id(), feed->view().raw(),
                                       type.byteSize());
          tensors_[leaf.id()] = Tensor(std::move(type), data);
          continue;
        }
        void *data = storage_.allocate(leaf.id(), type.byteSize());
        Tensor tensor(std::move(type), data);
        tensors_[leaf.id()] = tensor;
        if (feed) {
          copyConverting(feed->view(), tensor);
          continue;
        }
        if (bounds.empty())
          bounds = computeIndexBounds(graph_);
        fillLeaf(leaf, options_.seed, bounds[leaf.id()], tensor);
      }
    }
    return absl::OkStatus();
  }

  const HostTensor *findFeed(const Value &leaf) const {
    if (!options_.feeds)
      return nullptr;
    auto it = options_.feeds->find(leaf.name());
    return it == options_.feeds->end() ? nullptr : &it->second;
  }

  /// A feed must have the leaf's shape and dtype, or for an f32/f64 leaf
  /// either float dtype (converted).
  static absl::Status checkFeed(const Op &op, const Value &leaf,
                                const HostTensor &feed) {
    auto isWide = [](DType dtype) {
      return dtype == DType::F32 || dtype == DType::F64;
    };
    DType want = leaf.type().dtype();
    DType have = feed.dtype();
    bool dtypeOk = have == want || (isWide(have) && isWide(want));
    if (dtypeOk && feed.type().shape() == leaf.type().shape())
      return absl::OkStatus();
    return opError(op, fmt::format("feed '{}' has type {}, expected {}",
                                   leaf.name().str(), feed.type().str(),
                                   leaf.type().str()));
  }

  absl::Status runOp(const Op &op) {
    llvm::SmallVector<Tensor, 4> operands;
    llvm::SmallVector<Type, 4> operandTypes;
    for (const Value *operand : op.operands()) {
      operands.push_back(tensors_[operand->id()]);
      operandTypes.push_back(operands.back().type());
    }
    llvm::SmallVector<Tensor, 2> results;
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value &value = *op.result(i);
      if (!holds(value)) {
        results.emplace_back();
        continue;
      }
      Type type = runtimeType(value);
      void *data = isAlias(op, i)
                       ? tensors_[op.operand(0)->id()].raw()
                       : storage_.allocate(value.id(), type.byteSize());
      tensors_[value.id()] = Tensor(std::move(type), data);
      results.push_back(tensors_[value.id()]);
    }
    if (isExchange(op)) {
      absl::Status status = options_.share->exchange(op, operands, results);
      if (!status.ok())
        return opError(op, std::string(status.message()));
    } else if (!isAlias(op, 0)) {
      KernelContext context(op, OpSignature(op.def(), operandTypes, op.attrs()),
                            operands, results);
      absl::Status status = op.def().kernel->run(context);
      if (!status.ok())
        return opError(op, std::string(status.message()));
    }
    releaseAfter(op);
    return absl::OkStatus();
  }

  /// Frees what `op` was the last to read, and its results nobody reads.
  void releaseAfter(const Op &op) {
    ++step_;
    for (const Value *operand : op.operands()) {
      if (!holds(*operand))
        continue;
      unsigned owner = owner_[operand->id()];
      // An op reading an owner twice was counted once, so it decrements once.
      if (releaseStamp_[owner] == step_)
        continue;
      releaseStamp_[owner] = step_;
      if (--pendingReads_[owner] == 0 && !pinned_.test(owner))
        storage_.release(owner);
    }
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      unsigned id = op.result(i)->id();
      if (!holds(*op.result(i)))
        continue;
      if (owner_[id] == id && pendingReads_[id] == 0 && !pinned_.test(id))
        storage_.release(id);
    }
  }

  const Graph &graph_;
  const RunOptions &options_;
  TrackingAllocator allocator_;
  Storage storage_;
  /// The tensor of every value computed so far, by value id.
  std::vector<Tensor> tensors_;
  /// The id of the value owning each value's storage.
  std::vector<unsigned> owner_;
  /// For owners: the ops that have still to read the storage.
  std::vector<int64_t> pendingReads_;
  llvm::BitVector pinned_;
  /// releaseStamp_[o] == step_ once the current op has decremented o.
  std::vector<int64_t> releaseStamp_;
  int64_t step_ = 0;
};

} // namespace

absl::StatusOr<RunResult> runGraph(const Graph &graph,
                                   const RunOptions &options) {
  Run run(graph, options);
  return run.execute();
}

} // namespace remat
