// Tensor creation (nl.ndarray, nl.zeros / ones / full, nl.shared_constant) and nisa.memset;
// the DMAs are isa/Dma.cpp's.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"
#include "sema/OpTable.h"
#include "types/IndexAlgebra.h"

namespace nkic::codegen {

using ir::Memory;

TensorVal alloc_tensor(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype,
                       Memory memory, int partition_dim) {
  if (memory == Memory::SharedHBM && !b.at_top_region() && !b.current_api)
    b.fail(sema::err_shared_hbm_must_in_kernel_level());
  for (int64_t d : shape)
    if (d <= 0) b.fail(sema::err_invalid_shape(shape));
  if (!ir::is_hbm(memory)) {
    // Block dims [B.., P, F..] are deprecated: each block is a [P, F..] tile, checked as one.
    std::vector<int64_t> blocks_dropped;
    if (partition_dim > 0)
      blocks_dropped.assign(shape.begin() + std::min<size_t>(partition_dim, shape.size()), shape.end());
    const std::vector<int64_t>& tile = partition_dim > 0 ? blocks_dropped : shape;
    if (partition_dim > 0) b.warn(sema::warn_block_dimension_is_deprecated());
    sema::assert_min_rank(tile, 2, "on-chip tensor", b.raiser());
    sema::assert_par_dim(tile[0], memory, b.target(), b.raiser());
    sema::assert_free_dim(tile, dtype, memory, b.target(), b.raiser());
  }
  int id = b.add_tensor(b.tensor_name(name, "t"), std::move(shape), dtype, memory, ir::Role::Local);
  b.tensor_mut(id).partition_dim = partition_dim;
  return b.full_view(id);
}

TensorVal full(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype, Memory memory,
               double value, int partition_dim) {
  if (ir::is_hbm(memory)) b.fail(sema::err_hbm_tensor_with_init_value_not_supported());
  // nl.zeros / ones / full create a tensor with a value; nisa.memset is an instruction.
  if (b.direct_allocation && b.api().rfind("nl.", 0) == 0)
    b.fail(sema::err_tensor_creation_on_scratchpad_with_init_value_not_supported());
  TensorVal t = alloc_tensor(b, std::move(name), std::move(shape), dtype, memory, partition_dim);
  auto in = make_instruction(ir::Opcode::Memset, b, t, t.shape);
  in->imms = {value};
  b.emit(std::move(in));
  return t;
}

namespace {

// The current API's rule of its memset call (NKI_CURRENT_API.md §9.1).
// nisa.memset: the value is typed like dst (an integer for integer dtypes; packed x4 dtypes take 0 only).
void check_memset_value(KernelBuilder& b, const types::TensorVal& dst, double value, bool is_integer) {
  ir::DType t = b.tensor(dst.tensor).dtype;
  std::ostringstream v;
  v << value;
  if (ir::is_packed(t) && value != 0.0)
    b.fail(sema::err_memset_value_dtype(v.str(), ir::name(t), "packed x4 tensors are set to 0 only"));
  // A float with an integral value (the kernel library's `value=0.0` into uint32 tiles) fits.
  if (ir::is_integer(t) && !is_integer && value != std::trunc(value) &&
      !b.accepts("nisa.memset of a fractional value into an integer tensor"))
    b.fail(sema::err_memset_value_dtype(v.str(), ir::name(t), "an integer tensor takes an integer value"));
}

}  // namespace

TensorVal memset(KernelBuilder& b, const Dst& dst, std::vector<int64_t> shape, double value, bool integer_value,
                 ir::DType dtype) {
  if (!dst.given()) return full(b, "", std::move(shape), dtype, Memory::SBUF, value);
  check_memset_value(b, dst.view(), value, integer_value);
  const ir::TensorDecl& d = b.tensor(dst.view().tensor);
  TensorVal t = dst.resolve(b, "memset", dst.view().shape, d.dtype, d.memory);
  auto in = make_instruction(ir::Opcode::Memset, b, t, t.shape);
  in->imms = {value};
  b.emit(std::move(in));
  return t;
}

TensorVal shared_constant(KernelBuilder& b, std::vector<int64_t> shape, ir::DType dtype, std::vector<double> values) {
  for (int64_t d : shape)
    if (d <= 0) b.fail(sema::err_invalid_shape(shape));
  // Read-only: the Input role makes any store into it err_cannot_update_immutable_parameter.
  int id = b.add_tensor(b.tensor_name("", "const"), std::move(shape), dtype, Memory::SharedHBM, ir::Role::Input);
  b.tensor_mut(id).init = std::move(values);
  return b.full_view(id);
}

}  // namespace nkic::codegen
