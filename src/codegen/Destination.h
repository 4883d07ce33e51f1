// Where an ISA builder writes: the one destination both front ends hand it. The
// current API passes the caller's view (nisa.op(dst=..., ...)), written in place; the
// legacy API asks for a fresh tile, which its call then returns. Every builder takes a
// Dst and resolves it once, so the IR holds one instruction per ISA instruction, each
// writing the caller's dst itself.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

class Dst {
 public:
  // A fresh tile the builder allocates (its shape, dtype and memory are the builder's).
  static Dst fresh() { return Dst(); }
  // The caller's view: the builder's result is written into it.
  // Held by reference, like a string_view: a Dst lives for one builder call, and the view
  // (an argument of that call) outlives it; no copy of the view on every call.
  static Dst into(const types::TensorVal& view) { return Dst(view); }

  bool given() const { return view_ != nullptr; }
  const types::TensorVal& view() const { return *view_; }
  // The dtype of the result: the view's own, or the builder's `dflt` for a fresh tile.
  ir::DType dtype(const KernelBuilder& b, ir::DType dflt) const;

  // The tile an instruction over result shape `shape` writes. Fresh: a new tile named
  // after `hint`, of `dtype` in `memory`. Given: the caller's view fitted to `shape`
  // (equal shapes, equal up to unit dims, or the same partitions and elements per
  // partition, which the engines walk flat); its dtype and memory are its own.
  types::TensorVal resolve(KernelBuilder& b, const std::string& hint, std::vector<int64_t> shape, ir::DType dtype,
                           ir::Memory memory) const;

 private:
  Dst() = default;
  explicit Dst(const types::TensorVal& v) : view_(&v) {}
  const types::TensorVal* view_ = nullptr;
};

// The access an instruction writes through `result` (a resolved Dst) when it writes
// result's element `index` (one expression per result dim, over the instruction's
// iteration space): result's own view composed with it.
ir::Access write_access(const KernelBuilder& b, const types::TensorVal& result, const std::vector<ir::AffineExpr>& index);

// nisa.nc_matmul / nc_matmul_mx into a given PSUM dst: the accumulate flag of the matmuls
// emitted since `mark` (an insertion_size()) that write dst: `accumulate`, or for None, the
// inference that a matmul whose dst elements an earlier matmul of this kernel wrote
// accumulates and the first write of a location overwrites.
void mark_matmul_accumulation(KernelBuilder& b, size_t mark, const types::TensorVal& dst,
                              std::optional<bool> accumulate);

// nisa.nc_matmul(dst, ..., accumulate=): a matmul into the caller's view, which must be in
// PSUM. begin() before the builder emits, end() after: the accumulate flags above, and the
// official simulator's warning for accumulate=True into a PSUM tile nothing wrote yet.
class MatmulInto {
 public:
  MatmulInto(KernelBuilder& b, const types::TensorVal& dst);
  void end(KernelBuilder& b, const types::TensorVal& dst, std::optional<bool> accumulate) const;

 private:
  size_t mark_;
  bool fresh_;
};

}  // namespace nkic::codegen
