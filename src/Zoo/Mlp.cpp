//===- Mlp.cpp - A deep multilayer perceptron -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `--layers` hidden layers (matmul, bias add, relu) of `--width` units, then a
/// dense classifier and softmax cross-entropy. Each layer costs O(1) builder
/// work, so hundreds of thousands of layers (millions of ops) build quickly:
/// the zoo's scale test.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

namespace remat::zoo {

static absl::StatusOr<std::unique_ptr<Graph>>
buildMlp(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(int64_t layers,
                         opts.getInt("layers", 3, 1, 2'000'000));
  REMAT_ASSIGN_OR_RETURN(int64_t width, opts.getInt("width", 512, 1, 1 << 20));
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 32, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t inputs, opts.getInt("input", 784, 1, 1 << 20));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 10, 1, kMaxClasses));

  Net net("mlp");
  Value *h = net.input("x", f32({batch, inputs}));
  Value *labels = net.input("labels", i32({batch}));
  for (int64_t i = 0; i < layers; ++i) {
    std::string name = fmt::format("layer{}", i);
    Builder::RegionScope region(net.builder(), name);
    h = relu(net, dense(net, h, width, name + ".fc"), name);
  }
  Builder::RegionScope region(net.builder(), "head");
  Value *logits = dense(net, h, classes, "logits");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

ZooModel mlpModel() {
  return {{.name = "mlp",
           .summary = "multilayer perceptron: (matmul, bias add, relu) x "
                      "layers, then a dense classifier",
           .options = {{"layers", "3", "hidden layers (1..2000000)"},
                       {"width", "512", "units per hidden layer"},
                       {"batch", "32", "batch size"},
                       {"input", "784", "input features"},
                       {"classes", "10", "output classes"}}},
          buildMlp};
}

} // namespace remat::zoo
