//===- DataExchange.h - Values in and out of remat run -----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `remat run --feeds`, `--params` and `--dump`: values by name read from and
/// written to numpy files (docs/data-exchange.md), and the weights of an
/// ONNX model that `remat run --params` feeds and `remat export --params`
/// embeds. Private to src/Driver.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_DRIVER_DATAEXCHANGE_H
#define REMAT_SRC_DRIVER_DATAEXCHANGE_H

#include "remat/IO/Npy.h"
#include "remat/Runtime/Executor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace remat {
class Graph;
} // namespace remat

namespace remat::driver {

/// Reads the arrays of `path`, by the format its extension names: `.npz` or
/// `.npy` (a new format is one more case here). Errors are located.
absl::StatusOr<NamedArrays> loadArrays(llvm::StringRef path);

/// `array` as a tensor that owns (aligned) copies of its bytes.
HostTensor tensorOf(const NpyArray &array);

/// The leaves a file gives values to.
enum class LeafKind { Input, Param };

/// Loads `path` into `feeds`: every array must name a leaf of `kind` of
/// `graph` and have exactly its type. Leaves the file does not name are left
/// out of `feeds` (the executor fills them from the seed).
absl::Status loadLeafValues(const Graph &graph, llvm::StringRef path,
                            LeafKind kind, TensorMap &feeds);

/// The weights of the ONNX model `path` (`--params=MODEL.onnx`) by
/// initializer name, each reshaped to the input or param of `graph` with its
/// name where only the dims differ (a conv bias [C] imports as [C, 1, 1]).
/// A model that names none of `graph`'s params is an error (a model of
/// another graph); one that names only some, a warning on `err` that says
/// what becomes of the others (`unmatched`: "are seeded").
absl::StatusOr<TensorMap> loadOnnxParams(const Graph &graph,
                                         llvm::StringRef path,
                                         llvm::StringRef unmatched,
                                         llvm::raw_ostream &err);

/// Writes every output of `run`: one `.npz` archive when `path` ends in
/// `.npz`, else one `NAME.npy` per output in the directory `path` (created
/// if needed), NAME being the output's name with every character outside
/// `[A-Za-z0-9._-]` (and a leading `.`) replaced by `_`.
absl::Status dumpOutputs(const RunResult &run, llvm::StringRef path);

/// Writes every input and param of `graph` with the value a run feeds it
/// (`feeds` where given, else seeded from `seed`), as `dumpOutputs` writes
/// outputs: so that another runtime (ONNX Runtime, numpy) can be fed the
/// same values.
absl::Status dumpLeaves(const Graph &graph, const TensorMap &feeds,
                        uint64_t seed, llvm::StringRef path);

} // namespace remat::driver

#endif // REMAT_SRC_DRIVER_DATAEXCHANGE_H
