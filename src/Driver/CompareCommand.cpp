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
          "arithmetic is not judged on rounding noise. Integer and bool arrays "
          "must be equal.\nPrints each array's error; fails when one exceeds "
          "R or is missing. See docs/cli.md.",
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

double maxAbs(const HostTensor &tensor) {
  double m = 0;
  for (int64_t i = 0, e = tensor.numel(); i < e; ++i)
    m = std::max(m, std::fabs(tensor.at(i)));
  return m;
}

/// The error of `actual` against `expected` (same element count): relative
/// to `scale` for floats, 0 or infinite for integers and bools. NaN matches
/// only NaN.
double arrayError(const HostTensor &actual, const HostTensor &expected,
                  double scale) {
  bool exact = !expected.type().isFloat();
  double diff = 0;
  for (int64_t i = 0, e = expected.numel(); i < e; ++i) {
    double a = actual.at(i), x = expected.at(i);
    if (std::isnan(a) || std::isnan(x)) {
      if (!(std::isnan(a) && std::isnan(x)))
        return kInfinity;
      continue;
    }
    if (a == x)
      continue;
    if (exact)
      return kInfinity;
    diff = std::max(diff, std::fabs(a - x));
  }
  if (diff == 0)
    return 0;
  return scale > 0 ? diff / scale : kInfinity;
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
/// `actual` lacks or holds with another dtype or element count.
absl::StatusOr<std::vector<ArrayError>>
compareFiles(const NamedArrays &actual, llvm::StringRef actualPath,
             const NamedArrays &expected, llvm::StringRef expectedPath) {
  llvm::StringMap<const NpyArray *> byName;
  for (const auto &[name, array] : actual)
    byName.try_emplace(name, &array);
  std::vector<HostTensor> values;
  values.reserve(expected.size());
  double floor = 0;
  for (const auto &[name, array] : expected) {
    values.push_back(tensorOf(array));
    if (llvm::StringRef(name).endswith(".grad") && array.type.isFloat())
      floor = std::max(floor, 1e-3 * maxAbs(values.back()));
  }
  std::vector<ArrayError> errors;
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto &[name, array] = expected[i];
    const NpyArray *other = byName.lookup(name);
    if (!other)
      return invalidArgument("{}: error: has no array '{}', which {} has",
                             actualPath.str(), name, expectedPath.str());
    // The dims may differ: the importer declares a conv bias [C] as [C,1,1].
    if (other->type.dtype() != array.type.dtype() ||
        other->type.numElements() != array.type.numElements())
      return invalidArgument(
          "{}: error: array '{}' is {}, but {} in {}", actualPath.str(), name,
          other->type.str(), array.type.str(), expectedPath.str());
    errors.push_back({name, arrayError(tensorOf(*other), values[i],
                                       std::max(maxAbs(values[i]), floor))});
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
    if (e.error > worst->error)
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
