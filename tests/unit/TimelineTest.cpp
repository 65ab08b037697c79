//===- TimelineTest.cpp - Runs of steps of the memory timeline ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/Timeline.h"

#include <gtest/gtest.h>

#include <vector>

namespace remat {
namespace {

TEST(TimelineBucketTest, BucketsTileTheStepsAndKeepThePeak) {
  // 10 steps in 3 buckets: [0,3) [3,6) [6,10); the peak 9 at step 4 is the
  // middle bucket's height, and the first of two equal maxima wins.
  std::vector<int64_t> totals = {1, 5, 5, 2, 9, 0, 3, 7, 7, 1};
  std::vector<TimelineBucket> buckets = bucketSteps(
      int64_t(totals.size()), 3, [&](int64_t step) { return totals[step]; });
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].firstStep, 0);
  EXPECT_EQ(buckets[0].endStep, 3);
  EXPECT_EQ(buckets[0].peakStep, 1);
  EXPECT_EQ(buckets[1].firstStep, 3);
  EXPECT_EQ(buckets[1].endStep, 6);
  EXPECT_EQ(buckets[1].peakStep, 4);
  EXPECT_EQ(buckets[2].firstStep, 6);
  EXPECT_EQ(buckets[2].endStep, 10);
  EXPECT_EQ(buckets[2].peakStep, 7);
}

TEST(TimelineBucketTest, FewerStepsThanBucketsGiveOneBucketEach) {
  std::vector<TimelineBucket> buckets =
      bucketSteps(4, 2000, [](int64_t step) { return step; });
  ASSERT_EQ(buckets.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(buckets[i].firstStep, i);
    EXPECT_EQ(buckets[i].endStep, i + 1);
    EXPECT_EQ(buckets[i].peakStep, i);
  }
  EXPECT_TRUE(bucketSteps(0, 2000, [](int64_t) { return 0; }).empty());
}

} // namespace
} // namespace remat
