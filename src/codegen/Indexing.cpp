#include "codegen/Indexing.h"

#include <algorithm>

#include "codegen/ViewMethods.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"

namespace nkic::codegen {

using types::IndexVal;
using Kind = IndexItem::Kind;

namespace {

sema::Diagnostic index_error(const std::string& msg) { return sema::err_unsupported_index(msg); }

// Expand `...`, pad missing trailing dims with full slices (in `storage`; a key
// that indexes every dim without `...` is already normal).
const std::vector<IndexItem>& normalise(const KernelBuilder& b, const types::TensorVal& t,
                                        const std::vector<IndexItem>& key, std::vector<IndexItem>& storage) {
  size_t consumed = 0, ellipses = 0;
  for (const IndexItem& it : key) {
    if (it.kind == Kind::NewAxis)
      b.fail(index_error("None (new axis) is not supported when indexing tensor `" +
                         b.tensor(t.tensor).name + "`"));
    if (it.kind == Kind::Ellipsis) ++ellipses;
    else ++consumed;
  }
  const std::string& name = b.tensor(t.tensor).name;
  if (ellipses > 1) b.fail(index_error("an index can only have a single ellipsis ('...')"));
  if (consumed > t.shape.size())
    b.fail(index_error("too many indices for tensor `" + name + "`: tensor is " +
                       std::to_string(t.shape.size()) + "-dimensional, but " +
                       std::to_string(consumed) + " were indexed"));
  if (ellipses == 0 && consumed == t.shape.size()) return key;
  std::vector<IndexItem>& out = storage;
  IndexItem full;
  full.kind = Kind::Slice;
  for (const IndexItem& it : key) {
    if (it.kind != Kind::Ellipsis) {
      out.push_back(it);
      continue;
    }
    for (size_t i = 0; i < t.shape.size() - consumed; ++i) out.push_back(full);
  }
  while (out.size() < t.shape.size()) out.push_back(full);
  return out;
}

// A constant-or-affine bound, with Python's negative-index wrap for constants.
ir::AffineExpr bound(const std::optional<IndexVal>& v, int64_t dflt, int64_t size) {
  if (!v) return ir::AffineExpr(dflt);
  if (v->expr.is_constant() && v->expr.constant() < 0) return v->expr + size;
  return v->expr;
}

// Indirect indexing reads an integer index tile in SBUF (NKI_API.md §1.3): on
// the partition (or block) dimension of an HBM tensor, or as a runtime offset
// on a free dimension of an on-chip tensor (nisa.tensor_copy_dynamic_src/dst).
void check_indirect_index(KernelBuilder& b, const types::TensorVal& t, const types::TensorVal& idx, int dim,
                          int partition) {
  b.check_live(idx);
  const ir::TensorDecl& base = b.tensor(t.tensor);
  const ir::TensorDecl& index = b.tensor(idx.tensor);
  if (!ir::is_hbm(base.memory) && dim <= base.partition_dim)
    b.fail(sema::err_tensor_index_not_supported(
        base.name, "a runtime index into an on-chip tensor offsets a free dimension, not the partition dimension"));
  if (ir::is_hbm(base.memory) && dim > partition) b.fail(sema::err_indirect_indices_free_dim(base.name, dim));
  if (index.memory != ir::Memory::SBUF) b.fail(sema::err_indirect_indices_sbuf(index.name));
  if (!ir::is_integer(index.dtype))
    b.fail(sema::err_tensor_index_not_supported(base.name, "the index tile `" + index.name + "` is not an integer tile"));
  if (!idx.indirect.empty()) b.fail(index_error("an index tile cannot itself be indexed indirectly"));
}

}  // namespace

types::TensorVal subscript(KernelBuilder& b, const types::TensorVal& t, const std::vector<IndexItem>& key) {
  b.check_live(t);
  const std::string& name = b.tensor(t.tensor).name;
  std::vector<IndexItem> storage;
  const std::vector<IndexItem>& items = normalise(b, t, key, storage);
  if (!t.indirect.empty()) b.fail(index_error("an indirectly indexed view of `" + name + "` cannot be indexed again"));
  for (const IndexItem& it : items) {
    for (const IndexVal* v : {&it.value, it.start ? &*it.start : nullptr, it.stop ? &*it.stop : nullptr})
      if (v && !v->non_affine.empty()) b.fail(sema::err_non_affine_index_expression(v->non_affine));
  }
  bool advanced = false;
  // The access's partition dim: the first tensor dim not fixed by a scalar index
  // (dims before it are block dims, e.g. data[b, idx_tile, i_f]).
  int partition = 0;
  while (partition < static_cast<int>(items.size()) && items[partition].kind == Kind::Scalar) ++partition;
  for (size_t d = 0; d < items.size(); ++d) {
    const IndexItem& it = items[d];
    if (it.kind == Kind::Tensor) {
      // NKI_CURRENT_API.md §4.1: no tensors inside [] (the legacy index tiles).
      if (b.current_api)
        b.fail(index_error("a tensor inside [] does not index `" + name + "` in the nki API: read at a runtime "
                           "offset with .ap(scalar_offset=...) or .ap(vector_offset=...)"));
      check_indirect_index(b, t, *it.tensor, static_cast<int>(d), partition);
      advanced = true;
    }
    if (it.kind != Kind::Tile) continue;
    if (it.value.shape.size() == 1) b.fail(sema::err_1d_arange_not_supported(name));
    advanced = true;
  }
  // Slices written by the user, or implied by `...` / missing trailing indices.
  bool any_slice = items.size() > key.size() || std::any_of(key.begin(), key.end(), [](const IndexItem& k) {
                     return k.kind == Kind::Slice || k.kind == Kind::Ellipsis;
                   });
  if (advanced && any_slice) b.fail(sema::err_unsupported_mixing_basic_advanced_tensor_indexing(name));

  types::TensorVal r;
  r.tensor = t.tensor;
  r.region = t.region;
  r.shape.reserve(std::max<size_t>(items.size(), 2));
  std::vector<ir::AffineExpr> view(t.shape.size());
  const bool on_chip = !ir::is_hbm(b.tensor(t.tensor).memory);
  const bool keep_partition = b.current_api && on_chip;
  if (advanced) {
    for (const IndexItem& it : items) {
      if (it.kind == Kind::Tile || it.kind == Kind::Tensor) r.shape = types::broadcast_shapes(r.shape, it.value.shape);
      if (it.kind == Kind::Tensor) r.shape = types::broadcast_shapes(r.shape, it.tensor->shape);
    }
    for (size_t d = 0; d < items.size(); ++d) {
      const IndexVal& v = items[d].value;
      if (items[d].kind == Kind::Tensor)  // the tensor's value is read at run time and added
        r.indirect.push_back({static_cast<int>(d), items[d].tensor});
      view[d] = types::align_grid(v.expr.drop_broadcast_grid(v.shape), v.shape.size(), r.shape.size());
    }
  } else {
    for (size_t d = 0; d < items.size(); ++d) {
      const IndexItem& it = items[d];
      int64_t size = t.shape[d];
      if (it.kind == Kind::Scalar) {
        view[d] = bound(it.value, 0, size);
        // The current API (NKI_CURRENT_API.md §4.1): an integer on an on-chip tile's partition dim
        // keeps that dim at size 1; the legacy one drops it (NKI_API.md §1.3, block dims).
        if (keep_partition && d == 0) r.shape.push_back(1);
        continue;
      }
      // nl.ds(start, size) is not a Python slice: a negative start stays negative (out of bounds).
      ir::AffineExpr start = it.size && it.start ? it.start->expr : bound(it.start, 0, size);
      int64_t extent;
      if (it.size) {
        extent = *it.size;
      } else {
        ir::AffineExpr stop = bound(it.stop, size, size);
        if (start.is_constant() && stop.is_constant()) {  // the common `a:b`: no expression arithmetic
          extent = stop.constant() - start.constant();
        } else {
          ir::AffineExpr len = stop - start;
          if (!len.is_constant())
            b.fail(index_error("the slice `" + start.str() + ":" + stop.str() + "` of tensor `" + name +
                               "` has no static size; write it as nl.ds(start, size)"));
          extent = len.constant();
        }
      }
      if (it.step <= 0) b.fail(index_error("slice steps must be positive integers"));
      int64_t n = (extent + it.step - 1) / it.step;
      // `x[:, n:n]` (a tail of zero length) is an empty view, which the API calls skip; a slice
      // that ends before it starts is a mistake.
      if (n < 0 || (n == 0 && extent != 0))
        b.fail(index_error("the slice of tensor `" + name + "` on dimension " + std::to_string(d) + " is empty"));
      int g = static_cast<int>(r.shape.size());
      r.shape.push_back(n);
      view[d] = start + ir::AffineExpr::var({ir::VarKind::Grid, g}, it.step);
    }
  }
  r.index.reserve(t.index.size());
  for (const ir::AffineExpr& e : t.index) r.index.push_back(e.substitute_grid(view));
  // On-chip views stay tiles (at least [P, 1]): m[:, 0] of an SBUF tile is a [P, 1]
  // column, as NKI kernels use it (unit dims appended; the index does not use them).
  // A current-API HBM view keeps at least one dim (`(4, 128, 32)[0, 0, 0]` is `(1,)`).
  if (!on_chip && b.current_api && r.shape.empty()) r.shape.push_back(1);
  if (on_chip) {
    while (r.shape.size() < 2) r.shape.push_back(1);
    // NKI_API §1.3: an on-chip access walks consecutive partitions (free dims may stride).
    if (r.index[0].divs_use(ir::VarKind::Grid))
      b.fail(index_error("the partition dim of `" + name + "` is indexed by '//' or '%' of a tile index (" +
                         r.index[0].str() + "); an on-chip access walks consecutive partitions"));
    for (const ir::Term& term : r.index[0].terms())
      if (term.var.kind == ir::VarKind::Grid && std::abs(term.coeff) > 1)
        b.fail(index_error("flexible striding is not allowed on the partition dim of `" + name + "` (stride " +
                           std::to_string(term.coeff) + "); stride the free dims, or move the data with a DMA"));
  }
  return r;
}

void assert_shape(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& shape) {
  if (t.shape != shape) b.fail(sema::err_assert_shape_mismatch(t.shape, shape));
}

types::TensorVal broadcast_view(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& shape) {
  b.check_live(t);
  if (types::broadcast_shapes(t.shape, shape) != shape)
    b.fail(sema::err_param_shape_incompatible_with_numpy(sema::shape_str(t.shape), sema::shape_str(shape)));
  types::TensorVal r = t;
  r.shape = shape;
  for (ir::AffineExpr& e : r.index) e = types::align_grid(e.drop_broadcast_grid(t.shape), t.shape.size(), shape.size());
  return r;
}

types::TensorVal expand_dims_view(KernelBuilder& b, const types::TensorVal& t, int64_t axis) {
  b.check_live(t);
  int64_t rank = static_cast<int64_t>(t.shape.size());
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) b.fail(index_error("expand_dims axis " + std::to_string(axis) + " is out of range"));
  types::TensorVal r = t;
  r.shape.insert(r.shape.begin() + axis, 1);
  std::vector<ir::AffineExpr> subst;
  for (int64_t d = 0; d < rank; ++d) subst.push_back(ir::AffineExpr::grid(static_cast<int>(d < axis ? d : d + 1)));
  for (ir::AffineExpr& e : r.index) e = e.substitute_grid(subst);
  return r;
}

types::TensorVal masked_view(KernelBuilder& b, const types::TensorVal& t, const types::MaskVal& mask) {
  b.check_live(t);
  ir::Predicate p = types::lower_mask(mask, t.shape.size());
  types::TensorVal r = t;
  for (const ir::Constraint& c : p)
    r.operand_mask.push_back({c.expr, c.kind == ir::CmpKind::Eq ? types::Atom::Eq : types::Atom::Ge});
  return r;
}

namespace {

// A one-element dim is whole when it reads its only index (nl.arange(1) is the constant 0).
bool is_whole(const KernelBuilder& b, const types::TensorVal& t) {
  const ir::TensorDecl& base = b.tensor(t.tensor);
  bool whole = t.shape == base.shape;
  for (size_t d = 0; whole && d < t.index.size(); ++d)
    whole = t.index[d] == ir::AffineExpr::grid(static_cast<int>(d)) || (t.shape[d] == 1 && t.index[d] == ir::AffineExpr(0));
  return whole;
}

// The alias both views create; only a whole tensor can be reinterpreted.
types::TensorVal alias(KernelBuilder& b, const types::TensorVal& t, std::vector<int64_t> shape, ir::DType dtype,
                       const char* what) {
  b.check_live(t);
  const ir::TensorDecl& base = b.tensor(t.tensor);
  if (!is_whole(b, t))
    b.fail(index_error(std::string(what) + " needs the whole tensor `" + base.name + "`, not an indexed view of it"));
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n * ir::size_of(dtype) != base.num_elements() * ir::size_of(base.dtype))
    b.fail(index_error(std::string("cannot ") + what + " `" + base.name + sema::shape_str(base.shape) + "` (" +
                       std::string(ir::name(base.dtype)) + ") as " + sema::shape_str(shape) + " " +
                       std::string(ir::name(dtype)) + ": the byte sizes differ"));
  int root = base.alias_of >= 0 ? base.alias_of : t.tensor;
  ir::TensorDecl copy = base;  // memory, role and mutability follow the base
  int id = b.add_tensor(copy.name, std::move(shape), dtype, copy.memory, copy.role);
  ir::TensorDecl& v = b.tensor_mut(id);
  v.alias_of = root;
  v.is_mutable = copy.is_mutable;
  types::TensorVal r = b.full_view(id);
  r.region = t.region;
  return r;
}

// An indexed view under a new shape of its element count, over the same storage: the
// elements keep their row-major order, as an instruction pairs its operands' elements. Each group of old dims whose product is that of a
// group of new dims is one linear index; where the view's strides make the group contiguous
// (a split or a merge) the old grid is that index, otherwise its digits by // and %.
types::TensorVal regridded(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& shape) {
  // The caller checked the element counts; runtime offsets index the view's own grid.
  if (!t.indirect.empty())
    b.fail(index_error("a view of `" + b.tensor(t.tensor).name + "` at runtime offsets must have the instruction's shape " +
                       sema::shape_str(shape) + ", not " + sema::shape_str(t.shape)));
  std::vector<ir::AffineExpr> subst(t.shape.size(), ir::AffineExpr(0));
  size_t i = 0, k = 0;
  auto skip_units = [&] {
    while (i < t.shape.size() && t.shape[i] == 1) ++i;
    while (k < shape.size() && shape[k] == 1) ++k;
  };
  for (skip_units(); i < t.shape.size() && k < shape.size(); skip_units()) {
    std::vector<size_t> olds;  // the group's non-unit old dims
    ir::AffineExpr linear(0);
    int64_t po = 1, pn = 1;
    do {
      if (po <= pn) {
        if (t.shape[i] != 1) olds.push_back(i);
        po *= t.shape[i++];
      } else {
        linear = linear * shape[k] + ir::AffineExpr::grid(static_cast<int>(k));
        pn *= shape[k++];
      }
    } while (po != pn);
    bool contiguous = true;
    for (size_t j = 0; contiguous && j + 1 < olds.size(); ++j)
      for (const ir::AffineExpr& e : t.index)
        contiguous = contiguous && e.is_affine() &&
                     e.coeff(ir::Var{ir::VarKind::Grid, static_cast<int32_t>(olds[j])}) ==
                         e.coeff(ir::Var{ir::VarKind::Grid, static_cast<int32_t>(olds[j + 1])}) * t.shape[olds[j + 1]];
    if (contiguous) {
      subst[olds.back()] = linear;
      continue;
    }
    int64_t stride = 1;
    for (size_t j = olds.size(); j-- > 0;) {
      const ir::AffineExpr digit = stride == 1 ? linear : ir::AffineExpr::floordiv(linear, stride);
      subst[olds[j]] = j == 0 ? digit : ir::AffineExpr::mod(digit, t.shape[olds[j]]);
      stride *= t.shape[olds[j]];
    }
  }
  types::TensorVal r = t;
  r.shape = shape;
  for (ir::AffineExpr& e : r.index) e = e.substitute_grid(subst);
  std::vector<types::Atom> mask;
  for (types::Atom a : t.operand_mask) mask.push_back({a.expr.substitute_grid(subst), a.rel});
  r.operand_mask = std::move(mask);
  return r;
}

}  // namespace

types::TensorVal reshape_view(KernelBuilder& b, const types::TensorVal& t, std::vector<int64_t> shape) {
  b.check_live(t);
  if (!is_whole(b, t)) return reshape_pattern_view(b, t, shape);
  return alias(b, t, std::move(shape), b.tensor(t.tensor).dtype, "reshape");
}

types::TensorVal operand_view(KernelBuilder& b, const types::TensorVal& t, std::vector<int64_t> shape) {
  b.check_live(t);
  if (!is_whole(b, t)) return regridded(b, t, shape);
  return alias(b, t, std::move(shape), b.tensor(t.tensor).dtype, "reshape");
}

types::TensorVal dtype_view(KernelBuilder& b, const types::TensorVal& t, ir::DType dtype) {
  std::vector<int64_t> shape = t.shape;
  int from = ir::size_of(b.tensor(t.tensor).dtype), to = ir::size_of(dtype);
  if (!shape.empty() && (shape.back() * from) % to == 0) shape.back() = shape.back() * from / to;
  return alias(b, t, std::move(shape), dtype, "view");
}

}  // namespace nkic::codegen
