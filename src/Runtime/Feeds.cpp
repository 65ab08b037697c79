//===- Feeds.cpp - Deterministic data for inputs and params -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Element i of a leaf named `n` is drawn from the counter-based stream
/// `streamKey(seed, n)`, so the data depends only on the seed, the name and
/// the type: two graphs sharing a name get the same numbers, whatever else
/// they contain. The distributions are those of docs/executor.md.
///
//===----------------------------------------------------------------------===//

#include "Feeds.h"

#include "remat/IR/Graph.h"
#include "remat/Analysis/Memory.h"
#include "remat/Runtime/Executor.h"
#include "remat/Runtime/Random.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace remat {
namespace {

/// The operand of an indexing op that holds indices, and the size it indexes.
struct IndexUse {
  unsigned operand;
  int64_t bound;
};

std::optional<int64_t> intAttr(const Op &op, llvm::StringRef name) {
  if (!op.def().findAttrSpec(name))
    return std::nullopt;
  llvm::SmallVector<Type, 4> types = op.operandTypes();
  return op.signature(types).getInt(name);
}

/// How `op` indexes with one of its operands, if it does.
std::optional<IndexUse> indexUseOf(const Op &op) {
  llvm::StringRef kind = op.kind();
  if ((kind == "softmax_cross_entropy" ||
       kind == "softmax_cross_entropy_grad") &&
      op.numOperands() >= 2 && op.operand(0)->type().rank() >= 1)
    return IndexUse{1, op.operand(0)->type().dim(-1)};
  if (kind == "embedding" && op.numOperands() == 2 &&
      op.operand(0)->type().rank() >= 1)
    return IndexUse{1, op.operand(0)->type().dim(0)};
  if (kind == "gather" && op.numOperands() == 2) {
    const Type &x = op.operand(0)->type();
    int64_t axis = intAttr(op, "axis").value_or(0);
    if (axis < 0)
      axis += x.rank();
    if (axis < 0 || axis >= int64_t(x.rank()))
      return std::nullopt;
    return IndexUse{1, x.dim(int(axis))};
  }
  if (kind == "gather_grad" && op.numOperands() == 2)
    if (std::optional<int64_t> size = intAttr(op, "size"))
      return IndexUse{0, *size};
  return std::nullopt;
}

/// The largest value plus one that `dtype` holds, capped at int64's maximum.
int64_t dtypeLimit(DType dtype) {
  switch (dtype) {
  case DType::I8:
    return int64_t(std::numeric_limits<int8_t>::max()) + 1;
  case DType::I32:
    return int64_t(std::numeric_limits<int32_t>::max()) + 1;
  case DType::Bool:
    return 2;
  default:
    return std::numeric_limits<int64_t>::max();
  }
}

/// `bits` (uniform 32 bits) mapped to [0, bound), for bound >= 1.
int64_t uniformInt(uint32_t bits, int64_t bound) {
  if (bound <= (int64_t(1) << 32))
    return int64_t((uint64_t(bits) * uint64_t(bound)) >> 32);
  double scaled = std::floor(double(bits) * 0x1p-32 * double(bound));
  return std::min(bound - 1, int64_t(scaled));
}

/// Calls `visit(i, bits)` for every element i < numel of stream `key`, one
/// Philox call per four elements (`randomBits(key, i)` element by element).
template <typename Visit>
void forEachDraw(uint64_t key, int64_t numel, Visit visit) {
  for (int64_t first = 0; first < numel; first += 4) {
    std::array<uint32_t, 4> words = randomBlock(key, uint64_t(first / 4));
    for (int64_t j = 0; j < 4 && first + j < numel; ++j)
      visit(first + j, words[j]);
  }
}

/// The uniform float data of a leaf: `(2u - 1) * limit` when centred (inputs,
/// and params of rank >= 2 with limit sqrt(3 / fanIn), see docs/executor.md),
/// else `0.5 + u`.
struct FloatLaw {
  bool centred = true;
  double limit = 1;

  static FloatLaw of(const Value &leaf) {
    const Type &type = leaf.type();
    if (leaf.producer()->kind() != "param")
      return {};
    if (type.rank() <= 1)
      return {.centred = false};
    // Dense weights are held [in, out], convolution weights [Cout, Cin/g,
    // kh, kw].
    int64_t fanIn =
        type.rank() == 2 ? type.dim(0) : type.numElements() / type.dim(0);
    return {.limit = std::sqrt(3.0 / double(std::max<int64_t>(fanIn, 1)))};
  }

  double operator()(uint32_t bits) const {
    double u = double(bits) * 0x1p-32;
    return centred ? (2 * u - 1) * limit : 0.5 + u;
  }
};

/// Fills `out` (of element type T) with `law`'s data, rounded to f32 first
/// when `roundToF32`.
template <typename T>
void fillFloats(uint64_t key, const FloatLaw &law, bool roundToF32,
                const Tensor &out) {
  T *data = out.data<T>();
  forEachDraw(key, out.numel(), [&](int64_t i, uint32_t bits) {
    double value = law(bits);
    data[i] = static_cast<T>(roundToF32 ? double(float(value)) : value);
  });
}

template <typename T> void store(const Tensor &out, int64_t i, double value) {
  out.data<T>()[i] = static_cast<T>(value);
}

void storeElement(const Tensor &out, int64_t i, double value) {
  switch (out.dtype()) {
  case DType::F32:
    return store<float>(out, i, value);
  case DType::F64:
    return store<double>(out, i, value);
  case DType::I8:
    return store<int8_t>(out, i, value);
  case DType::I32:
    return store<int32_t>(out, i, value);
  case DType::I64:
    return store<int64_t>(out, i, value);
  case DType::Bool:
    return store<bool>(out, i, value);
  case DType::F16:
  case DType::BF16:
    break;
  }
  assert(false && "no storage for f16 or bf16");
}

template <typename From, typename To>
void convert(const Tensor &from, const Tensor &to) {
  const From *source = from.data<From>();
  To *target = to.data<To>();
  for (int64_t i = 0, e = from.numel(); i < e; ++i)
    target[i] = static_cast<To>(source[i]);
}

} // namespace

bool isRunnableDType(DType dtype) {
  return dtype != DType::F16 && dtype != DType::BF16;
}

std::vector<int64_t> computeIndexBounds(const Graph &graph) {
  // root[v]: the value v reads through a chain of views, slices and
  // transfers, which keep element values (v itself if none).
  std::vector<const Value *> root(graph.valueIdBound(), nullptr);
  std::vector<int64_t> bounds(graph.valueIdBound(), kDefaultIndexBound);
  std::vector<bool> indexed(graph.valueIdBound(), false);
  for (const Op &op : graph.ops()) {
    if (std::optional<IndexUse> use = indexUseOf(op)) {
      unsigned id = root[op.operand(use->operand)->id()]->id();
      bounds[id] = indexed[id] ? std::min(bounds[id], use->bound) : use->bound;
      indexed[id] = true;
    }
    for (unsigned i = 0, e = op.numResults(); i < e; ++i) {
      const Value *result = op.result(i);
      bool keepsValues = isAlias(op, i) ||
                         (i == 0 && (op.kind() == "slice" ||
                                     op.kind() == "transfer"));
      root[result->id()] = keepsValues ? root[op.operand(0)->id()] : result;
    }
  }
  return bounds;
}

void fillLeaf(const Value &leaf, uint64_t seed, int64_t indexBound,
              const Tensor &out) {
  assert(out.shape() == leaf.type().shape() && "feed shape mismatch");
  uint64_t key = streamKey(seed, leaf.name());
  DType dtype = leaf.type().dtype();
  if (isFloatDType(dtype)) {
    bool roundToF32 = dtype == DType::F32;
    if (out.dtype() == DType::F64)
      return fillFloats<double>(key, FloatLaw::of(leaf), roundToF32, out);
    return fillFloats<float>(key, FloatLaw::of(leaf), roundToF32, out);
  }
  if (dtype == DType::Bool) {
    forEachDraw(key, out.numel(), [&](int64_t i, uint32_t bits) {
      out.data<bool>()[i] = (bits & 1) != 0;
    });
    return;
  }
  int64_t bound = std::min(indexBound, dtypeLimit(dtype));
  forEachDraw(key, out.numel(), [&](int64_t i, uint32_t bits) {
    int64_t value = bound <= 0 ? 0 : uniformInt(bits, bound);
    if (dtype == DType::I64)
      out.data<int64_t>()[i] = value;
    else
      storeElement(out, i, double(value));
  });
}

void copyConverting(const Tensor &from, const Tensor &to) {
  assert(from.shape() == to.shape() && "copy between different shapes");
  if (from.numel() == 0)
    return;
  if (from.dtype() == to.dtype()) {
    std::memcpy(to.raw(), from.raw(), size_t(from.byteSize()));
    return;
  }
  if (from.dtype() == DType::F32 && to.dtype() == DType::F64)
    return convert<float, double>(from, to);
  if (from.dtype() == DType::F64 && to.dtype() == DType::F32)
    return convert<double, float>(from, to);
  assert(false && "unsupported conversion");
}

TensorMap makeFeeds(const Graph &graph, uint64_t seed) {
  TensorMap feeds;
  std::vector<int64_t> bounds = computeIndexBounds(graph);
  for (llvm::ArrayRef<Value *> leaves : {graph.inputs(), graph.params()})
    for (const Value *leaf : leaves) {
      if (!isRunnableDType(leaf->type().dtype()))
        continue;
      HostTensor tensor(leaf->type());
      fillLeaf(*leaf, seed, bounds[leaf->id()], tensor.view());
      feeds.insert_or_assign(leaf->name().str(), std::move(tensor));
    }
  return feeds;
}

} // namespace remat
