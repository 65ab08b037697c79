//===- Vgg.cpp - VGG-16 and VGG-19 ----------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// VGG (Simonyan and Zisserman 2014, configurations D and E, as torchvision
/// builds them without batch norm): 3x3 convolutions with bias and relu in
/// five stages, each closed by a 2x2/2 max pool; then three dense layers
/// (4096, 4096, classes) with biases, relu between them. The first dense layer
/// reads the flattened last pool, 512 x (image/32)^2 features (25088 at 224).
/// There is no adaptive pooling and no dropout.
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace remat::zoo {

static absl::StatusOr<std::unique_ptr<Graph>>
buildVgg(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(int64_t depth, opts.getInt("depth", 16, 0, INT32_MAX));
  if (depth != 16 && depth != 19)
    return opts.error("option '--depth' must be 16 or 19, got {}", depth);
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 32, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t image,
                         opts.getInt("image", 224, 1, kMaxImage));
  REMAT_ASSIGN_OR_RETURN(int64_t classes,
                         opts.getInt("classes", 1000, 1, kMaxClasses));
  // Convolutions per stage: configuration D (16) and E (19).
  std::vector<int64_t> convs = depth == 16
                                   ? std::vector<int64_t>{2, 2, 3, 3, 3}
                                   : std::vector<int64_t>{2, 2, 4, 4, 4};

  Net net(fmt::format("vgg{}", depth));
  Value *h = net.input("images", f32({batch, 3, image, image}));
  Value *labels = net.input("labels", i32({batch}));
  for (int64_t stage = 0; stage < 5; ++stage) {
    std::string name = fmt::format("stage{}", stage + 1);
    Builder::RegionScope region(net.builder(), name);
    int64_t channels = std::min<int64_t>(int64_t(64) << stage, 512);
    for (int64_t i = 0; i < convs[stage]; ++i) {
      std::string conv = fmt::format("{}.conv{}", name, i + 1);
      h = conv2d(net, h,
                 {.out = channels, .kernel = 3, .padding = 1, .bias = true},
                 conv);
      h = relu(net, h, conv + ".relu");
    }
    h = net.op("max_pool2d", {h}, {{"kernel", Attribute({2, 2})}},
               name + ".pool");
  }
  Builder::RegionScope region(net.builder(), "classifier");
  h = flatten(net, h, "flatten");
  h = relu(net, dense(net, h, 4096, "fc1"), "fc1.relu");
  h = relu(net, dense(net, h, 4096, "fc2"), "fc2.relu");
  Value *logits = dense(net, h, classes, "fc3");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

ZooModel vggModel() {
  return {{.name = "vgg",
           .summary = "VGG-16/19 (no batch norm): 3x3 convolutions with bias, "
                      "max pools, three dense layers",
           .options = {{"depth", "16", "16 or 19"},
                       {"batch", "32", "batch size"},
                       {"image", "224", "image height and width (at least 32)"},
                       {"classes", "1000", "output classes"}}},
          buildVgg};
}

} // namespace remat::zoo
