//===- Pack.cpp - Reducing gradients in buckets ------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Lays the flattened gradients end to end in the order they become ready
/// (their producers' places in the tower schedule) and cuts the line into N
/// near-equal buckets. Each bucket is built from slices of only the
/// gradients it covers, so its reduction can start as soon as those exist,
/// while later gradients are still being computed; the reduced buckets are
/// cut back into gradients the same way.
///
//===----------------------------------------------------------------------===//

#include "Towers.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace remat::dp {
namespace {

/// The smallest bucket worth packing, in elements.
constexpr int64_t kMinBucketElements = 1024;

/// Elements [begin, end) of gradient `grad`'s flattening, at `offset` in
/// its bucket.
struct Piece {
  size_t grad;
  int64_t begin;
  int64_t end;
  int64_t offset;
};

struct Bucket {
  int64_t size = 0;
  std::vector<Piece> pieces;
};

void emitNote(const DataParallelOptions &options, const std::string &text) {
  if (options.note)
    options.note(text);
  else
    llvm::errs() << "note: " << text << '\n';
}

/// Cuts the gradients, in ready order, into `count` buckets.
std::vector<Bucket> formBuckets(llvm::ArrayRef<size_t> readyOrder,
                                llvm::ArrayRef<int64_t> sizes, int64_t total,
                                int64_t count) {
  int64_t split = total / count;
  std::vector<Bucket> buckets(count);
  for (int64_t j = 0; j < count; ++j)
    buckets[j].size = j + 1 < count ? split : total - split * (count - 1);
  size_t j = 0;
  int64_t filled = 0;
  for (size_t grad : readyOrder) {
    for (int64_t begin = 0; begin < sizes[grad];) {
      while (filled == buckets[j].size) {
        ++j;
        filled = 0;
      }
      int64_t take = std::min(sizes[grad] - begin, buckets[j].size - filled);
      buckets[j].pieces.push_back({grad, begin, begin + take, filled});
      begin += take;
      filled += take;
    }
  }
  return buckets;
}

class Packer {
public:
  Packer(const Towers &towers, Reducer &reducer)
      : towers_(towers), reducer_(reducer) {}

  absl::StatusOr<std::vector<std::vector<Value *>>>
  run(llvm::ArrayRef<Bucket> buckets, const DataParallelOptions &options) {
    size_t numGrads = towers_.grads.size();
    // flat[i][k]: tower k's gradient i as one dim (a view).
    flat_.assign(numGrads, std::vector<Value *>(towers_.count));
    for (size_t i = 0; i < numGrads; ++i)
      for (int64_t k = 0; k < towers_.count; ++k) {
        REMAT_ASSIGN_OR_RETURN(flat_[i][k],
                               reshape(towers_.grads[i][k], {-1}, k, "flat"));
      }
    std::vector<int64_t> bucketSizes;
    for (const Bucket &bucket : buckets)
      bucketSizes.push_back(bucket.size);
    REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> homes,
                           placeParams(bucketSizes, options, towers_.count));
    // piecesOf[i]: (bucket, piece) pairs of gradient i, in order.
    std::vector<std::vector<std::pair<size_t, size_t>>> piecesOf(numGrads);
    std::vector<std::vector<Value *>> reduced(buckets.size());
    for (size_t j = 0; j < buckets.size(); ++j) {
      std::vector<Value *> perTower;
      for (int64_t k = 0; k < towers_.count; ++k) {
        llvm::SmallVector<Value *, 4> parts;
        for (const Piece &piece : buckets[j].pieces) {
          REMAT_ASSIGN_OR_RETURN(
              Value * part, cut(flat_[piece.grad][k], piece.begin, piece.end, k));
          parts.push_back(part);
        }
        REMAT_ASSIGN_OR_RETURN(
            Value * bucket, join(parts, k, fmt::format("bucket{}.t{}", j, k)));
        perTower.push_back(bucket);
      }
      for (size_t p = 0; p < buckets[j].pieces.size(); ++p)
        piecesOf[buckets[j].pieces[p].grad].emplace_back(j, p);
      REMAT_ASSIGN_OR_RETURN(
          reduced[j], reducer_.reduce(perTower, j, buckets.size(), homes[j],
                                      fmt::format("bucket{}", j)));
    }
    std::vector<std::vector<Value *>> grads(numGrads);
    for (size_t i = 0; i < numGrads; ++i) {
      const Type &type = towers_.grads[i][0]->type();
      for (int64_t k = 0; k < towers_.count; ++k) {
        llvm::SmallVector<Value *, 4> parts;
        for (auto [j, p] : piecesOf[i]) {
          const Piece &piece = buckets[j].pieces[p];
          REMAT_ASSIGN_OR_RETURN(
              Value * part,
              cut(reduced[j][k], piece.offset,
                  piece.offset + piece.end - piece.begin, k));
          parts.push_back(part);
        }
        std::string name =
            fmt::format("{}.unpacked{}", towers_.params[i]->name().str(), k);
        REMAT_ASSIGN_OR_RETURN(Value * joined, join(parts, k, name));
        std::vector<int64_t> shape(type.shape().begin(), type.shape().end());
        REMAT_ASSIGN_OR_RETURN(Value * grad,
                               reshape(joined, shape, k, "reduced"));
        grads[i].push_back(grad);
      }
    }
    return grads;
  }

private:
  absl::StatusOr<Value *> reshape(Value *value, std::vector<int64_t> shape,
                                  int64_t k, llvm::StringRef suffix) {
    REMAT_ASSIGN_OR_RETURN(
        Op * op, reducer_.emit("reshape", {value}, {{"shape", Attribute(shape)}},
                               towerDevice(k),
                               {fmt::format("{}.{}", value->name().str(),
                                            suffix.str())}));
    return op->result();
  }

  /// Elements [begin, end) of one-dim `value`; `value` itself when whole.
  absl::StatusOr<Value *> cut(Value *value, int64_t begin, int64_t end,
                              int64_t k) {
    if (begin == 0 && end == value->type().dim(0))
      return value;
    REMAT_ASSIGN_OR_RETURN(
        Op * op, reducer_.emit("slice", {value},
                               {{"starts", Attribute(std::vector<int64_t>{begin})},
                                {"ends", Attribute(std::vector<int64_t>{end})}},
                               towerDevice(k),
                               {fmt::format("{}.{}_{}", value->name().str(),
                                            begin, end)}));
    return op->result();
  }

  absl::StatusOr<Value *> join(llvm::ArrayRef<Value *> parts, int64_t k,
                               const std::string &name) {
    if (parts.size() == 1)
      return parts.front();
    REMAT_ASSIGN_OR_RETURN(Op * op,
                           reducer_.emit("concat", parts,
                                         {{"axis", Attribute(0)}},
                                         towerDevice(k), {name}));
    return op->result();
  }

  const Towers &towers_;
  Reducer &reducer_;
  std::vector<std::vector<Value *>> flat_;
};

} // namespace

absl::StatusOr<std::optional<std::vector<std::vector<Value *>>>>
reducePacked(const Towers &towers, Reducer &reducer,
             const DataParallelOptions &options) {
  size_t numGrads = towers.grads.size();
  std::vector<int64_t> sizes;
  int64_t total = 0;
  DType dtype = towers.grads[0][0]->type().dtype();
  for (const auto &perTower : towers.grads) {
    const Type &type = perTower[0]->type();
    if (type.numElements() == 0) {
      emitNote(options, fmt::format("data-parallel: packing skipped: %{} is "
                                    "empty",
                                    perTower[0]->name().str()));
      return std::nullopt;
    }
    if (type.dtype() != dtype) {
      emitNote(options, fmt::format("data-parallel: packing skipped: the "
                                    "gradients mix {} and {}",
                                    dtypeName(dtype).str(),
                                    dtypeName(type.dtype()).str()));
      return std::nullopt;
    }
    sizes.push_back(type.numElements());
    total += sizes.back();
  }
  if (total / options.pack < kMinBucketElements) {
    emitNote(options,
             fmt::format("data-parallel: packing skipped: {} gradient "
                         "elements make buckets under {} elements",
                         total, kMinBucketElements));
    return std::nullopt;
  }
  llvm::DenseMap<const Op *, size_t> position;
  for (size_t p = 0; p < towers.order.size(); ++p)
    position[towers.order[p]] = p;
  std::vector<size_t> readyOrder(numGrads);
  std::iota(readyOrder.begin(), readyOrder.end(), 0);
  auto readyAt = [&](size_t i) -> size_t {
    auto it = position.find(towers.grads[i][0]->producer());
    return it == position.end() ? 0 : it->second;
  };
  llvm::stable_sort(readyOrder,
                    [&](size_t a, size_t b) { return readyAt(a) < readyAt(b); });
  std::vector<Bucket> buckets =
      formBuckets(readyOrder, sizes, total, options.pack);
  return Packer(towers, reducer).run(buckets, options);
}

} // namespace remat::dp
