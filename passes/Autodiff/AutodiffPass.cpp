//===- AutodiffPass.cpp - Reverse-mode gradient emission ------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Pass/Autodiff.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Diagnostics.h"
#include "remat/IR/Gradient.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/PassRegistry.h"
#include "remat/Pass/Passes.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <map>
#include <queue>
#include <utility>
#include <vector>

namespace remat {
namespace {

/// The values gradients flow between, found before anything is emitted.
struct GradientScope {
  /// Values that depend on an x through differentiable ops (float only).
  llvm::BitVector reachesFromXs;
  /// Values on a path from an x to a y: the ones that get gradients.
  llvm::BitVector relevant;
  /// Ops with a relevant operand and a relevant result, in schedule order.
  std::vector<Op *> activeOps;
  /// Position of every op in the schedule, by op id.
  std::vector<int64_t> position;
};

/// Whether gradients may flow from `op`'s results to its operands.
bool passesGradients(const Op &op) {
  return !op.hasFlag(OpFlagLeaf) && op.kind() != "stop_gradient";
}

GradientScope findScope(const Graph &graph, llvm::ArrayRef<Value *> xs,
                        llvm::ArrayRef<Value *> ys) {
  GradientScope scope;
  scope.reachesFromXs.resize(graph.valueIdBound());
  scope.relevant.resize(graph.valueIdBound());
  scope.position.assign(graph.opIdBound(), -1);
  for (Value *x : xs)
    if (x->type().isFloat())
      scope.reachesFromXs.set(x->id());

  int64_t step = 0;
  for (const Op &op : graph.ops()) {
    scope.position[op.id()] = step++;
    if (!passesGradients(op))
      continue;
    bool fromXs = llvm::any_of(op.operands(), [&](Value *operand) {
      return scope.reachesFromXs.test(operand->id());
    });
    if (!fromXs)
      continue;
    for (unsigned i = 0, e = op.numResults(); i < e; ++i)
      if (op.result(i)->type().isFloat())
        scope.reachesFromXs.set(op.result(i)->id());
  }

  for (Value *y : ys)
    if (scope.reachesFromXs.test(y->id()))
      scope.relevant.set(y->id());
  for (auto it = graph.ops().rbegin(), e = graph.ops().rend(); it != e; ++it) {
    Op &op = const_cast<Op &>(*it);
    if (!passesGradients(op))
      continue;
    bool feedsYs = llvm::any_of(op.results(), [&](Value *result) {
      return scope.relevant.test(result->id());
    });
    if (!feedsYs)
      continue;
    bool active = false;
    for (Value *operand : op.operands())
      if (scope.reachesFromXs.test(operand->id())) {
        scope.relevant.set(operand->id());
        active = true;
      }
    if (active)
      scope.activeOps.push_back(&op);
  }
  std::reverse(scope.activeOps.begin(), scope.activeOps.end());
  return scope;
}

/// Emits the backward pass of one `differentiate` call.
class GradientEmitter {
public:
  GradientEmitter(Graph &graph, const AutodiffOptions &options,
                  GradientScope scope)
      : graph_(graph), options_(options), builder_(graph),
        scope_(std::move(scope)), firstNewValueId_(graph.valueIdBound()),
        firstNewOpId_(graph.opIdBound()) {}

  /// Runs the backward pass; returns each x's gradient (null for none).
  absl::StatusOr<std::vector<Value *>> run(llvm::ArrayRef<Value *> xs,
                                           llvm::ArrayRef<Value *> ys,
                                           llvm::ArrayRef<Value *> gradYs);

  unsigned firstNewOpId() const { return firstNewOpId_; }

private:
  absl::Status differentiateOp(Op &op);
  /// Records one more partial gradient of `value`, summing early when the
  /// partials pass both thresholds.
  void addPartial(Value *value, Value *grad);
  /// The sum of `value`'s partial gradients, or null when it has none.
  /// Idempotent.
  Value *takeGradient(Value *value);
  /// A zeros tensor of `type`, built once per type.
  Value *zeros(const Type &type);
  Value *sum(llvm::ArrayRef<Value *> terms);
  /// Names a gradient emitted here `<value>.grad` when that name is free.
  void nameGradient(Value *grad, const Value &of);
  bool isNew(const Value *value) const { return value->id() >= firstNewValueId_; }

  Graph &graph_;
  const AutodiffOptions &options_;
  Builder builder_;
  GradientScope scope_;
  unsigned firstNewValueId_;
  unsigned firstNewOpId_;
  /// Partial gradients of each value, by value id, in arrival order.
  std::vector<llvm::SmallVector<Value *, 1>> partials_;
  /// Uses by active ops still to deliver a gradient, by value id.
  std::vector<int32_t> pendingUses_;
  /// Relevant results whose gradient is not complete yet, by op id.
  std::vector<int32_t> pendingResults_;
  std::map<std::pair<DType, std::vector<int64_t>>, Value *> zerosByType_;
  /// Ready ops, latest in the schedule first.
  std::priority_queue<std::pair<int64_t, Op *>> ready_;
};

absl::StatusOr<std::vector<Value *>>
GradientEmitter::run(llvm::ArrayRef<Value *> xs, llvm::ArrayRef<Value *> ys,
                     llvm::ArrayRef<Value *> gradYs) {
  partials_.resize(graph_.valueIdBound());
  pendingUses_.assign(graph_.valueIdBound(), 0);
  pendingResults_.assign(graph_.opIdBound(), 0);
  llvm::BitVector active(graph_.opIdBound());
  for (Op *op : scope_.activeOps)
    active.set(op->id());
  for (Op *op : scope_.activeOps)
    for (Value *operand : op->operands())
      if (scope_.relevant.test(operand->id()))
        ++pendingUses_[operand->id()];
  for (Op *op : scope_.activeOps)
    for (Value *result : op->results())
      if (pendingUses_[result->id()] > 0)
        ++pendingResults_[op->id()];

  for (size_t i = 0, e = ys.size(); i < e; ++i) {
    Value *y = ys[i];
    if (!scope_.relevant.test(y->id()))
      continue;
    Value *seed = gradYs.empty() ? nullptr : gradYs[i];
    if (!seed)
      seed = builder_.op("constant", {},
                         {{"value", Attribute(1.0)},
                          {"shape", Attribute(y->type().shape().vec())},
                          {"dtype", Attribute(dtypeName(y->type().dtype()).str())}});
    addPartial(y, seed);
  }
  for (Op *op : scope_.activeOps)
    if (pendingResults_[op->id()] == 0)
      ready_.push({scope_.position[op->id()], op});

  while (!ready_.empty()) {
    Op *op = ready_.top().second;
    ready_.pop();
    REMAT_RETURN_IF_ERROR(differentiateOp(*op));
    for (Value *operand : op->operands()) {
      if (!scope_.relevant.test(operand->id()) ||
          --pendingUses_[operand->id()] > 0)
        continue;
      Op *producer = operand->producer();
      if (active.test(producer->id()) && --pendingResults_[producer->id()] == 0)
        ready_.push({scope_.position[producer->id()], producer});
    }
  }
  REMAT_RETURN_IF_ERROR(builder_.status());

  std::vector<Value *> gradients;
  for (Value *x : xs) {
    Value *grad = scope_.relevant.test(x->id()) ? takeGradient(x) : nullptr;
    if (!grad && x->type().isFloat() &&
        options_.unconnected == UnconnectedGradient::Zeros)
      grad = zeros(x->type());
    gradients.push_back(grad);
  }
  REMAT_RETURN_IF_ERROR(builder_.status());
  return gradients;
}

absl::Status GradientEmitter::differentiateOp(Op &op) {
  llvm::SmallVector<Value *, 2> resultGrads;
  bool anyGradient = false;
  for (Value *result : op.results()) {
    Value *grad = takeGradient(result);
    anyGradient |= grad != nullptr;
    resultGrads.push_back(grad);
  }
  // Nothing reached this op (every consumer's rule gave its operand none), so
  // it has nothing to pass on.
  if (!anyGradient)
    return absl::OkStatus();
  const GradientRule &rule = *op.def().gradient;
  for (unsigned i = 0, e = op.numResults(); i < e; ++i)
    if (!resultGrads[i] && !rule.acceptsNoGradFor(i))
      resultGrads[i] = zeros(op.result(i)->type());

  llvm::SmallVector<bool, 4> needsGrad;
  for (Value *operand : op.operands())
    needsGrad.push_back(scope_.relevant.test(operand->id()));
  builder_.setDevice(op.device().str());
  GradientContext context(builder_, op, resultGrads, needsGrad);
  absl::StatusOr<llvm::SmallVector<Value *, 2>> grads = rule.emit(context);
  if (grads.ok() && !builder_.status().ok())
    grads = builder_.status();
  if (!grads.ok())
    return opError(op, fmt::format("gradient of '{}': {}", op.kind().str(),
                                   std::string(grads.status().message())));
  if (grads->size() != op.numOperands())
    return opError(op, fmt::format("gradient rule of '{}' returned {} "
                                   "gradients for {} operands",
                                   op.kind().str(), grads->size(),
                                   op.numOperands()));
  for (unsigned i = 0, e = op.numOperands(); i < e; ++i) {
    Value *grad = (*grads)[i];
    if (!grad || !needsGrad[i])
      continue;
    if (grad->type() != op.operand(i)->type())
      return opError(op, fmt::format("gradient rule of '{}' returned {} for "
                                     "operand {} of type {}",
                                     op.kind().str(), grad->type().str(), i,
                                     op.operand(i)->type().str()));
    addPartial(op.operand(i), grad);
  }
  builder_.setDevice("");
  return absl::OkStatus();
}

void GradientEmitter::addPartial(Value *value, Value *grad) {
  auto &list = partials_[value->id()];
  list.push_back(grad);
  int64_t count = list.size();
  if (count < 2 || count < options_.aggregateCount)
    return;
  int64_t bytes = count * value->type().byteSize();
  if (bytes <= options_.aggregateBytes)
    return;
  Value *total = sum(list);
  list.assign(1, total);
}

Value *GradientEmitter::takeGradient(Value *value) {
  auto &list = partials_[value->id()];
  if (list.empty())
    return nullptr;
  Value *grad = sum(list);
  // Kept, summed, for an x that is also an intermediate value: its gradient is
  // taken again at the end.
  list.assign(1, grad);
  nameGradient(grad, *value);
  return grad;
}

Value *GradientEmitter::sum(llvm::ArrayRef<Value *> terms) {
  if (terms.size() == 1)
    return terms.front();
  return builder_.op("add_n", terms);
}

Value *GradientEmitter::zeros(const Type &type) {
  auto key = std::make_pair(type.dtype(), std::vector<int64_t>(
                                              type.shape().begin(),
                                              type.shape().end()));
  Value *&cached = zerosByType_[key];
  if (!cached)
    cached = builder_.op("constant", {},
                         {{"value", Attribute(0.0)},
                          {"shape", Attribute(type.shape().vec())},
                          {"dtype", Attribute(dtypeName(type.dtype()).str())}});
  return cached;
}

void GradientEmitter::nameGradient(Value *grad, const Value &of) {
  // Only values this pass made, and only once: a value that is the gradient of
  // several others (through identity, say) keeps its first name.
  if (!grad || !isNew(grad) ||
      llvm::StringRef(grad->name()).endswith(".grad"))
    return;
  graph_.renameValue(grad, (of.name() + ".grad").str());
}

/// Looks up each name of `names` as a value of `graph`.
absl::StatusOr<std::vector<Value *>>
lookupValues(const Graph &graph, llvm::ArrayRef<std::string> names,
             llvm::StringRef what) {
  std::vector<Value *> values;
  for (const std::string &name : names) {
    Value *value = graph.lookupValue(name);
    if (!value)
      return invalidArgument("autodiff: no value named '{}' to use as {}", name,
                             what.str());
    values.push_back(value);
  }
  return values;
}

/// Removes ops the emitter made that nothing reads (gradients of operands no
/// one asked for, unused zeros), users first.
void pruneUnusedGradientOps(Graph &graph, unsigned firstNewOpId) {
  llvm::BitVector isOutput(graph.valueIdBound());
  for (Value *output : graph.outputs())
    isOutput.set(output->id());
  std::vector<Op *> created;
  for (Op &op : graph.ops())
    if (op.id() >= firstNewOpId)
      created.push_back(&op);
  for (auto it = created.rbegin(), e = created.rend(); it != e; ++it) {
    Op *op = *it;
    bool used = llvm::any_of(op->results(), [&](Value *result) {
      return result->hasUses() || isOutput.test(result->id());
    });
    if (!used && op->controlUsers().empty())
      graph.erase(op);
  }
}

/// Makes `grad` a graph output named `<x>.grad`, through an identity when the
/// value cannot take that name (it is not new, or already names another).
Value *exposeGradient(Graph &graph, Value *grad, const Value &x,
                      unsigned firstNewValueId, llvm::BitVector &exposed) {
  std::string name = (x.name() + ".grad").str();
  exposed.resize(std::max<unsigned>(exposed.size(), graph.valueIdBound()));
  if (grad->id() >= firstNewValueId && !exposed.test(grad->id()) &&
      (grad->name() == name || graph.renameValue(grad, name))) {
    exposed.set(grad->id());
    graph.addOutput(grad);
    return grad;
  }
  Builder builder(graph);
  Value *alias = builder.op("identity", {grad}, {}, name);
  exposed.resize(graph.valueIdBound());
  exposed.set(alias->id());
  graph.addOutput(alias);
  return alias;
}

} // namespace

absl::StatusOr<AutodiffResult> differentiate(Graph &graph,
                                             const AutodiffOptions &options) {
  std::vector<Value *> ys;
  if (options.ys.empty()) {
    if (graph.outputs().empty())
      return invalidArgument("autodiff: graph @{} has no output to "
                             "differentiate",
                             graph.name().str());
    ys.push_back(graph.outputs().front());
  } else {
    REMAT_ASSIGN_OR_RETURN(ys, lookupValues(graph, options.ys, "a y"));
  }
  for (Value *y : ys)
    if (!y->type().isFloat())
      return invalidArgument("autodiff: cannot differentiate '%{}' of "
                             "non-float type {}",
                             y->name().str(), y->type().str());
  std::vector<Value *> gradYs;
  if (!options.gradYs.empty()) {
    if (options.gradYs.size() != ys.size())
      return invalidArgument("autodiff: {} grad_ys given for {} ys",
                             options.gradYs.size(), ys.size());
    REMAT_ASSIGN_OR_RETURN(gradYs,
                           lookupValues(graph, options.gradYs, "a grad_y"));
    for (size_t i = 0, e = ys.size(); i < e; ++i)
      if (gradYs[i]->type() != ys[i]->type())
        return invalidArgument("autodiff: grad_y '%{}' has type {} but '%{}' "
                               "has type {}",
                               gradYs[i]->name().str(),
                               gradYs[i]->type().str(), ys[i]->name().str(),
                               ys[i]->type().str());
  }
  std::vector<Value *> xs;
  if (options.xs.empty()) {
    xs.assign(graph.params().begin(), graph.params().end());
  } else {
    REMAT_ASSIGN_OR_RETURN(xs, lookupValues(graph, options.xs, "an x"));
  }
  for (Value *x : xs) {
    std::string name = (x->name() + ".grad").str();
    if (graph.lookupValue(name))
      return invalidArgument("autodiff: cannot name the gradient of '%{}': a "
                             "value named '%{}' exists",
                             x->name().str(), name);
  }

  GradientScope scope = findScope(graph, xs, ys);
  for (Op *op : scope.activeOps)
    if (!op->def().gradient)
      return opError(*op, fmt::format("op '{}' has no gradient rule",
                                      op->kind().str()));

  unsigned opsBefore = graph.numOps();
  unsigned firstNewValueId = graph.valueIdBound();
  GradientEmitter emitter(graph, options, std::move(scope));
  REMAT_ASSIGN_OR_RETURN(std::vector<Value *> grads, emitter.run(xs, ys, gradYs));

  AutodiffResult result;
  llvm::BitVector exposed;
  for (size_t i = 0, e = xs.size(); i < e; ++i) {
    Value *grad = grads[i];
    if (grad)
      grad = exposeGradient(graph, grad, *xs[i], firstNewValueId, exposed);
    result.gradients.push_back(grad);
  }
  pruneUnusedGradientOps(graph, emitter.firstNewOpId());
  result.numOpsAdded = int64_t(graph.numOps()) - opsBefore;
  return result;
}

} // namespace remat

namespace remat {
namespace {

/// Appends the backward pass (see `differentiate`).
///
/// Requires: a verified graph with an output (or the named ys). Guarantees: a
/// verified graph whose schedule is the old one followed by the gradient ops
/// in reverse order of the forward ops they differentiate, with one output
/// `<x>.grad` per x that has a gradient appended after the old outputs.
class AutodiffPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "autodiff";
  static constexpr llvm::StringLiteral kSummary =
      "Appends the gradients of the loss with respect to every param";

  explicit AutodiffPass(AutodiffOptions options) : options_(std::move(options)) {}

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    REMAT_ASSIGN_OR_RETURN(AutodiffResult result, differentiate(graph, options_));
    return result.numOpsAdded > 0 ||
           llvm::any_of(result.gradients, [](Value *v) { return v; });
  }

private:
  AutodiffOptions options_;
};

std::vector<std::string> splitNames(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  text.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::vector<std::string> names;
  for (llvm::StringRef part : parts)
    names.push_back(part.trim().ltrim('%').str());
  return names;
}

} // namespace

std::unique_ptr<Pass> createAutodiffPass(AutodiffOptions options) {
  return std::make_unique<AutodiffPass>(std::move(options));
}

void registerAutodiffPass(PassRegistry &registry) {
  AutodiffOptions defaults;
  registry.add(
      {.argument = AutodiffPass::kArgument.str(),
       .summary = AutodiffPass::kSummary.str(),
       .options =
           {{.name = "xs",
             .help = "Comma-separated values to differentiate with respect "
                     "to (default: every param)",
             .kind = PassOptionKind::String},
            {.name = "ys",
             .help = "Comma-separated values to differentiate (default: "
                     "output 0)",
             .kind = PassOptionKind::String},
            {.name = "grad-ys",
             .help = "Comma-separated gradients fed for the ys, one per y "
                     "(default: ones)",
             .kind = PassOptionKind::String},
            {.name = "unconnected",
             .help = "What an x with no path to the ys gets: zeros or none",
             .kind = PassOptionKind::String,
             .defaultValue = "zeros"},
            {.name = "aggregate-count",
             .help = "Partial gradients of one value that trigger an early sum",
             .kind = PassOptionKind::Int,
             .defaultValue = std::to_string(defaults.aggregateCount)},
            {.name = "aggregate-bytes",
             .help = "Bytes those partials must exceed to be summed early",
             .kind = PassOptionKind::String,
             .defaultValue = "128MiB"}},
       .factory = [](const PassOptions &text)
           -> absl::StatusOr<std::unique_ptr<Pass>> {
         AutodiffOptions options;
         options.xs = splitNames(text.getString("xs", ""));
         options.ys = splitNames(text.getString("ys", ""));
         options.gradYs = splitNames(text.getString("grad-ys", ""));
         std::string unconnected = text.getString("unconnected", "zeros");
         if (unconnected == "none")
           options.unconnected = UnconnectedGradient::None;
         else if (unconnected != "zeros")
           return invalidArgument("unconnected must be 'zeros' or 'none', "
                                  "not '{}'",
                                  unconnected);
         REMAT_ASSIGN_OR_RETURN(
             options.aggregateCount,
             text.getInt("aggregate-count", options.aggregateCount));
         if (options.aggregateCount < 2)
           return invalidArgument("aggregate-count must be at least 2, not {}",
                                  options.aggregateCount);
         REMAT_ASSIGN_OR_RETURN(
             options.aggregateBytes,
             parseByteSize(text.getString("aggregate-bytes", "128MiB")));
         return createAutodiffPass(std::move(options));
       }});
}

} // namespace remat
