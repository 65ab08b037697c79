//===- Units.cpp - Byte sizes with units ------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Units.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>

namespace remat {
namespace {

struct SizeUnit {
  llvm::StringLiteral name;
  int64_t bytes;
};

constexpr int64_t kKiB = 1024;
constexpr SizeUnit kUnits[] = {
    {"b", 1},
    {"kb", 1000},
    {"mb", 1000 * 1000},
    {"gb", 1000 * 1000 * 1000},
    {"tb", int64_t(1000) * 1000 * 1000 * 1000},
    {"kib", kKiB},
    {"mib", kKiB *kKiB},
    {"gib", kKiB *kKiB *kKiB},
    {"tib", kKiB *kKiB *kKiB *kKiB},
};

std::optional<int64_t> unitBytes(llvm::StringRef unit) {
  std::string lower = unit.lower();
  for (const SizeUnit &u : kUnits)
    if (lower == u.name)
      return u.bytes;
  return std::nullopt;
}

/// `number * numerator / denominator`, rounded down; nullopt above int64.
/// `number` is `whole` plus the decimal digits `fraction`.
std::optional<int64_t> scale(llvm::StringRef whole, llvm::StringRef fraction,
                             int64_t numerator, int64_t denominator) {
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  // Exact arithmetic: the number is digits / 10^|fraction|; decimals beyond
  // the 18th cannot move a result in whole bytes by more than rounding.
  __int128 digits = 0;
  __int128 power = 1;
  for (char c : whole) {
    digits = digits * 10 + (c - '0');
    if (digits > kMax)
      return std::nullopt;
  }
  for (char c : fraction.take_front(18)) {
    digits = digits * 10 + (c - '0');
    power *= 10;
  }
  // whole <= 2^63 and numerator <= 2^63 keep quotient * numerator below
  // 2^126; remainder < 10^18 < 2^60 keeps its product below 2^123.
  __int128 quotient = digits / power;
  __int128 remainder = digits % power;
  __int128 result = quotient * numerator + remainder * numerator / power;
  result /= denominator;
  if (result > kMax)
    return std::nullopt;
  return int64_t(result);
}

} // namespace

absl::StatusOr<int64_t> parseByteSize(llvm::StringRef text,
                                      std::optional<int64_t> baseline) {
  llvm::StringRef rest = text.trim();
  if (rest.empty())
    return invalidArgument("invalid size '{}': expected a number of bytes",
                           text.str());
  llvm::StringRef whole = rest.take_while(llvm::isDigit);
  rest = rest.drop_front(whole.size());
  llvm::StringRef fraction;
  if (rest.consume_front(".")) {
    fraction = rest.take_while(llvm::isDigit);
    rest = rest.drop_front(fraction.size());
    if (fraction.empty())
      return invalidArgument("invalid size '{}': expected digits after '.'",
                             text.str());
  }
  if (whole.empty())
    return invalidArgument(
        "invalid size '{}': expected a non-negative number, such as 512MiB",
        text.str());
  llvm::StringRef unit = rest.ltrim();

  std::optional<int64_t> bytes;
  if (unit == "%") {
    if (!baseline)
      return invalidArgument(
          "invalid size '{}': a percentage needs a baseline, which this "
          "option has none of",
          text.str());
    bytes = scale(whole, fraction, *baseline, 100);
  } else {
    std::optional<int64_t> perUnit = unit.empty() ? 1 : unitBytes(unit);
    if (!perUnit)
      return invalidArgument(
          "invalid size '{}': unknown unit '{}' (expected B, KB, MB, GB, TB, "
          "KiB, MiB, GiB, TiB or %)",
          text.str(), unit.str());
    bytes = scale(whole, fraction, *perUnit, 1);
  }
  if (!bytes)
    return invalidArgument("invalid size '{}': more than {} bytes", text.str(),
                           std::numeric_limits<int64_t>::max());
  return *bytes;
}

std::string formatBytes(int64_t bytes) {
  static constexpr const char *kBinaryUnits[] = {"KiB", "MiB", "GiB",
                                                 "TiB", "PiB", "EiB"};
  if (bytes > -kKiB && bytes < kKiB)
    return fmt::format("{} B", bytes);
  double value = double(bytes) / kKiB;
  unsigned unit = 0;
  while (std::fabs(value) >= kKiB && unit + 1 < std::size(kBinaryUnits)) {
    value /= kKiB;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, kBinaryUnits[unit]);
}

/// `count` with three significant digits in the largest of `units`, each
/// 1000 times the one before, that keeps the figure at least 1; a count
/// below 1000 is printed whole.
static std::string formatDecimal(int64_t count,
                                 llvm::ArrayRef<const char *> units) {
  double value = double(count);
  size_t unit = 0;
  while (value >= 1000 && unit + 1 < units.size()) {
    value /= 1000;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} {}", count, units[0])
                   : fmt::format("{:.3g} {}", value, units[unit]);
}

std::string formatFlops(int64_t flops) {
  return formatDecimal(flops,
                       {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"});
}

std::string formatNanoseconds(int64_t nanoseconds) {
  return formatDecimal(nanoseconds, {"ns", "us", "ms", "s"});
}

} // namespace remat
