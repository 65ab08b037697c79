//===- Attribute.cpp - Op attributes ----------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/IR/Attribute.h"
#include "remat/IR/AttributeHash.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

#include <cmath>
#include <mutex>

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

namespace {

/// Equality with floats compared bit for bit, as they hash
/// (`FloatHashing::ByBits`).
bool sameBits(const Attribute &a, const Attribute &b) {
  if (a.kind() != b.kind())
    return false;
  if (a.is(AttrKind::Float))
    return llvm::bit_cast<uint64_t>(a.asFloat()) ==
           llvm::bit_cast<uint64_t>(b.asFloat());
  return a == b;
}

/// Every distinct attribute list, for the life of the process, behind a
/// lock: graphs are built and copied on more than one thread.
class AttrListUniquer {
public:
  const AttrList *get(AttrList attrs) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = table_.find_as(attrs);
    if (found != table_.end())
      return *found;
    const AttrList *stored =
        new (arena_.Allocate()) AttrList(std::move(attrs));
    table_.insert(stored);
    return stored;
  }

private:
  /// Pointers as keys, hashed and found by the lists they point to.
  struct Info : llvm::DenseMapInfo<const AttrList *> {
    using DenseMapInfo::isEqual;
    static unsigned getHashValue(const AttrList &attrs) {
      llvm::hash_code hash = llvm::hash_value(attrs.size());
      for (const NamedAttr &attr : attrs)
        hash = llvm::hash_combine(
            hash, attr.name, hashAttribute(attr.value, FloatHashing::ByBits));
      return hash;
    }
    static unsigned getHashValue(const AttrList *attrs) {
      return getHashValue(*attrs);
    }
    static bool isEqual(const AttrList &attrs, const AttrList *stored) {
      if (stored == getEmptyKey() || stored == getTombstoneKey() ||
          stored->size() != attrs.size())
        return false;
      for (size_t i = 0, e = attrs.size(); i < e; ++i)
        if (attrs[i].name != (*stored)[i].name ||
            !sameBits(attrs[i].value, (*stored)[i].value))
          return false;
      return true;
    }
  };

  std::mutex mutex_;
  llvm::DenseSet<const AttrList *, Info> table_;
  /// The lists, never freed: they outlive every graph.
  llvm::SpecificBumpPtrAllocator<AttrList> arena_;
};

} // namespace

const AttrList *internAttrList(AttrList attrs) {
  // Leaked on purpose, as types are (Type.cpp).
  static const AttrList *empty = new AttrList();
  if (attrs.empty())
    return empty;
  static auto *uniquer = new AttrListUniquer();
  return uniquer->get(std::move(attrs));
}

llvm::hash_code hashAttribute(const Attribute &attr, FloatHashing floats) {
  switch (attr.kind()) {
  case AttrKind::Int: return llvm::hash_combine(attr.kind(), attr.asInt());
  case AttrKind::Float: {
    double value = attr.asFloat();
    // -0.0 == 0.0 as attributes, so by value both must hash alike.
    if (floats == FloatHashing::ByValue && value == 0.0)
      value = 0.0;
    return llvm::hash_combine(attr.kind(), llvm::bit_cast<uint64_t>(value));
  }
  case AttrKind::Bool: return llvm::hash_combine(attr.kind(), attr.asBool());
  case AttrKind::String:
    return llvm::hash_combine(attr.kind(), attr.asString());
  case AttrKind::IntList:
    return llvm::hash_combine(
        attr.kind(), llvm::hash_combine_range(attr.asIntList().begin(),
                                              attr.asIntList().end()));
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
