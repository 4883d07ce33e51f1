#include "codegen/AccessPattern.h"

#include "codegen/Indexing.h"
#include "sema/ErrorCatalog.h"

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

}  // namespace

types::TensorVal ap_view(KernelBuilder& b, const types::TensorVal& t,
                         const std::vector<std::pair<int64_t, int64_t>>& pattern, std::optional<ir::AffineExpr> offset,
                         const std::optional<ApIndirect>& indirect, std::optional<ir::DType> dtype) {
  b.check_live(t);
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
  if (ir::is_hbm(base.memory)) {
    // Rows of the indirect dim: a runtime offset adds whole rows (prod of the dims after it).
    int dim = indirect ? indirect->dim : 0;
    if (dim < 0 || dim >= static_cast<int>(base.shape.size()))
      b.fail(sema::err_unsupported_index("indirect_dim " + std::to_string(dim) + " is not a dim of `" + base.name +
                                         "`" + sema::shape_str(base.shape)));
    int64_t row = 1;
    for (size_t d = dim + 1; d < base.shape.size(); ++d) row *= base.shape[d];
    v = reshape_view(b, whole, {base.num_elements() / row, row});
    ir::AffineExpr flat = start;
    // A per-partition offset replaces the leading pair's stride (§4.2).
    for (size_t k = indirect && indirect->per_partition ? 1 : 0; k < pattern.size(); ++k)
      flat = flat + grid(k) * pattern[k].first;
    v.index = {ir::AffineExpr::floordiv(flat, row), ir::AffineExpr::mod(flat, row)};
  } else {
    if (indirect)
      b.fail(sema::err_indirect_indices_are_not_supported_with_nki_api(
          b.api(), "runtime offsets (scalar_offset=, vector_offset=) index HBM tensors; on chip nkic has none yet"));
    int64_t free = base.num_elements() / base.shape.at(0);
    if (pattern[0].first != free)
      b.fail(sema::err_unsupported_index(".ap() on an on-chip tensor reads whole partitions: the first pair's step is " +
                                         std::to_string(free) + " (the free elements of `" + base.name +
                                         "`), got " + std::to_string(pattern[0].first)));
    v = reshape_view(b, whole, {base.shape[0], free});
    ir::AffineExpr f = ir::AffineExpr::mod(start, free);
    for (size_t k = 1; k < pattern.size(); ++k) f = f + grid(k) * pattern[k].first;
    v.index = {ir::AffineExpr::floordiv(start, free) + grid(0), f};
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
    v.indirect.push_back({0, std::make_shared<const types::TensorVal>(std::move(idx))});
  }
  return v;
}

}  // namespace nkic::codegen
