//===- NpyFile.cpp - Reading .npy and .npz files ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IO/Npy.h"

#include "remat/Support/Status.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace remat {

absl::StatusOr<NamedArrays> readArrayFile(llvm::StringRef path) {
  bool isArchive = path.endswith(".npz");
  if (!isArchive && !path.endswith(".npy"))
    return invalidArgument("{}: error: expected a .npy or .npz file",
                           path.str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return invalidArgument("{}: error: cannot read file: {}", path.str(),
                           buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (isArchive)
    return parseNpz(bytes, path);
  absl::StatusOr<NpyArray> array = parseNpy(bytes);
  if (!array.ok())
    return invalidArgument("{}: error: {}", path.str(),
                           std::string(array.status().message()));
  NamedArrays arrays;
  arrays.emplace_back(llvm::sys::path::stem(path).str(), std::move(*array));
  return arrays;
}

} // namespace remat
