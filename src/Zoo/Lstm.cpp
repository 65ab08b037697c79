//===- Lstm.cpp - An unrolled LSTM classifier -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One LSTM layer unrolled over `--steps` time steps of a time-major input
/// `x : [steps, batch, input]`, with zero initial state. Each step slices its
/// input, computes `gates = x_t @ w_ih + h @ w_hh + b` (one bias, gate order
/// i, f, g, o as in PyTorch), splits the gates and updates
/// `c = sigmoid(f) * c + sigmoid(i) * tanh(g)`, `h = sigmoid(o) * tanh(c)`.
/// The final hidden state goes through a dense classifier. The weights are
/// shared by every step, so the graph is a long chain of identical regions.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

namespace remat::zoo {

static absl::StatusOr<std::unique_ptr<Graph>>
buildLstm(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(int64_t steps, opts.getInt("steps", 100, 1, 100'000));
  REMAT_ASSIGN_OR_RETURN(int64_t hidden,
                         opts.getInt("hidden", 512, 1, 1 << 16));
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 32, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t inputs,
                         opts.getInt("input", hidden, 1, 1 << 20));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 10, 1, kMaxClasses));

  Net net("lstm");
  Value *x = net.input("x", f32({steps, batch, inputs}));
  Value *labels = net.input("labels", i32({batch}));
  Value *wIh = net.param("lstm.w_ih", f32({inputs, 4 * hidden}));
  Value *wHh = net.param("lstm.w_hh", f32({hidden, 4 * hidden}));
  Value *bias = net.param("lstm.b", f32({4 * hidden}));
  AttrList zeros = {{"value", Attribute(0.0)},
                    {"shape", Attribute({batch, hidden})}};
  Value *h = net.op("constant", {}, zeros, "h0");
  Value *c = net.op("constant", {}, zeros, "c0");
  for (int64_t t = 0; t < steps; ++t) {
    std::string name = fmt::format("step{}", t);
    Builder::RegionScope region(net.builder(), name);
    Value *xt = net.op("slice", {x},
                       {{"starts", Attribute({t, 0, 0})},
                        {"ends", Attribute({t + 1, batch, inputs})}},
                       name + ".x_slice");
    xt = net.op("reshape", {xt}, {{"shape", Attribute({batch, inputs})}},
                name + ".x");
    Value *gates = net.op("add",
                          {net.op("matmul", {xt, wIh}, {}, name + ".xw"),
                           net.op("matmul", {h, wHh}, {}, name + ".hw")},
                          {}, name + ".gates_sum");
    gates = net.op("add", {gates, bias}, {}, name + ".gates");
    Op *split = net.create(
        "split", {gates},
        {{"axis", Attribute(1)},
         {"sizes", Attribute({hidden, hidden, hidden, hidden})}},
        {name + ".i_pre", name + ".f_pre", name + ".g_pre", name + ".o_pre"});
    if (!split)
      break;
    Value *i = net.op("sigmoid", {split->result(0)}, {}, name + ".i");
    Value *f = net.op("sigmoid", {split->result(1)}, {}, name + ".f");
    Value *g = net.op("tanh", {split->result(2)}, {}, name + ".g");
    Value *o = net.op("sigmoid", {split->result(3)}, {}, name + ".o");
    c = net.op("add",
               {net.op("mul", {f, c}, {}, name + ".fc"),
                net.op("mul", {i, g}, {}, name + ".ig")},
               {}, name + ".c");
    h = net.op("mul", {o, net.op("tanh", {c}, {}, name + ".c_tanh")}, {},
               name + ".h");
  }
  Builder::RegionScope region(net.builder(), "head");
  Value *logits = dense(net, h, classes, "fc");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

ZooModel lstmModel() {
  return {{.name = "lstm",
           .summary = "one LSTM layer unrolled over time, then a dense "
                      "classifier on the last hidden state",
           .options = {{"steps", "100", "time steps (1..100000)"},
                       {"hidden", "512", "hidden and cell width"},
                       {"batch", "32", "batch size"},
                       {"input", "hidden", "input features per step"},
                       {"classes", "10", "output classes"}}},
          buildLstm};
}

} // namespace remat::zoo
