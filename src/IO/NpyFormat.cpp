//===- NpyFormat.cpp - The .npy format --------------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A `.npy` file is the magic `\x93NUMPY`, a version byte pair, the header
/// length (2 bytes in version 1.0, 4 in 2.0 and 3.0, little-endian), the
/// header, a Python dict literal padded with spaces and ended by a newline,
/// then the raw elements:
///
///   \x93NUMPY 01 00 | 76 00 | {'descr': '<f4', 'fortran_order': False,
///                              'shape': (2, 3), }  ...spaces...\n | data
///
/// The reader accepts exactly the three keys numpy writes, in any order, and
/// nothing else; the writer pads like numpy 1.24 so that its bytes are
/// `np.save`'s.
///
//===----------------------------------------------------------------------===//

#include "remat/IO/Npy.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cassert>
#include <limits>
#include <optional>

namespace remat {
namespace {

static_assert(llvm::sys::IsLittleEndianHost,
              "the .npy reader and writer copy little-endian data as is");

constexpr llvm::StringLiteral kMagic("\x93NUMPY");
/// numpy aligns the data to this many bytes.
constexpr size_t kAlign = 64;
/// numpy pads the header for a first dimension of up to this many digits, so
/// that appending along it can rewrite the header in place.
constexpr size_t kGrowthAxisDigits = 21;

struct DTypeSpelling {
  DType dtype;
  llvm::StringLiteral descr;
};
constexpr DTypeSpelling kSpellings[] = {
    {DType::F16, "<f2"}, {DType::F32, "<f4"}, {DType::F64, "<f8"},
    {DType::I8, "|i1"},  {DType::I32, "<i4"}, {DType::I64, "<i8"},
    {DType::Bool, "|b1"}};

/// `text` with control and non-ASCII bytes escaped, so that a message quoting
/// a file stays on one line.
std::string escaped(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(text, os);
  return os.str();
}

std::optional<DType> dtypeOfDescr(llvm::StringRef descr) {
  for (const DTypeSpelling &spelling : kSpellings)
    if (spelling.descr == descr)
      return spelling.dtype;
  return std::nullopt;
}

llvm::StringRef descrOf(DType dtype) {
  for (const DTypeSpelling &spelling : kSpellings)
    if (spelling.dtype == dtype)
      return spelling.descr;
  assert(false && "dtype without a numpy spelling");
  return "";
}

/// The fields of a header dict.
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortranOrder;
  std::optional<llvm::SmallVector<int64_t, 4>> shape;
};

/// Reads the header dict, a Python literal; `rest` is what is left of it.
class HeaderParser {
public:
  explicit HeaderParser(llvm::StringRef text) : rest_(text) {}

  absl::StatusOr<Header> parse() {
    Header header;
    skipSpaces();
    if (!rest_.consume_front("{"))
      return error("expected '{'");
    while (true) {
      skipSpaces();
      if (rest_.consume_front("}"))
        break;
      REMAT_ASSIGN_OR_RETURN(std::string key, parseString());
      skipSpaces();
      if (!rest_.consume_front(":"))
        return error(fmt::format("expected ':' after '{}'", escaped(key)));
      skipSpaces();
      REMAT_RETURN_IF_ERROR(parseEntry(key, header));
      skipSpaces();
      if (rest_.consume_front(","))
        continue;
      if (!rest_.consume_front("}"))
        return error("expected ',' or '}'");
      break;
    }
    if (!llvm::StringRef(rest_).trim(" \t\r\n").empty())
      return error("text after '}'");
    for (auto [present, key] :
         {std::pair{header.descr.has_value(), "descr"},
          std::pair{header.fortranOrder.has_value(), "fortran_order"},
          std::pair{header.shape.has_value(), "shape"}})
      if (!present)
        return invalidArgument("bad header: no '{}' key", key);
    return header;
  }

private:
  absl::Status error(llvm::StringRef message) const {
    return invalidArgument("bad header: {} at '{}'", message.str(),
                           escaped(rest_.take_front(12)));
  }

  void skipSpaces() { rest_ = rest_.ltrim(" \t\r\n"); }

  absl::Status parseEntry(llvm::StringRef key, Header &header) {
    auto once = [&](bool seen) -> absl::Status {
      if (seen)
        return invalidArgument("bad header: key '{}' repeated", escaped(key));
      return absl::OkStatus();
    };
    if (key == "descr") {
      REMAT_RETURN_IF_ERROR(once(header.descr.has_value()));
      REMAT_ASSIGN_OR_RETURN(header.descr, parseString());
    } else if (key == "fortran_order") {
      REMAT_RETURN_IF_ERROR(once(header.fortranOrder.has_value()));
      REMAT_ASSIGN_OR_RETURN(header.fortranOrder, parseBool());
    } else if (key == "shape") {
      REMAT_RETURN_IF_ERROR(once(header.shape.has_value()));
      REMAT_ASSIGN_OR_RETURN(header.shape, parseShape());
    } else {
      return invalidArgument("bad header: unknown key '{}'", escaped(key));
    }
    return absl::OkStatus();
  }

  /// A quoted string without escapes: numpy's keys and dtype spellings.
  absl::StatusOr<std::string> parseString() {
    if (rest_.empty() || (rest_.front() != '\'' && rest_.front() != '"'))
      return error("expected a quoted string");
    char quote = rest_.front();
    size_t end = rest_.find(quote, 1);
    if (end == llvm::StringRef::npos)
      return error("unterminated string");
    llvm::StringRef text = rest_.slice(1, end);
    if (text.contains('\\') || text.contains('\n'))
      return error("unsupported string escape");
    rest_ = rest_.drop_front(end + 1);
    return text.str();
  }

  absl::StatusOr<bool> parseBool() {
    if (rest_.consume_front("True"))
      return true;
    if (rest_.consume_front("False"))
      return false;
    return error("expected True or False");
  }

  /// `()`, `(3,)` or `(2, 3)`; Python 2's `3L` is accepted.
  absl::StatusOr<llvm::SmallVector<int64_t, 4>> parseShape() {
    llvm::SmallVector<int64_t, 4> shape;
    if (!rest_.consume_front("("))
      return error("expected a shape tuple");
    while (true) {
      skipSpaces();
      if (rest_.consume_front(")"))
        return shape;
      unsigned long long dim = 0;
      if (rest_.empty() || !llvm::isDigit(rest_.front()) ||
          rest_.consumeInteger(10, dim) ||
          dim > uint64_t(std::numeric_limits<int64_t>::max()))
        return error("expected a dimension");
      rest_.consume_front("L");
      shape.push_back(int64_t(dim));
      skipSpaces();
      if (rest_.consume_front(","))
        continue;
      if (!rest_.consume_front(")"))
        return error("expected ',' or ')' in the shape");
      if (shape.size() == 1)
        return error("a one-element shape needs a trailing comma");
      return shape;
    }
  }

  llvm::StringRef rest_;
};

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  if (shape.size() == 1)
    return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

absl::StatusOr<NpyArray> arrayOf(const Header &header, llvm::StringRef data) {
  std::optional<DType> dtype = dtypeOfDescr(*header.descr);
  if (!dtype) {
    if (llvm::StringRef(*header.descr).startswith(">"))
      return invalidArgument("big-endian dtype '{}' is not supported",
                             escaped(*header.descr));
    std::string known;
    for (const DTypeSpelling &spelling : kSpellings)
      known += (known.empty() ? "" : ", ") + spelling.descr.str();
    return invalidArgument("unsupported dtype '{}' (remat reads {})",
                           escaped(*header.descr), known);
  }
  if (*header.fortranOrder)
    return invalidArgument("fortran_order arrays are not supported: save "
                           "np.ascontiguousarray(a) instead");
  NpyArray array{.type = Type(*dtype, *header.shape), .bytes = {}};
  std::optional<int64_t> bytes = array.type.checkedByteSize();
  if (!bytes)
    return invalidArgument("shape {} overflows int64 bytes",
                           shapeText(*header.shape));
  if (int64_t(data.size()) != *bytes)
    return invalidArgument("{} {} has {} bytes of data, expected {}",
                           *header.descr, shapeText(*header.shape),
                           data.size(), *bytes);
  if (*dtype == DType::Bool)
    for (size_t i = 0; i < data.size(); ++i)
      if (uint8_t(data[i]) > 1)
        return invalidArgument("bool element {} is {}, expected 0 or 1", i,
                               int(uint8_t(data[i])));
  array.bytes = data.str();
  return array;
}

} // namespace

absl::StatusOr<NpyArray> parseNpy(llvm::StringRef bytes) {
  if (!kMagic.startswith(bytes.take_front(kMagic.size())) || bytes.empty())
    return invalidArgument("not a .npy file (bad magic)");
  if (bytes.size() < kMagic.size() + 2)
    return invalidArgument("truncated header: {} bytes", bytes.size());
  uint8_t major = bytes[kMagic.size()], minor = bytes[kMagic.size() + 1];
  if (major < 1 || major > 3 || minor != 0)
    return invalidArgument("unsupported .npy format version {}.{}", major,
                           minor);
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagic.size() + 2 + lengthBytes;
  if (bytes.size() < prefix)
    return invalidArgument("truncated header: {} bytes", bytes.size());
  const char *lengthField = bytes.data() + kMagic.size() + 2;
  uint64_t headerLength =
      major == 1
          ? llvm::support::endian::read16le(lengthField)
          : llvm::support::endian::read32le(lengthField);
  if (bytes.size() - prefix < headerLength)
    return invalidArgument("truncated header: {} of {} bytes",
                           bytes.size() - prefix, headerLength);
  REMAT_ASSIGN_OR_RETURN(
      Header header,
      HeaderParser(bytes.substr(prefix, headerLength)).parse());
  return arrayOf(header, bytes.drop_front(prefix + headerLength));
}

std::string printNpy(const Type &type, llvm::StringRef bytes) {
  assert(int64_t(bytes.size()) == type.byteSize() && "data size mismatch");
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                  descrOf(type.dtype()).str(), shapeText(type.shape()));
  if (!type.isScalar())
    header.append(kGrowthAxisDigits - std::to_string(type.dim(0)).size(),
                  ' ');
  // numpy pads to the next multiple of kAlign, a whole kAlign when already
  // aligned, and switches to version 2.0 when the length needs 4 bytes.
  auto padded = [&](size_t prefix) {
    size_t used = prefix + header.size() + 1;
    return header.size() + 1 + (kAlign - used % kAlign);
  };
  bool wide = padded(kMagic.size() + 2 + 2) > 0xffff;
  size_t prefix = kMagic.size() + 2 + (wide ? 4 : 2);
  size_t headerLength = padded(prefix);

  std::string out(kMagic);
  out.push_back(char(wide ? 2 : 1));
  out.push_back(0);
  char length[4];
  if (wide)
    llvm::support::endian::write32le(length, uint32_t(headerLength));
  else
    llvm::support::endian::write16le(length, uint16_t(headerLength));
  out.append(length, wide ? 4 : 2);
  out += header;
  out.append(headerLength - header.size() - 1, ' ');
  out.push_back('\n');
  out += bytes;
  return out;
}

} // namespace remat
