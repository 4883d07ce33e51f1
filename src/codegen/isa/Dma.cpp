// The DMA instructions (the `dma` rows: load, store, and the copies between memories a DMA
// queue runs): nl.load / nl.store, nisa.dma_copy, dma_transpose, dma_compute, the assignment
// of a tile into a view, and the legacy copies at runtime offsets; with the current API's
// DMA rules (NKI_CURRENT_API.md §9.1).
#include <algorithm>
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
  if (s.memory == ir::Memory::PSUM && !b.accepts("nisa.dma_copy from PSUM"))
    b.fail(sema::err_unsupported_memory("src", b.api(), "sbuf or hbm", "psum"));
  check_priority(b, priority);
  if (!hwdge) return;
  sema::check_hwdge(b.api(), b.target(), b.raiser());
  if (s.dtype != d.dtype) b.fail(sema::err_hwdge_dtype_mismatch(ir::name(s.dtype), ir::name(d.dtype)));
}

}  // namespace

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
  auto in = make_instruction(ir::Opcode::Load, b, dst, src.shape);
  in->srcs.push_back(access_for(b, src, src.shape));
  in->predicate = predicate_for(b, args, src.shape.size());
  in->oob_skip = args.oob_skip;
  b.emit(std::move(in));
  return dst;
}

namespace {

// The permutation the DMA engines transpose a src of `rank` dims by (the nisa.dma_transpose
// docs): dst dim d is src dim perm[d]. Empty for a rank they do not transpose.
std::vector<int64_t> transpose_permutation(size_t rank) {
  switch (rank) {
    case 2: return {1, 0};
    case 3: return {2, 1, 0};
    case 4: return {3, 1, 2, 0};
    default: return {};
  }
}

std::string tuple_str(const std::vector<int64_t>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + (v.size() == 1 ? ",)" : ")");
}

}  // namespace

TensorVal load_transpose2d(KernelBuilder& b, const Dst& to, const TensorVal& src, const OpArgs& args,
                           const std::optional<std::vector<int64_t>>& axes, const DmaMode& mode) {
  if (mode.hwdge) sema::check_hwdge(b.api(), b.target(), b.raiser());
  check_priority(b, mode.priority);
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
  const std::vector<int64_t> perm = transpose_permutation(src.shape.size());
  if (axes && *axes != perm)
    b.fail(sema::err_unsupported_args(
        b.api(), "axes " + tuple_str(*axes) + " is not the transpose of a " + std::to_string(src.shape.size()) +
                     "-D src: the DMA engines transpose a 2-D, 3-D or 4-D src by (1, 0), (2, 1, 0) or (3, 1, 2, 0)"));
  const ir::TensorDecl& s = b.tensor(src.tensor);
  std::vector<int64_t> shape;
  std::vector<ir::AffineExpr> index;
  for (int64_t d : perm) {
    shape.push_back(src.shape[d]);
    index.push_back(ir::AffineExpr::grid(static_cast<int>(d)));
  }
  // NKI 0.4: dst is src permuted, dim for dim, and the DMA moves bytes without a cast.
  if (to.given() && to.view().shape != shape)
    b.fail(sema::err_transpose_dst_shape(
        KernelBuilder::display_name(b.tensor(to.view().tensor).name) + sema::shape_str(to.view().shape), shape,
        tuple_str(perm), b.api()));
  if (to.given() && b.current_api && b.tensor(to.view().tensor).dtype != s.dtype)
    b.fail(sema::err_supported_operand_dtype(
        "'" + std::string(b.api()) + "' moves bytes and cannot cast: src is '" + std::string(ir::name(s.dtype)) +
        "', dst is '" + std::string(ir::name(b.tensor(to.view().tensor).dtype)) + "'"));
  TensorVal dst = to.resolve(b, s.name + "_T", shape, args.dtype.value_or(s.dtype), Memory::SBUF);
  auto in = make_instruction(ir::Opcode::Load, b, dst, src.shape);
  in->dst = write_access(b, dst, index);
  in->srcs.push_back(access_for(b, src, src.shape));
  in->predicate = predicate_for(b, args, src.shape.size());
  in->oob_skip = args.oob_skip;
  in->hwdge = mode.hwdge;
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
    in = make_instruction(ir::Opcode::Store, b, dst, dst.shape);
    // Equal shapes pair element by element (on_grid_of and fit_value keep the view as it is).
    if (v->shape == dst.shape) in->srcs.push_back(access_for(b, *v, dst.shape));
    else in->srcs.push_back(access_for(b, fit_value(b, dst.shape, on_grid_of(b, *v, dst.shape)), dst.shape));
  } else if (auto* o = std::get_if<types::Other>(&value); o && o->numeric) {
    in = make_instruction(ir::Opcode::Memset, b, dst, dst.shape);
    in->imms = {o->value};
  } else {
    reject_operand(b, "value", value);
  }
  in->predicate = predicate_for(b, args, dst.shape.size());
  in->oob_skip = args.oob_skip;
  in->hwdge = args.hwdge;
  in->engine = args.engine;
  b.emit(std::move(in));
}

namespace {

// `dma`: a DMA queue's copy, which pairs the same partitions and elements per partition in
// row-major order ((P, F) with (P, F1, F2)); `t[...] = v` broadcasts v (NKI_API.md §1.3).
void emit_copy(KernelBuilder& b, const TensorVal& dst, const Value& value, bool accumulate, const OpArgs& args,
               bool dma) {
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
    in = make_instruction(copy_opcode(b.tensor(dst.tensor).memory, b.tensor(v->tensor).memory), b, dst, dst.shape);
    // Equal shapes pair element by element (on_grid_of and fit_value keep the view as it is).
    if (v->shape == dst.shape) in->srcs.push_back(access_for(b, *v, dst.shape));
    else in->srcs.push_back(access_for(b, fit_value(b, dst.shape, dma ? on_grid_of(b, *v, dst.shape) : *v), dst.shape));
    in->accumulate = accumulate;
    // `dst[...] = op(..., mask=m)` writes only where op wrote (NKI_API.md §1.3):
    // the copy carries the producer's mask, so dst keeps its values elsewhere.
    if (v->shape == dst.shape) in->predicate = written_region(b, *v);
    if (args.mask) in->predicate = predicate_for(b, args, dst.shape.size());
  } else if (auto* o = std::get_if<types::Other>(&value); o && o->numeric && !accumulate) {
    in = make_instruction(ir::Opcode::Memset, b, dst, dst.shape);
    in->imms = {o->value};
    in->predicate = predicate_for(b, args, dst.shape.size());
  } else if (auto* o2 = std::get_if<types::Other>(&value); o2 && o2->numeric) {
    update_inplace(b, ir::AluOp::add, dst, value);
    return;
  } else {
    reject_operand(b, "value", value);
  }
  in->oob_skip = args.oob_skip;
  in->hwdge = args.hwdge;
  in->engine = args.engine;  // a DMA's queue (nisa.dma_copy between on-chip tiles is no engine copy)
  b.emit(std::move(in));
}

}  // namespace

void dma_copy(KernelBuilder& b, const TensorVal& dst, const Value& src, std::optional<ir::AluOp> rmw,
              const OpArgs& args, const DmaMode& mode) {
  if (rmw && *rmw != ir::AluOp::add) b.fail(sema::err_instruction_unsupported_op(ir::name(*rmw)));
  if (b.current_api) {
    const auto* tile = std::get_if<TensorVal>(&src);
    if (!tile) reject_operand(b, "src", src);
    check_dma_copy(b, dst, *tile, mode.hwdge, mode.priority);
  }
  OpArgs dma = args;
  dma.hwdge = mode.hwdge;
  emit_copy(b, dst, src, rmw.has_value(), dma, true);
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

namespace {

// dst = the sum of several sources (dst among them at most once), in fp32, by one DMA: a static
// one (the stub: only the read-modify-write form of two sources takes indirect addresses).
void dma_sum(KernelBuilder& b, const TensorVal& dst, const std::vector<TensorVal>& srcs, bool indirect) {
  if (indirect)
    b.fail(sema::err_unsupported_args(b.api(), "a sum of " + std::to_string(srcs.size()) +
                                                   " sources is a static DMA: no vector_offset or scalar_offset "
                                                   "(dma_compute(dst, [src, dst]) takes them)"));
  auto on_dma = [&](const char* operand, const TensorVal& t) {
    if (b.tensor(t.tensor).memory == Memory::PSUM)
      b.fail(sema::err_unsupported_memory(operand, b.api(), "sbuf or hbm", "psum"));
  };
  on_dma("dst", dst);
  auto in = make_instruction(ir::Opcode::DmaCompute, b, dst, dst.shape);
  for (size_t i = 0; i < srcs.size(); ++i) {
    on_dma("srcs", srcs[i]);
    in->srcs.push_back(access_for(b, fit_value(b, dst.shape, on_grid_of(b, srcs[i], dst.shape)), dst.shape));
    if (i > 0) in->steps.push_back({ir::AluOp::add, static_cast<int>(i), 0.0, false});
  }
  in->engine = ir::Engine::dma;
  b.emit(std::move(in));
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
  if (others.empty() || srcs.size() - others.size() > 1)
    b.fail(sema::err_unsupported_args(b.api(), "srcs names dst's own elements " +
                                                   std::to_string(srcs.size() - others.size()) +
                                                   " times and nothing else; dst = the sum of srcs reads dst at "
                                                   "most once, beside another source"));
  if (others.size() > 1) return dma_sum(b, dst, srcs, indirect);
  OpArgs args;
  args.engine = ir::Engine::dma;
  args.oob_skip = oob_skip;
  emit_copy(b, dst, *others[0], srcs.size() == 2, args, true);
}

void assign(KernelBuilder& b, const TensorVal& dst, const Value& value, bool accumulate, const OpArgs& args) {
  emit_copy(b, dst, value, accumulate, args, false);
}


TensorVal tensor_copy_dynamic_src(KernelBuilder& b, const TensorVal& src, const OpArgs& args) {
  b.check_operand("src", src);
  TensorVal dst = alloc_tensor(b, b.tensor_name("", "dynamic_copy"), src.shape,
                               args.dtype.value_or(b.tensor(src.tensor).dtype), Memory::SBUF);
  auto in = make_instruction(ir::Opcode::Copy, b, dst, src.shape);
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
  auto in = make_instruction(ir::Opcode::Copy, b, dst, dst.shape);
  in->srcs.push_back(access_for(b, value, dst.shape));
  in->predicate = predicate_for(b, args, dst.shape.size());
  b.emit(std::move(in));
}

}  // namespace nkic::codegen
