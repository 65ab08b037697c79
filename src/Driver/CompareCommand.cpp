//===- CompareCommand.cpp - remat compare -----------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat compare ACTUAL EXPECTED`: the arrays of two numpy files, by name,
/// within a relative tolerance. It checks one runtime's training step against
/// another's (ONNX Runtime's `--dump` against `remat run --dump`, remat's
/// against PyTorch's gradients); docs/cli.md gives the measure.
///
//===----------------------------------------------------------------------===//

#include "Args.h"
#include "CommandIO.h"
#include "Commands.h"
#include "DataExchange.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace remat::driver {
namespace {

constexpr double kDefaultTolerance = 1e-5;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

const CommandSpec &compareSpec() {
  static const CommandSpec spec{
      .name = "compare",
      .synopsis = "ACTUAL EXPECTED [--tolerance=R] [-o OUT]",
      .description =
          "Compares every array of EXPECTED (.npz or .npy) with the array of "
          "the same name in ACTUAL:\nthe largest |actual - expected| over the "
          "largest |expected|, floored at a thousandth\nof the largest "
          "gradient (arrays named *.grad), so that a gradient zero in exact\n"
          "arithmetic is not judged on rounding noise. A NaN or an infinity, "
          "and every\nelement of an integer or bool array, must be matched "
          "exactly. Prints each array's\nerror; fails when one exceeds R or "
          "is missing. See docs/cli.md.",
      .options = {{.name = "tolerance",
                   .valueName = "R",
                   .help = "The largest relative error that passes (default "
                           "1e-5; 0 asks for equal values)."},
                  {.name = "output",
                   .shortName = 'o',
                   .valueName = "OUT",
                   .help = "Writes to OUT instead of stdout."}}};
  return spec;
}

/// One array of EXPECTED against ACTUAL's.
struct ArrayError {
  std::string name;
  double error = 0;
};

/// The largest finite |element|: an infinity would make every finite
/// difference look like none.
double maxFiniteAbs(const HostTensor &tensor) {
  double m = 0;
  for (int64_t i = 0, e = tensor.numel(); i < e; ++i)
    if (double v = std::fabs(tensor.at(i)); std::isfinite(v))
      m = std::max(m, v);
  return m;
}

/// The error of `actual` against `expected` (same element count): for
/// floats, the largest difference relative to `scale`, where a NaN or an
/// infinity must be matched exactly; for integers and bools, 0 when the
/// bytes are equal (a double would round int64s above 2^53), else infinite.
double arrayError(const NpyArray &actual, const NpyArray &expected,
                  double scale) {
  if (!expected.type.isFloat())
    return actual.bytes == expected.bytes ? 0 : kInfinity;
  HostTensor a = tensorOf(actual), x = tensorOf(expected);
  double diff = 0;
  for (int64_t i = 0, e = x.numel(); i < e; ++i) {
    double av = a.at(i), xv = x.at(i);
    if (!std::isfinite(av) || !std::isfinite(xv)) {
      if (!(av == xv || (std::isnan(av) && std::isnan(xv))))
        return kInfinity;
      continue;
    }
    diff = std::max(diff, std::fabs(av - xv));
  }
  if (diff == 0)
    return 0;
  return scale > 0 ? diff / scale : kInfinity;
}

/// Whether two shapes hold the same elements in the same order: equal once
/// their size-1 dims are dropped (a conv bias [C] imports as [C, 1, 1]).
bool sameLayout(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  auto squeezed = [](llvm::ArrayRef<int64_t> shape) {
    llvm::SmallVector<int64_t> dims;
    for (int64_t d : shape)
      if (d != 1)
        dims.push_back(d);
    return dims;
  };
  return squeezed(a) == squeezed(b);
}

absl::StatusOr<double> toleranceOption(const ParsedArgs &args) {
  std::optional<std::string> text = args.get("tolerance");
  if (!text)
    return kDefaultTolerance;
  double tolerance = 0;
  if (llvm::StringRef(*text).getAsDouble(tolerance) ||
      !std::isfinite(tolerance) || tolerance < 0)
    return invalidArgument(
        "option '--tolerance' must be a number of at least 0, got '{}'",
        *text);
  return tolerance;
}

/// Every array of `expected` against `actual`'s; an error for an array that
/// `actual` lacks or holds with another dtype or layout.
absl::StatusOr<std::vector<ArrayError>>
compareFiles(const NamedArrays &actual, llvm::StringRef actualPath,
             const NamedArrays &expected, llvm::StringRef expectedPath) {
  llvm::StringMap<const NpyArray *> byName;
  for (const auto &[name, array] : actual)
    byName.try_emplace(name, &array);
  std::vector<double> largest;
  largest.reserve(expected.size());
  double floor = 0;
  for (const auto &[name, array] : expected) {
    largest.push_back(array.type.isFloat() ? maxFiniteAbs(tensorOf(array)) : 0);
    if (llvm::StringRef(name).endswith(".grad"))
      floor = std::max(floor, 1e-3 * largest.back());
  }
  std::vector<ArrayError> errors;
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto &[name, array] = expected[i];
    const NpyArray *other = byName.lookup(name);
    if (!other)
      return invalidArgument("{}: error: has no array '{}', which {} has",
                             actualPath.str(), name, expectedPath.str());
    if (other->type.dtype() != array.type.dtype() ||
        !sameLayout(other->type.shape(), array.type.shape()))
      return invalidArgument(
          "{}: error: array '{}' is {}, but {} in {}", actualPath.str(), name,
          other->type.str(), array.type.str(), expectedPath.str());
    errors.push_back(
        {name, arrayError(*other, array, std::max(largest[i], floor))});
  }
  return errors;
}

absl::Status runCompareCommand(const ParsedArgs &args, CommandContext &ctx) {
  if (args.positional.size() != 2)
    return invalidArgument("'remat compare' takes two files, ACTUAL and "
                           "EXPECTED; got {} (see 'remat compare --help')",
                           args.positional.size());
  const std::string &actualPath = args.positional[0];
  const std::string &expectedPath = args.positional[1];
  REMAT_RETURN_IF_ERROR(
      checkOutputsSpareInputs({{"-o", args.get("output")}},
                              {{"ACTUAL", actualPath},
                               {"EXPECTED", expectedPath}}));
  REMAT_ASSIGN_OR_RETURN(double tolerance, toleranceOption(args));
  REMAT_ASSIGN_OR_RETURN(NamedArrays actual, loadArrays(actualPath));
  REMAT_ASSIGN_OR_RETURN(NamedArrays expected, loadArrays(expectedPath));
  if (expected.empty())
    return invalidArgument("{}: error: holds no array to compare",
                           expectedPath);
  REMAT_ASSIGN_OR_RETURN(
      std::vector<ArrayError> errors,
      compareFiles(actual, actualPath, expected, expectedPath));
  const ArrayError *worst = &errors.front();
  for (const ArrayError &e : errors)
    if (!(e.error <= worst->error))
      worst = &e;
  REMAT_RETURN_IF_ERROR(writeOutput(
      args.get("output"), ctx.out, [&](llvm::raw_ostream &os) {
        for (const ArrayError &e : errors)
          os << fmt::format("{:<48} {:.3g}\n", e.name, e.error);
        os << fmt::format("{} arrays, worst relative error {:.3g} at '{}', "
                          "tolerance {:g}\n",
                          errors.size(), worst->error, worst->name, tolerance);
      }));
  if (!(worst->error <= tolerance))
    return invalidArgument("{}: error: array '{}': relative error {:.3g} "
                           "exceeds the tolerance {:g}",
                           actualPath, worst->name, worst->error, tolerance);
  return absl::OkStatus();
}

} // namespace

const Command kCompareCommand{compareSpec, runCompareCommand};

} // namespace remat::driver
