// The device scalars of nki 0.7/0.8 (NKI_07_08_API.md §2): an NkiScalar is one integer in
// a sequencer register, which nkic keeps, as it keeps a VirtualRegister, in a [1, 1] int32 or
// int64 SBUF tile; loop bounds, while conditions and .ap(scalar_offset=) read it at run time.
// Each scalar operation is one sequencer instruction (scalar_load, scalar_store, scalar_alu).
#pragma once
#include <string_view>
#include <variant>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

// An operand of scalar arithmetic: a scalar's register tile, or a Python int (its 64 bits,
// two's complement; an int32 operation keeps the low 32).
using ScalarOperand = std::variant<types::TensorVal, int64_t>;

// A new scalar holding the one int32/int64 element of `src` (SBUF or HBM).
types::TensorVal scalar_load(KernelBuilder& b, const types::TensorVal& src);
// The one element of `dst` (SBUF or HBM, the width of `value`) = value; an int is rejected.
void scalar_store(KernelBuilder& b, const types::TensorVal& dst, const ScalarOperand& value);
// A new scalar `a op c` (at least one a scalar): +, -, * wrap at the scalar's width; divide,
// fmod, maximum, minimum and the comparisons (an int32 1 or 0) take 32-bit scalars.
types::TensorVal scalar_alu(KernelBuilder& b, const ScalarOperand& a, const ScalarOperand& c, ir::AluOp op);
// scalar_alu of two ints, evaluated when traced (64-bit); a comparison gives 1 or 0.
int64_t scalar_alu_constant(KernelBuilder& b, int64_t a, int64_t c, ir::AluOp op);
// A scalar used as a value (an operand, a stored value, a bound, an offset): a comparison's
// 0/1 result is one from nki 0.8; 0.7 traces the comparison but its result cannot be used.
void check_scalar_usable(KernelBuilder& b, const types::TensorVal& s);
// A scalar where only a 32-bit one is taken, and usable (check_scalar_usable): `what` is a
// loop bound, an if_else condition, ...
void check_scalar_32(KernelBuilder& b, const types::TensorVal& s, std::string_view api, std::string_view what);
// Whether a kernel may name `t`: the 64-bit integers are the current API's, and before
// nki 0.7 (which brought them with its scalars) naming one is err_not_in_nki_version;
// neuronxcc.nki has none.
bool has_dtype(const KernelBuilder& b, ir::DType t);
// 64-bit integer tensors are only read and written by the scalar instructions, memsets and
// DMAs that do not convert: anything else in `in` is err_wide_dtype_compute.
void check_wide_dtypes(const KernelBuilder& b, const ir::Instruction& in);

}  // namespace nkic::codegen
