//===- ExternalData.cpp - Tensors kept beside the model ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// ONNX lets a tensor keep its bytes in another file (`data_location =
/// EXTERNAL`, with `location`, `offset` and `length` entries), as PyTorch 2's
/// exporter does by default (`model.onnx.data`). The bytes are read into the
/// tensor's raw data, so that the checker and the decoders see an ordinary
/// tensor. A location must stay inside the model's directory.
///
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <memory>
#include <vector>

namespace remat::onnximport {
namespace {

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

constexpr llvm::StringLiteral kReexport =
    "re-export with external_data=False to keep the weights in the model";

/// The tensors of the model that keep their data in external files: the
/// initializers and the main graph's attribute tensors.
std::vector<onnx::TensorProto *> externalTensors(onnx::ModelProto &model) {
  std::vector<onnx::TensorProto *> tensors;
  auto add = [&](onnx::TensorProto *t) {
    if (t->data_location() == onnx::TensorProto::EXTERNAL)
      tensors.push_back(t);
  };
  onnx::GraphProto &graph = *model.mutable_graph();
  for (onnx::TensorProto &init : *graph.mutable_initializer())
    add(&init);
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &a : *node.mutable_attribute()) {
      if (a.has_t())
        add(a.mutable_t());
      for (onnx::TensorProto &t : *a.mutable_tensors())
        add(&t);
    }
  return tensors;
}

/// Reads external files, each once, for the tensors of one model.
class ExternalFiles {
public:
  ExternalFiles(std::string fileName, std::string directory)
      : fileName_(std::move(fileName)), directory_(std::move(directory)) {}

  /// Fills `tensor`'s raw data from its external file.
  absl::Status load(onnx::TensorProto &tensor);

private:
  template <typename... Args>
  absl::Status error(const onnx::TensorProto &tensor,
                     fmt::format_string<Args...> format, Args &&...args) {
    return invalidArgument("{}: error: tensor '{}' keeps its data in an "
                           "external file, {}",
                           fileName_, tensor.name(),
                           fmt::format(format, std::forward<Args>(args)...));
  }
  /// The file at `location`, checked to lie inside the model's directory.
  absl::StatusOr<const llvm::MemoryBuffer *>
  file(const onnx::TensorProto &tensor, llvm::StringRef location);

  std::string fileName_, directory_;
  llvm::SmallString<256> realDirectory_;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files_;
};

absl::StatusOr<const llvm::MemoryBuffer *>
ExternalFiles::file(const onnx::TensorProto &tensor, llvm::StringRef location) {
  if (location.empty() || path::is_absolute(location) ||
      path::is_absolute(location, path::Style::windows))
    return error(tensor, "'{}', which is not a path relative to the model",
                 location.str());
  for (llvm::StringRef part : llvm::make_range(path::begin(location),
                                               path::end(location)))
    if (part == "..")
      return error(tensor, "'{}', which leaves the model's directory",
                   location.str());
  if (realDirectory_.empty() && fs::real_path(directory_, realDirectory_))
    return error(tensor, "'{}', and the model's directory '{}' cannot be "
                 "resolved", location.str(), directory_);
  llvm::SmallString<256> joined(directory_), real;
  path::append(joined, location);
  if (std::error_code ec = fs::real_path(joined, real))
    return error(tensor, "'{}', which cannot be read: {} ({})", location.str(),
                 ec.message(), kReexport.str());
  // A symbolic link may still point elsewhere.
  std::string inside = realDirectory_.str().str();
  if (!llvm::StringRef(inside).endswith("/"))
    inside += "/";
  if (!llvm::StringRef(real).startswith(inside))
    return error(tensor, "'{}', which resolves outside the model's directory",
                 location.str());
  // Reading a FIFO or a device would block or never end.
  if (!fs::is_regular_file(real))
    return error(tensor, "'{}', which is not a regular file", location.str());
  auto [it, inserted] = files_.try_emplace(real);
  if (inserted) {
    auto buffer = llvm::MemoryBuffer::getFile(real, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return error(tensor, "'{}', which cannot be read: {} ({})",
                   location.str(), buffer.getError().message(),
                   kReexport.str());
    it->second = std::move(*buffer);
  }
  return it->second.get();
}

absl::Status ExternalFiles::load(onnx::TensorProto &tensor) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool hasLength = false;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    llvm::StringRef value = entry.value();
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      uint64_t number;
      if (value.getAsInteger(10, number))
        return error(tensor, "with the {} '{}', which is not a number",
                     entry.key(), entry.value());
      (entry.key() == "offset" ? offset : length) = number;
      hasLength |= entry.key() == "length";
    }
  }
  REMAT_ASSIGN_OR_RETURN(const llvm::MemoryBuffer *buffer,
                         file(tensor, location));
  uint64_t size = buffer->getBufferSize();
  if (offset > size || (hasLength && length > size - offset))
    return error(tensor, "'{}', which holds {} bytes, not bytes {} to {}",
                 location, size, offset,
                 hasLength ? offset + length : size);
  if (!hasLength)
    length = size - offset;
  tensor.set_raw_data(buffer->getBufferStart() + offset, length);
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return absl::OkStatus();
}

} // namespace

absl::Status loadExternalData(onnx::ModelProto &model,
                              llvm::StringRef fileName) {
  std::vector<onnx::TensorProto *> tensors = externalTensors(model);
  if (tensors.empty())
    return absl::OkStatus();
  if (fileName == "<stdin>")
    return invalidArgument("{}: error: tensor '{}' keeps its data in an "
                           "external file, which a model read from stdin "
                           "cannot locate; read the model from its file",
                           fileName.str(), tensors.front()->name());
  llvm::StringRef directory = path::parent_path(fileName);
  ExternalFiles files(fileName.str(), directory.empty() ? "." : directory.str());
  for (onnx::TensorProto *tensor : tensors)
    REMAT_RETURN_IF_ERROR(files.load(*tensor));
  return absl::OkStatus();
}

} // namespace remat::onnximport
