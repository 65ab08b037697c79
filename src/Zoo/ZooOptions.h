//===- ZooOptions.h - Strict parsing of model options -----------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reads one zoo model's `--key=value` options. Every accessor checks its value
/// strictly and every error names the model and the option, e.g.
/// `resnet: option '--batch' must be between 1 and 65536, got 0`. Private to
/// src/Zoo.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_ZOO_ZOOOPTIONS_H
#define REMAT_SRC_ZOO_ZOOOPTIONS_H

#include "remat/Support/Status.h"
#include "remat/Zoo/Zoo.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace remat::zoo {

/// The options of one model as given, with the list of options it accepts.
class OptionReader {
public:
  OptionReader(llvm::StringRef model, const ZooOptions &options,
               llvm::ArrayRef<ZooOptionInfo> known)
      : model_(model.str()), options_(options), known_(known) {}

  llvm::StringRef model() const { return model_; }

  /// Fails on the first given option (in name order) that is not in `known`.
  absl::Status checkKnown() const;

  /// Whether the option was given at all.
  bool has(llvm::StringRef name) const { return options_.count(name.str()); }

  /// The integer value of `name` in [min, max], or `defaultValue` if absent.
  absl::StatusOr<int64_t> getInt(llvm::StringRef name, int64_t defaultValue,
                                 int64_t min, int64_t max) const;
  /// The value of `name` in [min, maxExclusive), or `defaultValue` if absent.
  absl::StatusOr<double> getFloat(llvm::StringRef name, double defaultValue,
                                  double min, double maxExclusive) const;
  /// A flag: absent is false; `--name`, `--name=true` and `--name=false`.
  absl::StatusOr<bool> getFlag(llvm::StringRef name) const;
  /// One of `choices`, or `defaultValue` if absent.
  absl::StatusOr<std::string>
  getChoice(llvm::StringRef name, llvm::StringRef defaultValue,
            llvm::ArrayRef<llvm::StringRef> choices) const;

  /// An InvalidArgument error prefixed with the model name.
  template <typename... Args>
  absl::Status error(fmt::format_string<Args...> format, Args &&...args) const {
    return invalidArgument("{}: {}", model_,
                           fmt::format(format, std::forward<Args>(args)...));
  }

private:
  std::string model_;
  const ZooOptions &options_;
  llvm::ArrayRef<ZooOptionInfo> known_;
};

} // namespace remat::zoo

#endif // REMAT_SRC_ZOO_ZOOOPTIONS_H
