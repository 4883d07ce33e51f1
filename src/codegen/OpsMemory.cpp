#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"

namespace nkic::codegen {

using ir::Memory;

namespace {

std::unique_ptr<ir::Instruction> instruction(ir::Opcode op, const KernelBuilder& b, const TensorVal& dst,
                                             const std::vector<int64_t>& iter) {
  auto in = std::make_unique<ir::Instruction>();
  in->opcode = op;
  in->shape = iter;
  in->dst = access_for(b, dst, iter);
  return in;
}

std::string view_str(const KernelBuilder& b, const TensorVal& v) {
  return b.tensor(v.tensor).name + sema::shape_str(v.shape);
}

// A value assigned into `dst` must broadcast to exactly dst's shape.
void check_fits(KernelBuilder& b, const TensorVal& dst, const TensorVal& src) {
  std::vector<int64_t> s = types::broadcast_shapes(dst.shape, src.shape);
  if (s != dst.shape)
    b.fail(sema::err_store_dst_shape_smaller_than_other_shape(view_str(b, dst), view_str(b, src)));
}

ir::Opcode copy_opcode(Memory dst, Memory src) {
  if (ir::is_hbm(dst)) return ir::Opcode::Store;
  if (ir::is_hbm(src)) return ir::Opcode::Load;
  return ir::Opcode::Copy;
}

}  // namespace

TensorVal alloc_tensor(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype,
                       Memory memory, int partition_dim) {
  if (memory == Memory::SharedHBM && !b.at_top_region()) b.fail(sema::err_shared_hbm_must_in_kernel_level());
  for (int64_t d : shape)
    if (d <= 0) b.fail(sema::err_invalid_shape(shape));
  if (!ir::is_hbm(memory)) {
    // Block dims [B.., P, F..] are deprecated: each block is a [P, F..] tile, checked as one.
    std::vector<int64_t> tile(shape.begin() + std::min<size_t>(partition_dim, shape.size()), shape.end());
    if (partition_dim > 0) b.warn(sema::warn_block_dimension_is_deprecated());
    sema::assert_min_rank(tile, 2, "on-chip tensor", b.raiser());
    sema::assert_par_dim(tile[0], memory, b.target(), b.raiser());
    sema::assert_free_dim(tile, dtype, memory, b.target(), b.raiser());
    if (memory == Memory::PSUM) sema::assert_dtype_psum(dtype, b.raiser());
  }
  int id = b.add_tensor(b.tensor_name(name, "t"), std::move(shape), dtype, memory, ir::Role::Local);
  b.tensor_mut(id).partition_dim = partition_dim;
  return b.full_view(id);
}

TensorVal full(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype, Memory memory,
               double value) {
  if (ir::is_hbm(memory)) {
    b.fail(sema::err_hbm_tensor_with_init_value_not_supported());
  }
  TensorVal t = alloc_tensor(b, std::move(name), std::move(shape), dtype, memory);
  auto in = instruction(ir::Opcode::Memset, b, t, t.shape);
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

TensorVal load(KernelBuilder& b, const TensorVal& src, const OpArgs& args) {
  b.check_operand("src", src);
  const ir::TensorDecl& s = b.tensor(src.tensor);
  TensorVal dst = alloc_tensor(b, b.tensor_name("", s.name + "_tile"), src.shape, args.dtype.value_or(s.dtype), Memory::SBUF);
  auto in = instruction(ir::Opcode::Load, b, dst, src.shape);
  in->srcs.push_back(access_for(b, src, src.shape));
  in->predicate = predicate_for(b, args, src.shape.size());
  b.emit(std::move(in));
  return dst;
}

TensorVal load_transpose2d(KernelBuilder& b, const TensorVal& src, const OpArgs& args) {
  b.check_operand("src", src);
  if (!src.indirect.empty()) b.fail(sema::err_indirect_indices_are_not_supported_with_nki_api(b.cur_api));
  const ir::TensorDecl& s = b.tensor(src.tensor);
  std::vector<int64_t> shape = {src.shape[1], src.shape[0]};
  TensorVal dst = alloc_tensor(b, b.tensor_name("", s.name + "_T"), shape, args.dtype.value_or(s.dtype), Memory::SBUF);
  auto in = instruction(ir::Opcode::Load, b, dst, src.shape);
  in->dst.index = {ir::AffineExpr::grid(1), ir::AffineExpr::grid(0)};
  in->srcs.push_back(access_for(b, src, src.shape));
  in->predicate = predicate_for(b, args, src.shape.size());
  b.emit(std::move(in));
  return dst;
}

void store(KernelBuilder& b, const TensorVal& dst, const Value& value, const OpArgs& args) {
  b.check_operand("dst", dst);
  std::unique_ptr<ir::Instruction> in;
  if (auto* v = std::get_if<TensorVal>(&value)) {
    b.check_operand("value", *v);
    check_fits(b, dst, *v);
    in = instruction(ir::Opcode::Store, b, dst, dst.shape);
    in->srcs.push_back(access_for(b, *v, dst.shape));
  } else if (auto* o = std::get_if<types::Other>(&value); o && o->numeric) {
    in = instruction(ir::Opcode::Memset, b, dst, dst.shape);
    in->imms = {o->value};
  } else {
    b.fail(sema::err_unexpected_type_of_operand("value", "an index or mask"));
  }
  in->predicate = predicate_for(b, args, dst.shape.size());
  b.emit(std::move(in));
}

void assign(KernelBuilder& b, const TensorVal& dst, const Value& value, bool accumulate) {
  std::unique_ptr<ir::Instruction> in;
  if (auto* v = std::get_if<TensorVal>(&value)) {
    // `t[...] = t[...]` after an in-place update re-assigns the same view: nothing to do.
    if (!accumulate && v->tensor == dst.tensor && v->index == dst.index && v->shape == dst.shape) return;
    check_fits(b, dst, *v);
    in = instruction(copy_opcode(b.tensor(dst.tensor).memory, b.tensor(v->tensor).memory), b, dst, dst.shape);
    in->srcs.push_back(access_for(b, *v, dst.shape));
    in->accumulate = accumulate;
  } else if (auto* o = std::get_if<types::Other>(&value); o && o->numeric && !accumulate) {
    in = instruction(ir::Opcode::Memset, b, dst, dst.shape);
    in->imms = {o->value};
  } else if (auto* o2 = std::get_if<types::Other>(&value); o2 && o2->numeric) {
    update_inplace(b, ir::AluOp::add, dst, value);
    return;
  } else {
    b.fail(sema::err_unexpected_type_of_operand(
        "value", "an index or mask; only tensors and numbers can be assigned (materialise an index "
                 "with nisa.iota)"));
  }
  b.emit(std::move(in));
}

}  // namespace nkic::codegen
