//===- Zoo.h - Deterministic model generators --------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Forward training graphs of well-known models, each ending in a scalar loss
/// (the first output) with its parameters declared as params. Generators are
/// deterministic: the same options give the same graph, byte for byte.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_ZOO_ZOO_H
#define REMAT_ZOO_ZOO_H

#include "remat/IR/Graph.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace remat {

/// Generator options as written on the command line, `--depth=50` becoming
/// {"depth", "50"}; a flag without a value (`--preact`) maps to "true".
using ZooOptions = std::map<std::string, std::string>;

/// One option a model accepts, for `--help` and docs.
struct ZooOptionInfo {
  std::string name;
  std::string defaultValue;
  std::string help;
};

/// One model of the zoo.
struct ZooModelInfo {
  std::string name;
  std::string summary;
  std::vector<ZooOptionInfo> options;
};

/// The largest `--batch` every model accepts (`remat fit` searches up to it).
inline constexpr int64_t kZooMaxBatch = int64_t(1) << 16;

/// Every model, sorted by name.
std::vector<ZooModelInfo> listZooModels();

/// Builds model `name` with `options`. Unknown models or options, malformed
/// values and impossible configurations (a ResNet depth that is not
/// 18/34/50/101/152, an image too small for the network) are errors naming
/// the option.
absl::StatusOr<std::unique_ptr<Graph>> buildZooModel(llvm::StringRef name,
                                                     const ZooOptions &options);

} // namespace remat

#endif // REMAT_ZOO_ZOO_H
