//===- ZooOptions.cpp - Strict parsing of model options -------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "ZooOptions.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace remat::zoo {

absl::Status OptionReader::checkKnown() const {
  for (const auto &[name, value] : options_) {
    bool found = false;
    for (const ZooOptionInfo &info : known_)
      found |= info.name == name;
    if (found)
      continue;
    std::vector<std::string> names;
    for (const ZooOptionInfo &info : known_)
      names.push_back("--" + info.name);
    return error("unknown option '--{}' (options: {})", name,
                 fmt::join(names, ", "));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> OptionReader::getInt(llvm::StringRef name,
                                             int64_t defaultValue, int64_t min,
                                             int64_t max) const {
  auto it = options_.find(name.str());
  if (it == options_.end())
    return defaultValue;
  int64_t value = 0;
  if (llvm::StringRef(it->second).getAsInteger(10, value))
    return error("option '--{}' must be an integer, got '{}'", name.str(),
                 it->second);
  if (value < min || value > max)
    return error("option '--{}' must be between {} and {}, got {}", name.str(),
                 min, max, value);
  return value;
}

absl::StatusOr<double> OptionReader::getFloat(llvm::StringRef name,
                                              double defaultValue, double min,
                                              double maxExclusive) const {
  auto it = options_.find(name.str());
  if (it == options_.end())
    return defaultValue;
  double value = 0;
  if (llvm::StringRef(it->second).getAsDouble(value) || !std::isfinite(value))
    return error("option '--{}' must be a number, got '{}'", name.str(),
                 it->second);
  if (!(value >= min && value < maxExclusive))
    return error("option '--{}' must be at least {} and below {}, got {}",
                 name.str(), min, maxExclusive, it->second);
  return value;
}

absl::StatusOr<bool> OptionReader::getFlag(llvm::StringRef name) const {
  auto it = options_.find(name.str());
  if (it == options_.end())
    return false;
  if (it->second == "true")
    return true;
  if (it->second == "false")
    return false;
  return error("option '--{}' must be true or false, got '{}'", name.str(),
               it->second);
}

absl::StatusOr<std::string>
OptionReader::getChoice(llvm::StringRef name, llvm::StringRef defaultValue,
                        llvm::ArrayRef<llvm::StringRef> choices) const {
  auto it = options_.find(name.str());
  if (it == options_.end())
    return defaultValue.str();
  for (llvm::StringRef choice : choices)
    if (choice == it->second)
      return it->second;
  std::vector<std::string> names(choices.begin(), choices.end());
  return error("option '--{}' must be one of {}, got '{}'", name.str(),
               fmt::join(names, ", "), it->second);
}

} // namespace remat::zoo
