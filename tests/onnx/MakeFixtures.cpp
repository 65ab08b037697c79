//===- MakeFixtures.cpp - Writes the test ONNX models -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat-onnx-fixtures DIR` writes every model of OnnxTestModels.h to
/// DIR/NAME.onnx (and the external data files beside them), for the CLI
/// tests and as the import fuzzer's seeds.
///
//===----------------------------------------------------------------------===//

#include "OnnxTestModels.h"

#include <cstdio>
#include <fstream>
#include <string>

namespace {

bool write(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out)
    std::fprintf(stderr, "remat-onnx-fixtures: cannot write %s\n", path.c_str());
  return bool(out);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: remat-onnx-fixtures DIR\n");
    return 1;
  }
  using namespace remat::testing;
  std::string dir = std::string(argv[1]) + "/";
  auto models = allTestModels();
  for (auto &model : unsupportedModels())
    models.push_back(std::move(model));
  for (const auto &[name, bytes] : models)
    if (!write(dir + name + ".onnx", bytes))
      return 1;
  for (const auto &[fileName, bytes] : externalDataFiles())
    if (!write(dir + fileName, bytes))
      return 1;
  return 0;
}
