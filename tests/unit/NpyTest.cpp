//===- NpyTest.cpp - numpy .npy and .npz files ----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The `.npy` reader on hand-written bytes (every format version, every
/// dtype) and on every kind of malformed header; the writer against bytes
/// computed by hand (numpy's padding); `.npz` round trips, stored and
/// deflated; and files numpy itself wrote (scripts/make-npy-fixtures.py).
///
//===----------------------------------------------------------------------===//

#include "remat/IO/Npy.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#ifndef REMAT_NPY_FIXTURE_DIR
#error "REMAT_NPY_FIXTURE_DIR must name tests/fixtures/npy"
#endif

namespace remat {
namespace {

using ::testing::HasSubstr;

/// `values` as their little-endian bytes (the host's order, see Npy.cpp).
template <typename T> std::string bytesOf(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

/// A .npy file of format `major`.0 with `header` as is (no padding).
std::string npyFile(int major, llvm::StringRef header, llvm::StringRef data) {
  std::string out("\x93NUMPY", 6);
  out.push_back(char(major));
  out.push_back(0);
  size_t length = header.size();
  out.push_back(char(length & 0xff));
  out.push_back(char((length >> 8) & 0xff));
  if (major > 1) {
    out.push_back(char((length >> 16) & 0xff));
    out.push_back(char((length >> 24) & 0xff));
  }
  return out + header.str() + data.str();
}

std::string readFixture(llvm::StringRef name) {
  std::ifstream in(std::string(REMAT_NPY_FIXTURE_DIR) + "/" + name.str(),
                   std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  EXPECT_TRUE(in.good() || in.eof()) << name.str();
  return buffer.str();
}

/// Bytes that must fail to parse with a one-line message containing `error`.
struct MalformedCase {
  std::string bytes;
  const char *error;
};

template <typename T> std::vector<T> valuesOf(const NpyArray &array) {
  std::vector<T> values(array.bytes.size() / sizeof(T));
  std::memcpy(values.data(), array.bytes.data(), array.bytes.size());
  return values;
}

TEST(NpyTest, ReadsEveryVersionAndDType) {
  std::string floats = bytesOf<float>({1, 2, 3, 4, 5, 6});
  for (int major : {1, 2, 3}) {
    absl::StatusOr<NpyArray> array = parseNpy(npyFile(
        major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n",
        floats));
    ASSERT_TRUE(array.ok()) << major << ": " << array.status();
    EXPECT_EQ(array->type, Type(DType::F32, {2, 3}));
    EXPECT_EQ(array->bytes, floats);
  }
  struct Case {
    const char *descr;
    const char *shape;
    std::string data;
    Type type;
  };
  std::vector<Case> cases = {
      {"<f8", "(2,)", bytesOf<double>({0.5, -1}), Type(DType::F64, {2})},
      {"<i4", "(1, 1, 2)", bytesOf<int32_t>({7, -7}), Type(DType::I32, {1, 1, 2})},
      {"<i8", "()", bytesOf<int64_t>({int64_t(1) << 40}), Type(DType::I64, {})},
      {"|b1", "(3,)", std::string("\1\0\1", 3), Type(DType::Bool, {3})},
      {"|i1", "(2,)", std::string("\xff\x05", 2), Type(DType::I8, {2})},
      {"<f2", "(1,)", std::string("\x00\x3c", 2), Type(DType::F16, {1})},
      {"<f4", "(0, 5)", "", Type(DType::F32, {0, 5})},
  };
  for (const Case &c : cases) {
    // Keys in another order, double quotes, no trailing comma: all Python.
    std::string header =
        fmt::format("{{\"shape\": {}, 'fortran_order': False, 'descr': '{}'}}",
                    c.shape, c.descr);
    absl::StatusOr<NpyArray> array = parseNpy(npyFile(1, header, c.data));
    ASSERT_TRUE(array.ok()) << c.descr << ": " << array.status();
    EXPECT_EQ(array->type, c.type) << c.descr;
    EXPECT_EQ(array->bytes, c.data) << c.descr;
  }
}

TEST(NpyTest, WritesNumpysBytes) {
  // np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3)): the dict is 59
  // characters, plus 21 - len("2") = 20 spaces for growing axis 0; with the
  // 10-byte prefix and the newline that is 90 bytes, padded to 128 with 38
  // more spaces: header length 118 = 0x76.
  std::string data = bytesOf<float>({0, 1, 2, 3, 4, 5});
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                         "{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(2, 3), }" +
                         std::string(58, ' ') + "\n" + data;
  EXPECT_EQ(printNpy(Type(DType::F32, {2, 3}), data), expected);

  // A scalar has no axis to grow: 55 + 10 + 1 = 66 bytes, padded to 128 with
  // 62 spaces, header length 118 again.
  std::string scalar = bytesOf<double>({2.5});
  EXPECT_EQ(printNpy(Type(DType::F64, {}), scalar),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" +
                std::string(62, ' ') + "\n" + scalar);

  // What numpy wrote for the same array.
  EXPECT_EQ(printNpy(Type(DType::F32, {2, 3}),
                     bytesOf<float>({0, .25, .5, .75, 1, 1.25})),
            readFixture("w.npy"));
}

TEST(NpyTest, RoundTripsEveryDType) {
  std::vector<std::pair<Type, std::string>> cases = {
      {Type(DType::F32, {3}), bytesOf<float>({1.5f, -2, 0})},
      {Type(DType::F64, {1, 2}), bytesOf<double>({1e300, -0.0})},
      {Type(DType::I32, {}), bytesOf<int32_t>({-123})},
      {Type(DType::I64, {2, 1}), bytesOf<int64_t>({-(int64_t(1) << 62), 9})},
      {Type(DType::I8, {2}), std::string("\x80\x7f", 2)},
      {Type(DType::Bool, {2, 2}), std::string("\0\1\1\0", 4)},
      {Type(DType::F32, {3, 0}), ""},
  };
  for (const auto &[type, data] : cases) {
    std::string file = printNpy(type, data);
    // The data starts 64-byte aligned, as numpy's does.
    EXPECT_EQ((file.size() - data.size()) % 64, 0u) << type.str();
    absl::StatusOr<NpyArray> array = parseNpy(file);
    ASSERT_TRUE(array.ok()) << type.str() << ": " << array.status();
    EXPECT_EQ(array->type, type);
    EXPECT_EQ(array->bytes, data);
  }
}

TEST(NpyTest, LongHeadersUseVersion2) {
  // 22000 dimensions of 1 need more than 65535 header bytes ("1, " each).
  std::vector<int64_t> shape(22000, 1);
  Type type(DType::F32, shape);
  std::string file = printNpy(type, bytesOf<float>({4}));
  EXPECT_EQ(file[6], 2);
  EXPECT_EQ((file.size() - 4) % 64, 0u);
  absl::StatusOr<NpyArray> array = parseNpy(file);
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->type, type);
}

TEST(NpyTest, MalformedFilesFailWithOneLine) {
  const std::string good =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  std::string two = bytesOf<float>({1, 2});
  std::string full = npyFile(1, good, two);
  std::vector<MalformedCase> cases = {
      {"", "not a .npy file (bad magic)"},
      {"PK\3\4 zip", "not a .npy file (bad magic)"},
      {"\x93NUMPX\1\0", "not a .npy file (bad magic)"},
      {std::string("\x93NUM"), "truncated header: 4 bytes"},
      {full.substr(0, 9), "truncated header: 9 bytes"},
      {full.substr(0, 40), "truncated header: 30 of 58 bytes"},
      {npyFile(4, good, two), "unsupported .npy format version 4.0"},
      {std::string("\x93NUMPY\1\1\0\0", 10), "unsupported .npy format version 1.1"},
      {npyFile(1, "['descr']", two), "bad header: expected '{' at '['descr']'"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False}", two),
       "bad header: no 'shape' key"},
      {npyFile(1, "{'descr': '<f4', 'descr': '<f4'", two),
       "bad header: key 'descr' repeated"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                  "'extra': 1}",
               two),
       "bad header: unknown key 'extra'"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", two),
       "bad header: expected True or False at '0, 'shape':"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
               two),
       "bad header: a one-element shape needs a trailing comma"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
               two),
       "bad header: expected a dimension at '-2,)}'"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': "
                  "(99999999999999999999,)}",
               two),
       "bad header: expected a dimension"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
               two),
       "bad header: text after '}'"},
      {npyFile(1, "{'descr': '<f4, 'fortran_order': False}", two),
       "bad header: expected ',' or '}' at 'fortran_orde'"},
      {npyFile(1, "{'descr': '<f4", two), "bad header: unterminated string"},
      // Quoted bytes are escaped: the message stays on one line.
      {npyFile(1, "{\x01\n}", two),
       "bad header: expected a quoted string at '\\01\\0A}'"},
      {npyFile(1, "{'descr': '<f4', ", two), "bad header: expected a quoted string"},
      {npyFile(1, "{'descr': '<f4' 'shape': (2,)}", two),
       "bad header: expected ',' or '}'"},
      {npyFile(1, good, two.substr(0, 7)), "<f4 (2,) has 7 bytes of data, expected 8"},
      {npyFile(1, good, two + "x"), "<f4 (2,) has 9 bytes of data, expected 8"},
      {npyFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
               two),
       "big-endian dtype '>f4' is not supported"},
      {npyFile(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (4,)}",
               two),
       "unsupported dtype '<u2' (remat reads <f2, <f4, <f8, |i1, <i4, <i8, "
       "|b1)"},
      {npyFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}",
               two),
       "fortran_order arrays are not supported"},
      {npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': "
                  "(4294967296, 4294967296)}",
               two),
       "shape (4294967296, 4294967296) overflows int64 bytes"},
      {npyFile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}",
               std::string("\1\2", 2)),
       "bool element 1 is 2, expected 0 or 1"},
  };
  for (const MalformedCase &c : cases) {
    absl::StatusOr<NpyArray> array = parseNpy(c.bytes);
    ASSERT_FALSE(array.ok()) << c.error;
    EXPECT_THAT(std::string(array.status().message()), HasSubstr(c.error));
    EXPECT_EQ(std::string(array.status().message()).find('\n'),
              std::string::npos);
  }
}

NamedArrays sampleArrays() {
  NamedArrays arrays;
  arrays.emplace_back("w", NpyArray{Type(DType::F32, {2, 2}),
                                    bytesOf<float>({1, 2, 3, 4})});
  arrays.emplace_back("w.grad", NpyArray{Type(DType::F64, {}),
                                         bytesOf<double>({-0.5})});
  arrays.emplace_back("block1/ids", NpyArray{Type(DType::I64, {3}),
                                             bytesOf<int64_t>({1, 2, 3})});
  arrays.emplace_back("none", NpyArray{Type(DType::Bool, {0}), ""});
  return arrays;
}

TEST(NpzTest, RoundTripsStoredAndDeflated) {
  NamedArrays arrays = sampleArrays();
  for (NpzCompressionKind kind :
       {NpzCompressionKind::Stored, NpzCompressionKind::Deflated}) {
    absl::StatusOr<std::string> bytes = printNpz(arrays, kind);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(bytes->substr(0, 4), std::string("PK\3\4"));
    // Same arrays, same bytes.
    EXPECT_EQ(*printNpz(arrays, kind), *bytes);
    absl::StatusOr<NamedArrays> back = parseNpz(*bytes, "a.npz");
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(back->size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      EXPECT_EQ((*back)[i].first, arrays[i].first);
      EXPECT_EQ((*back)[i].second.type, arrays[i].second.type);
      EXPECT_EQ((*back)[i].second.bytes, arrays[i].second.bytes);
    }
  }
  // Stored members hold the .npy bytes verbatim; deflated ones do not.
  std::string member = printNpy(arrays[0].second.type, arrays[0].second.bytes);
  EXPECT_NE(printNpz(arrays, NpzCompressionKind::Stored)->find(member),
            std::string::npos);
  EXPECT_EQ(printNpz(arrays, NpzCompressionKind::Deflated)->find(member),
            std::string::npos);
  absl::StatusOr<std::string> empty =
      printNpz({}, NpzCompressionKind::Stored);
  ASSERT_TRUE(empty.ok()) << empty.status();
  absl::StatusOr<NamedArrays> none = parseNpz(*empty, "empty.npz");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(NpzTest, ReadsWhatNumpyWrote) {
  // np.savez and np.savez_compressed of the same arrays (see the script).
  for (const char *file : {"stored.npz", "deflated.npz"}) {
    absl::StatusOr<NamedArrays> arrays = parseNpz(readFixture(file), file);
    ASSERT_TRUE(arrays.ok()) << arrays.status();
    ASSERT_EQ(arrays->size(), 7u) << file;
    const NamedArrays &a = *arrays;
    EXPECT_EQ(a[0].first, "w");
    EXPECT_EQ(a[0].second.type, Type(DType::F32, {2, 3}));
    EXPECT_EQ(valuesOf<float>(a[0].second),
              (std::vector<float>{0, .25, .5, .75, 1, 1.25}));
    EXPECT_EQ(a[1].first, "x");
    EXPECT_EQ(valuesOf<double>(a[1].second),
              (std::vector<double>{-1.5, 2.0, 1e-3}));
    EXPECT_EQ(a[2].first, "labels");
    EXPECT_EQ(a[2].second.type, Type(DType::I32, {2, 2}));
    EXPECT_EQ(valuesOf<int32_t>(a[2].second),
              (std::vector<int32_t>{3, -2, 7, 0}));
    EXPECT_EQ(a[3].first, "ids");
    EXPECT_EQ(valuesOf<int64_t>(a[3].second),
              (std::vector<int64_t>{int64_t(1) << 40, -5}));
    EXPECT_EQ(a[4].first, "mask");
    EXPECT_EQ(a[4].second.type, Type(DType::Bool, {3}));
    EXPECT_EQ(a[4].second.bytes, std::string("\1\0\1", 3));
    EXPECT_EQ(a[5].first, "scale");
    EXPECT_EQ(a[5].second.type, Type(DType::F32, {}));
    EXPECT_EQ(valuesOf<float>(a[5].second), (std::vector<float>{2.5}));
    EXPECT_EQ(a[6].first, "empty");
    EXPECT_EQ(a[6].second.type, Type(DType::F32, {0, 4}));
  }
}

TEST(NpzTest, MalformedArchivesFailWithOneLocatedLine) {
  std::string stored = readFixture("stored.npz");
  std::string corrupt = stored;
  // Byte 200 lies in the data of the first member ("w.npy" starts at 0 with
  // a local header of 30 + 5 + 20 bytes; its 152 bytes follow): the CRC no
  // longer matches.
  corrupt[200] ^= 0x40;
  std::vector<MalformedCase> cases = {
      {"", "f.npz: error: not an .npz (zip) archive: "},
      {"not a zip file at all", "f.npz: error: not an .npz (zip) archive: "},
      {stored.substr(0, stored.size() / 2),
       "f.npz: error: not an .npz (zip) archive: "},
      {corrupt, "f.npz: error: member 'w.npy': CRC error"},
      {readFixture("bad-member-name.npz"),
       "f.npz: error: member 'notes.txt': not a .npy file"},
      {readFixture("bad-member-data.npz"),
       "f.npz: error: member 'x.npy': bad header: expected a quoted string"},
      {readFixture("duplicate-member.npz"),
       "f.npz: error: the archive holds two members of the same name"},
  };
  for (const MalformedCase &c : cases) {
    absl::StatusOr<NamedArrays> arrays = parseNpz(c.bytes, "f.npz");
    if (arrays.ok()) {
      ADD_FAILURE() << "no error, expected " << c.error;
      continue;
    }
    EXPECT_THAT(std::string(arrays.status().message()), HasSubstr(c.error));
    EXPECT_EQ(std::string(arrays.status().message()).find('\n'),
              std::string::npos);
  }
}

TEST(NpyFileTest, ReadsByExtensionAndLocatesErrors) {
  std::string dir = REMAT_NPY_FIXTURE_DIR;
  absl::StatusOr<NamedArrays> single = readArrayFile(dir + "/w.npy");
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_EQ(single->size(), 1u);
  EXPECT_EQ((*single)[0].first, "w");
  EXPECT_EQ((*single)[0].second.type, Type(DType::F32, {2, 3}));

  absl::StatusOr<NamedArrays> fortran = readArrayFile(dir + "/fortran.npy");
  ASSERT_FALSE(fortran.ok());
  EXPECT_THAT(std::string(fortran.status().message()),
              HasSubstr("fortran.npy: error: fortran_order arrays are not "
                        "supported"));

  absl::StatusOr<NamedArrays> missing = readArrayFile(dir + "/missing.npz");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("missing.npz: error: cannot read file: "));

  absl::StatusOr<NamedArrays> other = readArrayFile(dir + "/w.txt");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()),
              HasSubstr("w.txt: error: expected a .npy or .npz file"));
}

} // namespace
} // namespace remat
