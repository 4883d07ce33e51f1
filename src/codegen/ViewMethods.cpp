#include "codegen/ViewMethods.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "codegen/AccessPattern.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

// The view methods came with nki 0.5 (reshape and view are older); the forms table has them once.
constexpr std::string_view kViewMethods = "the NkiTensor view methods (slice, select, permute, ...)";

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

[[noreturn]] void reject(KernelBuilder& b, std::string_view api, const std::string& why) {
  b.fail(sema::err_unsupported_args(api, why));
}

bool on_chip(KernelBuilder& b, const types::TensorVal& t) { return !ir::is_hbm(b.tensor(t.tensor).memory); }

// `dim` as an index into `ndim` dims (negative counts from the end, as in torch).
int64_t axis(KernelBuilder& b, std::string_view api, int64_t dim, size_t ndim, std::string_view what = "dim") {
  const auto n = static_cast<int64_t>(ndim);
  if (dim < -n || dim >= n)
    reject(b, api, std::string(what) + " " + std::to_string(dim) + " is out of range for a view of " +
                       std::to_string(n) + " dims");
  return dim < 0 ? dim + n : dim;
}

// On chip, dim 0 is the partition dim: the methods that would move or remove it refuse.
void keep_partition_dim(KernelBuilder& b, const types::TensorVal& t, std::string_view api, int64_t dim) {
  if (dim == 0 && on_chip(b, t))
    reject(b, api, "dim 0 of an on-chip view is its partition dim; it cannot be " +
                       std::string(api == "tensor.select" ? "selected" : "changed") + " this way");
}

types::TensorVal rebuild(KernelBuilder& b, const types::TensorVal& t, ViewPattern p) {
  if (p.pairs.empty()) p.pairs.push_back({1, 1});  // a view keeps at least one dim
  return ap_view(b, t, p.pairs, p.offset);
}

}  // namespace

ViewPattern view_pattern(KernelBuilder& b, const types::TensorVal& t, std::string_view api) {
  b.check_live(t);
  if (!t.indirect.empty())
    reject(b, api, "the view is indirect (a run-time select, vector_select or .ap() offset): its addresses are "
                   "run-time values");
  // The flat storage index of a point: reshapes and .ap() views index their
  // alias by floor-division and modulo, which cancel in the sum.
  const std::vector<int64_t>& shape = b.tensor(t.tensor).shape;
  ir::AffineExpr flat(0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    flat = flat + t.index.at(d) * stride;
    stride *= shape[d];
  }
  if (flat.divs_use(ir::VarKind::Grid)) reject(b, api, "the view is not a strided pattern of its tensor's storage");
  ViewPattern p;
  std::vector<ir::AffineExpr> origin(t.shape.size(), ir::AffineExpr(0));
  p.offset = flat.substitute_grid(origin);
  for (size_t k = 0; k < t.shape.size(); ++k)
    p.pairs.push_back({flat.coeff({ir::VarKind::Grid, static_cast<int32_t>(k)}), t.shape[k]});
  return p;
}

bool is_contiguous(KernelBuilder& b, const types::TensorVal& t) {
  const ViewPattern p = view_pattern(b, t, "tensor.is_contiguous");
  int64_t expect = 1;
  const size_t first = on_chip(b, t) ? 1 : 0;  // partitions are apart by design
  for (size_t k = p.pairs.size(); k-- > first;) {
    if (p.pairs[k].second == 1) continue;
    if (p.pairs[k].first != expect) return false;
    expect *= p.pairs[k].second;
  }
  return true;
}

types::TensorVal slice_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, int64_t start, int64_t end,
                            int64_t step) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.slice";
  ViewPattern p = view_pattern(b, t, api);
  dim = axis(b, api, dim, p.pairs.size());
  auto& [stride, count] = p.pairs[dim];
  if (start < 0 || start >= end || end > count || step < 1)
    reject(b, api, "needs 0 <= start < end <= " + std::to_string(count) + " (the size of dim " + std::to_string(dim) +
                       ") and step >= 1, got start=" + std::to_string(start) + ", end=" + std::to_string(end) +
                       ", step=" + std::to_string(step));
  p.offset = p.offset + stride * start;
  count = (end - start + step - 1) / step;
  stride *= step;
  return rebuild(b, t, std::move(p));
}

types::TensorVal select_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, int64_t index) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.select";
  ViewPattern p = view_pattern(b, t, api);
  dim = axis(b, api, dim, p.pairs.size());
  keep_partition_dim(b, t, api, dim);
  const auto [stride, count] = p.pairs[dim];
  if (index < 0 || index >= count)
    reject(b, api, "index " + std::to_string(index) + " is out of range for dim " + std::to_string(dim) + " of size " +
                       std::to_string(count));
  p.offset = p.offset + stride * index;
  p.pairs.erase(p.pairs.begin() + dim);
  return rebuild(b, t, std::move(p));
}

namespace {

// The dim of t's tensor whose rows are `stride` elements apart: a run-time index
// of the view's dim adds whole rows of it (the .ap() indirect_dim).
int tensor_dim_of(KernelBuilder& b, const types::TensorVal& t, int64_t stride, std::string_view api, int64_t dim) {
  const std::vector<int64_t>& shape = b.tensor(t.tensor).shape;
  int64_t row = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (row == stride) return static_cast<int>(d);
    row *= shape[d];
  }
  reject(b, api, "dim " + std::to_string(dim) + " of the view does not step over whole rows of a dim of `" +
                     b.tensor(t.tensor).name + "`" + sema::shape_str(shape) + ", so a run-time index cannot address it");
}

}  // namespace

types::TensorVal select_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, const types::TensorVal& index) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.select";
  ViewPattern p = view_pattern(b, t, api);
  dim = axis(b, api, dim, p.pairs.size());
  keep_partition_dim(b, t, api, dim);
  if (index.shape != std::vector<int64_t>{1, 1})
    reject(b, api, "a run-time index is a [1, 1] SBUF tile, got " + sema::shape_str(index.shape));
  const int d = tensor_dim_of(b, t, p.pairs[dim].first, api, dim);
  p.pairs.erase(p.pairs.begin() + dim);
  if (p.pairs.empty()) p.pairs.push_back({1, 1});
  return ap_view(b, t, p.pairs, p.offset, ApIndirect{index, false, d});
}

types::TensorVal vector_select_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim,
                                    const types::TensorVal& index) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.vector_select";
  ViewPattern p = view_pattern(b, t, api);
  if (axis(b, api, dim, p.pairs.size()) != 0) reject(b, api, "gathers rows of dim 0 only, got dim " + std::to_string(dim));
  if (on_chip(b, t)) reject(b, api, "gathers rows of an HBM tensor; `" + b.tensor(t.tensor).name + "` is on chip");
  if (index.shape.size() != 2 || index.shape[1] != 1)
    reject(b, api, "the row indices are a [P, 1] SBUF tile, got " + sema::shape_str(index.shape));
  tensor_dim_of(b, t, p.pairs[0].first, api, 0);
  p.pairs[0].second = index.shape[0];
  return ap_view(b, t, p.pairs, p.offset, ApIndirect{index, true, 0});
}

types::TensorVal indirect_view(KernelBuilder& b, const types::TensorVal& t, const types::TensorVal& index,
                               std::optional<int64_t> num_elem) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.indirect";
  sema::assert_nc_version(b.target(), 4, api, b.raiser());
  b.check_live(t);
  b.check_live(index);
  if (!on_chip(b, t)) reject(b, api, "indirects an on-chip view; `" + b.tensor(t.tensor).name + "` is in HBM");
  const ir::TensorDecl& ix = b.tensor(index.tensor);
  if (ix.memory != ir::Memory::SBUF || !ir::is_integer(ix.dtype))
    reject(b, api, "the offsets are an integer SBUF tile; `" + ix.name + "` is not");
  if (index.shape.size() != 2 || index.shape[0] != t.shape.at(0))
    reject(b, api, "the offsets are a [P, K] tile with P = " + std::to_string(t.shape.at(0)) +
                       " (the view's partitions), got " + sema::shape_str(index.shape));
  if (num_elem && *num_elem < 1) reject(b, api, "num_elem is positive, got " + std::to_string(*num_elem));
  // The sources disagree on what the index selects: partitions (the 0.5 release notes) or
  // free-dim offsets (the stub), the latter read at index[i % G, i // G] with G fixed by
  // the engine that later runs the view, yet num_elem defaults to index.size, which that
  // order overruns. No reading is defined, so none is simulated.
  reject(b, api, "nkic does not simulate tensor indirection: the sources disagree on what its index selects "
                 "(partitions in the 0.5 notes, free-dim offsets index[i % G, i // G] in the stub, G set by the "
                 "engine reading the view)");
}

types::TensorVal permute_view(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& dims) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.permute";
  ViewPattern p = view_pattern(b, t, api);
  std::vector<int64_t> order;
  for (int64_t d : dims) order.push_back(axis(b, api, d, p.pairs.size()));
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(p.pairs.size());
  std::iota(all.begin(), all.end(), 0);
  if (sorted != all)
    reject(b, api, "dims must list each of the view's " + std::to_string(p.pairs.size()) + " dims once, got " +
                       sema::shape_str(dims));
  if (on_chip(b, t) && order[0] != 0) reject(b, api, "on chip, dims[0] must be 0 (the partition dim stays first)");
  Pairs pairs;
  for (int64_t d : order) pairs.push_back(p.pairs[d]);
  p.pairs = std::move(pairs);
  return rebuild(b, t, std::move(p));
}

types::TensorVal broadcast_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim, int64_t size) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.broadcast";
  ViewPattern p = view_pattern(b, t, api);
  dim = axis(b, api, dim, p.pairs.size());
  keep_partition_dim(b, t, api, dim);
  if (p.pairs[dim].second != 1)
    reject(b, api, "stretches a dim of size 1; dim " + std::to_string(dim) + " has size " +
                       std::to_string(p.pairs[dim].second));
  if (size < 1) reject(b, api, "size must be positive, got " + std::to_string(size));
  p.pairs[dim] = {0, size};
  return rebuild(b, t, std::move(p));
}

types::TensorVal expand_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.expand_dim";
  ViewPattern p = view_pattern(b, t, api);
  dim = axis(b, api, dim, p.pairs.size() + 1);
  keep_partition_dim(b, t, api, dim);
  p.pairs.insert(p.pairs.begin() + dim, {0, 1});
  return rebuild(b, t, std::move(p));
}

types::TensorVal squeeze_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.squeeze_dim";
  ViewPattern p = view_pattern(b, t, api);
  dim = axis(b, api, dim, p.pairs.size());
  keep_partition_dim(b, t, api, dim);
  if (p.pairs[dim].second != 1)
    reject(b, api, "removes a dim of size 1; dim " + std::to_string(dim) + " has size " +
                       std::to_string(p.pairs[dim].second));
  p.pairs.erase(p.pairs.begin() + dim);
  return rebuild(b, t, std::move(p));
}

types::TensorVal reshape_dim_view(KernelBuilder& b, const types::TensorVal& t, int64_t dim,
                                  std::vector<int64_t> shape) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.reshape_dim";
  ViewPattern p = view_pattern(b, t, api);
  dim = axis(b, api, dim, p.pairs.size());
  const auto [stride, count] = p.pairs[dim];
  const auto unknown = std::count(shape.begin(), shape.end(), -1);
  int64_t known = 1;
  for (int64_t s : shape)
    if (s != -1) known *= s;
  if (shape.empty() || unknown > 1 || known < 1 || std::any_of(shape.begin(), shape.end(), [](int64_t s) { return s < -1 || s == 0; }))
    reject(b, api, "shape is positive sizes with at most one -1, got " + sema::shape_str(shape));
  if (unknown == 1) {
    if (count % known != 0)
      reject(b, api, "dim " + std::to_string(dim) + " of size " + std::to_string(count) + " does not split into " +
                         sema::shape_str(shape));
    *std::find(shape.begin(), shape.end(), -1) = count / known;
  } else if (known != count) {
    reject(b, api, sema::shape_str(shape) + " has " + std::to_string(known) + " elements; dim " + std::to_string(dim) +
                       " has " + std::to_string(count));
  }
  if (shape.size() > 1) keep_partition_dim(b, t, api, dim);
  Pairs split;
  int64_t s = stride;
  for (size_t k = shape.size(); k-- > 0;) {
    split.insert(split.begin(), {s, shape[k]});
    s *= shape[k];
  }
  p.pairs.erase(p.pairs.begin() + dim);
  p.pairs.insert(p.pairs.begin() + dim, split.begin(), split.end());
  return rebuild(b, t, std::move(p));
}

types::TensorVal flatten_dims_view(KernelBuilder& b, const types::TensorVal& t, int64_t start_dim, int64_t end_dim) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.flatten_dims";
  ViewPattern p = view_pattern(b, t, api);
  start_dim = axis(b, api, start_dim, p.pairs.size(), "start_dim");
  end_dim = axis(b, api, end_dim, p.pairs.size(), "end_dim");
  if (start_dim > end_dim) reject(b, api, "start_dim must not be after end_dim");
  if (start_dim == end_dim) return rebuild(b, t, std::move(p));
  keep_partition_dim(b, t, api, start_dim);
  int64_t count = p.pairs[end_dim].second;
  for (int64_t k = end_dim; k-- > start_dim;) {
    if (p.pairs[k].first != p.pairs[k + 1].first * p.pairs[k + 1].second && p.pairs[k].second != 1)
      reject(b, api, "dims " + std::to_string(start_dim) + ".." + std::to_string(end_dim) +
                         " are not contiguous in memory (dim " + std::to_string(k) + " steps " +
                         std::to_string(p.pairs[k].first) + " elements, not " +
                         std::to_string(p.pairs[k + 1].first * p.pairs[k + 1].second) + ")");
    count *= p.pairs[k].second;
  }
  p.pairs[start_dim] = {p.pairs[end_dim].first, count};
  p.pairs.erase(p.pairs.begin() + start_dim + 1, p.pairs.begin() + end_dim + 1);
  return rebuild(b, t, std::move(p));
}

types::TensorVal reshape_pattern_view(KernelBuilder& b, const types::TensorVal& t, const std::vector<int64_t>& shape) {
  constexpr std::string_view api = "tensor.reshape";
  ViewPattern p = view_pattern(b, t, api);
  int64_t from = 1, to = 1;
  for (int64_t d : t.shape) from *= d;
  for (int64_t d : shape) {
    if (d < 1) reject(b, api, "needs positive dims, got " + sema::shape_str(shape));
    to *= d;
  }
  const std::string shapes = sema::shape_str(t.shape) + " as " + sema::shape_str(shape);
  if (from != to) reject(b, api, "cannot reshape a view of shape " + shapes + ": the element counts differ");
  if (on_chip(b, t) && shape[0] != t.shape[0])
    reject(b, api, "dim 0 of an on-chip view is its partition dim; reshaping " + shapes + " changes its size");
  std::vector<size_t> old;  // the dims that count (size-1 dims step nowhere)
  for (size_t d = 0; d < p.pairs.size(); ++d)
    if (p.pairs[d].second != 1) old.push_back(d);
  Pairs out;
  size_t i = 0;
  for (size_t k = 0; k < shape.size();) {
    if (shape[k] == 1) {
      out.push_back({1, 1});
      ++k;
      continue;
    }
    // One group: old dims and new dims of the same product, split or merged as one run.
    const size_t i0 = i, k0 = k;
    int64_t po = 1, pn = 1;
    do {
      if (po <= pn) po *= p.pairs[old[i++]].second;
      else pn *= shape[k++];
    } while (po != pn);
    for (size_t j = i0; j + 1 < i; ++j) {
      const auto [step, count] = p.pairs[old[j + 1]];
      if (p.pairs[old[j]].first != step * count)
        reject(b, api, "cannot reshape a view of shape " + shapes + ": its dims " + std::to_string(old[i0]) + ".." +
                           std::to_string(old[i - 1]) + " are not contiguous in memory (dim " +
                           std::to_string(old[j]) + " steps " + std::to_string(p.pairs[old[j]].first) +
                           " elements, not " + std::to_string(step * count) + ")");
    }
    Pairs run;
    int64_t step = p.pairs[old[i - 1]].first;
    for (size_t n = k; n-- > k0;) {
      run.insert(run.begin(), {step, shape[n]});
      step *= shape[n];
    }
    out.insert(out.end(), run.begin(), run.end());
  }
  p.pairs = std::move(out);
  return rebuild(b, t, std::move(p));
}

types::TensorVal reinterpret_view(KernelBuilder& b, const types::TensorVal& t, ir::DType dtype) {
  constexpr std::string_view api = "tensor.view";
  ViewPattern p = view_pattern(b, t, api);
  const int64_t from = ir::size_of(b.tensor(t.tensor).dtype), to = ir::size_of(dtype);
  auto& [step, count] = p.pairs.back();
  if (step != 1 && count != 1) reject(b, api, "reinterprets a view whose last dim is contiguous; it steps " +
                                                  std::to_string(step) + " elements");
  auto scaled = [&](int64_t n, const std::string& what) {
    if (n * from % to != 0)
      reject(b, api, what + " (" + std::to_string(n) + " " + std::string(ir::name(b.tensor(t.tensor).dtype)) +
                         " elements) is not a whole number of " + std::string(ir::name(dtype)) + " elements");
    return n * from / to;
  };
  step = 1;
  count = scaled(count, "the last dim");
  for (size_t k = 0; k + 1 < p.pairs.size(); ++k) p.pairs[k].first = scaled(p.pairs[k].first, "a step");
  if (!p.offset.is_constant()) reject(b, api, "the view's start depends on a loop variable");
  p.offset = scaled(p.offset.constant(), "the view's start");
  return ap_view(b, t, p.pairs, p.offset, std::nullopt, dtype);
}

types::TensorVal rearrange_view(KernelBuilder& b, const types::TensorVal& t, const AxisGroups& src,
                                const AxisGroups& dst, const std::map<std::string, int64_t>& sizes) {
  b.check_versioned_form(kViewMethods);
  constexpr std::string_view api = "tensor.rearrange";
  if (src.size() != t.shape.size())
    reject(b, api, "src_pattern names " + std::to_string(src.size()) + " dims; the view has " +
                       std::to_string(t.shape.size()));
  // Split every grouped source dim, from the last so earlier indices stay put.
  types::TensorVal v = t;
  std::vector<std::string> names;
  for (size_t i = src.size(); i-- > 0;) {
    const std::vector<std::string>& g = src[i];
    if (g.empty()) reject(b, api, "an empty group in src_pattern");
    std::vector<int64_t> shape;
    for (const std::string& n : g) {
      const auto it = sizes.find(n);
      shape.push_back(it == sizes.end() ? -1 : it->second);
    }
    if (g.size() == 1 && shape[0] != -1 && shape[0] != t.shape[i])
      reject(b, api, "axis '" + g[0] + "' has size " + std::to_string(t.shape[i]) + ", not " + std::to_string(shape[0]));
    if (g.size() > 1) v = reshape_dim_view(b, v, static_cast<int64_t>(i), shape);
    names.insert(names.begin(), g.begin(), g.end());
  }
  std::vector<std::string> out;
  for (const auto& g : dst) out.insert(out.end(), g.begin(), g.end());
  if (std::set<std::string>(names.begin(), names.end()).size() != names.size() ||
      std::set<std::string>(out.begin(), out.end()) != std::set<std::string>(names.begin(), names.end()) ||
      out.size() != names.size())
    reject(b, api, "dst_pattern must name every axis of src_pattern once");
  std::vector<int64_t> order;
  for (const std::string& n : out) order.push_back(std::find(names.begin(), names.end(), n) - names.begin());
  v = permute_view(b, v, order);
  // Merge each grouped destination dim, from the last.
  int64_t end = static_cast<int64_t>(out.size());
  for (size_t i = dst.size(); i-- > 0;) {
    const auto first = end - static_cast<int64_t>(dst[i].size());
    if (dst[i].size() > 1) v = flatten_dims_view(b, v, first, end - 1);
    end = first;
  }
  return v;
}

}  // namespace nkic::codegen
