//===- GradientRulesTest.cpp - Every op's gradient rule -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Structural checks of the gradient rules (types, null gradients, coverage
/// of the registry) and a numerical check of every forward op: a tiny graph
/// loss = sum_i reduce_sum(result_i * w_i), with random fixed inputs w_i, is
/// differentiated by autodiff and compared with central differences by
/// `checkGradients`.
///
//===----------------------------------------------------------------------===//

#include "remat/IR/Gradient.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/IR/Op.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Runtime/GradientCheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Type f32(std::initializer_list<int64_t> shape) { return Type(DType::F32, shape); }
Type f64(std::initializer_list<int64_t> shape) { return Type(DType::F64, shape); }
Type i32(std::initializer_list<int64_t> shape) { return Type(DType::I32, shape); }
Type i64(std::initializer_list<int64_t> shape) { return Type(DType::I64, shape); }
Attribute list(std::vector<int64_t> values) { return Attribute(std::move(values)); }

/// The ops that gradient rules emit; first order only, so they have no rule.
const std::set<std::string> &backwardOps() {
  static const std::set<std::string> ops = {
      "relu_grad",         "gelu_grad",          "sigmoid_grad",
      "tanh_grad",         "slice_grad",         "reduce_max_grad",
      "softmax_grad",      "log_softmax_grad",   "layer_norm_grad",
      "batch_norm_grad",   "conv2d_grad_input",  "conv2d_grad_filter",
      "max_pool2d_grad",   "avg_pool2d_grad",    "gather_grad",
      "softmax_cross_entropy_grad", "clip_grad"};
  return ops;
}

//===----------------------------------------------------------------------===//
// Structural tests: rules called directly, no executor.
//===----------------------------------------------------------------------===//

/// Runs `op`'s rule with gradient inputs of its result types.
class RuleTest : public ::testing::Test {
protected:
  absl::StatusOr<llvm::SmallVector<Value *, 2>>
  emit(Op *op, std::vector<bool> needs = {}, std::vector<bool> present = {}) {
    std::vector<Value *> resultGrads;
    for (unsigned i = 0; i < op->numResults(); ++i) {
      bool given = present.empty() || present[i];
      resultGrads.push_back(
          given ? b_.input("d" + std::to_string(i), op->result(i)->type())
                : nullptr);
    }
    if (needs.empty())
      needs.assign(op->numOperands(), true);
    llvm::SmallVector<bool, 4> flags(needs.begin(), needs.end());
    const GradientRule *rule = op->def().gradient;
    EXPECT_NE(rule, nullptr) << op->kind().str();
    if (!rule)
      return absl::InternalError("no rule");
    opsBefore_ = graph_.numOps();
    GradientContext ctx(b_, *op, resultGrads, flags);
    return rule->emit(ctx);
  }

  /// Kinds of the ops the last `emit` built, in schedule order.
  std::vector<std::string> emittedKinds() const {
    std::vector<std::string> kinds;
    size_t index = 0;
    for (const Op &op : graph_.ops())
      if (index++ >= opsBefore_)
        kinds.push_back(op.kind().str());
    return kinds;
  }

  Graph graph_{"rules"};
  Builder b_{graph_};
  size_t opsBefore_ = 0;
};

TEST_F(RuleTest, EveryForwardOpHasARuleAndNoBackwardOpHasOne) {
  int forward = 0;
  for (const OpDef *def : OpRegistry::global().all()) {
    SCOPED_TRACE(def->name);
    if (def->hasFlag(OpFlagLeaf) || def->hasFlag(OpFlagForeign) ||
        backwardOps().count(def->name)) {
      EXPECT_EQ(def->gradient, nullptr);
      continue;
    }
    EXPECT_NE(def->gradient, nullptr);
    ++forward;
  }
  // Every backward op of the spec is registered.
  for (const std::string &kind : backwardOps())
    EXPECT_NE(OpRegistry::global().lookup(kind), nullptr) << kind;
  EXPECT_GT(forward, 40);
}

TEST_F(RuleTest, AddSumsBroadcastGradientsBackToEachOperand) {
  // [3,1] + [4] -> [3,4]: da sums dims 1 (kept as 1), db sums dim 0 and
  // reshapes [1,4] to [4].
  Value *a = b_.param("a", f32({3, 1}));
  Value *c = b_.param("c", f32({4}));
  Op *add = b_.create("add", {a, c});
  auto grads = emit(add);
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 2u);
  EXPECT_EQ((*grads)[0]->type(), f32({3, 1}));
  EXPECT_EQ((*grads)[1]->type(), f32({4}));
  EXPECT_THAT(emittedKinds(), ElementsAre("reduce_sum", "reduce_sum", "reshape"));
}

TEST_F(RuleTest, SumToShapeKeepsMatchingShapesAndReducesStretchedDims) {
  Value *x = b_.param("x", f32({3, 1}));
  Op *id = b_.create("identity", {x});
  llvm::SmallVector<bool, 1> needs = {true};
  Value *dy = b_.input("dy", f32({3, 1}));
  std::vector<Value *> grads = {dy};
  GradientContext ctx(b_, *id, grads, needs);
  EXPECT_EQ(ctx.sumToShape(dy, f32({3, 1})), dy);
  // [2,3,4] -> [3,1]: sum the new leading dim 0 and the stretched dim 2.
  Value *big = b_.input("big", f32({2, 3, 4}));
  Value *summed = ctx.sumToShape(big, f32({3, 1}));
  ASSERT_NE(summed, nullptr);
  EXPECT_EQ(summed->type(), f32({3, 1}));
  Op *reduce = summed->producer()->operand(0)->producer();
  EXPECT_EQ(reduce->kind(), "reduce_sum");
  llvm::SmallVector<Type, 4> types = reduce->operandTypes();
  EXPECT_EQ(reduce->signature(types).getIntList("axes"),
            llvm::ArrayRef<int64_t>({0, 2}));
  // A leading dim of 1 needs only a reshape.
  Value *lead = b_.input("lead", f32({1, 3, 1}));
  Value *reshaped = ctx.sumToShape(lead, f32({3, 1}));
  EXPECT_EQ(reshaped->producer()->kind(), "reshape");
  Value *s = ctx.scalar(0.5, DType::F64);
  EXPECT_EQ(s->type(), f64({}));
  EXPECT_TRUE(b_.status().ok()) << b_.status();
}

TEST_F(RuleTest, StopGradientAndFillsGiveNoGradient) {
  Value *x = b_.param("x", f32({4}));
  for (const char *kind : {"stop_gradient", "zeros_like", "ones_like"}) {
    SCOPED_TRACE(kind);
    auto grads = emit(b_.create(kind, {x}));
    ASSERT_TRUE(grads.ok()) << grads.status();
    EXPECT_THAT(*grads, ElementsAre(nullptr));
    EXPECT_TRUE(emittedKinds().empty());
  }
}

TEST_F(RuleTest, IntegerOperandsAndUnwantedOperandsGetNone) {
  Value *table = b_.param("table", f32({10, 4}));
  Value *ids = b_.input("ids", i32({2, 3}));
  auto grads = emit(b_.create("embedding", {table, ids}));
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 2u);
  EXPECT_EQ((*grads)[0]->type(), f32({10, 4}));
  EXPECT_EQ((*grads)[1], nullptr);
  EXPECT_THAT(emittedKinds(), ElementsAre("gather_grad"));

  Value *n = b_.input("n", i64({3}));
  auto intGrads = emit(b_.create("add", {n, n}));
  ASSERT_TRUE(intGrads.ok());
  EXPECT_THAT(*intGrads, ElementsAre(nullptr, nullptr));

  // Only b wanted: da is neither returned nor built.
  Value *a = b_.param("a", f32({3, 4}));
  Value *w = b_.param("w", f32({4, 5}));
  auto mm = emit(b_.create("matmul", {a, w}), {false, true});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ((*mm)[0], nullptr);
  EXPECT_EQ((*mm)[1]->type(), f32({4, 5}));
  EXPECT_THAT(emittedKinds(), ElementsAre("matmul"));
}

TEST_F(RuleTest, MatmulGradientsHaveTheOperandTypesForEveryTransposeCase) {
  // a [2,1,m,k] or its transpose, b [3,k,n] or its transpose; m=4 k=5 n=6.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "ta=" << ta << " tb=" << tb);
      Value *a = b_.param("a", ta ? f32({2, 1, 5, 4}) : f32({2, 1, 4, 5}));
      Value *c = b_.param("c", tb ? f32({3, 6, 5}) : f32({3, 5, 6}));
      Op *mm = b_.create("matmul", {a, c},
                         {{"transpose_a", ta}, {"transpose_b", tb}});
      ASSERT_NE(mm, nullptr) << b_.status();
      EXPECT_EQ(mm->result()->type(), f32({2, 3, 4, 6}));
      auto grads = emit(mm);
      ASSERT_TRUE(grads.ok()) << grads.status();
      EXPECT_EQ((*grads)[0]->type(), a->type());
      EXPECT_EQ((*grads)[1]->type(), c->type());
    }
}

TEST_F(RuleTest, BatchNormNeedsNoGradientForMeanAndVar) {
  Value *x = b_.param("x", f32({4, 3, 2, 2}));
  Value *gamma = b_.param("gamma", f32({3}));
  Value *beta = b_.param("beta", f32({3}));
  Op *bn = b_.create("batch_norm", {x, gamma, beta});
  const GradientRule *rule = bn->def().gradient;
  ASSERT_NE(rule, nullptr);
  EXPECT_FALSE(rule->acceptsNoGradFor(0));
  EXPECT_TRUE(rule->acceptsNoGradFor(1));
  EXPECT_TRUE(rule->acceptsNoGradFor(2));
  auto grads = emit(bn, {}, {true, false, false});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ((*grads)[0]->type(), f32({4, 3, 2, 2}));
  EXPECT_EQ((*grads)[1]->type(), f32({3}));
  EXPECT_EQ((*grads)[2]->type(), f32({3}));
  EXPECT_THAT(emittedKinds(), ElementsAre("batch_norm_grad"));
}

TEST_F(RuleTest, SplitGradientConcatenatesTheResultGradients) {
  Value *x = b_.param("x", f32({5, 4}));
  Op *split = b_.create("split", {x}, {{"axis", -1}, {"sizes", {1, 3}}});
  auto grads = emit(split);
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ((*grads)[0]->type(), f32({5, 4}));
  EXPECT_THAT(emittedKinds(), ElementsAre("concat"));
}

TEST(SecondOrderTest, DifferentiatingABackwardOpIsAnError) {
  // loss = sum(relu_grad(y, dy)): first order only, so autodiff stops there.
  Graph graph("second_order");
  Builder b(graph);
  Value *y = b.param("y", f32({4}));
  Value *dy = b.param("dy", f32({4}));
  graph.addOutput(b.op("reduce_sum", {b.op("relu_grad", {y, dy})}));
  ASSERT_TRUE(b.status().ok()) << b.status();
  absl::StatusOr<AutodiffResult> result = differentiate(graph);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("op 'relu_grad' has no gradient rule"));
}

//===----------------------------------------------------------------------===//
// Numerical tests: autodiff against finite differences.
//===----------------------------------------------------------------------===//

/// Builds the op under test over params (and inputs) and returns the float
/// results that the loss weighs.
using CaseBuilder = std::function<std::vector<Value *>(Builder &)>;

struct GradCase {
  std::string name;
  CaseBuilder build;
};

void PrintTo(const GradCase &c, std::ostream *os) { *os << c.name; }

/// One result: `kind` over fresh params of `types` with `attrs`.
GradCase opCase(std::string name, std::string kind, std::vector<Type> types,
                AttrList attrs = {}) {
  return {std::move(name), [kind, types, attrs](Builder &b) {
            std::vector<Value *> operands;
            for (size_t i = 0; i < types.size(); ++i)
              operands.push_back(b.param("p" + std::to_string(i), types[i]));
            return std::vector<Value *>{b.op(kind, operands, attrs)};
          }};
}

/// Every result of `kind` over fresh params.
GradCase allResultsCase(std::string name, std::string kind,
                        std::vector<Type> types, AttrList attrs = {}) {
  return {std::move(name), [kind, types, attrs](Builder &b) {
            std::vector<Value *> operands;
            for (size_t i = 0; i < types.size(); ++i)
              operands.push_back(b.param("p" + std::to_string(i), types[i]));
            Op *op = b.create(kind, operands, attrs);
            std::vector<Value *> results;
            if (op)
              for (unsigned i = 0; i < op->numResults(); ++i)
                results.push_back(op->result(i));
            return results;
          }};
}

/// The float ops, with several shapes, broadcasts and attribute settings.
/// Params of rank <= 1 are fed in [0.5, 1.5) (so log, sqrt, pow and div
/// stay in their domains), higher ranks symmetric around 0.
std::vector<GradCase> gradCases() {
  std::vector<GradCase> cases;
  auto add = [&](GradCase c) { cases.push_back(std::move(c)); };

  // Elementwise unary.
  for (const char *kind : {"neg", "relu", "square", "exp", "tanh", "sigmoid",
                           "gelu", "sin", "cos", "erf"}) {
    add(opCase(std::string(kind) + "_2d", kind, {f32({3, 4})}));
    add(opCase(std::string(kind) + "_f64", kind, {f64({5})}));
  }
  add(opCase("neg_scalar", "neg", {f32({})}));
  // Bounds inside the fed range so that both clamps and the pass-through
  // are differentiated.
  add(opCase("clip_2d", "clip", {f32({4, 5})},
             {{"min", Attribute(-0.3)}, {"max", Attribute(0.4)}}));
  add(opCase("clip_relu6_f64", "clip", {f64({6})},
             {{"min", Attribute(0.0)}, {"max", Attribute(6.0)}}));
  add(opCase("log_1d", "log", {f32({6})}));
  add(opCase("sqrt_1d", "sqrt", {f32({6})}));
  add({"log_of_exp_2d", [](Builder &b) {
         Value *p = b.param("p", f32({2, 3}));
         return std::vector<Value *>{b.op("log", {b.op("exp", {p})})};
       }});

  // Elementwise binary with broadcasting.
  for (const char *kind : {"add", "sub", "mul"}) {
    std::string k = kind;
    add(opCase(k + "_same", k, {f32({3, 4}), f32({3, 4})}));
    add(opCase(k + "_col_row", k, {f32({3, 1}), f32({4})}));
    add(opCase(k + "_3d_by_vec", k, {f32({2, 3, 4}), f32({4})}));
    add(opCase(k + "_vec_by_3d", k, {f32({4}), f32({2, 3, 4})}));
    add(opCase(k + "_scalar", k, {f32({2, 3}), f32({})}));
    add(opCase(k + "_both_stretched", k, {f32({2, 1, 4}), f32({3, 1})}));
  }
  add(opCase("div_same", "div", {f32({5}), f32({5})}));
  add(opCase("div_2d_by_vec", "div", {f32({2, 3}), f32({3})}));
  add(opCase("div_by_scalar", "div", {f32({2, 3}), f32({})}));
  add(opCase("div_scalar_by_vec", "div", {f32({}), f32({4})}));
  add(opCase("pow_same", "pow", {f32({4}), f32({4})}));
  add(opCase("pow_vec_by_2d", "pow", {f32({3}), f32({2, 3})}));
  add(opCase("pow_scalar_exponent", "pow", {f32({3}), f32({})}));
  add({"mul_by_input", [](Builder &b) {
         Value *p = b.param("p", f32({3, 4}));
         Value *x = b.input("x", f32({4}));
         return std::vector<Value *>{b.op("mul", {x, p})};
       }});

  // Matmul.
  add(opCase("matmul_plain", "matmul", {f32({3, 4}), f32({4, 5})}));
  add(opCase("matmul_ta", "matmul", {f32({4, 3}), f32({4, 5})},
             {{"transpose_a", true}}));
  add(opCase("matmul_tb", "matmul", {f32({3, 4}), f32({5, 4})},
             {{"transpose_b", true}}));
  add(opCase("matmul_ta_tb", "matmul", {f32({4, 3}), f32({5, 4})},
             {{"transpose_a", true}, {"transpose_b", true}}));
  add(opCase("matmul_batched", "matmul", {f32({2, 3, 4}), f32({2, 4, 5})}));
  add(opCase("matmul_batch_broadcast", "matmul",
             {f32({2, 1, 3, 4}), f32({3, 4, 2})}));
  add(opCase("matmul_matrix_by_batch", "matmul", {f32({3, 4}), f32({2, 4, 5})},
             {{"transpose_b", false}}));
  add(opCase("matmul_batch_by_matrix_tb", "matmul",
             {f32({2, 3, 4}), f32({5, 4})}, {{"transpose_b", true}}));
  add(opCase("matmul_f64", "matmul", {f64({2, 3}), f64({3, 2})}));

  // Shape.
  add(opCase("transpose_3d", "transpose", {f32({2, 3, 4})},
             {{"perm", {2, 0, 1}}}));
  add(opCase("transpose_negative_perm", "transpose", {f32({2, 3, 4})},
             {{"perm", {-1, 0, 1}}}));
  add(opCase("reshape_2d", "reshape", {f32({2, 6})}, {{"shape", {3, 4}}}));
  add(opCase("reshape_flatten", "reshape", {f32({2, 3, 2})},
             {{"shape", {-1}}}));
  add(opCase("broadcast_col", "broadcast", {f32({3, 1})},
             {{"shape", {2, 3, 4}}}));
  add(opCase("broadcast_vec", "broadcast", {f32({4})}, {{"shape", {3, 4}}}));
  add(opCase("broadcast_scalar", "broadcast", {f32({})}, {{"shape", {2, 2}}}));
  add(opCase("concat_axis0", "concat", {f32({2, 3}), f32({1, 3})},
             {{"axis", 0}}));
  add(opCase("concat_last_axis", "concat",
             {f32({2, 3}), f32({2, 2}), f32({2, 1})}, {{"axis", -1}}));
  add(opCase("concat_single", "concat", {f32({2, 3})}, {{"axis", 1}}));
  add(allResultsCase("split_axis0", "split", {f32({5, 4})},
                     {{"axis", 0}, {"sizes", {2, 3}}}));
  add(allResultsCase("split_with_empty_piece", "split", {f32({3, 4})},
                     {{"axis", -1}, {"sizes", {1, 0, 3}}}));
  add({"split_first_piece_only", [](Builder &b) {
         Value *p = b.param("p", f32({4, 3}));
         Op *split = b.create("split", {p}, {{"axis", 0}, {"sizes", {1, 3}}});
         return std::vector<Value *>{split ? split->result(0) : nullptr};
       }});
  add(opCase("slice_steps", "slice", {f32({6, 5})},
             {{"starts", {1, 0}}, {"ends", {5, 5}}, {"steps", {2, 2}}}));
  add(opCase("slice_plain", "slice", {f32({4, 5})},
             {{"starts", {1, 2}}, {"ends", {3, 5}}}));
  add(opCase("pad_2d", "pad", {f32({2, 3})},
             {{"low", {1, 0}}, {"high", {0, 2}}, {"value", 1.0}}));

  // Reductions.
  for (const char *kind : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    std::string k = kind;
    add(opCase(k + "_axis1", k, {f32({2, 3, 4})}, {{"axes", {1}}}));
    add(opCase(k + "_all", k, {f32({3, 4})}, {{"axes", list({})}}));
    add(opCase(k + "_keepdims", k, {f32({2, 3, 4})},
               {{"axes", {0, -1}}, {"keepdims", true}}));
    add(opCase(k + "_all_keepdims", k, {f32({3, 4})},
               {{"axes", list({})}, {"keepdims", true}}));
  }

  // Softmax family.
  for (const char *kind : {"softmax", "log_softmax"}) {
    std::string k = kind;
    add(opCase(k + "_last", k, {f32({3, 5})}));
    add(opCase(k + "_axis0", k, {f32({3, 5})}, {{"axis", 0}}));
    add(opCase(k + "_3d_axis1", k, {f32({2, 3, 4})}, {{"axis", 1}}));
  }
  add(opCase("causal_mask_small_fill", "causal_mask", {f32({4, 4})},
             {{"value", -2.0}}));
  add(opCase("causal_mask_3d", "causal_mask", {f32({2, 3, 3})},
             {{"value", 0.5}}));
  add({"softmax_of_causal_mask", [](Builder &b) {
         Value *p = b.param("p", f32({2, 4, 4}));
         return std::vector<Value *>{b.op("softmax", {b.op("causal_mask", {p})})};
       }});

  // Normalisation.
  add(opCase("layer_norm_2d", "layer_norm", {f32({3, 5}), f32({5}), f32({5})}));
  add(opCase("layer_norm_3d_eps", "layer_norm",
             {f32({2, 3, 4}), f32({4}), f32({4})}, {{"eps", 1e-3}}));
  add(opCase("batch_norm_2d", "batch_norm", {f32({4, 3}), f32({3}), f32({3})}));
  add(opCase("batch_norm_4d", "batch_norm",
             {f32({2, 3, 2, 2}), f32({3}), f32({3})}));
  add(allResultsCase("batch_norm_with_stats", "batch_norm",
                     {f32({3, 2, 2, 2}), f32({2}), f32({2})}));
  // The variance must stay positive under differencing: exp of a param.
  add({"batch_norm_inference_4d", [](Builder &b) {
         Value *x = b.param("x", f32({2, 3, 2, 2}));
         Value *gamma = b.param("gamma", f32({3}));
         Value *beta = b.param("beta", f32({3}));
         Value *mean = b.param("mean", f32({3}));
         Value *var = b.op("exp", {b.param("logvar", f32({3}))});
         return std::vector<Value *>{
             b.op("batch_norm_inference", {x, gamma, beta, mean, var},
                  {{"eps", 1e-3}})};
       }});

  // Convolution.
  add(opCase("conv2d_plain", "conv2d", {f32({1, 2, 5, 5}), f32({3, 2, 3, 3})}));
  add(opCase("conv2d_stride_pad", "conv2d",
             {f32({2, 2, 5, 5}), f32({3, 2, 3, 3})},
             {{"strides", {2, 2}}, {"padding", {1, 1}}}));
  add(opCase("conv2d_dilation", "conv2d", {f32({1, 1, 6, 6}), f32({2, 1, 2, 2})},
             {{"dilation", {2, 2}}, {"padding", {1, 0}}}));
  add(opCase("conv2d_groups", "conv2d", {f32({1, 4, 4, 4}), f32({4, 2, 3, 3})},
             {{"groups", 2}, {"padding", {1, 1}}}));
  add(opCase("conv2d_depthwise", "conv2d",
             {f32({2, 3, 4, 4}), f32({3, 1, 3, 3})},
             {{"groups", 3}, {"strides", {1, 2}}}));
  add(opCase("conv2d_rect_kernel", "conv2d",
             {f32({2, 2, 4, 5}), f32({2, 2, 2, 3})}, {{"padding", {0, 1}}}));

  // Pooling.
  for (const char *kind : {"max_pool2d", "avg_pool2d"}) {
    std::string k = kind;
    add(opCase(k + "_2x2", k, {f32({1, 2, 4, 4})}, {{"kernel", {2, 2}}}));
    add(opCase(k + "_pad", k, {f32({1, 1, 5, 5})},
               {{"kernel", {3, 3}}, {"strides", {2, 2}}, {"padding", {1, 1}}}));
    add(opCase(k + "_overlap", k, {f32({2, 1, 4, 5})},
               {{"kernel", {3, 2}}, {"strides", {1, 1}}}));
  }
  add(opCase("global_avg_pool", "global_avg_pool", {f32({2, 3, 2, 3})}));
  add(opCase("upsample_nearest_2", "upsample_nearest", {f32({1, 2, 2, 3})}));
  add(opCase("upsample_nearest_3", "upsample_nearest", {f32({2, 1, 2, 2})},
             {{"scale", 3}}));
  add(opCase("upsample_nearest_1", "upsample_nearest", {f32({1, 1, 2, 2})},
             {{"scale", 1}}));

  // Communication: one process runs both ends.
  add({"all_reduce_3", [](Builder &b) {
         Value *x = b.param("x", f32({2, 3}));
         Value *y = b.param("y", f32({2, 3}));
         Value *z = b.param("z", f32({2, 3}));
         Op *sum = b.create("all_reduce", {x, y, z});
         return std::vector<Value *>{sum->result(0), sum->result(1),
                                     sum->result(2)};
       }});
  add({"transfer", [](Builder &b) {
         Value *x = b.param("x", f32({2, 3}));
         b.setDevice("gpu:0");
         Value *h = b.op("tanh", {x});
         b.setDevice("");
         return std::vector<Value *>{
             b.op("transfer", {h}, {{"to", std::string("gpu:1")}})};
       }});

  // Indexing: indices are fed in range, with repeats likely.
  add({"embedding", [](Builder &b) {
         Value *table = b.param("table", f32({6, 4}));
         Value *ids = b.input("ids", i32({2, 5}));
         return std::vector<Value *>{b.op("embedding", {table, ids})};
       }});
  add({"gather_axis0", [](Builder &b) {
         Value *x = b.param("x", f32({5, 3}));
         Value *idx = b.input("idx", i32({7}));
         return std::vector<Value *>{b.op("gather", {x, idx})};
       }});
  add({"gather_axis1_2d_indices", [](Builder &b) {
         Value *x = b.param("x", f32({3, 4, 2}));
         Value *idx = b.input("idx", i64({2, 3}));
         return std::vector<Value *>{b.op("gather", {x, idx}, {{"axis", 1}})};
       }});
  add({"gather_last_axis", [](Builder &b) {
         Value *x = b.param("x", f32({2, 3}));
         Value *idx = b.input("idx", i32({4}));
         return std::vector<Value *>{b.op("gather", {x, idx}, {{"axis", -1}})};
       }});

  // Random.
  add(opCase("dropout_rate_0_3", "dropout", {f32({4, 5})},
             {{"rate", 0.3}, {"seed", 7}}));
  add(opCase("dropout_rate_0", "dropout", {f32({3})}, {{"rate", 0.0}, {"seed", 1}}));

  // Losses.
  add({"softmax_cross_entropy_2d", [](Builder &b) {
         Value *logits = b.param("logits", f32({4, 5}));
         Value *labels = b.input("labels", i32({4}));
         return std::vector<Value *>{
             b.op("softmax_cross_entropy", {logits, labels})};
       }});
  add({"softmax_cross_entropy_3d", [](Builder &b) {
         Value *logits = b.param("logits", f32({2, 3, 4}));
         Value *labels = b.input("labels", i64({2, 3}));
         return std::vector<Value *>{
             b.op("softmax_cross_entropy", {logits, labels})};
       }});
  add(opCase("mse_loss", "mse_loss", {f32({3, 4}), f32({3, 4})}));

  // Graph ops.
  add(opCase("identity", "identity", {f32({3})}));
  add(opCase("checkpoint", "checkpoint", {f32({2, 2})}));
  add({"add_n_repeated_operand", [](Builder &b) {
         Value *p = b.param("p", f32({2, 3}));
         Value *q = b.param("q", f32({2, 3}));
         return std::vector<Value *>{b.op("add_n", {p, q, p})};
       }});
  add({"fills_and_constant", [](Builder &b) {
         Value *p = b.param("p", f32({2, 3}));
         Value *ones = b.op("ones_like", {p});
         Value *zeros = b.op("zeros_like", {p});
         Value *three = b.op("constant", {}, {{"value", 3.0}});
         Value *sum = b.op("add", {b.op("mul", {p, ones}), zeros});
         return std::vector<Value *>{b.op("mul", {sum, three})};
       }});
  return cases;
}

/// loss = sum_i reduce_sum(result_i * w_i) for random fixed inputs w_i.
absl::StatusOr<std::unique_ptr<Graph>> lossGraph(const GradCase &c) {
  auto graph = std::make_unique<Graph>("grad_case");
  Builder b(*graph);
  std::vector<Value *> results = c.build(b);
  Value *loss = nullptr;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i])
      break;
    Value *w = b.input("w" + std::to_string(i), results[i]->type());
    Value *term = b.op("reduce_sum", {b.op("mul", {results[i], w})});
    loss = loss ? b.op("add", {loss, term}) : term;
  }
  if (!b.status().ok())
    return b.status();
  if (!loss)
    return absl::InternalError("the case built no result");
  graph->addOutput(loss);
  return graph;
}

class NumericalGradientTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(NumericalGradientTest, MatchesFiniteDifferences) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = lossGraph(GetParam());
  ASSERT_TRUE(graph.ok()) << graph.status();
  // Two seeds: two draws of the params, the weights and the indices.
  for (uint64_t seed : {11, 29}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    GradientCheckOptions options;
    options.seed = seed;
    // The params are tiny: check every entry.
    options.samplesPerParam = 1000;
    absl::StatusOr<GradientCheckReport> report =
        checkGradients(**graph, options);
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_FALSE(report->samples.empty());
    const GradientSample &worst = report->samples[report->worstSample];
    EXPECT_TRUE(report->passed)
        << "worst: " << worst.param << "[" << worst.index << "] analytic "
        << worst.analytic << " numeric " << worst.numeric;
    EXPECT_LT(report->worstError, options.tolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryOp, NumericalGradientTest, ::testing::ValuesIn(gradCases()),
    [](const ::testing::TestParamInfo<GradCase> &info) { return info.param.name; });

TEST(NumericalGradientCoverageTest, EveryForwardFloatOpHasACase) {
  // Every op kind with a gradient rule appears in some case's graph, besides
  // the ops the harness itself uses and stop_gradient, whose finite
  // difference is not its gradient.
  std::set<std::string> covered = {"stop_gradient"};
  for (const GradCase &c : gradCases()) {
    absl::StatusOr<std::unique_ptr<Graph>> graph = lossGraph(c);
    ASSERT_TRUE(graph.ok()) << c.name << ": " << graph.status();
    for (const Op &op : (*graph)->ops())
      covered.insert(op.kind().str());
  }
  for (const OpDef *def : OpRegistry::global().all()) {
    if (def->gradient) {
      EXPECT_TRUE(covered.count(def->name)) << def->name << " has no case";
    }
  }
}

} // namespace
} // namespace remat
