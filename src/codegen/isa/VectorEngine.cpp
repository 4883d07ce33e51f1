// The Vector Engine's elementwise instructions (the instruction table's `dve` rows of one
// ALU pipeline): the nl operators' elementwise form, tensor_tensor, scalar_tensor_tensor,
// tensor_copy, and isa_pipeline, the one pipeline builder every engine's ALU instruction uses.
#include "codegen/Ops.h"

#include <algorithm>

#include "ir/SmallVec.h"
#include "sema/Asserts.h"
#include "sema/OpTable.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"
#include "types/Promotion.h"

namespace nkic::codegen {

using ir::Memory;

namespace {

// The operand's dtype for promotion, after checking it is something an
// engine can read: an on-chip tensor or a number.
// The operand's name in the op table (data1, data2, ...), else x / y.
std::string operand_name(const KernelBuilder& b, size_t i) {
  const sema::OpSpec& spec = b.op_spec();
  if (i < spec.operands.size()) return std::string(spec.operands[i].name);
  return i == 0 ? "x" : "y";
}

ir::DType operand_dtype(KernelBuilder& b, const Value& v, size_t i) {
  std::string name = operand_name(b, i);
  if (auto* t = std::get_if<TensorVal>(&v)) {
    b.check_operand(name.c_str(), *t);
    return b.tensor(t->tensor).dtype;
  }
  if (auto* o = std::get_if<types::Other>(&v); o && o->numeric) return types::scalar_dtype(*o);
  reject_operand(b, name, v);
}

std::vector<int64_t> non_unit_free(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (size_t d = 1; d < shape.size(); ++d)
    if (shape[d] != 1) out.push_back(shape[d]);
  return out;
}

// The free dims that both free shapes split into (row-major), e.g. [4] and [2, 2] as
// [2, 2]; empty when neither refines the other's dims.
std::vector<int64_t> common_split(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> x = non_unit_free(a), y = non_unit_free(b), out;
  size_t i = 0, j = 0;
  int64_t ra = 1, rb = 1;  // what is left of the current dim of each shape
  while (true) {
    if (ra == 1 && i < x.size()) ra = x[i++];
    if (rb == 1 && j < y.size()) rb = y[j++];
    if (ra == 1 && rb == 1) return out;
    int64_t step = std::min(ra, rb);
    if (step == 1 || ra % step || rb % step) return {};
    out.push_back(step);
    ra /= step, rb /= step;
  }
}

// `t` with its free dims split into `split` (which refines them): each old dim reads the
// row-major position of its run of new dims, so the index stays affine.
TensorVal split_free_view(const TensorVal& t, const std::vector<int64_t>& split) {
  std::vector<ir::AffineExpr> subst(t.shape.size(), ir::AffineExpr(0));
  subst[0] = ir::AffineExpr::grid(0);
  size_t k = 0;
  for (size_t d = 1; d < t.shape.size(); ++d) {
    if (t.shape[d] == 1) continue;
    size_t end = k;
    for (int64_t n = 1; n < t.shape[d]; ++end) n *= split[end];
    ir::AffineExpr e(0);
    int64_t stride = 1;
    for (size_t r = end; r-- > k;) e = e + ir::AffineExpr::grid(static_cast<int>(r + 1)) * stride, stride *= split[r];
    subst[d] = e;
    k = end;
  }
  TensorVal r = t;
  r.shape = {t.shape[0]};
  r.shape.insert(r.shape.end(), split.begin(), split.end());
  for (ir::AffineExpr& e : r.index) e = e.substitute_grid(subst);
  return r;
}

// Tile operands share their partitions: nisa.tensor_tensor always (equal elements
// per partition too), other ISA ops when neither is a one-partition broadcast.
// One element per partition ([P, 1], [P, 1, 1]) broadcasts along every free dim of
// the other operand, as (P, 1) operands do (public kernels add [P, 1] biases with
// tensor_tensor); numpy's right alignment would pair it with the wrong dims.
void align_tile_operands(KernelBuilder& b, std::vector<Value>& operands) {
  ir::SmallVec<TensorVal*, 4> tiles;
  ir::SmallVec<size_t, 4> slots;
  for (size_t i = 0; i < operands.size(); ++i)
    if (auto* t = std::get_if<TensorVal>(&operands[i])) tiles.push_back(t), slots.push_back(i);
  if (tiles.size() < 2) return;
  const bool strict = b.op_spec().shapes == ir::Shapes::equal;
  const bool isa = b.api().rfind("nisa.", 0) == 0;
  if (tiles.size() == 2) {
    const TensorVal &x = *tiles[0], &y = *tiles[1];
    auto named = [&](size_t i) { return operand_name(b, slots[i]) + sema::shape_str(tiles[i]->shape); };
    if (x.shape[0] != y.shape[0] && (strict || (isa && x.shape[0] > 1 && y.shape[0] > 1)))
      b.fail(sema::err_num_partition_mismatch(named(0), named(1), b.api()));
    int64_t fx = free_elements(x), fy = free_elements(y);
    // The current API's reference: "the same number of elements per partition", no exception; the
    // legacy API met a [P, 1] operand with every free element (its public kernels add [P, 1] biases so).
    const bool column_broadcasts = !b.current_api && (fx == 1 || fy == 1);
    if (strict && fx != fy && !column_broadcasts) b.fail(sema::err_tile_shape_mismatch(named(0), named(1), b.api()));
    // No broadcasting: equal elements per partition pair in order whatever the free
    // shapes ([P, 4] with a [P, 2, 2] view, [P, 1, 2] with [P, 2], as the kernel library writes).
    if (strict && fx == fy && fx != 1 && x.shape != y.shape) {
      std::vector<int64_t> split = common_split(x.shape, y.shape);
      if (split.empty()) b.fail(sema::err_tile_shape_mismatch(named(0), named(1), b.api()));
      *tiles[0] = split_free_view(x, split);
      *tiles[1] = split_free_view(y, split);
      return;
    }
  }
  const TensorVal* widest = tiles[0];
  for (const TensorVal* t : tiles)
    if (t->shape.size() > widest->shape.size()) widest = t;
  for (TensorVal* t : tiles)
    if (t->shape.size() < widest->shape.size() && free_elements(*t) == 1 && t->shape[0] == widest->shape[0])
      t->shape.resize(widest->shape.size(), 1);
}

// Seed 001: a tensor operand makes the operation a tensor operation, so an index
// operand (a loop variable, `t + i * 8`; an nl.arange tile) is materialised as
// an int32 tile: a scalar index as one column over the tensor's partitions.
void materialise_indices(KernelBuilder& b, std::vector<Value>& operands) {
  const TensorVal* first = nullptr;
  for (const Value& v : operands)
    if (!first) first = std::get_if<TensorVal>(&v);
  if (!first) return;
  for (Value& v : operands)
    if (auto* i = std::get_if<types::IndexVal>(&v)) {
      types::IndexVal column = *i;
      if (column.is_scalar()) column.shape = {first->shape[0], 1};
      v = iota(b, Dst::fresh(), column, ir::DType::int32, {});
    }
}

}  // namespace

Value elementwise(KernelBuilder& b, const Dst& to, ir::AluOp op, std::vector<Value> operands, const OpArgs& args) {
  materialise_indices(b, operands);
  align_tile_operands(b, operands);
  ir::SmallVec<ir::DType, 4> dtypes;
  ir::SmallVec<const TensorVal*, 4> tensors;
  std::vector<int64_t> shape;
  for (size_t i = 0; i < operands.size(); ++i) {
    dtypes.push_back(operand_dtype(b, operands[i], i));
    if (auto* t = std::get_if<TensorVal>(&operands[i])) {
      tensors.push_back(t);
      if (tensors.size() == 1) shape = t->shape;  // broadcasting with itself: the first shape as it is
      else if (shape != t->shape) shape = types::broadcast_shapes(shape, t->shape);
    }
  }
  if (tensors.empty()) b.fail(sema::err_unexpected_type_of_operand("x", "no tensor operand"));
  // nki 0.5: the current API's nl.rsqrt reads no PSUM tile.
  if (b.current_api && b.api() == "nl.rsqrt" && !b.accepts("nl.rsqrt of a PSUM tile"))
    check_no_psum(b, {{"x", tensors[0]}});
  // A one-operand op in a two-operand slot (nisa.tensor_tensor(op=nl.exp)) has no meaning.
  if (operands.size() != static_cast<size_t>(ir::info(op).arity) || ir::is_parametric_activation(op))
    b.fail(sema::err_instruction_unsupported_op(ir::name(op)));
  if (ir::info(op).kind == ir::AluKind::Bitvec)
    for (size_t i = 0; i < dtypes.size(); ++i)
      if (ir::is_float(dtypes[i]))
        b.fail(sema::err_bitvec_operand_must_be_integer(ir::name(op), operand_name(b, i), ir::name(dtypes[i])));
  ir::DType out = dtypes[0];
  for (size_t i = 1; i < dtypes.size(); ++i) out = types::promote(out, dtypes[i]);
  out = args.dtype.value_or(out);

  // nl.exp & co. run as activation instructions, which an allocated kernel must give a bias.
  if (b.direct_allocation && operands.size() == 1 && ir::info(op).kind == ir::AluKind::Activation &&
      b.api().rfind("nl.", 0) == 0)
    b.fail(sema::err_bias_tensor_must_be_specified_in_allocation(b.api()));
  TensorVal dst = to.resolve(b, std::string(ir::name(op)), shape, out, Memory::SBUF);
  auto in = std::make_unique<ir::Instruction>();
  in->engine = args.engine;
  in->dst = access_for(b, dst, shape);
  in->alu = op;
  in->predicate = predicate_for(b, args, shape.size());
  if (tensors.size() == operands.size()) {
    in->opcode = operands.size() == 2 ? ir::Opcode::TensorTensor
                 : op == ir::AluOp::bypass ? ir::Opcode::Copy
                                           : ir::Opcode::Activation;
    in->srcs.reserve(tensors.size());
    for (const TensorVal* t : tensors) in->srcs.push_back(access_for(b, *t, shape));
  } else {
    in->opcode = ir::Opcode::TensorScalar;
    in->srcs.push_back(access_for(b, *tensors[0], shape));
    in->reverse = std::holds_alternative<types::Other>(operands[0]);
    in->imms = {std::get<types::Other>(operands[in->reverse ? 0 : 1]).value};
  }
  in->shape = std::move(shape);  // last: the accesses above are laid out on it
  b.emit(std::move(in));
  return dst;
}

TensorVal isa_pipeline(KernelBuilder& b, const Dst& to, ir::Opcode opcode, const TensorVal& data,
                       const std::vector<PipelineStep>& steps, const OpArgs& args, ir::Engine engine,
                       const Accumulate& acc) {
  ir::DType running = operand_dtype(b, Value(data), 0);
  auto in = std::make_unique<ir::Instruction>();
  in->opcode = opcode;
  in->engine = engine;
  in->shape = data.shape;
  in->srcs.push_back(access_for(b, data, data.shape));
  for (const PipelineStep& s : steps) {
    ir::AluStep step{s.op, -1, 0.0, s.reverse};
    const bool binary = ir::info(s.op).arity == 2;
    const size_t slot = s.reverse ? 0 : 1;
    std::vector<ir::DType> dtypes = {running};
    // A one-operand op in a two-operand slot (or the reverse) has no meaning.
    if (binary != s.operand.has_value()) b.fail(sema::err_instruction_unsupported_op(ir::name(s.op)));
    // prelu and its parameter belong to the activation function slot, the pipeline's last step.
    if (ir::is_parametric_activation(s.op) &&
        (&s != &steps.back() || (opcode != ir::Opcode::Activation && opcode != ir::Opcode::Activate2)))
      b.fail(sema::err_instruction_unsupported_op(ir::name(s.op)));
    if (binary) {
      std::vector<Value> pair = {Value(data), *s.operand};
      materialise_indices(b, pair);
      align_tile_operands(b, pair);
      dtypes.push_back(operand_dtype(b, pair[1], slot));
      if (auto* t = std::get_if<TensorVal>(&pair[1])) {
        if (types::broadcast_shapes(data.shape, t->shape) != data.shape)
          b.fail(sema::err_tile_shape_mismatch(describe(b, data), describe(b, *t), b.api()));
        step.src = static_cast<int>(in->srcs.size());
        in->srcs.push_back(access_for(b, *t, data.shape));
      } else {
        step.imm = std::get<types::Other>(pair[1]).value;
      }
    }
    if (ir::info(s.op).kind == ir::AluKind::Bitvec)
      for (size_t i = 0; i < dtypes.size(); ++i)
        if (ir::is_float(dtypes[i]))
          b.fail(sema::err_bitvec_operand_must_be_integer(ir::name(s.op), operand_name(b, i == 0 ? 1 - slot : slot),
                                                          ir::name(dtypes[i])));
    // The engine keeps a fused result in fp32, or a bitvec op's in the data's bits.
    if (ir::info(s.op).kind != ir::AluKind::Bitvec) running = ir::DType::float32;
    in->steps.push_back(step);
  }
  TensorVal dst = to.resolve(b, ir::name(opcode), data.shape, args.dtype.value_or(b.tensor(data.tensor).dtype),
                             Memory::SBUF);
  in->dst = access_for(b, dst, data.shape);
  in->predicate = predicate_for(b, args, data.shape.size());
  attach_accumulator(b, *in, acc);
  b.emit(std::move(in));
  return dst;
}

Value tensor_tensor(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& data1, const TensorVal& data2,
                    ir::Engine engine, const OpArgs& args) {
  check_one_psum_input(b, {{"data1", &data1}, {"data2", &data2}});
  if (op == ir::AluOp::power || engine == ir::Engine::pool) check_no_psum(b, {{"data1", &data1}, {"data2", &data2}});
  if (b.current_api && b.nki_version.at_least(0, 8) && engine == ir::Engine::pool && ir::info(op).kind == ir::AluKind::Bitvec)
    b.warn(sema::warn_bitvec_op_engine(b.api(), ir::name(op), "GpSimd"));
  OpArgs on = args;
  on.engine = engine == ir::Engine::pe ? ir::Engine::none : engine;  // the PE array has no ALU
  std::vector<Value> operands;
  operands.reserve(2);
  operands.emplace_back(data1);
  if (!ignores_slot_operand(op)) operands.emplace_back(data2);
  return elementwise(b, dst, op, std::move(operands), on);
}

Value reciprocal(KernelBuilder& b, const Dst& dst, const TensorVal& data, const OpArgs& args) {
  OpArgs on = args;
  on.engine = ir::call_engine("reciprocal");
  return elementwise(b, dst, ir::AluOp::reciprocal, {Value(data)}, on);
}

TensorVal scalar_tensor_tensor(KernelBuilder& b, const Dst& dst, const TensorVal& data, const PipelineStep& first,
                               const PipelineStep& second, const OpArgs& args) {
  const TensorVal* operand1 = second.operand ? std::get_if<TensorVal>(&*second.operand) : nullptr;
  check_one_psum_input(b, {{"data", &data}, {"operand1", operand1}});
  const std::vector<PipelineStep> steps = {{first.op, slot_operand(first.op, first.operand), first.reverse},
                                           {second.op, slot_operand(second.op, second.operand), second.reverse}};
  return isa_pipeline(b, dst, ir::Opcode::ScalarTensorTensor, data, steps, args);
}

TensorVal tensor_copy(KernelBuilder& b, const Dst& dst, const TensorVal& src, ir::Engine engine, const OpArgs& args) {
  if (engine == ir::Engine::pool) check_no_psum(b, {{"src", &src}});
  return isa_pipeline(b, dst, ir::Opcode::Copy, src, {}, args, engine);
}

void update_inplace(KernelBuilder& b, ir::AluOp op, const TensorVal& dst, const Value& value) {
  operand_dtype(b, Value(dst), 0);
  operand_dtype(b, value, 1);
  auto in = std::make_unique<ir::Instruction>();
  in->shape = dst.shape;
  in->dst = access_for(b, dst, dst.shape);
  in->alu = op;
  in->srcs.push_back(access_for(b, dst, dst.shape));
  if (auto* t = std::get_if<TensorVal>(&value)) {
    in->opcode = ir::Opcode::TensorTensor;
    in->srcs.push_back(access_for(b, fit_value(b, dst.shape, *t), dst.shape));
  } else {
    in->opcode = ir::Opcode::TensorScalar;
    in->imms = {std::get<types::Other>(value).value};
  }
  b.emit(std::move(in));
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

}  // namespace nkic::codegen
