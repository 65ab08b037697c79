//===- Attribute.cpp - Op attributes ----------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Attribute.h"

#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

#include <cmath>

namespace remat {

llvm::StringRef attrKindName(AttrKind kind) {
  switch (kind) {
  case AttrKind::Int: return "int";
  case AttrKind::Float: return "float";
  case AttrKind::Bool: return "bool";
  case AttrKind::String: return "string";
  case AttrKind::IntList: return "int list";
  }
  llvm_unreachable("unknown attribute kind");
}

/// Shortest round-trip text of `v` that still reads as a float literal.
static std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return text;
}

/// Writes `s` as a double-quoted string with `\"`, `\\` and `\n` escaped, and
/// other control bytes as `\xHH`.
static std::string quoteString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      else
        out += c;
    }
  }
  return out + "\"";
}

std::string Attribute::str() const {
  switch (kind()) {
  case AttrKind::Int: return fmt::format("{}", asInt());
  case AttrKind::Float: return formatFloat(std::get<double>(value_));
  case AttrKind::Bool: return asBool() ? "true" : "false";
  case AttrKind::String: return quoteString(asString());
  case AttrKind::IntList: return fmt::format("[{}]", fmt::join(asIntList(), ", "));
  }
  llvm_unreachable("unknown attribute kind");
}

const Attribute *findAttr(llvm::ArrayRef<NamedAttr> attrs, llvm::StringRef name) {
  for (const NamedAttr &attr : attrs)
    if (attr.name == name)
      return &attr.value;
  return nullptr;
}

} // namespace remat
