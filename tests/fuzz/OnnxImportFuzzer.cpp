//===- OnnxImportFuzzer.cpp - libFuzzer target for the ONNX importer -------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Feeds arbitrary bytes to `importOnnx` and `readOnnxTensors` as ModelProto:
/// either may fail, with one located line, but must never crash, hang or
/// trip the sanitizers. Seeded with the test models (`remat-onnx-fixtures`).
///
//===----------------------------------------------------------------------===//

#include "remat/IO/Onnx.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  remat::OnnxImportOptions options;
  options.loss = remat::OnnxLoss::Sum;
  auto graph = remat::importOnnx(bytes, "fuzz.onnx", options);
  if (!graph.ok() && !llvm::StringRef(graph.status().message().data(),
                                      graph.status().message().size())
                          .startswith("fuzz.onnx: error: "))
    std::abort();
  (void)remat::readOnnxTensors(bytes, "fuzz.onnx");
  return 0;
}
