//===- Random.cpp - Stateless random ops ------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `dropout` draws its mask from a counter-based generator keyed by its
/// `seed` attribute, so a recomputed copy replays the same mask: recomputing
/// it is as safe as recomputing any pure op.
///
//===----------------------------------------------------------------------===//

#include "OpDefUtils.h"

namespace remat {
using namespace ops;

static absl::StatusOr<TypeList> inferDropout(const OpSignature &sig) {
  REMAT_RETURN_IF_ERROR(expectFloat(sig, 0));
  double rate = sig.getFloat("rate");
  // Written so that NaN fails too.
  if (!(rate >= 0 && rate < 1))
    return invalidArgument("'dropout' rate must be in [0, 1), got {}", rate);
  return TypeList{sig.operand(0)};
}

void registerRandomOps(OpRegistry &registry) {
  registry.add(
      {.name = "dropout",
       .summary = "Zeroes each element of float x with probability `rate` and "
                  "scales the rest by 1/(1-rate), the mask drawn from a "
                  "generator keyed by `seed` {rate: float in [0, 1), seed: "
                  "int}; result x's type.",
       .minOperands = 1,
       .maxOperands = 1,
       .attrs = {{"rate", AttrKind::Float, std::nullopt},
                 {"seed", AttrKind::Int, std::nullopt}},
       .inferTypes = inferDropout,
       .flops = flopsPerOperandElement(0, 2),
       .flags = OpFlagRandom});
}

} // namespace remat
