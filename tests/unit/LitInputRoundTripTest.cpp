//===- LitInputRoundTripTest.cpp - Every lit input prints back the same ------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Every graph in the lit inputs that parses must print, parse and print again
/// to the same text. Lit files hold several graphs separated by `// -----`;
/// the chunks that are meant to fail (error tests) do not parse and are not
/// graphs to round-trip, but the test insists that most chunks are graphs.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"

#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#ifndef REMAT_LIT_DIR
#error "REMAT_LIT_DIR must name tests/lit"
#endif

namespace remat {
namespace {

std::vector<std::string> litChunks(const std::filesystem::path &file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> chunks(1);
  std::string line;
  while (std::getline(text, line)) {
    if (llvm::StringRef(line).startswith("// -----"))
      chunks.emplace_back();
    else
      chunks.back() += line + "\n";
  }
  return chunks;
}

TEST(LitInputRoundTripTest, EveryParsedGraphPrintsBackTheSame) {
  int graphs = 0, chunks = 0;
  std::vector<std::filesystem::path> files;
  for (const auto &entry :
       std::filesystem::recursive_directory_iterator(REMAT_LIT_DIR))
    if (entry.path().extension() == ".remat")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path &file : files) {
    for (const std::string &chunk : litChunks(file)) {
      ++chunks;
      absl::StatusOr<std::unique_ptr<Graph>> graph =
          parseGraph(chunk, file.string());
      if (!graph.ok())
        continue;
      ++graphs;
      std::string printed = printGraph(**graph);
      absl::StatusOr<std::unique_ptr<Graph>> reparsed =
          parseGraph(printed, file.string());
      ASSERT_TRUE(reparsed.ok()) << file << ": " << reparsed.status();
      EXPECT_EQ(printGraph(**reparsed), printed) << file;
    }
  }
  // The lit suite is mostly graphs to transform; a handful of chunks are
  // error cases. Fewer graphs than that means the test has stopped looking.
  EXPECT_GT(graphs * 2, chunks) << graphs << " graphs of " << chunks
                                << " chunks in " << files.size() << " files";
}

} // namespace
} // namespace remat
