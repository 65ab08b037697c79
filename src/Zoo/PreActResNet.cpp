//===- PreActResNet.cpp - CIFAR pre-activation residual networks ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pre-activation ResNets of He et al., "Identity Mappings in Deep
/// Residual Networks" (2016), as in the authors' code (resnet-1k-layers): a
/// 3x3 stem convolution to 16 channels, three stages of n blocks at widths
/// 16/32/64 (bottleneck outputs 64/128/256), then batch norm, relu, global
/// average pooling and a dense classifier. A block computes
/// `x + F(relu(bn(x)))`; where the shape changes, batch norm and relu are
/// shared by both branches and the shortcut is a 1x1 convolution of the
/// pre-activated input. In the bottleneck the stride sits on the first 1x1
/// convolution, as in the authors' code. Convolutions have no bias.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

namespace remat::zoo {

/// One pre-activation block of `width` (the 3x3 width) and `out` channels.
static Value *preActBlock(Net &net, Value *x, bool bottleneck, int64_t width,
                          int64_t out, int64_t stride,
                          const std::string &name) {
  if (!x)
    return nullptr;
  bool project = stride != 1 || x->type().dim(1) != out;
  Value *pre = relu(net, batchNorm(net, x, name + ".bn1"), name + ".relu1");
  Value *y;
  if (bottleneck) {
    y = conv2d(net, pre, {.out = width, .kernel = 1, .stride = stride},
               name + ".conv1");
    y = relu(net, batchNorm(net, y, name + ".bn2"), name + ".relu2");
    y = conv2d(net, y, {.out = width, .kernel = 3, .padding = 1},
               name + ".conv2");
    y = relu(net, batchNorm(net, y, name + ".bn3"), name + ".relu3");
    y = conv2d(net, y, {.out = out, .kernel = 1}, name + ".conv3");
  } else {
    y = conv2d(net, pre,
               {.out = width, .kernel = 3, .stride = stride, .padding = 1},
               name + ".conv1");
    y = relu(net, batchNorm(net, y, name + ".bn2"), name + ".relu2");
    y = conv2d(net, y, {.out = out, .kernel = 3, .padding = 1},
               name + ".conv2");
  }
  Value *shortcut =
      project ? conv2d(net, pre, {.out = out, .kernel = 1, .stride = stride},
                       name + ".shortcut")
              : x;
  return net.op("add", {y, shortcut}, {}, name + ".add");
}

absl::StatusOr<std::unique_ptr<Graph>>
buildPreActResNet(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(
      std::string block,
      opts.getChoice("block", "bottleneck", {"bottleneck", "basic"}));
  bool bottleneck = block == "bottleneck";
  int64_t perBlock = bottleneck ? 9 : 6;
  REMAT_ASSIGN_OR_RETURN(
      int64_t depth,
      opts.getInt("depth", bottleneck ? 164 : 110, 0, INT32_MAX));
  if (depth < perBlock + 2 || (depth - 2) % perBlock != 0)
    return opts.error("option '--depth' must be {}n+2 with n >= 1 for "
                      "--block={} pre-activation networks (e.g. {}), got {}",
                      perBlock, block,
                      bottleneck ? "164 or 1001" : "110 or 1202", depth);
  int64_t blocksPerStage = (depth - 2) / perBlock;
  if (blocksPerStage > 10'000)
    return opts.error("option '--depth' must be at most {}, got {}",
                      10'000 * perBlock + 2, depth);
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 32, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t image, opts.getInt("image", 32, 1, kMaxImage));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 10, 1, kMaxClasses));

  Net net(fmt::format("preact_resnet{}", depth));
  Value *h = net.input("images", f32({batch, 3, image, image}));
  Value *labels = net.input("labels", i32({batch}));
  {
    Builder::RegionScope region(net.builder(), "stem");
    h = conv2d(net, h, {.out = 16, .kernel = 3, .padding = 1}, "conv1");
  }
  for (int64_t stage = 0; stage < 3; ++stage) {
    int64_t width = int64_t(16) << stage;
    int64_t out = bottleneck ? 4 * width : width;
    for (int64_t i = 0; i < blocksPerStage; ++i) {
      std::string layer = fmt::format("layer{}", stage + 1);
      Builder::RegionScope region(net.builder(),
                                  fmt::format("{}/block{}", layer, i));
      int64_t stride = stage > 0 && i == 0 ? 2 : 1;
      h = preActBlock(net, h, bottleneck, width, out, stride,
                      fmt::format("{}.block{}", layer, i));
    }
  }
  Builder::RegionScope region(net.builder(), "head");
  h = relu(net, batchNorm(net, h, "bn"), "relu");
  h = net.op("global_avg_pool", {h}, {}, "avgpool");
  Value *logits = dense(net, h, classes, "fc");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

} // namespace remat::zoo
