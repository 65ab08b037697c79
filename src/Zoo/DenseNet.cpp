//===- DenseNet.cpp - DenseNet-121/169/201 --------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// DenseNet-BC (Huang et al. 2017) as torchvision builds it: a 7x7/2 stem
/// convolution to 2k channels (k = growth rate), batch norm, relu and 3x3/2
/// max pool; four dense blocks whose layers each read the concatenation of
/// every earlier feature map of the block and add k channels
/// (batch norm, relu, 1x1 convolution to 4k, batch norm, relu, 3x3
/// convolution to k); transitions between blocks (batch norm, relu, 1x1
/// convolution halving the channels, 2x2/2 average pool); a final batch norm,
/// relu, global average pooling and a dense classifier. Every layer
/// concatenates anew, as torchvision's default (not memory-efficient) layer
/// does, which is what makes DenseNet a classic recomputation target.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

#include <array>
#include <vector>

namespace remat::zoo {

namespace {
struct DenseNetConfig {
  int64_t depth;
  std::array<int64_t, 4> layers;
};
} // namespace

static constexpr DenseNetConfig kDenseNetConfigs[] = {
    {121, {6, 12, 24, 16}},
    {169, {6, 12, 32, 32}},
    {201, {6, 12, 48, 32}},
};

/// BN, relu, conv named `<name>.norm`, `<name>.relu`, `<name>.conv`.
static Value *bnReluConv(Net &net, Value *x, const ConvSpec &spec,
                         const std::string &name, llvm::StringRef suffix) {
  Value *y = batchNorm(net, x, fmt::format("{}.norm{}", name, suffix.str()));
  y = relu(net, y, fmt::format("{}.relu{}", name, suffix.str()));
  return conv2d(net, y, spec, fmt::format("{}.conv{}", name, suffix.str()));
}

/// One dense block; returns the concatenation of its input and every
/// layer's new features.
static Value *denseBlock(Net &net, Value *x, int64_t layers, int64_t growth,
                         int64_t blockIndex) {
  std::vector<Value *> features = {x};
  for (int64_t i = 0; i < layers; ++i) {
    std::string name = fmt::format("denseblock{}.layer{}", blockIndex, i + 1);
    Builder::RegionScope region(
        net.builder(), fmt::format("denseblock{}/layer{}", blockIndex, i + 1));
    Value *in = features.size() == 1
                    ? features[0]
                    : net.op("concat", features, {{"axis", Attribute(1)}},
                             name + ".concat");
    Value *y = bnReluConv(net, in, {.out = 4 * growth, .kernel = 1}, name, "1");
    y = bnReluConv(net, y, {.out = growth, .kernel = 3, .padding = 1}, name,
                   "2");
    features.push_back(y);
  }
  Builder::RegionScope region(net.builder(),
                              fmt::format("denseblock{}", blockIndex));
  return net.op("concat", features, {{"axis", Attribute(1)}},
                fmt::format("denseblock{}", blockIndex));
}

static absl::StatusOr<std::unique_ptr<Graph>>
buildDenseNet(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(int64_t depth,
                         opts.getInt("depth", 121, 0, INT32_MAX));
  const DenseNetConfig *config = nullptr;
  for (const DenseNetConfig &candidate : kDenseNetConfigs)
    if (candidate.depth == depth)
      config = &candidate;
  if (!config)
    return opts.error("option '--depth' must be one of 121, 169, 201, got {}",
                      depth);
  REMAT_ASSIGN_OR_RETURN(int64_t growth, opts.getInt("growth", 32, 1, 4096));
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 32, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t image,
                         opts.getInt("image", 224, 1, kMaxImage));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 1000, 1, kMaxClasses));

  Net net(fmt::format("densenet{}", depth));
  Value *h = net.input("images", f32({batch, 3, image, image}));
  Value *labels = net.input("labels", i32({batch}));
  {
    Builder::RegionScope region(net.builder(), "stem");
    h = convBnRelu(net, h,
                   {.out = 2 * growth, .kernel = 7, .stride = 2, .padding = 3},
                   "conv0");
    h = net.op("max_pool2d", {h},
               {{"kernel", Attribute({3, 3})},
                {"strides", Attribute({2, 2})},
                {"padding", Attribute({1, 1})}},
               "pool0");
  }
  for (int64_t block = 0; block < 4; ++block) {
    h = denseBlock(net, h, config->layers[block], growth, block + 1);
    if (block == 3 || !h)
      continue;
    std::string name = fmt::format("transition{}", block + 1);
    Builder::RegionScope region(net.builder(), name);
    h = bnReluConv(net, h, {.out = h->type().dim(1) / 2, .kernel = 1}, name,
                   "");
    h = net.op("avg_pool2d", {h}, {{"kernel", Attribute({2, 2})}},
               name + ".pool");
  }
  Builder::RegionScope region(net.builder(), "head");
  h = relu(net, batchNorm(net, h, "norm5"), "relu5");
  h = net.op("global_avg_pool", {h}, {}, "avgpool");
  Value *logits = dense(net, h, classes, "classifier");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

ZooModel denseNetModel() {
  return {{.name = "densenet",
           .summary = "DenseNet-121/169/201 (torchvision): dense blocks that "
                      "concatenate every earlier feature map",
           .options = {{"depth", "121", "121, 169 or 201"},
                       {"growth", "32",
                        "growth rate k (the stem has 2k "
                        "channels)"},
                       {"batch", "32", "batch size"},
                       {"image", "224", "image height and width"},
                       {"classes", "1000", "output classes"}}},
          buildDenseNet};
}

} // namespace remat::zoo
