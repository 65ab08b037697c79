//===- CommandIO.cpp - Input and output files of the subcommands ------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "CommandIO.h"

#include "remat/Support/Status.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <filesystem>

namespace remat::driver {

/// The output file's buffer: a few system calls per megabyte of text.
constexpr size_t kOutputBufferBytes = size_t(1) << 20;

absl::Status writeOutput(const std::optional<std::string> &path,
                         llvm::raw_ostream &stdoutStream,
                         llvm::function_ref<void(llvm::raw_ostream &)> write) {
  if (!path || *path == "-") {
    write(stdoutStream);
    stdoutStream.flush();
    return absl::OkStatus();
  }
  // Written straight to the file, through a large buffer: a million-op
  // graph's text is hundreds of megabytes, which a copy in memory would
  // hold twice. A write that fails removes the file (ToolOutputFile).
  std::error_code error;
  llvm::ToolOutputFile file(*path, error, llvm::sys::fs::OF_None);
  if (error)
    return invalidArgument("cannot open '{}' for writing: {}", *path,
                           error.message());
  file.os().SetBufferSize(kOutputBufferBytes);
  write(file.os());
  file.os().close();
  if (file.os().has_error()) {
    std::string message = file.os().error().message();
    file.os().clear_error();
    return invalidArgument("cannot write '{}': {}", *path, message);
  }
  file.keep();
  return absl::OkStatus();
}

absl::Status checkOutputsSpareInputs(llvm::ArrayRef<NamedPath> outputs,
                                     llvm::ArrayRef<NamedPath> inputs) {
  for (const NamedPath &output : outputs) {
    if (!output.path || *output.path == "-")
      continue;
    std::error_code error;
    // Only a regular file is destroyed: `/dev/stdin` and `/dev/stdout` may
    // be the same terminal.
    if (!std::filesystem::is_regular_file(*output.path, error))
      continue;
    for (const NamedPath &input : inputs) {
      if (!input.path || *input.path == "-")
        continue;
      if (std::filesystem::equivalent(*output.path, *input.path, error))
        return invalidArgument("{} '{}' is {} '{}', which writing would "
                               "destroy: give another file",
                               output.what.str(), *output.path,
                               input.what.str(), *input.path);
    }
  }
  return absl::OkStatus();
}

std::string inputName(llvm::StringRef path) {
  return path == "-" ? "<stdin>" : path.str();
}

absl::StatusOr<std::vector<InputChunk>> readSplitInput(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buffer)
    return invalidArgument("{}: error: cannot read file: {}", path.str(),
                           buffer.getError().message());
  llvm::StringRef rest = (*buffer)->getBuffer();
  std::vector<InputChunk> chunks;
  std::string current;
  size_t linesBefore = 0;
  size_t line = 0;
  while (!rest.empty()) {
    auto [text, tail] = rest.split('\n');
    bool hadNewline = text.size() != rest.size();
    rest = tail;
    ++line;
    if (text.startswith(kSplitMarker)) {
      chunks.push_back({std::string(linesBefore, '\n') + current});
      current.clear();
      linesBefore = line;
      continue;
    }
    current += text;
    if (hadNewline)
      current += '\n';
  }
  chunks.push_back({std::string(linesBefore, '\n') + current});
  return chunks;
}

} // namespace remat::driver
