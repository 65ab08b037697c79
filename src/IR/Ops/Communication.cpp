//===- Communication.cpp - Ops that move values between devices -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The ops a multi-device graph uses to exchange values: `all_reduce`, a sum
/// over a group of devices whose result lands on every member, and
/// `transfer`, which copies a value to another device. Neither is a view: the
/// result occupies new bytes on its device. Where each operand and result
/// lives is the placement analysis' business (remat/Analysis/Placement.h);
/// in one process both reduce to plain arithmetic and copies.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

/// One result per operand, all of the common operand type: result i is the
/// sum as seen by the device of operand i.
static absl::StatusOr<TypeList> inferAllReduce(const OpSignature &sig) {
  TypeList results;
  for (unsigned i = 0; i < sig.numOperands(); ++i) {
    if (sig.operand(i) != sig.operand(0))
      return invalidArgument(
          "'all_reduce' operand {} has type {} but operand 0 has {}", i,
          sig.operand(i).str(), sig.operand(0).str());
    results.push_back(sig.operand(0));
  }
  return results;
}

static absl::StatusOr<TypeList> inferTransfer(const OpSignature &sig) {
  if (sig.getString("to").empty())
    return invalidArgument("'transfer' needs a non-empty 'to' device");
  return TypeList{sig.operand(0)};
}

void registerCommunicationOps(OpRegistry &registry) {
  registry.add(
      {.name = "all_reduce",
       .summary = "Sum of one tensor per device of a group (operand i on the "
                  "i-th member, all of one type); result i is the sum, on the "
                  "device of operand i.",
       .minOperands = 1,
       .maxOperands = OpDef::kVariadic,
       .inferTypes = inferAllReduce,
       .flops = [](const OpSignature &sig, llvm::ArrayRef<Type> results) {
         return saturatingMul(int64_t(sig.numOperands() - 1),
                              results[0].numElements());
       }});
  registry.add({.name = "transfer",
                .summary = "Copies x to the device `to` (e.g. \"gpu:1\"); the "
                           "result has x's type and lives on `to`.",
                .minOperands = 1,
                .maxOperands = 1,
                .attrs = {{"to", AttrKind::String, std::nullopt}},
                .inferTypes = inferTransfer,
                .flops = zeroFlops});
}

} // namespace remat
