//===- MakeFixtures.cpp - Writes the test ONNX models -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat-onnx-fixtures DIR` writes every model of OnnxTestModels.h to
/// DIR/NAME.onnx, for the CLI tests and as the import fuzzer's seeds.
///
//===----------------------------------------------------------------------===//

#include "OnnxTestModels.h"

#include <cstdio>
#include <fstream>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: remat-onnx-fixtures DIR\n");
    return 1;
  }
  for (const auto &[name, bytes] : remat::testing::allTestModels()) {
    std::ofstream out(std::string(argv[1]) + "/" + name + ".onnx",
                      std::ios::binary);
    out << bytes;
    if (!out) {
      std::fprintf(stderr, "remat-onnx-fixtures: cannot write %s\n",
                   name.c_str());
      return 1;
    }
  }
  return 0;
}
