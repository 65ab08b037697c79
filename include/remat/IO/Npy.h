//===- Npy.h - numpy .npy and .npz files -------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Arrays exchanged with numpy: a `.npy` file holds one array (format
/// versions 1.0, 2.0 and 3.0 are read, 1.0 is written unless the header needs
/// 2.0); an `.npz` file is a zip archive of `.npy` members, stored
/// (`np.savez`) or deflated (`np.savez_compressed`). Data is little-endian and
/// in C order; the dtypes are those remat has a numpy spelling for: f16, f32,
/// f64, i8, i32, i64 and bool. See docs/data-exchange.md.
///
/// Errors are one line. The archive and file functions locate them:
/// `FILE: error: message`, or `FILE: error: member 'NAME': message` for an
/// archive member.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IO_NPY_H
#define REMAT_IO_NPY_H

#include "remat/IR/Type.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace remat {

/// One array: its type and its elements' bytes, little-endian, row-major.
struct NpyArray {
  Type type;
  std::string bytes;
};

/// Arrays by name, in file order (for an archive, member names without the
/// `.npy` suffix).
using NamedArrays = std::vector<std::pair<std::string, NpyArray>>;

/// Parses the bytes of a `.npy` file. Errors are not located.
absl::StatusOr<NpyArray> parseNpy(llvm::StringRef bytes);

/// The bytes of a `.npy` file holding `bytes` (of `type.byteSize()` bytes) as
/// an array of `type`; byte-identical to what `np.save` writes. `type` must
/// have a numpy spelling (not bf16).
std::string printNpy(const Type &type, llvm::StringRef bytes);

/// Parses the bytes of an `.npz` archive; `fileName` only locates errors.
absl::StatusOr<NamedArrays> parseNpz(llvm::StringRef bytes,
                                     llvm::StringRef fileName);

/// How `printNpz` stores its members.
enum class NpzCompressionKind { Stored, Deflated };

/// The bytes of an `.npz` archive with one member `NAME.npy` per array, in
/// the given order; the member times are fixed so that equal arrays give equal
/// bytes.
absl::StatusOr<std::string> printNpz(const NamedArrays &arrays,
                                     NpzCompressionKind compression);

/// Reads `path`: an `.npz` archive, or a `.npy` file whose array is named
/// after the file (`dir/x.npy` holds `x`). Errors are located.
absl::StatusOr<NamedArrays> readArrayFile(llvm::StringRef path);

} // namespace remat

#endif // REMAT_IO_NPY_H
