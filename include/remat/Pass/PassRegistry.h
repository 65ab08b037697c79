//===- PassRegistry.h - Creating passes by name ------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The pass registry maps a pipeline name (`dce`) to a summary, the options the
/// pass accepts and a factory. Registration is explicit: `registerAllPasses`
/// calls one function per pass file; `PassRegistry::global()` builds the
/// process-wide registry on first use. No static constructors.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASS_PASSREGISTRY_H
#define REMAT_PASS_PASSREGISTRY_H

#include "remat/Pass/Pass.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace remat {

class PassManager;

/// The `key=value` options written for one pass in a pipeline, in written
/// order. Options not written are absent; the getters fall back to the
/// default the caller passes (the pass's option struct holds the defaults).
class PassOptions {
public:
  PassOptions() = default;
  PassOptions(std::initializer_list<std::pair<std::string, std::string>> init)
      : entries_(init) {}

  /// Sets `key` to `value`, replacing an earlier value.
  void set(llvm::StringRef key, llvm::StringRef value);
  /// The text written for `key`, or null.
  const std::string *lookup(llvm::StringRef key) const;
  llvm::ArrayRef<std::pair<std::string, std::string>> entries() const {
    return entries_;
  }
  bool empty() const { return entries_.empty(); }

  /// `true`/`false` (also `1`/`0`); `defaultValue` when absent.
  absl::StatusOr<bool> getBool(llvm::StringRef key, bool defaultValue) const;
  /// A decimal integer; `defaultValue` when absent.
  absl::StatusOr<int64_t> getInt(llvm::StringRef key,
                                 int64_t defaultValue) const;
  /// The text as written; `defaultValue` when absent.
  std::string getString(llvm::StringRef key,
                        llvm::StringRef defaultValue) const;

private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

/// What text an option accepts; the registry checks values before the
/// factory sees them.
enum class PassOptionKind { Bool, Int, String };

/// One option a pass accepts.
struct PassOptionInfo {
  std::string name;
  std::string help;
  PassOptionKind kind = PassOptionKind::String;
  /// The default, as text, for help and docs.
  std::string defaultValue;
};

/// Builds a pass from its parsed options.
using PassFactory =
    std::function<absl::StatusOr<std::unique_ptr<Pass>>(const PassOptions &)>;

/// One registered pass.
struct PassInfo {
  std::string argument;
  std::string summary;
  std::vector<PassOptionInfo> options;
  PassFactory factory;

  /// The option named `name`, or null.
  const PassOptionInfo *findOption(llvm::StringRef name) const;
  /// Checks that `key` is an option of this pass and that `value` is valid
  /// text for it. Messages carry no location.
  absl::Status checkOption(llvm::StringRef key, llvm::StringRef value) const;
};

/// The set of known passes.
class PassRegistry {
public:
  /// The process-wide registry holding every built-in pass.
  static PassRegistry &global();

  /// Adds a pass; the argument must be new (asserted: a programming error).
  void add(PassInfo info);
  /// The pass named `argument`, or null.
  const PassInfo *lookup(llvm::StringRef argument) const;
  /// Every pass, sorted by argument.
  std::vector<const PassInfo *> all() const;
  /// The registered argument closest to `argument` by edit distance, or empty
  /// when none is close enough to be a plausible typo.
  std::string suggest(llvm::StringRef argument) const;

  /// Creates pass `argument` with `options`, after checking every option.
  /// Messages carry no location (the pipeline parser adds columns).
  absl::StatusOr<std::unique_ptr<Pass>>
  create(llvm::StringRef argument, const PassOptions &options = {}) const;

private:
  llvm::StringMap<std::unique_ptr<PassInfo>> passes_;
};

/// Registers every built-in pass into `registry`.
void registerAllPasses(PassRegistry &registry);

/// `parsePassPipeline` (see PassManager.h) over a registry other than the
/// global one, e.g. one holding test-only passes.
absl::Status parsePassPipeline(llvm::StringRef pipeline, PassManager &pm,
                               const PassRegistry &registry);

} // namespace remat

#endif // REMAT_PASS_PASSREGISTRY_H
