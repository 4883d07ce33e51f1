#include "codegen/AccessPattern.h"

#include <algorithm>

#include "codegen/Indexing.h"
#include "codegen/Scalars.h"
#include "sema/ErrorCatalog.h"
#include "sema/ErrorCatalogScalars.h"

namespace nkic::codegen {

ir::AffineExpr view_offset(const KernelBuilder& b, const types::TensorVal& t) {
  const std::vector<int64_t>& shape = b.tensor(t.tensor).shape;
  std::vector<ir::AffineExpr> origin(t.shape.size(), ir::AffineExpr(0));
  ir::AffineExpr off(0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    off = off + t.index.at(d).substitute_grid(origin) * stride;
    stride *= shape[d];
  }
  return off;
}

namespace {

// An index tile is an integer SBUF tile, itself indexed statically.
void check_index_tile(KernelBuilder& b, const types::TensorVal& idx) {
  b.check_live(idx);
  const ir::TensorDecl& t = b.tensor(idx.tensor);
  if (t.memory != ir::Memory::SBUF) b.fail(sema::err_indirect_indices_sbuf(t.name));
  if (!ir::is_integer(t.dtype))
    b.fail(sema::err_tensor_index_not_supported(t.name, "the offset tile `" + t.name + "` is not an integer tile"));
  if (!idx.indirect.empty()) b.fail(sema::err_unsupported_index("an offset tile cannot itself be indexed at runtime"));
}

// The elements of one index step of dim `dim` of `base`: the product of the dims after it.
int64_t row_elements(KernelBuilder& b, const ir::TensorDecl& base, int dim) {
  if (dim < 0 || dim >= static_cast<int>(base.shape.size()))
    b.fail(sema::err_unsupported_index("indirect_dim " + std::to_string(dim) + " is not a dim of `" + base.name + "`" +
                                       sema::shape_str(base.shape)));
  int64_t row = 1;
  for (size_t d = dim + 1; d < base.shape.size(); ++d) row *= base.shape[d];
  return row;
}

}  // namespace

types::TensorVal ap_view(KernelBuilder& b, const types::TensorVal& t,
                         const std::vector<std::pair<int64_t, int64_t>>& pattern, std::optional<ir::AffineExpr> offset,
                         const std::optional<ApIndirect>& indirect, std::optional<ir::DType> dtype) {
  b.check_live(t);
  if (indirect && !indirect->per_partition) check_scalar_usable(b, indirect->index);
  if (pattern.empty()) b.fail(sema::err_unsupported_index(".ap() needs at least one [step, count] pair"));
  for (const auto& [step, count] : pattern)
    if (count < 1) b.fail(sema::err_unsupported_index(".ap() counts are positive, got " + std::to_string(count)));
  ir::AffineExpr start = offset ? *offset : view_offset(b, t);
  types::TensorVal whole = b.full_view(t.tensor);
  whole.region = t.region;
  ir::DType from = b.tensor(t.tensor).dtype;
  if (dtype && *dtype != from) {
    // Pattern and offset count elements of the reinterpreting dtype.
    if (!offset) start = ir::AffineExpr::floordiv(start * ir::size_of(from), ir::size_of(*dtype));
    whole = dtype_view(b, whole, *dtype);
  }
  const ir::TensorDecl& base = b.tensor(whole.tensor);
  std::vector<int64_t> shape;
  for (const auto& p : pattern) shape.push_back(p.second);
  auto grid = [](size_t k) { return ir::AffineExpr::grid(static_cast<int>(k)); };
  types::TensorVal v;
  int indirect_dim = 0;   // the dim of the reshaped alias that the offset moves along,
  int64_t step = 1;       // by this many of its elements per unit
  if (ir::is_hbm(base.memory)) {
    // Rows of the indirect dim: a runtime offset adds whole rows (prod of the dims after it).
    const int64_t row = row_elements(b, base, indirect ? indirect->dim : 0);
    v = reshape_view(b, whole, {base.num_elements() / row, row});
    ir::AffineExpr flat = start;
    // A per-partition offset replaces the leading pair's stride (§4.2).
    for (size_t k = indirect && indirect->per_partition ? 1 : 0; k < pattern.size(); ++k)
      flat = flat + grid(k) * pattern[k].first;
    v.index = {ir::AffineExpr::floordiv(flat, row), ir::AffineExpr::mod(flat, row)};
  } else {
    int64_t free = base.num_elements() / base.shape.at(0);
    if (pattern[0].first != free)
      b.fail(sema::err_unsupported_index(".ap() on an on-chip tensor reads whole partitions: the first pair's step is " +
                                         std::to_string(free) + " (the free elements of `" + base.name +
                                         "`), got " + std::to_string(pattern[0].first)));
    ir::AffineExpr f = ir::AffineExpr::mod(start, free);
    for (size_t k = 1; k < pattern.size(); ++k) f = f + grid(k) * pattern[k].first;
    const ir::AffineExpr partition = ir::AffineExpr::floordiv(start, free) + grid(0);
    v = reshape_view(b, whole, {base.shape[0], free});
    v.index = {partition, f};
    if (indirect) {
      // On chip one offset moves the whole access along a free dim (§4.2; per-partition
      // offsets gather HBM rows only), by whole rows of that dim.
      if (indirect->per_partition)
        b.fail(sema::err_indirect_indices_are_not_supported_with_nki_api(
            b.api(), "vector_offset= gathers rows of an HBM tensor; `" + base.name +
                         "` is on chip, where a runtime offset is one scalar_offset= on a free dim"));
      if (indirect->dim == 0)
        b.fail(sema::err_unsupported_index("indirect_dim 0 is the partition dim of on-chip `" + base.name +
                                           "`: a runtime offset moves an on-chip access along a free dim"));
      step = row_elements(b, base, indirect->dim);
      indirect_dim = 1;
      // An on-chip address is 32 bits: an int64 offset is rejected, never narrowed.
      if (ir::is_wide(b.tensor(indirect->index.tensor).dtype))
        b.fail(sema::err_scalar_int64_unsupported(
            "tensor.ap", "scalar_offset= on the on-chip tensor '" + base.name + "'",
            "an int64 offset addresses HBM only; compute an on-chip offset as an int32 scalar"));
    }
  }
  v.shape = std::move(shape);
  if (indirect) {
    // The index tile read at every point of the view: its origin, or per partition its row.
    types::TensorVal idx = indirect->index;
    std::vector<ir::AffineExpr> at(idx.shape.size(), ir::AffineExpr(0));
    if (indirect->per_partition) {
      if (idx.shape.empty() || idx.shape[0] != v.shape[0])
        b.fail(sema::err_unsupported_index("vector_offset has " + std::to_string(idx.shape.empty() ? 0 : idx.shape[0]) +
                                           " rows; the view has " + std::to_string(v.shape[0]) + " partitions"));
      at[0] = grid(0);
    }
    for (ir::AffineExpr& e : idx.index) e = e.substitute_grid(at);
    idx.shape = v.shape;
    check_index_tile(b, idx);
    v.indirect.push_back({indirect_dim, std::make_shared<const types::TensorVal>(std::move(idx)), step});
  }
  return v;
}

}  // namespace nkic::codegen

namespace nkic::codegen {

namespace {

// Calls f(instruction, access) for every access of the statements of `block` from `first`.
template <class F>
void each_access(const ir::Block& block, size_t first, F f) {
  for (size_t i = first; i < block.size(); ++i) {
    if (block[i]->kind == ir::StmtKind::Loop) {
      each_access(static_cast<const ir::Loop&>(*block[i]).body, 0, f);
      continue;
    }
    const auto& in = static_cast<const ir::Instruction&>(*block[i]);
    if (in.has_dst()) f(in, in.dst);
    for (const ir::Access& a : in.extra_dsts) f(in, a);
    for (const ir::Access& a : in.srcs) f(in, a);
  }
}

bool uses_grid(const ir::Access& a) {
  for (const ir::AffineExpr& e : a.index)
    if (e.uses(ir::VarKind::Grid)) return true;
  return false;
}

}  // namespace

void check_on_chip_offsets_lowered(KernelBuilder& b, size_t first, const std::vector<types::TensorVal>& operands) {
  const ir::Kernel& k = b.kernel();
  const ir::Block& block = b.insertion_block();
  if (first >= block.size()) return;  // nothing emitted: a view method, a query
  std::vector<int> reached;
  each_access(block, first, [&](const ir::Instruction& in, const ir::Access& a) {
    if (a.indirect.empty() || ir::is_hbm(k.tensor(a.tensor).memory)) return;
    reached.push_back(k.root(a.tensor));
    for (const ir::IndirectIndex& ind : a.indirect)
      if (uses_grid(ind.index) && ir::info(in.opcode).exec != ir::Exec::Move)
        b.fail(sema::err_indirect_indices_are_not_supported_with_nki_api(
            b.api(), std::string("on chip its ") + ir::name(in.opcode) +
                         " instruction takes one runtime offset for the whole access, not one per element"));
  });
  for (const types::TensorVal& v : operands) {
    const ir::TensorDecl& t = b.tensor(v.tensor);
    if (v.indirect.empty() || ir::is_hbm(t.memory)) continue;
    if (std::find(reached.begin(), reached.end(), k.root(v.tensor)) == reached.end())
      b.fail(sema::err_indirect_indices_are_not_supported_with_nki_api(
          b.api(), "it cannot read or write the on-chip `" + k.tensor(k.root(v.tensor)).name +
                       "` at a runtime offset (.ap(scalar_offset=), a run-time select); copy that view with "
                       "nisa.tensor_copy first"));
  }
}

}  // namespace nkic::codegen
