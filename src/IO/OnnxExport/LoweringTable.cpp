//===- LoweringTable.cpp - Every op kind's ONNX form -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ExportContext.h"

#include <cassert>

namespace remat::onnxexport {

OnnxForm &LoweringTable::form(llvm::StringRef kind) {
  const OpDef *def = OpRegistry::global().lookup(kind);
  assert(def && !forms_.count(def) &&
         "ONNX form of an unknown op kind, or twice");
  return forms_[def];
}

void LoweringTable::add(llvm::StringRef kind, Lowering lower) {
  form(kind).lower = lower;
}

void LoweringTable::refuse(llvm::StringRef kind, std::string why) {
  form(kind).refusal = std::move(why);
}

LoweringTable::LoweringTable() {
  for (auto addFamily : {addElementwiseLowerings, addNeuralLowerings,
                         addNormalizationLowerings, addShapeLowerings})
    addFamily(*this);
  refuse("dropout",
         "dropout has no ONNX form that replays remat's mask (ONNX's Dropout "
         "and RandomUniform draw other numbers), so a recomputed copy could "
         "not match; export a graph without dropout (rate 0)");
  for (llvm::StringRef kind : {"all_reduce", "transfer"})
    refuse(kind, fmt::format("{} belongs to a graph on several devices, "
                             "which one ONNX model cannot run",
                             kind.str()));
  for (llvm::StringRef kind : {"extern", "extern_view"})
    refuse(kind, fmt::format("{} stands for an op of another framework, "
                             "known to remat by its types and FLOPs only: "
                             "it has no ONNX form",
                             kind.str()));
}

const LoweringTable &onnxForms() {
  static const LoweringTable table;
  return table;
}

} // namespace remat::onnxexport
