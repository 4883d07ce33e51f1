#include "codegen/Ops.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"

namespace nkic::codegen {

ir::Access access_for(const KernelBuilder& b, const TensorVal& v, const std::vector<int64_t>& iter) {
  b.check_live(v);
  ir::Access a;
  a.tensor = v.tensor;
  a.index.reserve(v.index.size());
  for (const ir::AffineExpr& e : v.index)
    a.index.push_back(types::align_grid(e.drop_broadcast_grid(v.shape), v.shape.size(), iter.size()));
  for (const TensorVal::Indirect& ind : v.indirect) {
    // The index view shares the outer view's grid: broadcast it the same way.
    TensorVal idx = *ind.index;
    for (ir::AffineExpr& e : idx.index) e = types::align_grid(e.drop_broadcast_grid(idx.shape), idx.shape.size(), v.shape.size());
    idx.shape = v.shape;
    a.indirect.push_back({ind.dim, access_for(b, idx, iter)});
  }
  return a;
}

void check_fits(const KernelBuilder& b, const std::vector<int64_t>& dst, const std::vector<int64_t>& value) {
  if (types::broadcast_shapes(dst, value) != dst) b.fail(sema::err_store_dst_shape_smaller_than_other_shape(dst, value));
}

ir::Predicate predicate_for(const KernelBuilder& b, const OpArgs& args, size_t rank) {
  return args.mask ? types::lower_mask(*args.mask, rank) : ir::Predicate{};
}

}  // namespace nkic::codegen
