//===- IndexingKernelsTest.cpp - embedding, gather, gather_grad -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelCheckUtil.h"
#include "KernelTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat::test {
namespace {

using ::testing::ElementsAre;

// A [3, 2] table whose row r is [10r, 10r + 1].
HostTensor table() { return f32({3, 2}, {0, 1, 10, 11, 20, 21}); }

TEST(IndexingKernelsTest, EmbeddingPicksRows) {
  HostTensor y = runOne("embedding", {table(), i32({2, 2}, {2, 0, 1, 1})});
  EXPECT_EQ(y.type(), Type(DType::F32, {2, 2, 2}));
  EXPECT_THAT(toDoubles(y), ElementsAre(20, 21, 0, 1, 10, 11, 10, 11));
  // i8 and i64 ids work the same.
  EXPECT_THAT(toDoubles(runOne("embedding",
                               {table(), makeTensor(DType::I8, {1}, {2})})),
              ElementsAre(20, 21));
  EXPECT_THAT(toDoubles(runOne("embedding", {table(), i64({1}, {1})})),
              ElementsAre(10, 11));
}

TEST(IndexingKernelsTest, EmbeddingRejectsOutOfRangeIds) {
  EXPECT_EQ(kernelError("embedding", {table(), i32({3}, {0, 3, 1})}),
            "embedding id 3 is out of range [0, 3)");
  EXPECT_EQ(kernelError("embedding", {table(), i64({1}, {-1})}),
            "embedding id -1 is out of range [0, 3)");
}

TEST(IndexingKernelsTest, GatherAlongAxis1) {
  // x [2,3] = [[0,1,2],[3,4,5]]; indices [2,0,2] along axis 1 pick columns.
  HostTensor x = i64({2, 3}, {0, 1, 2, 3, 4, 5});
  HostTensor y =
      runOne("gather", {x, i32({3}, {2, 0, 2})}, {{"axis", 1}});
  EXPECT_EQ(y.type(), Type(DType::I64, {2, 3}));
  EXPECT_THAT(toDoubles(y), ElementsAre(2, 0, 2, 5, 3, 5));
  // Indices of rank 2 along axis 0: y [1,2,3] holds rows 1 and 0.
  HostTensor rows = runOne("gather", {x, i32({1, 2}, {1, 0})});
  EXPECT_EQ(rows.type(), Type(DType::I64, {1, 2, 3}));
  EXPECT_THAT(toDoubles(rows), ElementsAre(3, 4, 5, 0, 1, 2));
}

TEST(IndexingKernelsTest, GatherRejectsOutOfRangeIndices) {
  HostTensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(kernelError("gather", {x, i32({1}, {3})}, {{"axis", 1}}),
            "gather index 3 is out of range [0, 3)");
  EXPECT_EQ(kernelError("gather", {x, i32({1}, {2})}),
            "gather index 2 is out of range [0, 2)");
}

TEST(IndexingKernelsTest, GatherGradAddsRepeatedIndices) {
  // Embedding's gradient: rows of dy [3,2] added into zeros [4,2] at ids
  // [1, 3, 1], so row 1 gets [1,2] + [5,6] = [6,8] and row 3 gets [3,4].
  HostTensor dy = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  HostTensor dx = runOne("gather_grad", {i32({3}, {1, 3, 1}), dy},
                         {{"axis", 0}, {"size", 4}});
  EXPECT_EQ(dx.type(), Type(DType::F32, {4, 2}));
  EXPECT_THAT(toDoubles(dx), ElementsAre(0, 0, 6, 8, 0, 0, 3, 4));
}

TEST(IndexingKernelsTest, GatherGradMatchesFiniteDifferences) {
  // gather is linear in x, so its differences are exact up to rounding.
  HostTensor x = randomTensor(DType::F64, {2, 4, 3}, 31);
  HostTensor indices = i32({2, 3}, {3, 0, 3, 1, 1, 2});
  AttrList attrs = {{"axis", 1}};
  HostTensor dy = randomTensor(DType::F64, {2, 2, 3, 3}, 32);
  HostTensor dx = runOne("gather_grad", {indices, dy},
                         {{"axis", 1}, {"size", 4}});
  EXPECT_EQ(dx.type(), Type(DType::F64, {2, 4, 3}));
  expectMatchesFiniteDifferences(dx, "gather", {x, indices}, 0, dy, attrs,
                                 "gather_grad");
}

TEST(IndexingKernelsTest, GatherGradRejectsOutOfRangeIndices) {
  EXPECT_EQ(kernelError("gather_grad", {i32({1}, {4}), f32({1, 2}, {1, 2})},
                        {{"size", 4}}),
            "gather_grad index 4 is out of range [0, 4)");
}

TEST(IndexingKernelsTest, ZeroElementTensors) {
  EXPECT_EQ(runOne("embedding", {table(), i32({0}, {})}).numel(), 0);
  HostTensor dx = runOne("gather_grad", {i32({0}, {}), f32({0, 2}, {})},
                         {{"size", 3}});
  EXPECT_THAT(toDoubles(dx), ElementsAre(0, 0, 0, 0, 0, 0));
}

} // namespace
} // namespace remat::test
