//===- UnitsTest.cpp - Byte sizes with units --------------------------------===//

#include "remat/Support/Units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace remat {
namespace {

using ::testing::HasSubstr;

int64_t parsed(llvm::StringRef text, std::optional<int64_t> baseline = {}) {
  absl::StatusOr<int64_t> bytes = parseByteSize(text, baseline);
  EXPECT_TRUE(bytes.ok()) << text.str() << ": " << bytes.status();
  return bytes.ok() ? *bytes : -1;
}

std::string errorOf(llvm::StringRef text,
                    std::optional<int64_t> baseline = {}) {
  absl::StatusOr<int64_t> bytes = parseByteSize(text, baseline);
  EXPECT_FALSE(bytes.ok()) << text.str() << " parsed as " << *bytes;
  return bytes.ok() ? "" : std::string(bytes.status().message());
}

TEST(UnitsTest, ParsesPlainBytesAndUnits) {
  EXPECT_EQ(parsed("0"), 0);
  EXPECT_EQ(parsed("1048576"), 1048576);
  EXPECT_EQ(parsed("17B"), 17);
  // 512 * 2^20.
  EXPECT_EQ(parsed("512MiB"), 536870912);
  // Decimal units are powers of 1000: 2 * 10^9.
  EXPECT_EQ(parsed("2GB"), 2000000000);
  EXPECT_EQ(parsed("3kB"), 3000);
  EXPECT_EQ(parsed("64KiB"), 65536);
  // 2^40.
  EXPECT_EQ(parsed("1TiB"), 1099511627776);
  EXPECT_EQ(parsed("1TB"), 1000000000000);
}

TEST(UnitsTest, UnitsAreCaseInsensitiveAndMayFollowSpaces) {
  EXPECT_EQ(parsed("512mib"), 536870912);
  EXPECT_EQ(parsed(" 4 KiB "), 4096);
  EXPECT_EQ(parsed("2 gb"), 2000000000);
}

TEST(UnitsTest, FractionsRoundDownToWholeBytes) {
  // 1.5 * 2^30 = 1610612736 exactly.
  EXPECT_EQ(parsed("1.5GiB"), 1610612736);
  // 0.001 * 1000 = 1.
  EXPECT_EQ(parsed("0.001KB"), 1);
  // 1.5 bytes rounds down to 1; 0.3 KiB = 307.2 bytes rounds down to 307.
  EXPECT_EQ(parsed("1.5"), 1);
  EXPECT_EQ(parsed("0.3KiB"), 307);
}

TEST(UnitsTest, PercentagesAreOfTheBaseline) {
  // 40% of 1000 bytes.
  EXPECT_EQ(parsed("40%", 1000), 400);
  // 40% of 1001 = 400.4 rounds down.
  EXPECT_EQ(parsed("40%", 1001), 400);
  EXPECT_EQ(parsed("12.5%", 1024), 128);
  EXPECT_EQ(parsed("100%", 123456789), 123456789);
  EXPECT_EQ(parsed("150 %", 100), 150);
  // 50% of the largest int64 must not overflow: (2^63 - 1) / 2 rounded down.
  EXPECT_EQ(parsed("50%", std::numeric_limits<int64_t>::max()),
            std::numeric_limits<int64_t>::max() / 2);
}

TEST(UnitsTest, RejectsMalformedSizes) {
  EXPECT_THAT(errorOf(""), HasSubstr("expected a number"));
  EXPECT_THAT(errorOf("MiB"), HasSubstr("invalid size 'MiB'"));
  EXPECT_THAT(errorOf("-5MiB"), HasSubstr("non-negative"));
  EXPECT_THAT(errorOf("1.GiB"), HasSubstr("digits after '.'"));
  EXPECT_THAT(errorOf(".5GiB"), HasSubstr("invalid size"));
  EXPECT_THAT(errorOf("12XB"), HasSubstr("unknown unit 'XB'"));
  EXPECT_THAT(errorOf("1e9"), HasSubstr("unknown unit 'e9'"));
  EXPECT_THAT(errorOf("40%"), HasSubstr("needs a baseline"));
  EXPECT_THAT(errorOf("1 2 MiB"), HasSubstr("unknown unit '2 MiB'"));
}

TEST(UnitsTest, RejectsSizesBeyondInt64) {
  // 2^63 bytes is one more than int64 holds.
  EXPECT_THAT(errorOf("9223372036854775808"), HasSubstr("more than"));
  EXPECT_EQ(parsed("9223372036854775807"), std::numeric_limits<int64_t>::max());
  // 2^23 TiB = 2^63 bytes.
  EXPECT_THAT(errorOf("8388608TiB"), HasSubstr("more than"));
  EXPECT_THAT(errorOf("99999999999999999999999999999GiB"),
              HasSubstr("more than"));
  EXPECT_THAT(errorOf("200%", std::numeric_limits<int64_t>::max()),
              HasSubstr("more than"));
}

TEST(UnitsTest, FormatsInTheLargestFittingBinaryUnit) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1024), "1.00 KiB");
  // 1536 / 1024 = 1.5.
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(536870912), "512.00 MiB");
  EXPECT_EQ(formatBytes(1610612736), "1.50 GiB");
  EXPECT_EQ(formatBytes(-2048), "-2.00 KiB");
  // 2^63 - 1 is just under 8 EiB (2^63).
  EXPECT_EQ(formatBytes(std::numeric_limits<int64_t>::max()), "8.00 EiB");
}

} // namespace
} // namespace remat
