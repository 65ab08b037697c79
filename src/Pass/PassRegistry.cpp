//===- PassRegistry.cpp - Creating passes by name ---------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Pass/PassRegistry.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <optional>

namespace remat {

//===----------------------------------------------------------------------===//
// PassOptions
//===----------------------------------------------------------------------===//

void PassOptions::set(llvm::StringRef key, llvm::StringRef value) {
  for (auto &entry : entries_)
    if (entry.first == key) {
      entry.second = value.str();
      return;
    }
  entries_.emplace_back(key.str(), value.str());
}

const std::string *PassOptions::lookup(llvm::StringRef key) const {
  for (const auto &entry : entries_)
    if (entry.first == key)
      return &entry.second;
  return nullptr;
}

/// Parses the text of a bool option; nullopt when it is not one.
static std::optional<bool> parseBool(llvm::StringRef text) {
  if (text == "true" || text == "1")
    return true;
  if (text == "false" || text == "0")
    return false;
  return std::nullopt;
}

absl::StatusOr<bool> PassOptions::getBool(llvm::StringRef key,
                                          bool defaultValue) const {
  const std::string *text = lookup(key);
  if (!text)
    return defaultValue;
  if (std::optional<bool> value = parseBool(*text))
    return *value;
  return invalidArgument("option '{}' expects true or false, got '{}'",
                         key.str(), *text);
}

absl::StatusOr<int64_t> PassOptions::getInt(llvm::StringRef key,
                                            int64_t defaultValue) const {
  const std::string *text = lookup(key);
  if (!text)
    return defaultValue;
  int64_t value = 0;
  // getAsInteger returns true on failure, including overflow.
  if (llvm::StringRef(*text).getAsInteger(10, value))
    return invalidArgument("option '{}' expects an integer, got '{}'",
                           key.str(), *text);
  return value;
}

std::string PassOptions::getString(llvm::StringRef key,
                                   llvm::StringRef defaultValue) const {
  const std::string *text = lookup(key);
  return text ? *text : defaultValue.str();
}

//===----------------------------------------------------------------------===//
// PassInfo
//===----------------------------------------------------------------------===//

const PassOptionInfo *PassInfo::findOption(llvm::StringRef name) const {
  for (const PassOptionInfo &option : options)
    if (option.name == name)
      return &option;
  return nullptr;
}

absl::Status PassInfo::checkOption(llvm::StringRef key,
                                   llvm::StringRef value) const {
  const PassOptionInfo *option = findOption(key);
  if (!option) {
    if (options.empty())
      return invalidArgument("pass '{}' takes no options, got '{}'", argument,
                             key.str());
    std::vector<std::string> names;
    for (const PassOptionInfo &o : options)
      names.push_back(o.name);
    return invalidArgument("pass '{}' has no option '{}' (it takes {})",
                           argument, key.str(), fmt::join(names, ", "));
  }
  int64_t ignored = 0;
  switch (option->kind) {
  case PassOptionKind::Bool:
    if (!parseBool(value))
      return invalidArgument(
          "option '{}' of pass '{}' expects true or false, got '{}'", key.str(),
          argument, value.str());
    break;
  case PassOptionKind::Int:
    if (value.getAsInteger(10, ignored))
      return invalidArgument(
          "option '{}' of pass '{}' expects an integer, got '{}'", key.str(),
          argument, value.str());
    break;
  case PassOptionKind::String:
    break;
  }
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// PassRegistry
//===----------------------------------------------------------------------===//

PassRegistry &PassRegistry::global() {
  static PassRegistry *registry = [] {
    auto *r = new PassRegistry();
    registerAllPasses(*r);
    return r;
  }();
  return *registry;
}

void PassRegistry::add(PassInfo info) {
  assert(!passes_.count(info.argument) && "pass registered twice");
  std::string argument = info.argument;
  passes_[argument] = std::make_unique<PassInfo>(std::move(info));
}

const PassInfo *PassRegistry::lookup(llvm::StringRef argument) const {
  auto it = passes_.find(argument);
  return it == passes_.end() ? nullptr : it->second.get();
}

std::vector<const PassInfo *> PassRegistry::all() const {
  std::vector<const PassInfo *> result;
  for (const auto &entry : passes_)
    result.push_back(entry.second.get());
  llvm::sort(result, [](const PassInfo *a, const PassInfo *b) {
    return a->argument < b->argument;
  });
  return result;
}

std::string PassRegistry::suggest(llvm::StringRef argument) const {
  // A third of the name, at least 2 edits, counts as a plausible typo.
  unsigned limit = std::max<unsigned>(2, argument.size() / 3);
  std::string best;
  unsigned bestDistance = limit + 1;
  for (const PassInfo *info : all()) {
    unsigned distance = llvm::StringRef(info->argument)
                            .edit_distance(argument, /*AllowReplacements=*/true,
                                           /*MaxEditDistance=*/limit);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = info->argument;
    }
  }
  return best;
}

absl::StatusOr<std::unique_ptr<Pass>>
PassRegistry::create(llvm::StringRef argument,
                     const PassOptions &options) const {
  const PassInfo *info = lookup(argument);
  if (!info) {
    std::string suggestion = suggest(argument);
    if (suggestion.empty())
      return invalidArgument("unknown pass '{}'", argument.str());
    return invalidArgument("unknown pass '{}'; did you mean '{}'?",
                           argument.str(), suggestion);
  }
  for (const auto &[key, value] : options.entries())
    REMAT_RETURN_IF_ERROR(info->checkOption(key, value));
  return info->factory(options);
}

} // namespace remat
