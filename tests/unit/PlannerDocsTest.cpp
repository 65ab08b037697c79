//===- PlannerDocsTest.cpp - docs/planners.md against the registry --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// The tables of docs/planners.md that name planners are written by hand and
// checked here against the global registry and Planners.def: a planner added
// without its row, or a rank changed in one place only, fails.
//
//===----------------------------------------------------------------------===//

#include "remat/Pass/Planner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace remat {
namespace {

using ::testing::ElementsAreArray;

/// The rows of docs/planners.md's tables, each as its cells, trimmed.
std::vector<std::vector<std::string>> tableRows() {
  std::ifstream in(REMAT_DOCS_DIR "/planners.md");
  EXPECT_TRUE(in) << REMAT_DOCS_DIR "/planners.md";
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    llvm::StringRef text(line);
    if (!text.consume_front("|") || text.startswith("---"))
      continue;
    llvm::SmallVector<llvm::StringRef, 4> cells;
    text.split(cells, '|', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    std::vector<std::string> row;
    for (llvm::StringRef cell : cells)
      row.push_back(cell.trim().str());
    rows.push_back(std::move(row));
  }
  return rows;
}

/// The `code` spans of `cell`, in order.
std::vector<std::string> codeSpans(llvm::StringRef cell) {
  llvm::SmallVector<llvm::StringRef, 8> pieces;
  cell.split(pieces, '`');
  std::vector<std::string> spans;
  for (size_t i = 1; i < pieces.size(); i += 2)
    spans.push_back(pieces[i].str());
  return spans;
}

/// The planner a spelling of the planner table names (`sqrtn[=K]`: `sqrtn`).
std::string plannerOf(llvm::StringRef spelling) {
  return spelling.take_until([](char c) { return c == '=' || c == '['; })
      .str();
}

/// The third cell of the `PlannerSearchInfo` table's row of `field`, as its
/// code spans.
std::vector<std::string> setBy(llvm::StringRef field) {
  for (const std::vector<std::string> &row : tableRows())
    if (row.size() == 3 && row[0] == "`" + field.str() + "`")
      return codeSpans(row[2]);
  ADD_FAILURE() << "no row of " << field.str();
  return {};
}

/// The registry's planners whose search info satisfies `pred`.
template <typename Pred> std::vector<std::string> plannersWhere(Pred pred) {
  std::vector<std::string> names;
  for (const PlannerInfo *planner : PlannerRegistry::global().all())
    if (pred(planner->search))
      names.push_back(planner->name);
  return names;
}

TEST(PlannerDocsTest, ThePlannerTableListsEveryPlannerInOrder) {
  std::vector<std::string> documented;
  for (const std::vector<std::string> &row : tableRows()) {
    if (row.size() != 3 || row[1] == "plan")
      continue;
    if (row[0].empty() || row[0][0] != '`' || row[2].empty())
      continue;
    for (const std::string &spelling : codeSpans(row[0])) {
      std::string name = plannerOf(spelling);
      if (documented.empty() || documented.back() != name)
        documented.push_back(name);
    }
    if (documented.back() == "auto")
      break;
  }
  std::vector<std::string> registered;
  for (const PlannerInfo *planner : PlannerRegistry::global().all())
    registered.push_back(planner->name);
  registered.push_back("auto");
  EXPECT_THAT(documented, ElementsAreArray(registered));
}

TEST(PlannerDocsTest, TheSearchInfoTableSaysWhoSetsEachField) {
  EXPECT_THAT(setBy("takesBudget"),
              ElementsAreArray(plannersWhere(
                  [](const PlannerSearchInfo &s) { return s.takesBudget; })));
  EXPECT_THAT(setBy("sweptAtBudgets"),
              ElementsAreArray(plannersWhere([](const PlannerSearchInfo &s) {
                return s.takesBudget && !s.sweptAtBudgets;
              })));
  EXPECT_THAT(setBy("modelsMemory"),
              ElementsAreArray(plannersWhere(
                  [](const PlannerSearchInfo &s) { return s.modelsMemory; })));
  EXPECT_THAT(setBy("calibratedInSearch"),
              ElementsAreArray(plannersWhere([](const PlannerSearchInfo &s) {
                return s.calibratedInSearch;
              })));
  EXPECT_THAT(setBy("ilpWarmStarts"),
              ElementsAreArray(PlannerRegistry::global().ilpWarmStarts()));
}

TEST(PlannerDocsTest, TheRankTableIsPlannersDef) {
  std::vector<std::pair<int, std::string>> declared = {
#define REMAT_AUTO_RANK(NAME, RANK, SPELLING) {RANK, SPELLING},
#include "Planning/Planners.def"
  };
  std::vector<std::pair<int, std::string>> documented;
  for (const std::vector<std::string> &row : tableRows()) {
    int rank = 0;
    std::vector<std::string> spans =
        row.size() == 2 ? codeSpans(row[1]) : std::vector<std::string>{};
    if (spans.size() == 1 && !llvm::StringRef(row[0]).getAsInteger(10, rank))
      documented.emplace_back(rank, spans.front());
  }
  EXPECT_THAT(documented, ElementsAreArray(declared));
}

} // namespace
} // namespace remat
