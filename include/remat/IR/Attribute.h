//===- Attribute.h - Op attributes -------------------------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Compile-time constants attached to ops (`{axis = 1, rate = 0.1}`). Attributes
/// keep the order in which they were written so that printing a parsed op gives
/// the same text.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_IR_ATTRIBUTE_H
#define REMAT_IR_ATTRIBUTE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

namespace remat {

/// What an attribute holds.
enum class AttrKind : uint8_t { Int, Float, Bool, String, IntList };

/// The spelling of an attribute kind in messages ("int", "float", ...).
llvm::StringRef attrKindName(AttrKind kind);

/// One attribute value. Ints and floats are distinct kinds: `1` is an int and
/// `1.0` a float; the registry's schema says which an op expects (a float
/// attribute accepts an int literal, see `Attribute::asFloat`).
class Attribute {
public:
  /// An empty int list, so that `{"axes", {}}` reads as the empty list it looks like.
  Attribute() : value_(std::vector<int64_t>()) {}
  Attribute(int v) : value_(int64_t(v)) {}
  Attribute(int64_t v) : value_(v) {}
  Attribute(double v) : value_(v) {}
  Attribute(bool v) : value_(v) {}
  Attribute(const char *v) : value_(std::string(v)) {}
  Attribute(std::string v) : value_(std::move(v)) {}
  Attribute(std::vector<int64_t> v) : value_(std::move(v)) {}
  Attribute(std::initializer_list<int64_t> v)
      : value_(std::vector<int64_t>(v)) {}

  AttrKind kind() const { return static_cast<AttrKind>(value_.index()); }
  bool is(AttrKind k) const { return kind() == k; }

  int64_t asInt() const { return std::get<int64_t>(value_); }
  /// The value of a float attribute, or of an int attribute widened to double.
  double asFloat() const {
    return is(AttrKind::Int) ? double(asInt()) : std::get<double>(value_);
  }
  bool asBool() const { return std::get<bool>(value_); }
  llvm::StringRef asString() const { return std::get<std::string>(value_); }
  llvm::ArrayRef<int64_t> asIntList() const {
    return std::get<std::vector<int64_t>>(value_);
  }

  /// Text form: `3`, `0.1`, `true`, `"same"`, `[1, 2]`. Floats print the
  /// shortest text that parses back to the same double, always with a `.` or
  /// exponent so that they stay floats.
  std::string str() const;

  friend bool operator==(const Attribute &a, const Attribute &b) {
    return a.value_ == b.value_;
  }
  friend bool operator!=(const Attribute &a, const Attribute &b) {
    return !(a == b);
  }

private:
  // The alternatives' order matches AttrKind.
  std::variant<int64_t, double, bool, std::string, std::vector<int64_t>> value_;
};

/// An attribute with its name.
struct NamedAttr {
  std::string name;
  Attribute value;

  friend bool operator==(const NamedAttr &a, const NamedAttr &b) {
    return a.name == b.name && a.value == b.value;
  }
};

/// Attributes in written order; names are unique (the verifier checks).
using AttrList = std::vector<NamedAttr>;

/// `attrs` stored once per process for each distinct list (floats compared
/// bit for bit) and kept until it ends: ops with equal attributes share one
/// list, and copying an op copies a pointer. The empty list takes no lock.
const AttrList *internAttrList(AttrList attrs);

/// The attribute named `name` in `attrs`, or null.
const Attribute *findAttr(llvm::ArrayRef<NamedAttr> attrs, llvm::StringRef name);

} // namespace remat

#endif // REMAT_IR_ATTRIBUTE_H
