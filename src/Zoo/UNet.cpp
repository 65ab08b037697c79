//===- UNet.cpp - U-Net for per-pixel classification ----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// U-Net (Ronneberger et al. 2015) with padded convolutions, so that the
/// output has the input's size: `--depth` encoder levels of a double
/// convolution (3x3 with bias and relu, twice) and a 2x2 max pool, a double
/// convolution at the bottom, then as many decoder levels of nearest-neighbour
/// 2x upsampling, a 3x3 convolution halving the channels (the paper's 2x2
/// up-convolution), concatenation with the encoder's feature map of the same
/// size (the long skip connection) and a double convolution. A 1x1
/// convolution gives per-pixel logits, transposed to NHWC for softmax
/// cross-entropy against labels `[N, H, W]`. Level l has `channels * 2^l`
/// channels; the input has 3.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

#include <vector>

namespace remat::zoo {

/// Two 3x3 convolutions with bias, each followed by relu.
static Value *doubleConv(Net &net, Value *x, int64_t channels,
                         const std::string &name) {
  for (int i = 1; i <= 2; ++i) {
    std::string conv = fmt::format("{}.conv{}", name, i);
    x = conv2d(net, x,
               {.out = channels, .kernel = 3, .padding = 1, .bias = true},
               conv);
    x = relu(net, x, conv + ".relu");
  }
  return x;
}

static absl::StatusOr<std::unique_ptr<Graph>>
buildUNet(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(int64_t depth, opts.getInt("depth", 4, 1, 10));
  REMAT_ASSIGN_OR_RETURN(int64_t channels,
                         opts.getInt("channels", 64, 1, 4096));
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 4, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t image,
                         opts.getInt("image", 256, 1, kMaxImage));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 2, 1, kMaxClasses));
  int64_t factor = int64_t(1) << depth;
  if (image % factor != 0)
    return opts.error("option '--image' must be a multiple of 2^depth = {} "
                      "(--depth={}), got {}",
                      factor, depth, image);

  Net net("unet");
  Value *h = net.input("images", f32({batch, 3, image, image}));
  Value *labels = net.input("labels", i32({batch, image, image}));
  std::vector<Value *> skips;
  for (int64_t level = 0; level < depth; ++level) {
    std::string name = fmt::format("down{}", level + 1);
    Builder::RegionScope region(net.builder(), name);
    h = doubleConv(net, h, channels << level, name);
    skips.push_back(h);
    h = net.op("max_pool2d", {h}, {{"kernel", Attribute({2, 2})}},
               name + ".pool");
  }
  {
    Builder::RegionScope region(net.builder(), "bottom");
    h = doubleConv(net, h, channels << depth, "bottom");
  }
  for (int64_t level = depth - 1; level >= 0; --level) {
    std::string name = fmt::format("up{}", level + 1);
    Builder::RegionScope region(net.builder(), name);
    h = net.op("upsample_nearest", {h}, {}, name + ".upsample");
    h = conv2d(
        net, h,
        {.out = channels << level, .kernel = 3, .padding = 1, .bias = true},
        name + ".upconv");
    h = net.op("concat", {skips[level], h}, {{"axis", Attribute(1)}},
               name + ".concat");
    h = doubleConv(net, h, channels << level, name);
  }
  Builder::RegionScope region(net.builder(), "head");
  Value *logits =
      conv2d(net, h, {.out = classes, .kernel = 1, .bias = true}, "logits");
  logits = net.op("transpose", {logits}, {{"perm", Attribute({0, 2, 3, 1})}},
                  "logits.nhwc");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

ZooModel uNetModel() {
  return {{.name = "unet",
           .summary = "U-Net with padded convolutions, nearest upsampling and "
                      "concatenated skip connections; per-pixel loss",
           .options = {{"depth", "4", "encoder levels (1..10)"},
                       {"channels", "64", "channels of the first level"},
                       {"batch", "4", "batch size"},
                       {"image", "256",
                        "image height and width (a multiple "
                        "of 2^depth)"},
                       {"classes", "2", "classes per pixel"}}},
          buildUNet};
}

} // namespace remat::zoo
