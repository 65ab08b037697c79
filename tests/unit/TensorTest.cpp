//===- TensorTest.cpp - Host tensors and element conversion -----------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace remat {
namespace {

TEST(TensorTest, StorageIsZeroedAndAligned) {
  HostTensor t(Type(DType::F32, {3, 5}));
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.view().raw()) % 64, 0u);
  for (float v : t.values<float>())
    EXPECT_EQ(v, 0);
  HostTensor empty(Type(DType::F64, {0, 4}));
  EXPECT_EQ(empty.view().raw(), nullptr);
  EXPECT_EQ(empty.numel(), 0);
}

TEST(TensorTest, CopiesAreDeep) {
  HostTensor a(Type(DType::I32, {2}));
  a.values<int32_t>()[0] = 7;
  HostTensor b = a;
  b.values<int32_t>()[0] = 8;
  EXPECT_EQ(a.at(0), 7);
  EXPECT_EQ(b.at(0), 8);
  HostTensor c;
  c = b;
  EXPECT_EQ(c.type(), b.type());
  EXPECT_EQ(c.at(0), 8);
  EXPECT_NE(c.view().raw(), b.view().raw());
  // A default-constructed tensor has no storage, and neither has its copy.
  HostTensor none;
  HostTensor noneCopy = none;
  EXPECT_EQ(noneCopy.view().raw(), nullptr);
}

TEST(TensorTest, ConvertsEveryDType) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16,
                      DType::I8, DType::I32, DType::I64}) {
    HostTensor t(Type(dtype, {2}));
    setElementFromDouble(t.view(), 1, -3);
    EXPECT_EQ(elementAsDouble(t.view(), 1), -3) << dtypeName(dtype).str();
    EXPECT_EQ(t.at(0), 0);
  }
  HostTensor flags(Type(DType::Bool, {2}));
  setElementFromDouble(flags.view(), 0, 0.5);
  EXPECT_EQ(flags.at(0), 1);
  EXPECT_EQ(flags.at(1), 0);
}

TEST(TensorTest, IntegersTruncateAndSaturate) {
  HostTensor t(Type(DType::I8, {4}));
  setElementFromDouble(t.view(), 0, 2.9);
  setElementFromDouble(t.view(), 1, -1000);
  setElementFromDouble(t.view(), 2, 1000);
  setElementFromDouble(t.view(), 3, std::nan(""));
  EXPECT_EQ(t.at(0), 2);
  EXPECT_EQ(t.at(1), -128);
  EXPECT_EQ(t.at(2), 127);
  EXPECT_EQ(t.at(3), 0);
  HostTensor big(Type(DType::I64, {1}));
  setElementFromDouble(big.view(), 0, 1e30);
  EXPECT_EQ(big.values<int64_t>()[0], std::numeric_limits<int64_t>::max());
}

TEST(TensorTest, HalfPrecisionRounding) {
  HostTensor h(Type(DType::F16, {5}));
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1.
  setElementFromDouble(h.view(), 0, 1 + std::ldexp(1, -11));
  // The largest half is 65504; 1e6 overflows to infinity.
  setElementFromDouble(h.view(), 1, 65504);
  setElementFromDouble(h.view(), 2, 1e6);
  // The smallest subnormal half is 2^-24.
  setElementFromDouble(h.view(), 3, std::ldexp(1, -24));
  setElementFromDouble(h.view(), 4, -0.1);
  EXPECT_EQ(h.at(0), 1);
  EXPECT_EQ(h.at(1), 65504);
  EXPECT_EQ(h.at(2), std::numeric_limits<double>::infinity());
  EXPECT_EQ(h.at(3), std::ldexp(1, -24));
  // -0.1 in half is -0.0999755859375 (0x2e66: 1.599609375 * 2^-4).
  EXPECT_EQ(h.at(4), -0.0999755859375);
  HostTensor b(Type(DType::BF16, {2}));
  // bf16 keeps 8 significant bits: 1 + 2^-8 is a tie and rounds to 1; 1.5
  // is exact.
  setElementFromDouble(b.view(), 0, 1 + std::ldexp(1, -8));
  setElementFromDouble(b.view(), 1, 1.5);
  EXPECT_EQ(b.at(0), 1);
  EXPECT_EQ(b.at(1), 1.5);
}

} // namespace
} // namespace remat
