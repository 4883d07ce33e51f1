#include "codegen/Scalars.h"

#include <functional>
#include <numeric>
#include <string>

#include "codegen/Destination.h"
#include "codegen/Ops.h"
#include "sema/ErrorCatalog.h"
#include "sema/ErrorCatalogScalars.h"

namespace nkic::codegen {

namespace {

using types::TensorVal;

bool is_scalar_dtype(ir::DType t) { return t == ir::DType::int32 || t == ir::DType::int64; }

// A one-element int32/int64 tensor in SBUF or HBM: scalar_load's src, scalar_store's dst.
void check_memory_operand(KernelBuilder& b, const TensorVal& t, std::string_view api, std::string_view what) {
  b.check_live(t);
  const ir::TensorDecl& d = b.tensor(t.tensor);
  if (!is_scalar_dtype(d.dtype)) {
    std::string hint = "a scalar comes from an int32 or int64 tensor";
    if (ir::is_integer(d.dtype) && !ir::info(d.dtype).is_signed && d.dtype != ir::DType::bool_)
      hint = "use the signed dtype of the same width, nl.int" + std::to_string(ir::size_of(d.dtype) * 8);
    b.fail(sema::err_scalar_dtype(api, what, ir::name(d.dtype), hint));
  }
  const int64_t n = std::accumulate(t.shape.begin(), t.shape.end(), int64_t{1}, std::multiplies<>());
  if (n != 1) b.fail(sema::err_scalar_shape(api, what, t.shape));
  if (d.memory == ir::Memory::PSUM) b.fail(sema::err_unsupported_memory(what, api, "sbuf or hbm", "psum"));
}

ir::Access one(const KernelBuilder& b, const TensorVal& t) { return access_for(b, t, std::vector<int64_t>(t.shape.size(), 1)); }

// One scalar instruction dst <- op(srcs..., constant) over the single point.
void emit_scalar(KernelBuilder& b, ir::Opcode opcode, const TensorVal& dst, const std::vector<TensorVal>& srcs,
                 ir::AluOp op, int64_t constant, bool reverse) {
  auto in = make_instruction(opcode, {1, 1});
  in->dst = one(b, dst);
  for (const TensorVal& s : srcs) in->srcs.push_back(one(b, s));
  in->alu = op;
  in->value = ir::AffineExpr(constant);
  in->reverse = reverse;
  b.emit(std::move(in));
}

TensorVal new_scalar(KernelBuilder& b, ir::DType dtype) {
  return Dst::fresh().resolve(b, "scalar", {1, 1}, dtype, ir::Memory::SBUF);
}

ir::DType scalar_dtype(const KernelBuilder& b, const TensorVal& s) { return b.tensor(s.tensor).dtype; }

bool is_comparison(ir::AluOp op) { return ir::info(op).kind == ir::AluKind::Compare; }

// The ops of the sequencer's ALU (NKI_07_08_API.md §2.2).
void check_scalar_op(KernelBuilder& b, ir::AluOp op) {
  switch (op) {
    case ir::AluOp::add: case ir::AluOp::subtract: case ir::AluOp::multiply: case ir::AluOp::divide:
    case ir::AluOp::fmod: case ir::AluOp::maximum: case ir::AluOp::minimum: return;
    default:
      if (is_comparison(op)) return;
      sema::Diagnostic d = sema::err_instruction_unsupported_op(ir::name(op));
      d.hint = "a scalar's ALU has add, subtract, multiply, divide, fmod, maximum, minimum and the comparisons";
      b.fail(d);
  }
}

}  // namespace

TensorVal scalar_load(KernelBuilder& b, const TensorVal& src) {
  check_memory_operand(b, src, "nisa.scalar_load", "src");
  b.require_unrolled("a scalar");  // run-time state: a loop around it unrolls
  const TensorVal dst = new_scalar(b, scalar_dtype(b, src));
  emit_scalar(b, ir::Opcode::ScalarLoad, dst, {src}, ir::AluOp::bypass, 0, false);
  return dst;
}

void scalar_store(KernelBuilder& b, const TensorVal& dst, const ScalarOperand& value) {
  const auto* s = std::get_if<TensorVal>(&value);
  if (!s) {
    sema::Diagnostic d = sema::err_unexpected_type_of_operand("value", "an int, expected an NkiScalar");
    d.hint = "a constant only appeared to store under simulation: write it with nisa.memset(dst, value)";
    b.fail(d);
  }
  check_memory_operand(b, dst, "nisa.scalar_store", "dst");
  check_memory_operand(b, *s, "nisa.scalar_store", "value");
  check_scalar_usable(b, *s);
  b.require_unrolled("a scalar");
  const ir::DType to = scalar_dtype(b, dst), from = scalar_dtype(b, *s);
  if (to != from)
    b.fail(sema::err_scalar_width_mismatch("nisa.scalar_store", "stores an " + std::string(ir::name(from)) +
                                                                    " scalar into an " + std::string(ir::name(to)) +
                                                                    " tensor"));
  emit_scalar(b, ir::Opcode::ScalarStore, dst, {*s}, ir::AluOp::bypass, 0, false);
}

TensorVal scalar_alu(KernelBuilder& b, const ScalarOperand& a, const ScalarOperand& c, ir::AluOp op) {
  const auto* sa = std::get_if<TensorVal>(&a);
  const auto* sc = std::get_if<TensorVal>(&c);
  check_scalar_op(b, op);
  if (!sa && !sc)
    b.fail(sema::err_unsupported_args("nisa.scalar_alu", "two ints are computed when traced, not on the device"));
  for (const TensorVal* t : {sa, sc})
    if (t) {
      check_memory_operand(b, *t, "nisa.scalar_alu", t == sa ? "data1" : "data2");
      check_scalar_usable(b, *t);
    }
  const ir::DType width = scalar_dtype(b, sa ? *sa : *sc);
  if (sa && sc && scalar_dtype(b, *sc) != width)
    b.fail(sema::err_scalar_width_mismatch("nisa.scalar_alu", "mixes an int32 and an int64 scalar"));
  if (width == ir::DType::int64 && (op == ir::AluOp::divide || op == ir::AluOp::fmod || op == ir::AluOp::maximum ||
                                    op == ir::AluOp::minimum || is_comparison(op)))
    b.fail(sema::err_scalar_int64_unsupported(
        "nisa.scalar_alu", "op " + std::string(ir::name(op)),
        "int64 scalars add, subtract and multiply only; compute the value as an int32 scalar"));
  b.require_unrolled("a scalar");
  const TensorVal dst = new_scalar(b, is_comparison(op) ? ir::DType::int32 : width);
  if (sa && sc) emit_scalar(b, ir::Opcode::ScalarAlu, dst, {*sa, *sc}, op, 0, false);
  else if (sa) emit_scalar(b, ir::Opcode::ScalarAlu, dst, {*sa}, op, std::get<int64_t>(c), false);
  else emit_scalar(b, ir::Opcode::ScalarAlu, dst, {*sc}, op, std::get<int64_t>(a), true);
  return dst;
}

int64_t scalar_alu_constant(KernelBuilder& b, int64_t a, int64_t c, ir::AluOp op) {
  if ((op == ir::AluOp::divide || op == ir::AluOp::fmod) && c == 0)
    b.fail(sema::err_unsupported_args("nisa.scalar_alu", std::string(ir::name(op)) + " by 0"));
  check_scalar_op(b, op);
  return ir::scalar_alu_value(op, a, c, 64);
}

void check_scalar_usable(KernelBuilder& b, const TensorVal& s) {
  const ir::Instruction* w = b.last_writer(s.tensor);
  if (w && w->opcode == ir::Opcode::ScalarAlu && is_comparison(w->alu))
    b.check_versioned_form("the result of an NkiScalar comparison");
}

void check_scalar_32(KernelBuilder& b, const TensorVal& s, std::string_view api, std::string_view what) {
  check_scalar_usable(b, s);
  if (scalar_dtype(b, s) == ir::DType::int64)
    b.fail(sema::err_scalar_int64_unsupported(api, what,
                                              "a loop's compare-and-branch and a branch condition have no 64-bit form: "
                                              "compute the value as an int32 scalar"));
}

bool has_dtype(const KernelBuilder& b, ir::DType t) {
  if (t == ir::DType::float8_e8m0fnu && b.current_api) b.check_versioned_form("nl.float8_e8m0fnu");
  if (!ir::is_wide(t)) return true;
  if (b.current_api) b.check_versioned_form(t == ir::DType::int64 ? "nl.int64" : "nl.uint64");
  return b.current_api;
}

void check_wide_dtypes(const KernelBuilder& b, const ir::Instruction& in) {
  const ir::OpcodeInfo& op = ir::info(in.opcode);
  if (op.exec == ir::Exec::Scalar || op.form == ir::Form::fill) return;
  if (ir::engine_of(in) == ir::Engine::dma && op.exec == ir::Exec::Move && in.has_dst() && in.srcs.size() == 1 &&
      b.tensor(in.dst.tensor).dtype == b.tensor(in.srcs[0].tensor).dtype)
    return;
  // Checked in place (dst, extra dsts, srcs): every traced instruction passes here.
  auto check = [&](const ir::Access& a) {
    const ir::TensorDecl& t = b.tensor(a.tensor);
    if (ir::is_wide(t.dtype)) b.fail(sema::err_wide_dtype_compute(ir::name(in.opcode), t.name, ir::name(t.dtype)));
  };
  if (in.has_dst()) check(in.dst);
  for (const ir::Access& a : in.extra_dsts) check(a);
  for (const ir::Access& a : in.srcs) check(a);
}

}  // namespace nkic::codegen
