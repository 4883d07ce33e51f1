#include "codegen/AccessPattern.h"

#include "codegen/Indexing.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

// The storage offset (in elements) where view `t` starts.
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

}  // namespace

types::TensorVal ap_view(KernelBuilder& b, const types::TensorVal& t,
                         const std::vector<std::pair<int64_t, int64_t>>& pattern, std::optional<int64_t> offset) {
  b.check_live(t);
  const ir::TensorDecl& base = b.tensor(t.tensor);
  if (pattern.empty()) b.fail(sema::err_unsupported_index(".ap() needs at least one [step, count] pair"));
  for (const auto& [step, count] : pattern)
    if (count < 1) b.fail(sema::err_unsupported_index(".ap() counts are positive, got " + std::to_string(count)));
  ir::AffineExpr start = offset ? ir::AffineExpr(*offset) : view_offset(b, t);
  types::TensorVal whole = b.full_view(t.tensor);
  whole.region = t.region;
  std::vector<int64_t> shape;
  for (const auto& p : pattern) shape.push_back(p.second);
  types::TensorVal v;
  if (ir::is_hbm(base.memory)) {
    v = reshape_view(b, whole, {base.num_elements()});
    ir::AffineExpr flat = start;
    for (size_t k = 0; k < pattern.size(); ++k) flat = flat + ir::AffineExpr::grid(static_cast<int>(k)) * pattern[k].first;
    v.index = {flat};
  } else {
    int64_t free = base.num_elements() / base.shape.at(0);
    if (pattern[0].first != free)
      b.fail(sema::err_unsupported_index(".ap() on an on-chip tensor reads whole partitions: the first pair's step is " +
                                         std::to_string(free) + " (the free elements of `" + base.name +
                                         "`), got " + std::to_string(pattern[0].first)));
    v = reshape_view(b, whole, {base.shape[0], free});
    ir::AffineExpr f = ir::AffineExpr::mod(start, free);
    for (size_t k = 1; k < pattern.size(); ++k) f = f + ir::AffineExpr::grid(static_cast<int>(k)) * pattern[k].first;
    v.index = {ir::AffineExpr::floordiv(start, free) + ir::AffineExpr::grid(0), f};
  }
  v.shape = std::move(shape);
  return v;
}

}  // namespace nkic::codegen
