//===- CompareArrays.cpp - remat's dumped outputs against PyTorch's ---------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat-compare-arrays ACTUAL.npz EXPECTED.npz TOL` compares every f32 array
/// of EXPECTED (PyTorch's loss, output and gradients, written by
/// scripts/make-onnx-fixtures.py) with the array of the same name in ACTUAL
/// (`remat run --dump`), as the script's `compare` does: per array,
/// max |a - e| / max(max |e|, floor), where the floor is a thousandth of the
/// largest gradient entry, so that a gradient that is zero in exact
/// arithmetic is not judged on the ratio of two rounding noises. The dims
/// may differ when the element counts agree (the importer declares a conv
/// bias [C] as [C, 1, 1]). Prints every array's error and exits 1 when one
/// exceeds TOL or is missing.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// The elements of an f32 array, or nothing for another dtype.
std::vector<double> floatsOf(const remat::NpyArray &array) {
  if (array.type.dtype() != remat::DType::F32)
    return {};
  std::vector<float> values(array.type.numElements());
  std::memcpy(values.data(), array.bytes.data(), values.size() * sizeof(float));
  return {values.begin(), values.end()};
}

double maxAbs(const std::vector<double> &values) {
  double m = 0;
  for (double v : values)
    m = std::max(m, std::abs(v));
  return m;
}

int fail(const std::string &message) {
  fmt::print(stderr, "remat-compare-arrays: error: {}\n", message);
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  double tolerance = 0;
  if (argc != 4 || !llvm::to_float(argv[3], tolerance))
    return fail("usage: remat-compare-arrays ACTUAL.npz EXPECTED.npz TOL");
  auto actual = remat::readArrayFile(argv[1]);
  if (!actual.ok())
    return fail(std::string(actual.status().message()));
  auto expected = remat::readArrayFile(argv[2]);
  if (!expected.ok())
    return fail(std::string(expected.status().message()));
  llvm::StringMap<const remat::NpyArray *> byName;
  for (const auto &[name, array] : *actual)
    byName[name] = &array;

  double floor = 0;
  for (const auto &[name, array] : *expected)
    if (llvm::StringRef(name).endswith(".grad"))
      floor = std::max(floor, 1e-3 * maxAbs(floatsOf(array)));

  double worst = 0;
  std::string worstName;
  for (const auto &[name, array] : *expected) {
    if (array.type.dtype() != remat::DType::F32)
      return fail(fmt::format("{}: array '{}' is {}, not f32", argv[2], name,
                              array.type.str()));
    const remat::NpyArray *other = byName.lookup(name);
    if (!other)
      return fail(fmt::format("{}: has no array '{}'", argv[1], name));
    if (other->type.dtype() != remat::DType::F32 ||
        other->type.numElements() != array.type.numElements())
      return fail(fmt::format("array '{}' is {} in {} but {} in {}", name,
                              other->type.str(), argv[1], array.type.str(),
                              argv[2]));
    std::vector<double> e = floatsOf(array), a = floatsOf(*other);
    double diff = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      double d = std::abs(a[i] - e[i]);
      diff = std::max(diff, std::isnan(d) ? INFINITY : d);
    }
    double scale = std::max(maxAbs(e), floor);
    double error = scale > 0 ? diff / scale : diff;
    fmt::print("{:<48} {:.3g}\n", name, error);
    if (error >= worst) {
      worst = error;
      worstName = name;
    }
  }
  fmt::print("worst relative error {:.3g} at '{}', tolerance {:g}\n", worst,
             worstName, tolerance);
  if (!(worst <= tolerance))
    return fail(fmt::format("relative error {:.3g} at '{}' exceeds the "
                            "tolerance {:g}",
                            worst, worstName, tolerance));
  return 0;
}
