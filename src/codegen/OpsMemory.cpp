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

namespace {

std::unique_ptr<ir::Instruction> instruction(ir::Opcode op, const KernelBuilder& b, const TensorVal& dst,
                                             const std::vector<int64_t>& iter) {
  auto in = std::make_unique<ir::Instruction>();
  in->opcode = op;
  in->shape = iter;
  in->dst = access_for(b, dst, iter);
  return in;
}

// The points of the view `v` its producing instruction wrote, as a predicate over
// v's grid: the producer's mask constraints that speak only of output coordinates.
// Constraints on coordinates the output folds away (a matmul's K) do not restrict it,
// nor do the producer's `if` regions or loops that have ended: they guarded that write.
ir::Predicate written_region(const KernelBuilder& b, const TensorVal& v) {
  const ir::Instruction* p = b.last_writer(v.tensor);
  const ir::Predicate& mask = b.last_write_mask(v.tensor);
  if (!p || mask.empty() || v.index != b.full_view(v.tensor).index) return {};
  // Producer grid coordinate -> the output coordinate it writes (identity-like dst index).
  std::vector<ir::AffineExpr> to_out(p->shape.size());
  std::vector<bool> is_out(p->shape.size(), false);
  for (size_t d = 0; d < p->dst.index.size(); ++d) {
    const ir::AffineExpr& e = p->dst.index[d];
    int g = e.single_grid_var();
    if (g < 0 || e != ir::AffineExpr::grid(g)) continue;
    to_out[g] = ir::AffineExpr::grid(static_cast<int>(d));
    is_out[g] = true;
  }
  ir::Predicate out;
  for (const ir::Constraint& c : mask) {
    bool only_out = true;
    for (ir::Var v : c.expr.vars()) {
      if (v.kind == ir::VarKind::Grid) only_out = only_out && is_out[v.id];
      if (v.kind == ir::VarKind::Loop) only_out = only_out && b.open_loop(v.id) != nullptr;
    }
    if (only_out) out.push_back({c.expr.substitute_grid(to_out), c.kind});
  }
  return out;
}

ir::Opcode copy_opcode(Memory dst, Memory src) {
  if (ir::is_hbm(dst)) return ir::Opcode::Store;
  if (ir::is_hbm(src)) return ir::Opcode::Load;
  return ir::Opcode::Copy;
}

}  // namespace

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
  auto in = instruction(ir::Opcode::Memset, b, t, t.shape);
  in->imms = {value};
  b.emit(std::move(in));
  return t;
}

namespace {

// The current API's rules of its DMA and memset calls (NKI_CURRENT_API.md §9.1).
// priority=, the DMA's quality-of-service level (0-3, lower first): NeuronCore-v4 and newer.
void check_priority(KernelBuilder& b, std::optional<int64_t> priority) {
  if (!priority) return;
  sema::assert_nc_version(b.target(), 4, b.api() + "(priority=)", b.raiser());
  if (*priority < 0 || *priority > 3)
    b.fail(sema::err_unsupported_args(b.api(), "priority " + std::to_string(*priority) +
                                                   " is not a DMA priority level 0-3 (lower is served first)"));
}

// nisa.dma_copy: never a PSUM source; the hardware DGE copies bytes (equal dtypes, v3+).
void check_dma_copy(KernelBuilder& b, const types::TensorVal& dst, const types::TensorVal& src, bool hwdge,
                    std::optional<int64_t> priority) {
  const ir::TensorDecl& s = b.tensor(src.tensor);
  const ir::TensorDecl& d = b.tensor(dst.tensor);
  // 0.3: a DMA reads SBUF or HBM; PSUM goes through tensor_copy first.
  if (s.memory == ir::Memory::PSUM) b.fail(sema::err_unsupported_memory("src", b.api(), "sbuf or hbm", "psum"));
  check_priority(b, priority);
  if (!hwdge) return;
  sema::check_hwdge(b.api(), b.target(), b.raiser());
  if (s.dtype != d.dtype) b.fail(sema::err_hwdge_dtype_mismatch(ir::name(s.dtype), ir::name(d.dtype)));
}

// nisa.memset: the value is typed like dst (an integer for integer dtypes; packed x4 dtypes take 0 only).
void check_memset_value(KernelBuilder& b, const types::TensorVal& dst, double value, bool is_integer) {
  ir::DType t = b.tensor(dst.tensor).dtype;
  std::ostringstream v;
  v << value;
  if (ir::is_packed(t) && value != 0.0)
    b.fail(sema::err_memset_value_dtype(v.str(), ir::name(t), "packed x4 tensors are set to 0 only"));
  // A float with an integral value (the kernel library's `value=0.0` into uint32 tiles) fits.
  if (ir::is_integer(t) && !is_integer && value != std::trunc(value))
    b.fail(sema::err_memset_value_dtype(v.str(), ir::name(t), "an integer tensor takes an integer value"));
}

}  // namespace

TensorVal memset(KernelBuilder& b, const Dst& dst, std::vector<int64_t> shape, double value, bool integer_value,
                 ir::DType dtype) {
  if (!dst.given()) return full(b, "", std::move(shape), dtype, Memory::SBUF, value);
  check_memset_value(b, dst.view(), value, integer_value);
  const ir::TensorDecl& d = b.tensor(dst.view().tensor);
  TensorVal t = dst.resolve(b, "memset", dst.view().shape, d.dtype, d.memory);
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

namespace {

// An HBM view of fewer than two dims (A[p0:p1, j], A[b, h], a 1-D vector or its
// slice) moves as a [P, 1] or [1, 1] tile: its one dim is the partition dim.
// Any other view is `access` itself; a padded one is made in `padded`.
const TensorVal& with_tile_rank(KernelBuilder& b, const TensorVal& access, TensorVal& padded) {
  if (access.shape.size() >= 2 || !ir::is_hbm(b.tensor(access.tensor).memory)) return access;
  padded = access;
  while (padded.shape.size() < 2) padded.shape.push_back(1);
  return padded;
}

}  // namespace

TensorVal load(KernelBuilder& b, const TensorVal& access, const OpArgs& args) {
  TensorVal padded;
  const TensorVal& src = with_tile_rank(b, access, padded);
  b.check_operand("src", src);
  const ir::TensorDecl& s = b.tensor(src.tensor);
  TensorVal dst = alloc_tensor(b, b.tensor_name("", s.name + "_tile"), src.shape, args.dtype.value_or(s.dtype), Memory::SBUF);
  auto in = instruction(ir::Opcode::Load, b, dst, src.shape);
  in->srcs.push_back(access_for(b, src, src.shape));
  in->predicate = predicate_for(b, args, src.shape.size());
  in->oob_skip = args.oob_skip;
  b.emit(std::move(in));
  return dst;
}

namespace {

// `t` without its size-1 dims, keeping the first of them while it has fewer than two dims.
TensorVal unit_dims_squeezed(KernelBuilder& b, const TensorVal& t) {
  if (t.shape.size() <= 2) return t;
  std::vector<bool> keep(t.shape.size());
  size_t kept = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) kept += (keep[d] = t.shape[d] != 1);
  for (size_t d = 0; d < t.shape.size() && kept < 2; ++d)
    if (!keep[d]) keep[d] = true, ++kept;
  std::vector<IndexItem> key(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (keep[d]) key[d].kind = IndexItem::Kind::Slice;
    else key[d].value = types::index_constant(0);
  }
  return subscript(b, t, key);
}

}  // namespace

TensorVal load_transpose2d(KernelBuilder& b, const Dst& to, const TensorVal& given, const OpArgs& args,
                           bool squeeze_unit_dims, const DmaMode& mode) {
  if (mode.hwdge) sema::check_hwdge(b.api(), b.target(), b.raiser());
  check_priority(b, mode.priority);
  const TensorVal src = squeeze_unit_dims ? unit_dims_squeezed(b, given) : given;
  b.check_operand("src", src);
  // The current API's dma_transpose reads its source at one runtime offset (.ap(scalar_offset=));
  // per-partition rows (vector_offset) have their own index layout, which nkic does not take.
  bool one_offset = b.current_api;
  for (const TensorVal::Indirect& ind : src.indirect)
    for (const ir::AffineExpr& e : ind.index->index) one_offset = one_offset && !e.uses(ir::VarKind::Grid);
  if (!src.indirect.empty() && !one_offset)
    b.fail(b.current_api ? sema::err_indirect_indices_are_not_supported_with_nki_api(
                               b.api(), "a vector_offset source; nkic transposes a source at a scalar_offset")
                         : sema::err_indirect_indices_are_not_supported_with_nki_api(b.api()));
  const ir::TensorDecl& s = b.tensor(src.tensor);
  std::vector<int64_t> shape = {src.shape[1], src.shape[0]};
  TensorVal dst = to.resolve(b, s.name + "_T", shape, args.dtype.value_or(s.dtype), Memory::SBUF);
  auto in = instruction(ir::Opcode::Load, b, dst, src.shape);
  in->dst = write_access(b, dst, {ir::AffineExpr::grid(1), ir::AffineExpr::grid(0)});
  in->srcs.push_back(access_for(b, src, src.shape));
  in->predicate = predicate_for(b, args, src.shape.size());
  in->oob_skip = args.oob_skip;
  b.emit(std::move(in));
  return dst;
}

void store(KernelBuilder& b, const TensorVal& access, const Value& value, const OpArgs& args) {
  TensorVal padded;
  const TensorVal& dst = with_tile_rank(b, access, padded);
  b.check_operand("dst", dst);
  std::unique_ptr<ir::Instruction> in;
  if (auto* v = std::get_if<TensorVal>(&value)) {
    b.check_operand("value", *v);
    in = instruction(ir::Opcode::Store, b, dst, dst.shape);
    in->srcs.push_back(access_for(b, fit_value(b, dst.shape, *v), dst.shape));
  } else if (auto* o = std::get_if<types::Other>(&value); o && o->numeric) {
    in = instruction(ir::Opcode::Memset, b, dst, dst.shape);
    in->imms = {o->value};
  } else {
    reject_operand(b, "value", value);
  }
  in->predicate = predicate_for(b, args, dst.shape.size());
  in->oob_skip = args.oob_skip;
  in->engine = args.engine;
  b.emit(std::move(in));
}

void dma_copy(KernelBuilder& b, const TensorVal& dst, const Value& src, std::optional<ir::AluOp> rmw,
              const OpArgs& args, const DmaMode& mode) {
  if (rmw && *rmw != ir::AluOp::add) b.fail(sema::err_instruction_unsupported_op(ir::name(*rmw)));
  if (b.current_api) {
    const auto* tile = std::get_if<TensorVal>(&src);
    if (!tile) reject_operand(b, "src", src);
    check_dma_copy(b, dst, *tile, mode.hwdge, mode.priority);
  }
  assign(b, dst, src, rmw.has_value(), args);
}

namespace {

// The byte of its root tensor's storage that view v's grid point touches: a reshape
// or view aliases its root's bytes in row-major order.
ir::AffineExpr storage_offset(const KernelBuilder& b, const TensorVal& v) {
  const ir::TensorDecl& d = b.tensor(v.tensor);
  ir::AffineExpr off(0);
  int64_t stride = ir::size_of(d.dtype);
  for (size_t k = v.index.size(); k-- > 0;) {
    off = off + v.index[k] * stride;
    stride *= d.shape[k];
  }
  return off;
}

// Whether two views name the same elements in the same order (two .ap() calls of one pattern).
bool same_elements(const KernelBuilder& b, const TensorVal& x, const TensorVal& y) {
  const ir::Kernel& k = b.kernel();
  return k.root(x.tensor) == k.root(y.tensor) && b.tensor(x.tensor).dtype == b.tensor(y.tensor).dtype &&
         x.shape == y.shape && x.indirect.empty() && y.indirect.empty() &&
         storage_offset(b, x) == storage_offset(b, y);
}

}  // namespace

void dma_compute(KernelBuilder& b, const TensorVal& dst, const std::vector<TensorVal>& srcs, ir::AluOp reduce_op,
                 const std::vector<double>& scales, bool unique_indices, bool oob_skip) {
  constexpr size_t kMaxSources = 16;
  if (reduce_op != ir::AluOp::add)
    b.fail(sema::err_unsupported_args(b.api(), "reduce_op is " + std::string(ir::name(reduce_op)) +
                                                   "; the DMA engines compute nl.add only"));
  if (srcs.empty() || srcs.size() > kMaxSources)
    b.fail(sema::err_unsupported_args(b.api(), "srcs holds " + std::to_string(srcs.size()) +
                                                   " tensors; it takes 1 to 16"));
  if (!scales.empty() && scales.size() != srcs.size())
    b.fail(sema::err_unsupported_args(b.api(), "scales holds " + std::to_string(scales.size()) + " values for " +
                                                   std::to_string(srcs.size()) + " sources"));
  for (double s : scales) {
    if (s == 1.0) continue;
    std::ostringstream v;
    v << s;
    b.fail(sema::err_unsupported_args(b.api(), "a scale is " + v.str() + "; every scale must be 1.0 (or scales None)"));
  }
  if (!unique_indices)
    b.fail(sema::err_unsupported_args(b.api(), "unique_indices=False: non-unique indices are not supported"));
  const bool indirect = !dst.indirect.empty() ||
                        std::any_of(srcs.begin(), srcs.end(), [](const TensorVal& s) { return !s.indirect.empty(); });
  if (oob_skip && !indirect)
    b.fail(sema::err_unsupported_args(b.api(), "oob_mode.skip needs an indirect dst or source (vector_offset, "
                                               "scalar_offset); a static DMA has no out-of-bound element to skip"));
  std::vector<const TensorVal*> others;
  for (const TensorVal& s : srcs)
    if (!same_elements(b, s, dst)) others.push_back(&s);
  if (others.size() != 1 || srcs.size() - others.size() > 1)
    b.fail(sema::err_unsupported_args(b.api(), "nkic supports dma_compute(dst, [src], nl.add) and the "
                                               "read-modify-write form dma_compute(dst, [src, dst], nl.add)"));
  OpArgs args;
  args.engine = ir::Engine::dma;
  args.oob_skip = oob_skip;
  assign(b, dst, *others[0], srcs.size() == 2, args);
}

void nc_stream_shuffle(KernelBuilder& b, const TensorVal& dst, const TensorVal& src,
                       const std::vector<int64_t>& shuffle_mask) {
  b.check_operand("src", src);
  b.check_operand("dst", dst);
  sema::assert_elements_per_partition(free_elements(dst), free_elements(src), free_elements(src), "dst", b.api(),
                                      b.raiser());
  constexpr size_t kQuadrant = 32;
  if (shuffle_mask.size() != kQuadrant)
    b.fail(sema::err_unexpected_type_of_operand(
        "shuffle_mask", std::to_string(shuffle_mask.size()) +
                            " entries; it names a source partition (or 255) for each of the 32 partitions of a quadrant"));
  const TensorVal d = rows_of(b, dst), s = rows_of(b, src);
  auto in = make_instruction(ir::Opcode::StreamShuffle, {std::max(d.shape[0], s.shape[0]), d.shape[1]});
  in->dst = access_for(b, d, d.shape);
  in->srcs.push_back(access_for(b, s, s.shape));
  in->widths = {d.shape[0], s.shape[0]};
  for (int64_t m : shuffle_mask) in->imms.push_back(static_cast<double>(m));
  b.emit(std::move(in));
}

void assign(KernelBuilder& b, const TensorVal& dst, const Value& value, bool accumulate, const OpArgs& args) {
  std::unique_ptr<ir::Instruction> in;
  auto on_chip_dynamic = [&](const TensorVal& t) { return !t.indirect.empty() && !ir::is_hbm(b.tensor(t.tensor).memory); };
  const auto* v0 = std::get_if<TensorVal>(&value);
  // The current API's copies move on-chip views at runtime offsets (check_on_chip_offsets_lowered).
  if (!b.current_api && (on_chip_dynamic(dst) || (v0 && on_chip_dynamic(*v0))))
    b.fail(sema::err_copy_dynamic_indirect_indices_not_natively_supported(b.tensor(dst.tensor).name));
  if (auto* v = std::get_if<TensorVal>(&value)) {
    // `t[...] = t[...]` after an in-place update re-assigns the same view: nothing to do.
    if (!accumulate && v->tensor == dst.tensor && v->index == dst.index && v->shape == dst.shape) return;
    // `t[...] = nl.load(x[idx], mode=oob_mode.skip)`: the load writes t itself, so the
    // points it skips keep t's values (a copy of its temporary would not know them).
    const ir::Instruction* p = b.last_writer(v->tensor);
    // `acc[...] = nc_matmul(...)`: the Tensor Engine writes acc itself, so acc must be
    // an accumulator format (seed 004); a Tensor-Engine transpose passes its data
    // through (nki-samples' allocated_fused_linear writes fp16 PSUM on trn2).
    const ir::TensorDecl& d = b.tensor(dst.tensor);
    if (d.memory == Memory::PSUM && p && p->opcode == ir::Opcode::Matmul) {
      const ir::DType data = b.tensor(p->srcs[0].tensor).dtype;
      sema::assert_dtype_psum(d.dtype, b.raiser(), p->transpose ? &data : nullptr, &b.target());
    }
    if (!accumulate && p && p->opcode == ir::Opcode::Load && p->oob_skip && p->shape == dst.shape &&
        v->index == b.full_view(v->tensor).index && v->shape == dst.shape) {
      auto load = std::make_unique<ir::Instruction>(*p);
      load->dst = access_for(b, dst, dst.shape);
      b.emit(std::move(load));
      return;
    }
    in = instruction(copy_opcode(b.tensor(dst.tensor).memory, b.tensor(v->tensor).memory), b, dst, dst.shape);
    in->srcs.push_back(access_for(b, fit_value(b, dst.shape, *v), dst.shape));
    in->accumulate = accumulate;
    // `dst[...] = op(..., mask=m)` writes only where op wrote (NKI_API.md §1.3):
    // the copy carries the producer's mask, so dst keeps its values elsewhere.
    if (v->shape == dst.shape) in->predicate = written_region(b, *v);
    if (args.mask) in->predicate = predicate_for(b, args, dst.shape.size());
  } else if (auto* o = std::get_if<types::Other>(&value); o && o->numeric && !accumulate) {
    in = instruction(ir::Opcode::Memset, b, dst, dst.shape);
    in->imms = {o->value};
    in->predicate = predicate_for(b, args, dst.shape.size());
  } else if (auto* o2 = std::get_if<types::Other>(&value); o2 && o2->numeric) {
    update_inplace(b, ir::AluOp::add, dst, value);
    return;
  } else {
    reject_operand(b, "value", value);
  }
  in->oob_skip = args.oob_skip;
  b.emit(std::move(in));
}

TensorVal tensor_copy_dynamic_src(KernelBuilder& b, const TensorVal& src, const OpArgs& args) {
  b.check_operand("src", src);
  TensorVal dst = alloc_tensor(b, b.tensor_name("", "dynamic_copy"), src.shape,
                               args.dtype.value_or(b.tensor(src.tensor).dtype), Memory::SBUF);
  auto in = instruction(ir::Opcode::Copy, b, dst, src.shape);
  in->srcs.push_back(access_for(b, src, src.shape));
  in->predicate = predicate_for(b, args, src.shape.size());
  b.emit(std::move(in));
  return dst;
}

void tensor_copy_dynamic_dst(KernelBuilder& b, const TensorVal& dst, const TensorVal& src, const OpArgs& args) {
  b.check_operand("dst", dst);
  b.check_operand("src", src);
  // Same partitions and elements per partition (the value may differ in unit dims);
  // the copy casts to dst's dtype.
  TensorVal value = fit_value(b, dst.shape, src);
  auto in = instruction(ir::Opcode::Copy, b, dst, dst.shape);
  in->srcs.push_back(access_for(b, value, dst.shape));
  in->predicate = predicate_for(b, args, dst.shape.size());
  b.emit(std::move(in));
}

}  // namespace nkic::codegen
