// One tensor's memory while a kernel runs, shared by the instruction kernels
// (TileExec) and the affine-loop race check (RaceCheck).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace nkic::sim {

struct TensorMem {
  const ir::TensorDecl* decl = nullptr;
  std::byte* data = nullptr;
  std::vector<int64_t> strides;  // row-major, in elements
  bool tracked = false;          // reads of never-written elements are errors
  // PSUM: an accumulation into an element never written in this instance starts
  // an accumulation group (the hardware writes instead of adding), so the
  // written flags are kept for PSUM even when reads are not checked.
  bool accumulator = false;
  std::vector<uint8_t> written;  // one flag per element, when tracked or accumulator
  // Fresh per-instance memory not yet filled with the never-read pattern: the
  // fill waits for the first instruction touching the tensor, and is skipped
  // when that instruction overwrites every element without reading any.
  bool pending_fill = false;
};

// Fills `t` with values a correct kernel never reads: NaN in float formats,
// 0x5A bytes in integer ones.
void fill_fresh(const TensorMem& t);
// Fills `t` now if its fill is pending (instructions that run point by point).
void ensure_filled(TensorMem& t);

// "[3, 17]": the index of element `at` (a row-major offset) of `t`.
std::string element_str(const TensorMem& t, int64_t at);

}  // namespace nkic::sim
