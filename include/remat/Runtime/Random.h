//===- Random.h - Counter-based random numbers -------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Stateless random numbers: element `index` of a stream keyed by `key` is a
/// pure function of the two (Philox4x32-10, from Random123). One Philox call
/// on counter `index / 4` with key `key` yields four 32-bit words and element
/// `index` is word `index % 4`, so a kernel drawing consecutive elements pays
/// one call per four (`randomBlock`, `fillRandomBits`). Random ops key their stream by their
/// `seed` attribute, so an op recomputed in the backward pass, or any op with
/// the same key, draws exactly the same numbers, in any dtype.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_RANDOM_H
#define REMAT_RUNTIME_RANDOM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>

namespace remat {

/// Elements 4 * block .. 4 * block + 3 of stream `key`, in order.
std::array<uint32_t, 4> randomBlock(uint64_t key, uint64_t block);

/// Elements firstIndex .. firstIndex + bits.size() - 1 of stream `key`, into
/// `bits`: `randomBits` over a range, one Philox call per four elements.
void fillRandomBits(uint64_t key, uint64_t firstIndex,
                    llvm::MutableArrayRef<uint32_t> bits);

/// 32 random bits: element `index` of stream `key`.
uint32_t randomBits(uint64_t key, uint64_t index);

/// Uniform in [0, 1) with 32 bits of resolution: element `index` of `key`.
double randomUniform(uint64_t key, uint64_t index);

/// Whether dropout with `rate` keeps element `index` of stream `seed`. Decided
/// on integers, so f32 and f64 runs keep the same elements.
bool dropoutKeeps(uint64_t seed, uint64_t index, double rate);

/// The threshold `dropoutKeeps` compares with: element `index` is kept iff its
/// random bits are >= `dropoutThreshold(rate)` (round(rate * 2^32)).
uint64_t dropoutThreshold(double rate);

/// A stream key derived from a run seed and a name (of an input or param), so
/// that two graphs fed with the same seed get the same data for a name.
uint64_t streamKey(uint64_t seed, llvm::StringRef name);

} // namespace remat

#endif // REMAT_RUNTIME_RANDOM_H
