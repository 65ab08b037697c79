//===- ParserFuzzer.cpp - libFuzzer target for the text IR parser ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Feeds arbitrary bytes to parseGraph. Any input must give either a located
/// error or a graph whose canonical text parses back and prints identically;
/// anything else (a crash, a sanitizer report, an unlocated error, a broken
/// round trip) aborts so that libFuzzer records the input.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "parser fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<std::unique_ptr<remat::Graph>> graph =
      remat::parseGraph(text, "fuzz");
  if (!graph.ok()) {
    std::string message(graph.status().message());
    if (message.rfind("fuzz:", 0) != 0 ||
        message.find(": error: ") == std::string::npos)
      fail("error without a location", message);
    return 0;
  }
  std::string printed = remat::printGraph(**graph);
  absl::StatusOr<std::unique_ptr<remat::Graph>> reparsed =
      remat::parseGraph(printed, "printed");
  if (!reparsed.ok())
    fail("printed text does not parse",
         std::string(reparsed.status().message()) + "\n" + printed);
  std::string reprinted = remat::printGraph(**reparsed);
  if (reprinted != printed)
    fail("print(parse(print(g))) differs from print(g)",
         printed + "---\n" + reprinted);
  return 0;
}
