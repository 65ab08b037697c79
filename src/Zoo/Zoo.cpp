//===- Zoo.cpp - The table of model generators ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Zoo/Zoo.h"

#include "Models.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace remat {
using namespace zoo;

/// Every model, sorted by name.
static std::vector<ZooModel> allModels() {
  std::vector<ZooModel> models = {
      denseNetModel(), lstmModel(),        mlpModel(),  mobileNetV2Model(),
      resNetModel(),   transformerModel(), uNetModel(), vggModel()};
  llvm::sort(models, [](const ZooModel &a, const ZooModel &b) {
    return a.info.name < b.info.name;
  });
  return models;
}

std::vector<ZooModelInfo> listZooModels() {
  std::vector<ZooModelInfo> infos;
  for (ZooModel &model : allModels())
    infos.push_back(std::move(model.info));
  return infos;
}

absl::StatusOr<std::unique_ptr<Graph>>
buildZooModel(llvm::StringRef name, const ZooOptions &options) {
  std::vector<ZooModel> models = allModels();
  for (const ZooModel &model : models) {
    if (model.info.name != name)
      continue;
    OptionReader reader(name, options, model.info.options);
    REMAT_RETURN_IF_ERROR(reader.checkKnown());
    return model.build(reader);
  }
  std::vector<std::string> names;
  for (const ZooModel &model : models)
    names.push_back(model.info.name);
  return invalidArgument("unknown zoo model '{}' (models: {})", name.str(),
                         fmt::join(names, ", "));
}

} // namespace remat
