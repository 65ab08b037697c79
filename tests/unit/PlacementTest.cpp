//===- PlacementTest.cpp - Devices of values, per-device memory -------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Placement.h"

#include "remat/IO/TextFormat.h"
#include "remat/IR/Graph.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace remat {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Graph> parse(llvm::StringRef text) {
  auto graph = parseGraph(text, "test");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

// Two devices: each relus the replicated input, the all_reduce sums the two,
// gpu:1 sends its copy of the sum back to gpu:0, which adds the two.
constexpr llvm::StringLiteral kTwoDevices = R"(graph @two {
  input %x : f32[4]
  %a = relu(%x) device "gpu:0"
  %b = relu(%x) device "gpu:1"
  %s0, %s1 = all_reduce(%a, %b)
  %t = transfer(%s1) {to = "gpu:0"}
  %u = add(%s0, %t) device "gpu:0"
  output %u
})";

TEST(PlacementTest, PlacesEveryValue) {
  auto graph = parse(kTwoDevices);
  ASSERT_TRUE(graph);
  absl::StatusOr<Placement> placement = computePlacement(*graph);
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_THAT(placement->devices, ElementsAre("gpu:0", "gpu:1"));
  auto deviceOf = [&](llvm::StringRef name) {
    return placement->valueDevice[graph->lookupValue(name)->id()];
  };
  EXPECT_EQ(deviceOf("x"), Placement::kReplicated);
  EXPECT_EQ(deviceOf("a"), 0);
  EXPECT_EQ(deviceOf("b"), 1);
  EXPECT_EQ(deviceOf("s0"), 0);
  EXPECT_EQ(deviceOf("s1"), 1);
  EXPECT_EQ(deviceOf("t"), 0);
  EXPECT_EQ(deviceOf("u"), 0);
}

TEST(PlacementTest, ProfilesEachDevice) {
  auto graph = parse(kTwoDevices);
  ASSERT_TRUE(graph);
  absl::StatusOr<Placement> placement = computePlacement(*graph);
  ASSERT_TRUE(placement.ok()) << placement.status();
  std::vector<DeviceProfile> profiles = profileDevices(*graph, *placement);
  ASSERT_EQ(profiles.size(), 2u);
  // gpu:0 at the last step: %x (replicated), %s0, %t and %u, 16 bytes each.
  EXPECT_EQ(profiles[0].peakBytes, 64);
  // gpu:1 at the all_reduce: %x, %b and %s1.
  EXPECT_EQ(profiles[1].peakBytes, 48);
  // Each contributes 16 bytes to the all_reduce; gpu:1 also sends %s1.
  EXPECT_EQ(profiles[0].bytesSent, 16);
  EXPECT_EQ(profiles[0].transfersSent, 0);
  EXPECT_EQ(profiles[0].collectiveCalls, 1);
  EXPECT_EQ(profiles[1].bytesSent, 32);
  EXPECT_EQ(profiles[1].transfersSent, 1);
  EXPECT_EQ(profiles[1].collectiveCalls, 1);
}

TEST(PlacementTest, RefusesAReadAcrossDevices) {
  auto graph = parse(R"(graph @cross {
  input %x : f32[4]
  %a = relu(%x) device "gpu:0"
  %b = relu(%a) device "gpu:1"
  output %b
})");
  ASSERT_TRUE(graph);
  absl::StatusOr<Placement> placement = computePlacement(*graph);
  ASSERT_FALSE(placement.ok());
  EXPECT_THAT(placement.status().message(),
              HasSubstr("test:4:3: error: '%b = relu': reads %a of gpu:0 on "
                        "gpu:1; values cross devices only through 'transfer' "
                        "or 'all_reduce'"));
}

TEST(PlacementTest, RefusesAnAllReduceWithTwoOperandsOnOneDevice) {
  auto graph = parse(R"(graph @twice {
  input %x : f32[4]
  %a = relu(%x) device "gpu:0"
  %b = relu(%x) device "gpu:0"
  %s, %t = all_reduce(%a, %b)
  output %s
})");
  ASSERT_TRUE(graph);
  absl::StatusOr<Placement> placement = computePlacement(*graph);
  ASSERT_FALSE(placement.ok());
  EXPECT_THAT(placement.status().message(),
              HasSubstr("'all_reduce' has two operands on gpu:0"));
}

TEST(PlacementTest, RefusesADeviceWithoutANumber) {
  auto graph = parse(R"(graph @named {
  input %x : f32[4]
  %a = relu(%x) device "gpu"
  output %a
})");
  ASSERT_TRUE(graph);
  absl::StatusOr<Placement> placement = computePlacement(*graph);
  ASSERT_FALSE(placement.ok());
  EXPECT_THAT(placement.status().message(),
              HasSubstr("device 'gpu' is not of the form <kind>:<number>"));
  absl::StatusOr<int> number = deviceNumber("gpu:12");
  ASSERT_TRUE(number.ok());
  EXPECT_EQ(*number, 12);
}

} // namespace
} // namespace remat
