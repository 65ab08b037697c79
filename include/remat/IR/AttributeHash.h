//===- AttributeHash.h - Hashing attribute values ----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One hash of an attribute value for the two equalities that need one: CSE's
/// (`Attribute::operator==`, where -0.0 equals 0.0) and the attribute-list
/// interner's (floats bit for bit, so that -0.0 prints as written).
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_ATTRIBUTEHASH_H
#define REMAT_IR_ATTRIBUTEHASH_H

#include "remat/IR/Attribute.h"

#include "llvm/ADT/Hashing.h"

namespace remat {

/// How a float attribute hashes.
enum class FloatHashing {
  /// By value: -0.0 as 0.0, consistent with `Attribute::operator==`.
  ByValue,
  /// By its bits.
  ByBits,
};

llvm::hash_code hashAttribute(const Attribute &attr, FloatHashing floats);

} // namespace remat

#endif // REMAT_IR_ATTRIBUTEHASH_H
