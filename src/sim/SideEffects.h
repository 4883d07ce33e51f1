// The instructions with effects outside tile memory: the random state
// (Rand, RandomSeed, Dropout; the engines' XORWOW generators of Rng, Rand2, SetRngSeed,
// RandSetState, RandGetState) and printing (Print, nl.device_print). Rare, so they run
// point by point instead of through the planned tile kernels.
#pragma once
#include <array>
#include <cstdint>
#include <ostream>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class SideEffects {
 public:
  SideEffects(std::vector<TensorMem>& mem, std::ostream& out) : mem_(mem), out_(out) {}
  void run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);

 private:
  double next_uniform();  // [0, 1), deterministic for a seed
  // One partition's generator: XORWOW's five words and its Weyl counter (words
  // 0-5, GpSimd's state); the Vector engine's further 18 words are kept as set.
  using Xorwow = std::array<uint32_t, 24>;
  static uint32_t next_bits(Xorwow& s);
  static Xorwow seeded(uint32_t seed, int64_t partition);
  std::vector<Xorwow>& generators(ir::Engine e);
  void xorwow(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);
  void dropout(const ir::Instruction& in, const int64_t* loops, const int64_t* pids);
  std::vector<TensorMem>& mem_;
  std::ostream& out_;
  uint64_t state_ = 0x9E3779B97F4A7C15ull;
  std::vector<Xorwow> vector_, gpsimd_;  // per partition, seeded with 0 until set
};

}  // namespace nkic::sim
