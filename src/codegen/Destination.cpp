#include "codegen/Destination.h"

#include <algorithm>

#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

int64_t elements(const std::vector<int64_t>& shape, size_t from) {
  int64_t n = 1;
  for (size_t d = from; d < shape.size(); ++d) n *= shape[d];
  return n;
}

std::vector<int> non_unit(const std::vector<int64_t>& shape) {
  std::vector<int> out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) out.push_back(static_cast<int>(d));
  return out;
}

// dst as a view of the result's `shape`: the same view, or its free elements split as the result's.
types::TensorVal fitted(KernelBuilder& b, const std::vector<int64_t>& shape, const types::TensorVal& dst) {
  // The current API writes on-chip views at runtime offsets (check_on_chip_offsets_lowered).
  if (!dst.indirect.empty() && !(b.current_api && !ir::is_hbm(b.tensor(dst.tensor).memory)))
    b.fail(sema::err_indirect_indices_are_not_supported_with_nki_api(
        b.api(), "a dst written at runtime offsets; write it with nisa.dma_copy"));
  if (dst.shape == shape) return dst;
  // Shapes equal up to unit dims: the view re-gridded, its unit dims fixed at 0.
  std::vector<int> dims = non_unit(dst.shape), rdims = non_unit(shape);
  bool same = dims.size() == rdims.size();
  for (size_t k = 0; same && k < dims.size(); ++k) same = dst.shape[dims[k]] == shape[rdims[k]];
  // The result's partitions are dst's: a unit dim is no free pass ((1, P) is not (P, 1); an
  // engine writes the partitions it computes on, the cross-partition moves have their own shapes).
  if (same && !dst.shape.empty() && !shape.empty() && dst.shape[0] != shape[0])
    b.fail(sema::err_num_partition_mismatch("dst" + sema::shape_str(dst.shape), "result" + sema::shape_str(shape),
                                            b.api()));
  if (same) {
    std::vector<ir::AffineExpr> subst(dst.shape.size(), ir::AffineExpr(0));
    for (size_t k = 0; k < dims.size(); ++k) subst[dims[k]] = ir::AffineExpr::grid(rdims[k]);
    types::TensorVal v = dst;
    for (ir::AffineExpr& e : v.index) e = e.substitute_grid(subst);
    v.shape = shape;
    return v;
  }
  if (dst.shape.empty() || shape.empty() || dst.shape[0] != shape[0] || elements(dst.shape, 1) != elements(shape, 1))
    b.fail(sema::err_tile_shape_mismatch(describe(b, dst), sema::shape_str(shape), b.api()));
  return operand_view(b, dst, shape);
}

// The elements of its root tensor an access of `in` covers: its partitions and its free
// elements flattened row-major ([lo, hi] each), the same for every view of one PSUM tensor
// (a reshape of its free dims keeps their order).
std::vector<std::pair<int64_t, int64_t>> box(const KernelBuilder& b, const ir::Instruction& in, const ir::Access& a) {
  bool known = true;
  auto range_of = [&](ir::Var v) -> std::pair<int64_t, int64_t> {
    if (v.kind == ir::VarKind::Grid) return {0, in.shape.at(v.id) - 1};
    if (auto r = b.var_range(v)) return *r;
    known = false;
    return {0, 0};
  };
  const std::vector<int64_t>& shape = b.tensor(a.tensor).shape;
  ir::AffineExpr flat(0);
  int64_t stride = 1;
  for (size_t k = a.index.size(); k-- > 1;) {
    flat = flat + a.index[k] * stride;
    stride *= shape.at(k);
  }
  std::vector<std::pair<int64_t, int64_t>> out = {a.index.at(0).bounds(range_of), flat.bounds(range_of)};
  if (!known) out.assign(2, {INT64_MIN, INT64_MAX});  // a bound unknown at trace time: may overlap anything
  return out;
}

// Before NeuronCore-v4 a matmul's output fits one PSUM bank per partition (the architecture
// guide): a dst whose free bytes span two banks is wrong on the hardware; the 0.6 simulator
// warns on such accumulation patterns, and so does nkic. Checked at the first iteration of the
// enclosing loops (a later one is not reported: no warning that could be a false one).
void warn_bank_crossing(const KernelBuilder& b, const ir::Instruction& in) {
  const ir::TensorDecl& d = b.tensor(in.dst.tensor);
  const int64_t bank = b.target().psum_par_size_in_bytes, size = ir::size_of(d.dtype);
  if (b.target().nc_version >= 4 || d.alias_of >= 0 || in.dst.index.size() != d.shape.size() || bank <= 0) return;
  bool known = true;
  auto first_iteration = [&](ir::Var v) -> std::pair<int64_t, int64_t> {
    if (v.kind == ir::VarKind::Grid) return {0, in.shape.at(v.id) - 1};
    if (auto r = b.var_range(v)) return {r->first, r->first};
    known = false;
    return {0, 0};
  };
  int64_t lo = 0, hi = 0, stride = size;
  for (size_t k = d.shape.size(); k-- > 0;) {
    if (static_cast<int>(k) == d.partition_dim) continue;
    const auto [first, last] = in.dst.index[k].bounds(first_iteration);
    if (!known || first < 0 || last >= d.shape[k]) return;
    lo += first * stride;
    hi += last * stride;
    stride *= d.shape[k];
  }
  hi += size - 1;
  if (lo / bank != hi / bank)
    b.warn(sema::warn_matmul_dst_crosses_psum_bank(KernelBuilder::display_name(d.name), lo, hi, bank));
}

bool overlap(const std::vector<std::pair<int64_t, int64_t>>& x, const std::vector<std::pair<int64_t, int64_t>>& y) {
  for (size_t d = 0; d < x.size() && d < y.size(); ++d)
    if (x[d].second < y[d].first || y[d].second < x[d].first) return false;
  return true;
}

}  // namespace

ir::DType Dst::dtype(const KernelBuilder& b, ir::DType dflt) const {
  return view_ ? b.tensor(view_->tensor).dtype : dflt;
}

types::TensorVal Dst::resolve(KernelBuilder& b, const std::string& hint, std::vector<int64_t> shape, ir::DType dtype,
                              ir::Memory memory) const {
  if (!view_) return alloc_tensor(b, b.tensor_name("", hint), std::move(shape), dtype, memory);
  b.check_live(*view_);
  return fitted(b, shape, *view_);
}

ir::Access write_access(const KernelBuilder& b, const types::TensorVal& result, const std::vector<ir::AffineExpr>& index) {
  ir::Access out = access_for(b, result, result.shape);
  for (ir::AffineExpr& e : out.index) e = e.substitute_grid(index);
  for (ir::IndirectIndex& ind : out.indirect)
    for (ir::AffineExpr& e : ind.index.index) e = e.substitute_grid(index);
  return out;
}

MatmulInto::MatmulInto(KernelBuilder& b, const types::TensorVal& dst) : mark_(b.insertion_size()) {
  const ir::TensorDecl& d = b.tensor(dst.tensor);
  if (d.memory != ir::Memory::PSUM) b.fail(sema::err_unsupported_memory("dst", b.api(), "psum", ir::name(d.memory)));
  // Nothing wrote dst's PSUM yet: accumulate=True would add to whatever it holds (§9.3: the
  // official simulator warns). Earlier writes of other elements keep it quiet.
  fresh_ = !b.written(dst.tensor) && !(d.alias_of >= 0 && b.written(d.alias_of));
}

void MatmulInto::end(KernelBuilder& b, const types::TensorVal& dst, std::optional<bool> accumulate) const {
  mark_matmul_accumulation(b, mark_, dst, accumulate);
  if (fresh_ && accumulate.value_or(false))
    b.warn(sema::warn_matmul_accumulate_uninitialized(KernelBuilder::display_name(b.tensor(dst.tensor).name)));
}

void mark_matmul_accumulation(KernelBuilder& b, size_t mark, const types::TensorVal& dst,
                              std::optional<bool> accumulate) {
  ir::Block& block = b.insertion_block();
  // A dst view fitted to the product's shape may be an alias of dst: the writes are its root's.
  const int root = b.kernel().root(dst.tensor);
  std::vector<std::vector<std::pair<int64_t, int64_t>>>& written = b.matmul_writes(root);
  for (size_t i = mark; i < block.size(); ++i) {
    if (block[i]->kind != ir::StmtKind::Instruction) continue;
    auto& in = static_cast<ir::Instruction&>(*block[i]);
    if ((in.opcode != ir::Opcode::Matmul && in.opcode != ir::Opcode::MatmulMx) || b.kernel().root(in.dst.tensor) != root)
      continue;
    // A matmul accumulates into fp32 PSUM before NeuronCore-v4, which adds a bf16 dst (a
    // Tensor-Engine transpose writes its data's dtype: not this rule).
    if (in.opcode == ir::Opcode::Matmul && !in.transpose && b.tensor(dst.tensor).dtype == ir::DType::bfloat16)
      sema::assert_nc_version(b.target(), 4, b.api() + "(dst=bfloat16)", b.raiser());
    auto covered = box(b, in, in.dst);
    warn_bank_crossing(b, in);
    if (!accumulate && b.matmul_first_write_varies(in.dst))
      b.require_unrolled(b.api() + "(accumulate=None): whether its first write overwrites depends on the iteration");
    bool seen = std::any_of(written.begin(), written.end(), [&](const auto& w) { return overlap(w, covered); });
    in.accumulate = accumulate.value_or(seen);
    written.push_back(std::move(covered));
  }
}

}  // namespace nkic::codegen
