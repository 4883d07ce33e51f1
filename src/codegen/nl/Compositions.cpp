// The nl convenience APIs that are several instructions (NKI_API.md §2.8):
// nl.mean, nl.var, nl.softmax and nl.rms_norm lowered to the reductions and
// elementwise instructions neuronx-cc emits for them (docs/language.md).
// Intermediates are fp32 unless compute_dtype says otherwise; the result rounds once.
#include <cmath>

#include "codegen/Ops.h"

namespace nkic::codegen {

namespace {

using ir::AluOp;
using ir::DType;

Value number(double v, std::optional<DType> dtype = std::nullopt) {
  types::Other o;
  o.value = v;
  o.dtype = dtype;
  return o;
}

OpArgs in(const OpArgs& args, DType dtype) {
  OpArgs a = args;
  a.dtype = dtype;
  return a;
}

TensorVal tile(Value v) { return std::get<TensorVal>(std::move(v)); }

TensorVal apply(KernelBuilder& b, AluOp op, std::vector<Value> operands, const OpArgs& args, DType dtype) {
  return tile(elementwise(b, Dst::fresh(), op, std::move(operands), in(args, dtype)));
}

// nl.mean / nl.var: dtype=, else the input's float format; an integer input gives float32 (§2.10).
DType mean_dtype(const KernelBuilder& b, const TensorVal& x, const OpArgs& args) {
  if (args.dtype) return *args.dtype;
  const DType t = b.tensor(x.tensor).dtype;
  return ir::is_float(t) ? t : DType::float32;
}

// The sum stays in fp32; the scaling by 1/count rounds once into `out`.
TensorVal mean_rounded_to(KernelBuilder& b, const TensorVal& x, const std::vector<int64_t>& axes, bool keepdims,
                    const OpArgs& args, DType out) {
  const TensorVal sum = reduce(b, Dst::fresh(), AluOp::add, x, axes, keepdims, in(args, DType::float32));  // checks the axes
  int64_t count = 1;
  for (int64_t a : axes) count *= x.shape.at(a < 0 ? a + static_cast<int64_t>(x.shape.size()) : a);
  return apply(b, AluOp::multiply, {sum, number(static_cast<float>(1.0 / count), DType::float32)}, args, out);
}

// softmax / rms_norm: dtype=, else compute_dtype= ("they currently behave the same", §2.8), else the input's.
DType composite_dtype(const KernelBuilder& b, const TensorVal& x, const OpArgs& args, std::optional<DType> compute) {
  return args.dtype ? *args.dtype : compute ? *compute : b.tensor(x.tensor).dtype;
}

}  // namespace

TensorVal mean(KernelBuilder& b, const TensorVal& x, const std::vector<int64_t>& axes, bool keepdims,
               const OpArgs& args) {
  return mean_rounded_to(b, x, axes, keepdims, args, mean_dtype(b, x, args));
}

TensorVal variance(KernelBuilder& b, const TensorVal& x, const std::vector<int64_t>& axes, const OpArgs& args) {
  const TensorVal m = mean_rounded_to(b, x, axes, true, args, DType::float32);
  const TensorVal d = apply(b, AluOp::subtract, {x, m}, args, DType::float32);
  const TensorVal sq = apply(b, AluOp::multiply, {d, d}, args, DType::float32);
  return mean_rounded_to(b, sq, axes, false, args, mean_dtype(b, x, args));
}

TensorVal softmax(KernelBuilder& b, const TensorVal& x, const std::vector<int64_t>& axes,
                  std::optional<DType> compute, const OpArgs& args) {
  const DType dt = compute.value_or(DType::float32);
  const TensorVal m = reduce(b, Dst::fresh(), AluOp::maximum, x, axes, true, in(args, dt));
  const TensorVal e = apply(b, AluOp::exp, {apply(b, AluOp::subtract, {x, m}, args, dt)}, args, dt);
  const TensorVal s = reduce(b, Dst::fresh(), AluOp::add, e, axes, true, in(args, dt));
  return apply(b, AluOp::divide, {e, s}, args, composite_dtype(b, x, args, compute));
}

TensorVal rms_norm(KernelBuilder& b, const TensorVal& x, const Value& w, const std::vector<int64_t>& axes, double n,
                   double epsilon, std::optional<DType> compute, const OpArgs& args) {
  const DType dt = compute.value_or(DType::float32);
  const TensorVal sq = apply(b, AluOp::multiply, {x, x}, args, dt);
  TensorVal ms = reduce(b, Dst::fresh(), AluOp::add, sq, axes, true, in(args, dt));
  ms = apply(b, AluOp::multiply, {ms, number(static_cast<float>(1.0 / n), DType::float32)}, args, dt);
  const TensorVal r = apply(b, AluOp::rsqrt, {apply(b, AluOp::add, {ms, number(epsilon)}, args, dt)}, args, dt);
  return apply(b, AluOp::multiply, {apply(b, AluOp::multiply, {x, r}, args, dt), w}, args,
               composite_dtype(b, x, args, compute));
}

}  // namespace nkic::codegen
