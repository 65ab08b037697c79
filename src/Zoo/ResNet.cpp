//===- ResNet.cpp - ImageNet residual networks (torchvision) --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// ResNet-18/34/50/101/152 as torchvision builds them: a 7x7/2 stem
/// convolution, batch norm, relu and 3x3/2 max pool; four stages of basic
/// (18, 34) or bottleneck (50+) blocks with the stride on the 3x3 convolution
/// (ResNet v1.5) and a 1x1 convolution plus batch norm on the shortcut where
/// the shape changes; global average pooling and a dense classifier. With
/// `--preact` the same model name builds the CIFAR pre-activation networks of
/// PreActResNet.cpp instead.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

#include <array>

namespace remat::zoo {

namespace {
/// The blocks per stage of one ImageNet depth.
struct ResNetConfig {
  int64_t depth;
  bool bottleneck;
  std::array<int64_t, 4> blocks;
};
} // namespace

static constexpr ResNetConfig kResNetConfigs[] = {
    {18, false, {2, 2, 2, 2}},  {34, false, {3, 4, 6, 3}},
    {50, true, {3, 4, 6, 3}},   {101, true, {3, 4, 23, 3}},
    {152, true, {3, 8, 36, 3}},
};

/// One residual block; `planes` is the width of its 3x3 convolution.
static Value *resNetBlock(Net &net, Value *x, bool bottleneck, int64_t planes,
                          int64_t stride, const std::string &name) {
  int64_t out = bottleneck ? 4 * planes : planes;
  Value *y;
  if (bottleneck) {
    y = convBnRelu(net, x, {.out = planes, .kernel = 1}, name + ".conv1");
    y = convBnRelu(net, y,
                   {.out = planes, .kernel = 3, .stride = stride, .padding = 1},
                   name + ".conv2");
    y = convBn(net, y, {.out = out, .kernel = 1}, name + ".conv3");
  } else {
    y = convBnRelu(net, x,
                   {.out = planes, .kernel = 3, .stride = stride, .padding = 1},
                   name + ".conv1");
    y = convBn(net, y, {.out = planes, .kernel = 3, .padding = 1},
               name + ".conv2");
  }
  Value *shortcut = x;
  if (x && (stride != 1 || x->type().dim(1) != out))
    shortcut = convBn(net, x, {.out = out, .kernel = 1, .stride = stride},
                      name + ".downsample");
  return relu(net, net.op("add", {y, shortcut}, {}, name + ".add"),
              name + ".relu");
}

static absl::StatusOr<std::unique_ptr<Graph>>
buildImageNetResNet(const OptionReader &opts) {
  if (opts.has("block"))
    return opts.error("option '--block' needs --preact (ImageNet depths fix "
                      "the block type)");
  REMAT_ASSIGN_OR_RETURN(int64_t depth, opts.getInt("depth", 50, 0, INT32_MAX));
  const ResNetConfig *config = nullptr;
  for (const ResNetConfig &candidate : kResNetConfigs)
    if (candidate.depth == depth)
      config = &candidate;
  if (!config)
    return opts.error("option '--depth' must be one of 18, 34, 50, 101, 152 "
                      "(or 6n+2 / 9n+2 with --preact), got {}",
                      depth);
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 32, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t image,
                         opts.getInt("image", 224, 1, kMaxImage));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 1000, 1, kMaxClasses));

  Net net(fmt::format("resnet{}", depth));
  Value *h = net.input("images", f32({batch, 3, image, image}));
  Value *labels = net.input("labels", i32({batch}));
  {
    Builder::RegionScope region(net.builder(), "stem");
    h = convBnRelu(net, h, {.out = 64, .kernel = 7, .stride = 2, .padding = 3},
                   "conv1");
    h = net.op("max_pool2d", {h},
               {{"kernel", Attribute({3, 3})},
                {"strides", Attribute({2, 2})},
                {"padding", Attribute({1, 1})}},
               "maxpool");
  }
  for (int64_t stage = 0; stage < 4; ++stage) {
    int64_t planes = int64_t(64) << stage;
    for (int64_t block = 0; block < config->blocks[stage]; ++block) {
      std::string layer = fmt::format("layer{}", stage + 1);
      Builder::RegionScope region(net.builder(),
                                  fmt::format("{}/block{}", layer, block));
      int64_t stride = stage > 0 && block == 0 ? 2 : 1;
      h = resNetBlock(net, h, config->bottleneck, planes, stride,
                      fmt::format("{}.block{}", layer, block));
    }
  }
  Builder::RegionScope region(net.builder(), "head");
  h = net.op("global_avg_pool", {h}, {}, "avgpool");
  Value *logits = dense(net, h, classes, "fc");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

static absl::StatusOr<std::unique_ptr<Graph>>
buildResNet(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(bool preact, opts.getFlag("preact"));
  return preact ? buildPreActResNet(opts) : buildImageNetResNet(opts);
}

ZooModel resNetModel() {
  return {{.name = "resnet",
           .summary = "ResNet-18/34/50/101/152 (torchvision), or with --preact "
                      "the CIFAR pre-activation ResNets (He et al. 2016)",
           .options = {{"depth", "50 (164 or 110 with --preact)",
                        "18, 34, 50, 101 or 152; with --preact 9n+2 "
                        "(bottleneck) or 6n+2 (basic)"},
                       {"batch", "32", "batch size"},
                       {"image", "224 (32 with --preact)",
                        "image height and width"},
                       {"classes", "1000 (10 with --preact)", "output classes"},
                       {"preact", "false", "CIFAR pre-activation ResNet"},
                       {"block", "bottleneck",
                        "with --preact: bottleneck or basic"}}},
          buildResNet};
}

} // namespace remat::zoo
