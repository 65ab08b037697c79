//===- RandomTest.cpp - Counter-based random numbers and dropout ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Random.h"

#include "KernelTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace remat::test {
namespace {

using ::testing::ElementsAre;

TEST(RandomTest, PhiloxKnownAnswer) {
  // Random123's known-answer vector for Philox4x32-10 with a zero counter and
  // a zero key (kat_vectors: "philox4x32 10 0 0 0 0 0 0 -> 6627e8d5
  // e169c58d bc57ac4c 9b00dbd8").
  EXPECT_THAT(randomBlock(0, 0),
              ElementsAre(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
}

TEST(RandomTest, ElementsAreWordsOfBlocks) {
  for (uint64_t index : {0u, 1u, 3u, 4u, 7u, 1001u}) {
    EXPECT_EQ(randomBits(42, index), randomBlock(42, index / 4)[index % 4]);
  }
}

TEST(RandomTest, FilledRangesMatchElements) {
  // A range starting mid-block (index 5) and ending mid-block (index 18).
  std::vector<uint32_t> bits(14);
  fillRandomBits(42, 5, bits);
  for (uint64_t j = 0; j < bits.size(); ++j)
    EXPECT_EQ(bits[j], randomBits(42, 5 + j)) << j;
  // Shorter than one block, inside one.
  std::vector<uint32_t> two(2);
  fillRandomBits(42, 9, two);
  EXPECT_THAT(two, ElementsAre(randomBits(42, 9), randomBits(42, 10)));
}

TEST(RandomTest, DeterministicAndKeyed) {
  EXPECT_EQ(randomBits(7, 123), randomBits(7, 123));
  // Different keys, and different indices, give different streams: among
  // 64 draws of each, collisions of 32-bit values are vanishingly rare.
  std::set<uint32_t> seen;
  for (uint64_t key : {7u, 8u})
    for (uint64_t i = 0; i < 64; ++i)
      seen.insert(randomBits(key, i));
  EXPECT_EQ(seen.size(), 128u);
  // A key's high word matters too.
  EXPECT_NE(randomBits(uint64_t(1) << 32, 0), randomBits(0, 0));
}

TEST(RandomTest, UniformIsInUnitInterval) {
  double sum = 0;
  constexpr int n = 10000;
  for (int i = 0; i < n; ++i) {
    double u = randomUniform(3, i);
    ASSERT_GE(u, 0);
    ASSERT_LT(u, 1);
    sum += u;
  }
  // Mean 1/2 with standard error sqrt(1/12 / n) ~ 0.003.
  EXPECT_NEAR(sum / n, 0.5, 0.015);
}

TEST(RandomTest, DropoutKeepsAboutOneMinusRate) {
  // Binomial(1e5, 0.7): standard deviation sqrt(1e5 * 0.21) ~ 145, i.e.
  // 0.0015 of the fraction; allow 0.01.
  constexpr int n = 100000;
  for (double rate : {0.3, 0.9}) {
    int kept = 0;
    for (int i = 0; i < n; ++i)
      kept += dropoutKeeps(5, i, rate);
    EXPECT_NEAR(double(kept) / n, 1 - rate, 0.01) << "rate " << rate;
  }
  for (int i = 0; i < 1000; ++i)
    ASSERT_TRUE(dropoutKeeps(5, i, 0.0));
}

TEST(RandomTest, DropoutThreshold) {
  // round(rate * 2^32).
  EXPECT_EQ(dropoutThreshold(0), 0u);
  EXPECT_EQ(dropoutThreshold(0.5), uint64_t(1) << 31);
  EXPECT_EQ(dropoutThreshold(0.25), uint64_t(1) << 30);
}

TEST(RandomTest, StreamKeys) {
  EXPECT_EQ(streamKey(1, "w"), streamKey(1, "w"));
  EXPECT_NE(streamKey(1, "w"), streamKey(2, "w"));
  EXPECT_NE(streamKey(1, "w"), streamKey(1, "b"));
  // The seed's bytes and the name's do not run together: seed 0 with name
  // "\x01" differs from seed 1 with the empty name.
  EXPECT_NE(streamKey(0, llvm::StringRef("\x01", 1)), streamKey(1, ""));
}

TEST(RandomTest, DropoutKernelFollowsTheMask) {
  constexpr int64_t n = 1003; // Not a multiple of 4: the last block is partial.
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = 1 + i % 7;
  AttrList attrs = {{"rate", 0.25}, {"seed", 99}};
  HostTensor x32 = f32({n}, values);
  HostTensor x64 = f64({n}, values);
  HostTensor y32 = runOne("dropout", {x32}, attrs);
  HostTensor y64 = runOne("dropout", {x64}, attrs);
  // scale = 1 / (1 - 0.25) = 4/3, rounded in each dtype.
  float scale32 = 1.0f / 0.75f;
  double scale64 = 1.0 / 0.75;
  for (int64_t i = 0; i < n; ++i) {
    bool keep = dropoutKeeps(99, i, 0.25);
    EXPECT_EQ(y32.at(i), keep ? double(float(values[i]) * scale32) : 0) << i;
    EXPECT_EQ(y64.at(i), keep ? values[i] * scale64 : 0) << i;
  }
}

TEST(RandomTest, DropoutGradientReplaysTheMask) {
  // The gradient of dropout is dropout of dy with the same seed and rate:
  // dropout(ones) is the mask times the scale, and dropout(x) = x * that.
  AttrList attrs = {{"rate", 0.5}, {"seed", 3}};
  HostTensor x = randomTensor(DType::F64, {64}, 51);
  HostTensor ones = f64({64}, std::vector<double>(64, 1.0));
  HostTensor y = runOne("dropout", {x}, attrs);
  HostTensor mask = runOne("dropout", {ones}, attrs);
  for (int64_t i = 0; i < 64; ++i)
    EXPECT_EQ(y.at(i), x.at(i) * mask.at(i));
}

TEST(RandomTest, DropoutOfNothing) {
  EXPECT_EQ(runOne("dropout", {f32({0}, {})}, {{"rate", 0.5}, {"seed", 1}})
                .numel(),
            0);
}

} // namespace
} // namespace remat::test
