//===- Models.h - The zoo's model table entries -----------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One entry per model family, each defined in its own file under src/Zoo/.
/// Zoo.cpp collects them into the table behind `listZooModels` and
/// `buildZooModel`. Private to src/Zoo.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_ZOO_MODELS_H
#define REMAT_SRC_ZOO_MODELS_H

#include "ZooOptions.h"

#include "remat/IR/Graph.h"
#include "remat/Zoo/Zoo.h"

#include "absl/status/statusor.h"

#include <memory>

namespace remat::zoo {

/// Builds a model from options already checked to be known ones.
using BuildFn =
    absl::StatusOr<std::unique_ptr<Graph>> (*)(const OptionReader &options);

/// A model's description and its generator.
struct ZooModel {
  ZooModelInfo info;
  BuildFn build;
};

ZooModel denseNetModel();
ZooModel lstmModel();
ZooModel mlpModel();
ZooModel mobileNetV2Model();
ZooModel resNetModel();
ZooModel transformerModel();
ZooModel uNetModel();
ZooModel vggModel();

/// The CIFAR pre-activation ResNets that `resnet --preact` builds.
absl::StatusOr<std::unique_ptr<Graph>>
buildPreActResNet(const OptionReader &options);

/// Upper bound of `--batch` for every model.
inline constexpr int64_t kMaxBatch = kZooMaxBatch;
/// Upper bound of `--image` for every image model.
inline constexpr int64_t kMaxImage = 1 << 14;
/// Upper bound of `--classes` for every classifier.
inline constexpr int64_t kMaxClasses = 1 << 20;

} // namespace remat::zoo

#endif // REMAT_SRC_ZOO_MODELS_H
