//===- SmallZooModels.h - Every zoo model at a small size ------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The zoo's models at sizes that build in milliseconds, shared by the tests
/// that walk every model. Not all of them run fast in the executor: tests that
/// execute graphs keep smaller lists of their own.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_SMALLZOOMODELS_H
#define REMAT_TESTS_UNIT_SMALLZOOMODELS_H

#include "remat/Zoo/Zoo.h"

#include <string>
#include <vector>

namespace remat {

/// A model at a size small enough to build in milliseconds.
struct SmallModel {
  std::string model;
  ZooOptions options;
};

inline std::vector<SmallModel> smallModels() {
  return {
      {"mlp",
       {{"layers", "3"},
        {"width", "16"},
        {"batch", "2"},
        {"input", "8"},
        {"classes", "4"}}},
      {"resnet", {{"depth", "18"}, {"batch", "2"}, {"image", "32"}}},
      {"resnet",
       {{"depth", "50"}, {"batch", "2"}, {"image", "32"}, {"classes", "10"}}},
      {"resnet",
       {{"preact", "true"},
        {"depth", "20"},
        {"block", "basic"},
        {"batch", "2"}}},
      {"resnet", {{"preact", "true"}, {"depth", "11"}, {"batch", "2"}}},
      {"vgg",
       {{"depth", "19"}, {"batch", "2"}, {"image", "32"}, {"classes", "10"}}},
      {"mobilenet_v2", {{"batch", "2"}, {"image", "32"}, {"classes", "10"}}},
      {"unet",
       {{"depth", "2"},
        {"channels", "4"},
        {"batch", "2"},
        {"image", "16"},
        {"classes", "3"}}},
      {"transformer",
       {{"layers", "2"},
        {"d-model", "32"},
        {"heads", "2"},
        {"seq", "8"},
        {"batch", "2"},
        {"vocab", "50"}}},
      {"transformer",
       {{"layers", "2"},
        {"d-model", "32"},
        {"heads", "2"},
        {"seq", "8"},
        {"batch", "2"},
        {"vocab", "50"},
        {"dropout", "0.1"}}},
      {"lstm",
       {{"steps", "5"},
        {"hidden", "8"},
        {"batch", "2"},
        {"input", "3"},
        {"classes", "4"}}},
      {"densenet",
       {{"depth", "121"},
        {"growth", "4"},
        {"batch", "2"},
        {"image", "32"},
        {"classes", "10"}}},
  };
}

/// Small residual, attention (with dropout) and recurrent models that the
/// executor runs in a fraction of a second: the tests that plan at a budget
/// and measure the planned graph.
inline std::vector<SmallModel> executableZooModels() {
  return {
      {"resnet",
       {{"preact", "true"}, {"depth", "11"}, {"batch", "1"}, {"image", "16"}}},
      {"transformer",
       {{"layers", "2"},
        {"d-model", "16"},
        {"heads", "2"},
        {"seq", "4"},
        {"batch", "2"},
        {"vocab", "20"},
        {"dropout", "0.1"}}},
      {"lstm", {{"steps", "5"}, {"hidden", "8"}, {"batch", "2"}}}};
}

} // namespace remat

#endif // REMAT_TESTS_UNIT_SMALLZOOMODELS_H
