//===- MobileNetV2.cpp - MobileNetV2 at width 1.0 -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// MobileNetV2 (Sandler et al. 2018) at width multiplier 1.0, as torchvision
/// builds it: a 3x3/2 stem to 32 channels, seventeen inverted residual blocks
/// (1x1 expansion, 3x3 depthwise convolution as a grouped conv2d, linear 1x1
/// projection, a residual add where stride is 1 and the widths match), a 1x1
/// convolution to 1280 channels, global average pooling and a dense
/// classifier. Convolutions have no bias and are followed by batch norm.
/// ReLU6 is modelled as relu (same shapes and memory) and the classifier's
/// dropout is left out.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

namespace remat::zoo {

namespace {
/// One row of the paper's Table 2: expansion t, channels c, repeats n,
/// first stride s.
struct InvertedResidualStage {
  int64_t expansion;
  int64_t channels;
  int64_t repeats;
  int64_t stride;
};
} // namespace

static constexpr InvertedResidualStage kStages[] = {
    {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2},  {6, 64, 4, 2},
    {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
};

static Value *invertedResidual(Net &net, Value *x, int64_t expansion,
                               int64_t out, int64_t stride,
                               const std::string &name) {
  if (!x)
    return nullptr;
  int64_t in = x->type().dim(1);
  int64_t hidden = in * expansion;
  Value *y = x;
  if (expansion != 1)
    y = convBnRelu(net, y, {.out = hidden, .kernel = 1}, name + ".expand");
  y = convBnRelu(net, y,
                 {.out = hidden,
                  .kernel = 3,
                  .stride = stride,
                  .padding = 1,
                  .groups = hidden},
                 name + ".depthwise");
  y = convBn(net, y, {.out = out, .kernel = 1}, name + ".project");
  if (stride == 1 && in == out)
    y = net.op("add", {x, y}, {}, name + ".add");
  return y;
}

static absl::StatusOr<std::unique_ptr<Graph>>
buildMobileNetV2(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 32, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t image,
                         opts.getInt("image", 224, 1, kMaxImage));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 1000, 1, kMaxClasses));

  Net net("mobilenet_v2");
  Value *h = net.input("images", f32({batch, 3, image, image}));
  Value *labels = net.input("labels", i32({batch}));
  {
    Builder::RegionScope region(net.builder(), "stem");
    h = convBnRelu(net, h, {.out = 32, .kernel = 3, .stride = 2, .padding = 1},
                   "stem");
  }
  int64_t index = 0;
  for (const InvertedResidualStage &stage : kStages) {
    for (int64_t i = 0; i < stage.repeats; ++i) {
      std::string name = fmt::format("block{}", ++index);
      Builder::RegionScope region(net.builder(), name);
      h = invertedResidual(net, h, stage.expansion, stage.channels,
                           i == 0 ? stage.stride : 1, name);
    }
  }
  Builder::RegionScope region(net.builder(), "head");
  h = convBnRelu(net, h, {.out = 1280, .kernel = 1}, "conv_last");
  h = net.op("global_avg_pool", {h}, {}, "avgpool");
  Value *logits = dense(net, h, classes, "classifier");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

ZooModel mobileNetV2Model() {
  return {{.name = "mobilenet_v2",
           .summary = "MobileNetV2, width 1.0 (torchvision): inverted "
                      "residuals with depthwise convolutions",
           .options = {{"batch", "32", "batch size"},
                       {"image", "224", "image height and width"},
                       {"classes", "1000", "output classes"}}},
          buildMobileNetV2};
}

} // namespace remat::zoo
