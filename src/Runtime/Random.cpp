//===- Random.cpp - Counter-based random numbers ---------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Random.h"

#include "llvm/Support/xxhash.h"

#include <Random123/philox.h>

#include <cmath>

namespace remat {

static inline r123::Philox4x32::ctr_type philoxBlock(uint64_t key,
                                                     uint64_t block) {
  r123::Philox4x32::ctr_type counter = {
      {uint32_t(block), uint32_t(block >> 32), 0, 0}};
  r123::Philox4x32::key_type philoxKey = {{uint32_t(key), uint32_t(key >> 32)}};
  return r123::Philox4x32()(counter, philoxKey);
}

std::array<uint32_t, 4> randomBlock(uint64_t key, uint64_t block) {
  r123::Philox4x32::ctr_type words = philoxBlock(key, block);
  return {words[0], words[1], words[2], words[3]};
}

void fillRandomBits(uint64_t key, uint64_t firstIndex,
                    llvm::MutableArrayRef<uint32_t> bits) {
  size_t j = 0;
  // A partial first block.
  for (; j < bits.size() && (firstIndex + j) % 4 != 0; ++j)
    bits[j] = randomBits(key, firstIndex + j);
  for (; j + 4 <= bits.size(); j += 4) {
    r123::Philox4x32::ctr_type words = philoxBlock(key, (firstIndex + j) / 4);
    for (unsigned w = 0; w < 4; ++w)
      bits[j + w] = words[w];
  }
  // A partial last block.
  if (j < bits.size()) {
    r123::Philox4x32::ctr_type words = philoxBlock(key, (firstIndex + j) / 4);
    for (unsigned w = 0; j < bits.size(); ++j, ++w)
      bits[j] = words[w];
  }
}

uint32_t randomBits(uint64_t key, uint64_t index) {
  return randomBlock(key, index / 4)[index % 4];
}

double randomUniform(uint64_t key, uint64_t index) {
  return double(randomBits(key, index)) * 0x1p-32;
}

uint64_t dropoutThreshold(double rate) {
  // Written so that NaN gives 0 (keep everything).
  if (!(rate > 0))
    return 0;
  if (rate >= 1)
    return uint64_t(1) << 32;
  return uint64_t(std::nearbyint(std::ldexp(rate, 32)));
}

bool dropoutKeeps(uint64_t seed, uint64_t index, double rate) {
  return randomBits(seed, index) >= dropoutThreshold(rate);
}

uint64_t streamKey(uint64_t seed, llvm::StringRef name) {
  // Little-endian seed bytes, then the name: the same key on every host.
  std::string bytes(8, '\0');
  for (unsigned i = 0; i < 8; ++i)
    bytes[i] = char(uint8_t(seed >> (8 * i)));
  bytes.append(name.data(), name.size());
  return llvm::xxHash64(bytes);
}

} // namespace remat
