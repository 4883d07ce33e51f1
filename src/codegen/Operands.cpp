#include "codegen/Indexing.h"
#include "codegen/Ops.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"

namespace nkic::codegen {

void reject_operand(KernelBuilder& b, const std::string& operand, const Value& v) {
  if (auto* o = std::get_if<types::Other>(&v); o && o->type_name == "NoneType") b.fail(sema::err_operand_cannot_be_none(operand));
  std::string got = std::holds_alternative<types::IndexVal>(v) ? "an index expression (use nisa.iota to make it a tile)"
                    : std::holds_alternative<types::MaskVal>(v) ? "a mask (pass it as mask=)"
                    : std::holds_alternative<TensorVal>(v)      ? "a tensor"
                                                                : "'" + std::get<types::Other>(v).type_name + "'";
  b.fail(sema::err_unexpected_type_of_operand(operand, got));
}

int64_t free_elements(const TensorVal& t) {
  int64_t n = 1;
  for (size_t d = 1; d < t.shape.size(); ++d) n *= t.shape[d];
  return n;
}

TensorVal rows_of(KernelBuilder& b, const TensorVal& t) {
  if (t.shape.size() == 2) return t;
  return operand_view(b, t, {t.shape.empty() ? 1 : t.shape[0], free_elements(t)});
}

void check_rows(KernelBuilder& b, const TensorVal& data, const TensorVal& other, int64_t elements) {
  if (other.shape[0] != data.shape[0])
    b.fail(sema::err_num_partition_mismatch(describe(b, data), describe(b, other), b.api()));
  if (free_elements(other) != (elements < 0 ? free_elements(data) : elements))
    b.fail(sema::err_tile_shape_mismatch(describe(b, data), describe(b, other), b.api()));
}

void check_immediate(KernelBuilder& b, const char* name, const Value& v, const TensorVal& data) {
  if (const auto* t = std::get_if<TensorVal>(&v)) {
    b.check_operand(name, *t);
    check_rows(b, data, *t, 1);
  } else if (const auto* o = std::get_if<types::Other>(&v); !o || !o->numeric) {
    reject_operand(b, name, v);
  }
}

TensorVal destination_rows(KernelBuilder& b, const TensorVal& dst) {
  std::vector<int64_t> rows = {dst.shape.empty() ? 1 : dst.shape[0], free_elements(dst)};
  const ir::TensorDecl& d = b.tensor(dst.tensor);
  return Dst::into(dst).resolve(b, "", std::move(rows), d.dtype, d.memory);
}

void check_dst_rows(KernelBuilder& b, const Dst& dst, const TensorVal& data) {
  if (!dst.given()) return;
  b.check_operand("dst", dst.view());
  check_rows(b, data, dst.view());
}

ir::Access access_for(const KernelBuilder& b, const TensorVal& v, const std::vector<int64_t>& iter) {
  b.check_live(v);
  ir::Access a;
  a.tensor = v.tensor;
  a.index.reserve(v.index.size());
  for (const ir::AffineExpr& e : v.index) {
    a.index.push_back(e.drop_broadcast_grid(v.shape));
    // Most operands span the whole iteration space: their grid needs no shift (nor a copy).
    if (v.shape.size() != iter.size()) a.index.back() = types::align_grid(a.index.back(), v.shape.size(), iter.size());
  }
  for (const TensorVal::Indirect& ind : v.indirect) {
    // The index view shares the outer view's grid: broadcast it the same way.
    TensorVal idx = *ind.index;
    for (ir::AffineExpr& e : idx.index) e = types::align_grid(e.drop_broadcast_grid(idx.shape), idx.shape.size(), v.shape.size());
    idx.shape = v.shape;
    a.indirect.push_back({ind.dim, access_for(b, idx, iter), ind.step});
  }
  return a;
}

namespace {
std::vector<int64_t> squeezed(const std::vector<int64_t>& s) {
  std::vector<int64_t> r;
  for (int64_t d : s)
    if (d != 1) r.push_back(d);
  return r;
}
}  // namespace

TensorVal on_grid_of(KernelBuilder& b, const TensorVal& t, const std::vector<int64_t>& shape) {
  // Shapes equal up to unit dims need no re-gridding (fit_value pairs them; runtime offsets too).
  if (t.shape.empty() || shape.empty() || t.shape[0] != shape[0] || squeezed(t.shape) == squeezed(shape)) return t;
  int64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d) n *= shape[d];
  return free_elements(t) == n ? operand_view(b, t, shape) : t;
}

TensorVal fit_value(const KernelBuilder& b, const std::vector<int64_t>& dst, const TensorVal& value) {
  // numpy broadcasting into dst's shape (never growing it).
  bool broadcastable = dst.size() >= value.shape.size();
  for (size_t i = 0; broadcastable && i < value.shape.size(); ++i) {
    int64_t v = value.shape[value.shape.size() - 1 - i], d = dst[dst.size() - 1 - i];
    broadcastable = v == d || v == 1;
  }
  if (broadcastable) return value;
  // Same elements, differing only in size-1 dims ([64] = [64, 1]): the value is
  // re-viewed on dst's grid, its non-unit dims taken in order.
  if (squeezed(dst) != squeezed(value.shape)) {
    // The documented error is for a destination smaller than the value; a value
    // that is smaller (and does not broadcast) is a broadcast failure.
    bool dst_smaller = dst.size() < value.shape.size();
    for (size_t i = 0; !dst_smaller && i < value.shape.size(); ++i)
      dst_smaller = dst[dst.size() - 1 - i] < value.shape[value.shape.size() - 1 - i];
    if (!dst_smaller) b.fail(sema::err_param_shape_incompatible_with_numpy(sema::shape_str(value.shape), sema::shape_str(dst)));
    b.fail(sema::err_store_dst_shape_smaller_than_other_shape(dst, value.shape));
  }
  std::vector<ir::AffineExpr> to_dst(value.shape.size(), ir::AffineExpr(0));
  size_t k = 0;
  for (size_t i = 0; i < value.shape.size(); ++i) {
    if (value.shape[i] == 1) continue;
    while (dst[k] == 1) ++k;
    to_dst[i] = ir::AffineExpr::grid(static_cast<int>(k++));
  }
  TensorVal r = value;
  r.shape = dst;
  for (ir::AffineExpr& e : r.index) e = e.substitute_grid(to_dst);
  // A runtime-offset tile is read on the value's grid too: it moves with it.
  for (TensorVal::Indirect& ind : r.indirect) {
    TensorVal idx = *ind.index;
    for (ir::AffineExpr& e : idx.index)
      e = types::align_grid(e.drop_broadcast_grid(idx.shape), idx.shape.size(), value.shape.size()).substitute_grid(to_dst);
    idx.shape = dst;
    ind.index = std::make_shared<const TensorVal>(std::move(idx));
  }
  return r;
}

namespace {
bool in_psum(const KernelBuilder& b, const TensorVal* t) { return t && b.tensor(t->tensor).memory == ir::Memory::PSUM; }
}  // namespace

void check_one_psum_input(KernelBuilder& b, std::initializer_list<std::pair<const char*, const TensorVal*>> operands) {
  int n = 0;
  for (const auto& [name, t] : operands) n += in_psum(b, t);
  if (n > 1) b.fail(sema::err_unsupported_memory((operands.end() - 1)->first, b.api(), "sbuf", "psum"));
}

void check_no_psum(KernelBuilder& b, std::initializer_list<std::pair<const char*, const TensorVal*>> operands) {
  for (const auto& [name, t] : operands)
    if (in_psum(b, t)) b.fail(sema::err_unsupported_memory(name, b.api(), "sbuf", "psum"));
}

bool ignores_slot_operand(ir::AluOp op) {
  // NKI_API §3.2: the one-operand ops an op slot takes read the data and ignore the slot's operand.
  return op == ir::AluOp::abs || op == ir::AluOp::rsqrt || op == ir::AluOp::reciprocal;
}

std::optional<Value> slot_operand(ir::AluOp op, std::optional<Value> operand) {
  if (ignores_slot_operand(op)) return std::nullopt;
  return operand;
}

ir::Predicate predicate_for(const KernelBuilder& b, const OpArgs& args, size_t rank) {
  return args.mask ? types::lower_mask(*args.mask, rank) : ir::Predicate{};
}

std::unique_ptr<ir::Instruction> make_instruction(ir::Opcode op, std::vector<int64_t> shape) {
  auto in = std::make_unique<ir::Instruction>();
  in->opcode = op;
  in->shape = std::move(shape);
  return in;
}

std::unique_ptr<ir::Instruction> make_instruction(ir::Opcode op, const KernelBuilder& b, const TensorVal& dst,
                                                  const std::vector<int64_t>& iter) {
  auto in = make_instruction(op, iter);
  in->dst = access_for(b, dst, iter);
  return in;
}

std::string describe(const KernelBuilder& b, const TensorVal& v) { return b.tensor(v.tensor).name + sema::shape_str(v.shape); }

}  // namespace nkic::codegen
