//===- OpRegistry.h - What each op kind is -----------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The op registry maps an op kind's name to its definition: arity, attribute
/// schema, shape inference, FLOP cost and flags. Gradient rules and executor
/// kernels hang off the same definition but are registered by their own layers.
///
/// Registration is explicit: `registerAllOps` calls one function per op family
/// (one family per file under src/IR/Ops/). `OpRegistry::global()` builds the
/// process-wide registry on first use.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_OPREGISTRY_H
#define REMAT_IR_OPREGISTRY_H

#include "remat/IR/Attribute.h"
#include "remat/IR/Type.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <climits>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace remat {

class Op;
struct OpDef;

/// Properties of an op kind that passes and the memory model consult.
enum OpFlags : unsigned {
  OpFlagNone = 0,
  /// Draws random numbers from a counter-based generator keyed by its `seed`
  /// attribute; two ops with the same key draw the same numbers.
  OpFlagRandom = 1u << 0,
  /// Its single result aliases operand 0: no new bytes, and it extends the
  /// lifetime of the operand's storage (reshape, identity, stop_gradient, ...).
  OpFlagView = 1u << 1,
  /// Worth keeping rather than recomputing (matmul, conv2d): the `speed`
  /// strategy checkpoints the outputs of these.
  OpFlagExpensive = 1u << 2,
  /// Declares a graph input or parameter: no operands, and its result type is
  /// written, not inferred.
  OpFlagLeaf = 1u << 3,
  /// Stands for an op of another framework (`extern`): planned by its
  /// written types and FLOPs, never differentiated or run, so it has no
  /// gradient rule and no kernel.
  OpFlagForeign = 1u << 4,
};

/// One entry of an op's attribute schema.
struct AttrSpec {
  std::string name;
  AttrKind kind;
  /// The value when the attribute is absent; nullopt makes it required.
  std::optional<Attribute> defaultValue;
};

/// The operand types and attributes of an op, existing or about to be built:
/// what shape inference and cost functions read. Attribute getters fall back to
/// the schema's defaults, so rules never repeat them.
class OpSignature {
public:
  OpSignature(const OpDef &def, llvm::ArrayRef<Type> operandTypes,
              llvm::ArrayRef<NamedAttr> attrs)
      : def_(def), operandTypes_(operandTypes), attrs_(attrs) {}

  const OpDef &def() const { return def_; }
  unsigned numOperands() const { return operandTypes_.size(); }
  const Type &operand(unsigned i) const { return operandTypes_[i]; }
  llvm::ArrayRef<Type> operands() const { return operandTypes_; }
  llvm::ArrayRef<NamedAttr> attrs() const { return attrs_; }

  /// The attribute `name`, written or defaulted. The schema must declare it.
  const Attribute &attr(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name) const { return attr(name).asInt(); }
  double getFloat(llvm::StringRef name) const { return attr(name).asFloat(); }
  bool getBool(llvm::StringRef name) const { return attr(name).asBool(); }
  llvm::StringRef getString(llvm::StringRef name) const {
    return attr(name).asString();
  }
  llvm::ArrayRef<int64_t> getIntList(llvm::StringRef name) const {
    return attr(name).asIntList();
  }

private:
  const OpDef &def_;
  llvm::ArrayRef<Type> operandTypes_;
  llvm::ArrayRef<NamedAttr> attrs_;
};

/// Computes result types from operand types and attributes. Errors are plain
/// messages ("matmul contracts 784 with 512"); callers add the location.
using InferTypesFn =
    std::function<absl::StatusOr<llvm::SmallVector<Type, 1>>(const OpSignature &)>;
/// FLOPs of one execution, given valid operand and result types.
using FlopsFn =
    std::function<int64_t(const OpSignature &, llvm::ArrayRef<Type> results)>;

/// Defined by the gradient layer (remat/IR/Gradient.h) and the runtime layer
/// (remat/Runtime/Kernel.h); the registry owns them.
struct GradientRule;
struct Kernel;

/// Everything the project knows about one op kind.
struct OpDef {
  std::string name;
  /// One line for the op reference.
  std::string summary;
  unsigned minOperands = 0;
  /// `kVariadic` for no upper bound.
  unsigned maxOperands = 0;
  std::vector<AttrSpec> attrs;
  InferTypesFn inferTypes;
  FlopsFn flops;
  unsigned flags = OpFlagNone;
  /// Set by the gradient layer; null means "no gradient rule".
  const GradientRule *gradient = nullptr;
  /// Set by the runtime layer; null means "no kernel".
  const Kernel *kernel = nullptr;

  static constexpr unsigned kVariadic = UINT_MAX;

  bool hasFlag(OpFlags flag) const { return (flags & flag) != 0; }
  /// The schema entry for `name`, or null.
  const AttrSpec *findAttrSpec(llvm::StringRef name) const;
};

/// Attributes every op accepts besides its own schema.
/// `cost` (int) overrides the registry's FLOP estimate, e.g. with a profiled cost.
inline constexpr llvm::StringLiteral kCostAttr = "cost";
/// `recompute` (bool) false pins an op: the recompute rewrite never copies
/// it, and the backward pass reads its values from the forward pass (an op
/// whose rerun would differ, or that remat knows nothing of).
inline constexpr llvm::StringLiteral kRecomputeAttr = "recompute";

/// The set of known op kinds.
class OpRegistry {
public:
  /// The process-wide registry holding every built-in op.
  static OpRegistry &global();

  /// Adds a definition; the name must be new (asserted: a programming error).
  void add(OpDef def);
  /// The definition named `name`, or null.
  const OpDef *lookup(llvm::StringRef name) const;
  /// The definition named `name`, for layers that attach gradients or kernels.
  OpDef *lookupMutable(llvm::StringRef name);
  /// Every definition, sorted by name.
  std::vector<const OpDef *> all() const;

  /// Attaches the gradient rule of `kind`, which must be registered and have
  /// none yet (asserted: a programming error).
  void setGradient(llvm::StringRef kind, GradientRule rule);
  /// Attaches the executor kernel of `kind`, likewise.
  void setKernel(llvm::StringRef kind, Kernel kernel);

  OpRegistry();
  ~OpRegistry();
  OpRegistry(const OpRegistry &) = delete;
  OpRegistry &operator=(const OpRegistry &) = delete;

private:
  llvm::StringMap<std::unique_ptr<OpDef>> defs_;
  std::vector<std::unique_ptr<GradientRule>> gradients_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

/// Registers every built-in op family into `registry`. `OpRegistry::global()`
/// then attaches gradient rules (`registerAllGradients`) and kernels
/// (`registerAllKernels`).
void registerAllOps(OpRegistry &registry);

// One function per op family, each defined in its own file under src/IR/Ops/.
void registerGraphOps(OpRegistry &registry);
void registerElementwiseOps(OpRegistry &registry);
void registerMatmulOps(OpRegistry &registry);
void registerShapeOps(OpRegistry &registry);
void registerReductionOps(OpRegistry &registry);
void registerSoftmaxOps(OpRegistry &registry);
void registerNormalizationOps(OpRegistry &registry);
void registerConvolutionOps(OpRegistry &registry);
void registerPoolingOps(OpRegistry &registry);
void registerIndexingOps(OpRegistry &registry);
void registerRandomOps(OpRegistry &registry);
void registerLossOps(OpRegistry &registry);
void registerCommunicationOps(OpRegistry &registry);
void registerExternOps(OpRegistry &registry);

} // namespace remat

#endif // REMAT_IR_OPREGISTRY_H
