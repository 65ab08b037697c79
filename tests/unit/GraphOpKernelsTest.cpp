//===- GraphOpKernelsTest.cpp - Fills and add_n -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace remat::test {
namespace {

using ::testing::ElementsAre;

TEST(GraphOpKernelsTest, ConstantFillsItsDType) {
  absl::StatusOr<std::vector<HostTensor>> c = runKernel(
      "constant", {}, {{"value", 2.5}, {"shape", {2, 2}}, {"dtype", "f64"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].type(), Type(DType::F64, {2, 2}));
  EXPECT_THAT(toDoubles((*c)[0]), ElementsAre(2.5, 2.5, 2.5, 2.5));
  // Integers truncate toward zero and saturate.
  c = runKernel("constant", {}, {{"value", -2.7}, {"dtype", "i32"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].at(0), -2);
  c = runKernel("constant", {}, {{"value", 1e10}, {"dtype", "i8"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].at(0), 127);
  c = runKernel("constant", {}, {{"value", 1.0}, {"dtype", "bool"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].at(0), 1);
}

TEST(GraphOpKernelsTest, ZerosAndOnesLike) {
  HostTensor x = i64({3}, {5, 6, 7});
  EXPECT_THAT(toDoubles(runOne("zeros_like", {x})), ElementsAre(0, 0, 0));
  EXPECT_THAT(toDoubles(runOne("ones_like", {x})), ElementsAre(1, 1, 1));
  // The harness poisons results with NaN: zeros_like must write every one.
  EXPECT_THAT(toDoubles(runOne("zeros_like", {f32({2}, {9, 9})})),
              ElementsAre(0, 0));
}

TEST(GraphOpKernelsTest, AddNSumsLeftToRight) {
  // In f32, 1e8 + 1 rounds to 1e8, then - 1e8 gives 0; the same as
  // add_n(add_n(a, b), c), bit for bit.
  HostTensor a = f32({1}, {1e8});
  HostTensor b = f32({1}, {1});
  HostTensor c = f32({1}, {-1e8});
  HostTensor all = runOne("add_n", {a, b, c});
  HostTensor nested = runOne("add_n", {runOne("add_n", {a, b}), c});
  EXPECT_EQ(all.at(0), 0);
  float x = all.values<float>()[0], y = nested.values<float>()[0];
  EXPECT_EQ(std::memcmp(&x, &y, sizeof(float)), 0);
  EXPECT_THAT(toDoubles(runOne("add_n", {i32({2}, {1, 2})})),
              ElementsAre(1, 2));
  // Integers wrap.
  constexpr double kMax = std::numeric_limits<int32_t>::max();
  EXPECT_THAT(toDoubles(runOne("add_n", {i32({1}, {kMax}), i32({1}, {1})})),
              ElementsAre(std::numeric_limits<int32_t>::min()));
}

} // namespace
} // namespace remat::test
