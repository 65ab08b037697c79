//===- NpyFuzzer.cpp - libFuzzer target for the .npy and .npz readers -----===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Feeds arbitrary bytes to parseNpy and parseNpz. Any input must give either
/// a one-line error (located, for an archive) or arrays that print and parse
/// back to the same type and bytes; anything else (a crash, a sanitizer
/// report, a bad message, a broken round trip) aborts so that libFuzzer
/// records the input.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/Npy.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "npy fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void checkMessage(const absl::Status &status, llvm::StringRef prefix) {
  std::string message(status.message());
  if (message.empty() || message.find('\n') != std::string::npos ||
      !llvm::StringRef(message).startswith(prefix))
    fail("error that is not one located line", message);
}

void checkRoundTrip(const remat::NpyArray &array) {
  absl::StatusOr<remat::NpyArray> back =
      remat::parseNpy(remat::printNpy(array.type, array.bytes));
  if (!back.ok())
    fail("printed array does not parse", std::string(back.status().message()));
  if (back->type != array.type || back->bytes != array.bytes)
    fail("parse(print(a)) differs from a", array.type.str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<remat::NpyArray> array = remat::parseNpy(bytes);
  if (array.ok())
    checkRoundTrip(*array);
  else
    checkMessage(array.status(), "");

  absl::StatusOr<remat::NamedArrays> arrays = remat::parseNpz(bytes, "fuzz.npz");
  if (!arrays.ok()) {
    checkMessage(arrays.status(), "fuzz.npz: error: ");
    return 0;
  }
  for (const auto &[name, member] : *arrays)
    checkRoundTrip(member);
  absl::StatusOr<std::string> archive =
      remat::printNpz(*arrays, remat::NpzCompressionKind::Deflated);
  if (!archive.ok())
    fail("arrays read do not print", std::string(archive.status().message()));
  absl::StatusOr<remat::NamedArrays> back =
      remat::parseNpz(*archive, "printed.npz");
  if (!back.ok() || back->size() != arrays->size())
    fail("printed archive does not parse",
         back.ok() ? "" : std::string(back.status().message()));
  return 0;
}
