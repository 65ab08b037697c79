//===- OnnxFormsTest.cpp - Every op kind has an ONNX form or a refusal ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The export finds each op kind's lowering from its op definition; an op
/// kind added without one, and without a named refusal, fails here rather
/// than in a user's export.
///
//===----------------------------------------------------------------------===//

#include "IO/OnnxExport/ExportContext.h"

#include "remat/IR/OpRegistry.h"

#include <gtest/gtest.h>

namespace remat::onnxexport {
namespace {

TEST(OnnxFormsTest, EveryOpKindHasALoweringOrANamedRefusal) {
  const LoweringTable &forms = onnxForms();
  for (const OpDef *def : OpRegistry::global().all()) {
    // Leaves become the model's inputs: no node.
    if (def->hasFlag(OpFlagLeaf))
      continue;
    const OnnxForm *form = forms.find(*def);
    ASSERT_NE(form, nullptr) << def->name << " has no ONNX form and no "
                             << "refusal (src/IO/OnnxExport/)";
    EXPECT_NE(form->lower == nullptr, form->refusal.empty())
        << def->name << ": a form is a lowering or a refusal, not both";
  }
}

TEST(OnnxFormsTest, RefusalsAreTheOpsWithNoFaithfulForm) {
  const LoweringTable &forms = onnxForms();
  std::vector<std::string> refused;
  for (const OpDef *def : OpRegistry::global().all())
    if (const OnnxForm *form = forms.find(*def); form && !form->lower)
      refused.push_back(def->name);
  EXPECT_EQ(refused, (std::vector<std::string>{"all_reduce", "dropout",
                                               "extern", "extern_view",
                                               "transfer"}));
}

} // namespace
} // namespace remat::onnxexport
