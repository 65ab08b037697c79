//===- MalformedInputTest.cpp - The malformed-input corpus ----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Parses every `tests/malformed/*.remat`. Each file starts with
/// `// expected-error: LINE:COL: text`; parsing must fail at exactly that
/// location with a message containing `text`.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/TextFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#ifndef REMAT_MALFORMED_DIR
#error "REMAT_MALFORMED_DIR must name tests/malformed"
#endif

namespace remat {
namespace {

std::vector<std::string> malformedFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &entry :
       std::filesystem::directory_iterator(REMAT_MALFORMED_DIR, ec))
    if (entry.path().extension() == ".remat")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

class MalformedInputTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MalformedInputTest, FailsAtTheExpectedLocation) {
  const std::string &path = GetParam();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  ASSERT_TRUE(buffer) << path << ": " << buffer.getError().message();
  llvm::StringRef text = (*buffer)->getBuffer();

  constexpr llvm::StringLiteral kPrefix = "// expected-error: ";
  llvm::StringRef firstLine = text.split('\n').first.rtrim('\r');
  ASSERT_TRUE(firstLine.startswith(kPrefix))
      << path << " must start with '" << kPrefix.str() << "LINE:COL: text'";
  llvm::StringRef expectation = firstLine.drop_front(kPrefix.size());
  auto [lineText, rest] = expectation.split(':');
  auto [columnText, substring] = rest.split(':');
  unsigned line = 0, column = 0;
  ASSERT_FALSE(lineText.getAsInteger(10, line)) << path;
  ASSERT_FALSE(columnText.getAsInteger(10, column)) << path;
  substring = substring.trim();
  ASSERT_FALSE(substring.empty()) << path;

  absl::StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, path);
  ASSERT_FALSE(graph.ok()) << path << " parsed without error";
  std::string message(graph.status().message());
  std::string location = path + ":" + std::to_string(line) + ":" +
                         std::to_string(column) + ": error: ";
  EXPECT_TRUE(llvm::StringRef(message).startswith(location))
      << "expected location " << location << "\n  got: " << message;
  EXPECT_NE(message.find(substring.str()), std::string::npos)
      << "expected '" << substring.str() << "'\n  got: " << message;
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedInputTest,
                         ::testing::ValuesIn(malformedFiles()), testName);

TEST(MalformedCorpusTest, HasAtLeastFortyFiveFiles) {
  EXPECT_GE(malformedFiles().size(), 45u) << "in " << REMAT_MALFORMED_DIR;
}

} // namespace
} // namespace remat
