//===- OpRegistry.cpp - The op registry -------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/OpRegistry.h"

#include "remat/IR/Gradient.h"
#include "remat/Runtime/Kernel.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

namespace remat {

const Attribute &OpSignature::attr(llvm::StringRef name) const {
  if (const Attribute *written = findAttr(attrs_, name))
    return *written;
  const AttrSpec *spec = def_.findAttrSpec(name);
  assert(spec && spec->defaultValue &&
         "attribute neither written nor defaulted; the schema or the verifier "
         "is out of step with the rule reading it");
  return *spec->defaultValue;
}

const AttrSpec *OpDef::findAttrSpec(llvm::StringRef name) const {
  for (const AttrSpec &spec : attrs)
    if (spec.name == name)
      return &spec;
  return nullptr;
}

OpRegistry &OpRegistry::global() {
  static OpRegistry *registry = [] {
    auto *r = new OpRegistry();
    registerAllOps(*r);
    registerAllGradients(*r);
    registerAllKernels(*r);
    return r;
  }();
  return *registry;
}

OpRegistry::OpRegistry() = default;
OpRegistry::~OpRegistry() = default;

void OpRegistry::setGradient(llvm::StringRef kind, GradientRule rule) {
  OpDef *def = lookupMutable(kind);
  assert(def && !def->gradient && "gradient rule for an unknown op, or twice");
  gradients_.push_back(std::make_unique<GradientRule>(std::move(rule)));
  def->gradient = gradients_.back().get();
}

void OpRegistry::setKernel(llvm::StringRef kind, Kernel kernel) {
  OpDef *def = lookupMutable(kind);
  assert(def && !def->kernel && "kernel for an unknown op, or twice");
  kernels_.push_back(std::make_unique<Kernel>(std::move(kernel)));
  def->kernel = kernels_.back().get();
}

void OpRegistry::add(OpDef def) {
  assert(!defs_.count(def.name) && "op kind registered twice");
  assert(def.inferTypes && def.flops && "op kind without shape or cost rule");
  std::string name = def.name;
  defs_[name] = std::make_unique<OpDef>(std::move(def));
}

const OpDef *OpRegistry::lookup(llvm::StringRef name) const {
  auto it = defs_.find(name);
  return it == defs_.end() ? nullptr : it->second.get();
}

OpDef *OpRegistry::lookupMutable(llvm::StringRef name) {
  auto it = defs_.find(name);
  return it == defs_.end() ? nullptr : it->second.get();
}

std::vector<const OpDef *> OpRegistry::all() const {
  std::vector<const OpDef *> defs;
  defs.reserve(defs_.size());
  for (const auto &entry : defs_)
    defs.push_back(entry.second.get());
  llvm::sort(defs, [](const OpDef *a, const OpDef *b) { return a->name < b->name; });
  return defs;
}

void registerAllOps(OpRegistry &registry) {
  registerGraphOps(registry);
  registerElementwiseOps(registry);
  registerMatmulOps(registry);
  registerShapeOps(registry);
  registerReductionOps(registry);
  registerSoftmaxOps(registry);
  registerNormalizationOps(registry);
  registerConvolutionOps(registry);
  registerPoolingOps(registry);
  registerIndexingOps(registry);
  registerRandomOps(registry);
  registerLossOps(registry);
  registerCommunicationOps(registry);
  registerExternOps(registry);
}

} // namespace remat
