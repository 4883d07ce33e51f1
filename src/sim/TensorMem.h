// One tensor's memory while a kernel runs, shared by the instruction kernels
// (TileExec) and the affine-loop race check (RaceCheck).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/SmallVec.h"

namespace nkic::sim {

struct TensorMem {
  const ir::TensorDecl* decl = nullptr;
  std::byte* data = nullptr;
  ir::SmallVec<int64_t, 4> strides;  // row-major, in elements (in place: one TensorMem per tensor)
  bool tracked = false;          // reads of never-written elements are errors
  // PSUM: an accumulation into an element never written in this instance starts
  // an accumulation group (the hardware writes instead of adding), so the
  // written flags are kept for PSUM even when reads are not checked.
  bool accumulator = false;
  // One flag per element, when tracked or accumulator. A reshape/view of the same
  // element size shares its base's flags, so a write through either marks both.
  class Flags {
   public:
    uint8_t& operator[](size_t i) { return (*v_)[i]; }
    uint8_t operator[](size_t i) const { return (*v_)[i]; }
    uint8_t& at(size_t i) { return v_->at(i); }
    uint8_t* data() { return v_->data(); }
    const uint8_t* data() const { return v_->data(); }
    bool empty() const { return !v_ || v_->empty(); }
    void assign(size_t n, uint8_t x) { own().assign(n, x); }
    // From now on both read and write one list (the base's, made now if it has none yet).
    void share(Flags& base) {
      base.own();
      v_ = base.v_;
    }

   private:
    std::vector<uint8_t>& own() {
      if (!v_) v_ = std::make_shared<std::vector<uint8_t>>();
      return *v_;
    }
    // Made when first assigned or shared: most tensors (a kernel may have one per
    // traced instruction) never track their writes.
    std::shared_ptr<std::vector<uint8_t>> v_;
  };
  Flags written;
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
