//===- DataExchange.cpp - Values in and out of remat run --------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "DataExchange.h"

#include "CommandIO.h"

#include "remat/IO/Onnx.h"
#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cstring>

namespace remat::driver {
namespace {

llvm::StringRef leafKindName(LeafKind kind) {
  return kind == LeafKind::Input ? "input" : "param";
}

std::string withArticle(llvm::StringRef kind) {
  return (kind == "input" ? "an " : "a ") + kind.str();
}

NpyArray arrayOf(const HostTensor &tensor) {
  const char *data = static_cast<const char *>(tensor.view().raw());
  return {.type = tensor.type(),
          .bytes = std::string(data, data ? size_t(tensor.view().byteSize())
                                          : 0)};
}

/// `name` as a file name: see `dumpOutputs`.
std::string sanitizeFileName(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out.push_back(llvm::isAlnum(c) || c == '.' || c == '_' || c == '-' ? c
                                                                       : '_');
  if (out.empty())
    return "_";
  if (out.front() == '.')
    out.front() = '_';
  return out;
}

/// Every output once, in output order (an output listed twice is the same
/// value).
NamedArrays outputArrays(const RunResult &run) {
  NamedArrays arrays;
  llvm::StringSet<> seen;
  for (const auto &[name, tensor] : run.outputs)
    if (seen.insert(name).second)
      arrays.emplace_back(name, arrayOf(tensor));
  return arrays;
}

absl::Status writeBytes(const std::string &path, llvm::StringRef bytes) {
  return writeOutput(path, llvm::nulls(),
                     [&](llvm::raw_ostream &os) { os << bytes; });
}

} // namespace

HostTensor tensorOf(const NpyArray &array) {
  HostTensor tensor(array.type);
  if (!array.bytes.empty())
    std::memcpy(tensor.view().raw(), array.bytes.data(), array.bytes.size());
  return tensor;
}

absl::StatusOr<NamedArrays> loadArrays(llvm::StringRef path) {
  if (path.endswith(".npz") || path.endswith(".npy"))
    return readArrayFile(path);
  return invalidArgument("{}: error: unknown format: expected a .npz or .npy "
                         "file",
                         path.str());
}

absl::Status loadLeafValues(const Graph &graph, llvm::StringRef path,
                            LeafKind kind, TensorMap &feeds) {
  REMAT_ASSIGN_OR_RETURN(NamedArrays arrays, loadArrays(path));
  llvm::StringRef wanted = leafKindName(kind);
  for (auto &[name, array] : arrays) {
    auto error = [&](const std::string &message) {
      std::string shown;
      llvm::raw_string_ostream os(shown);
      llvm::printEscapedString(name, os);
      return invalidArgument("{}: error: array '{}': {}", path.str(), os.str(),
                             message);
    };
    const Value *leaf = graph.lookupValue(name);
    llvm::StringRef actual = leaf ? leaf->producer()->kind() : "";
    if (actual != wanted) {
      if (actual == "input" || actual == "param")
        return error(fmt::format("%{} is {} of graph @{}, not {}", name,
                                 withArticle(actual), graph.name().str(),
                                 withArticle(wanted)));
      return error(fmt::format("graph @{} has no {} %{}", graph.name().str(),
                               wanted.str(), name));
    }
    if (array.type != leaf->type())
      return error(fmt::format("has type {}, but {} %{} is {}",
                               array.type.str(), wanted.str(), name,
                               leaf->type().str()));
    feeds.insert_or_assign(name, tensorOf(array));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorMap> loadOnnxParams(const Graph &graph,
                                         llvm::StringRef path,
                                         llvm::StringRef unmatched,
                                         llvm::raw_ostream &err) {
  REMAT_ASSIGN_OR_RETURN(TensorMap tensors, readOnnxTensorsFile(path));
  auto fit = [&](llvm::ArrayRef<Value *> leaves) {
    for (const Value *leaf : leaves) {
      auto it = tensors.find(leaf->name());
      if (it == tensors.end() || it->second.type() == leaf->type() ||
          it->second.dtype() != leaf->type().dtype() ||
          it->second.numel() != leaf->type().numElements())
        continue;
      HostTensor reshaped(leaf->type());
      if (size_t bytes = size_t(leaf->type().byteSize()))
        std::memcpy(reshaped.view().raw(), it->second.view().raw(), bytes);
      it->second = std::move(reshaped);
    }
  };
  fit(graph.inputs());
  fit(graph.params());
  std::vector<const Value *> left;
  for (const Value *param : graph.params())
    if (!tensors.count(param->name()))
      left.push_back(param);
  size_t total = graph.params().size();
  if (left.empty())
    return tensors;
  if (left.size() == total)
    return invalidArgument("{}: error: no initializer of the model is named "
                           "like a param of graph @{} ({} params, the first "
                           "%{}); was the graph imported from this model?",
                           path.str(), graph.name().str(), total,
                           left.front()->name().str());
  err << fmt::format("remat: warning: {} feeds {} of the {} params of graph "
                     "@{}; the other {} (the first %{}) {}\n",
                     path.str(), total - left.size(), total,
                     graph.name().str(), left.size(),
                     left.front()->name().str(), unmatched.str());
  return tensors;
}

namespace {

/// Writes `arrays` to `path`, as `dumpOutputs` does; `what` names them in
/// errors.
absl::Status dumpArrays(const NamedArrays &arrays, llvm::StringRef path,
                        llvm::StringRef what) {
  if (path.endswith(".npz")) {
    REMAT_ASSIGN_OR_RETURN(std::string bytes,
                           printNpz(arrays, NpzCompressionKind::Stored));
    return writeBytes(path.str(), bytes);
  }
  if (std::error_code error = llvm::sys::fs::create_directories(path))
    return invalidArgument("cannot create directory '{}': {}", path.str(),
                           error.message());
  llvm::StringMap<std::string> fileOwners;
  for (const auto &[name, array] : arrays) {
    std::string file = sanitizeFileName(name) + ".npy";
    auto [owner, inserted] = fileOwners.try_emplace(file, name);
    if (!inserted)
      return invalidArgument("{} %{} and %{} would both be dumped to "
                             "'{}': dump to an .npz file instead",
                             what.str(), owner->second, name, file);
  }
  for (const auto &[name, array] : arrays) {
    llvm::SmallString<128> file(path);
    llvm::sys::path::append(file, sanitizeFileName(name) + ".npy");
    REMAT_RETURN_IF_ERROR(
        writeBytes(file.str().str(), printNpy(array.type, array.bytes)));
  }
  return absl::OkStatus();
}

} // namespace

absl::Status dumpOutputs(const RunResult &run, llvm::StringRef path) {
  return dumpArrays(outputArrays(run), path, "outputs");
}

absl::Status dumpLeaves(const Graph &graph, const TensorMap &feeds,
                        uint64_t seed, llvm::StringRef path) {
  TensorMap seeded = makeFeeds(graph, seed);
  NamedArrays arrays;
  for (const Op &op : graph.ops()) {
    if (!op.hasFlag(OpFlagLeaf))
      continue;
    llvm::StringRef name = op.result()->name();
    auto fed = feeds.find(name);
    arrays.emplace_back(name.str(), arrayOf(fed != feeds.end()
                                                ? fed->second
                                                : seeded.at(name.str())));
  }
  return dumpArrays(arrays, path, "leaves");
}

} // namespace remat::driver
