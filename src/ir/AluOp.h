// Every operator an NKI program can name (nl.add, np.add, nl.exp, np.max, ...)
// maps to exactly one AluOp through one table. Instructions carry the AluOp as a
// value; the simulator evaluates it with one switch (sim/AluEval).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace nkic::ir {

#define NKIC_ALU_OPS(X)                                                        \
  /* name            arity kind  NeuronCore version it needs (0: every) */     \
  X(bypass,          1, Arith, 0)         /* identity: copy / np.copy */       \
  X(add,             2, Arith, 0)                                              \
  X(subtract,        2, Arith, 0)                                              \
  X(multiply,        2, Arith, 0)                                              \
  X(divide,          2, Arith, 0)                                              \
  X(maximum,         2, Arith, 0)                                              \
  X(minimum,         2, Arith, 0)                                              \
  X(abs_max,         2, Arith, 4)    /* the signed value of larger magnitude */ \
  X(abs_min,         2, Arith, 4)                                              \
  X(power,           2, Arith, 0)                                              \
  X(mod,             2, Arith, 0)                                              \
  X(fmod,            2, Arith, 0)                                              \
  X(equal,           2, Compare, 0)                                            \
  X(not_equal,       2, Compare, 0)                                            \
  X(greater,         2, Compare, 0)                                            \
  X(greater_equal,   2, Compare, 0)                                            \
  X(less,            2, Compare, 0)                                            \
  X(less_equal,      2, Compare, 0)                                            \
  X(logical_and,     2, Logical, 0)                                            \
  X(logical_or,      2, Logical, 0)                                            \
  X(logical_xor,     2, Logical, 0)                                            \
  X(logical_not,     1, Logical, 0)                                            \
  X(bitwise_and,     2, Bitvec, 0)                                             \
  X(bitwise_or,      2, Bitvec, 0)                                             \
  X(bitwise_xor,     2, Bitvec, 0)                                             \
  X(left_shift,      2, Bitvec, 0)                                             \
  X(right_shift,     2, Bitvec, 0)                                             \
  X(invert,          1, Bitvec, 0)                                             \
  X(abs,             1, Activation, 0)                                         \
  X(negative,        1, Activation, 0)                                         \
  X(sign,            1, Activation, 0)                                         \
  X(trunc,           1, Activation, 0)                                         \
  X(floor,           1, Activation, 0)                                         \
  X(ceil,            1, Activation, 0)                                         \
  X(exp,             1, Activation, 0)                                         \
  X(log,             1, Activation, 0)                                         \
  X(sin,             1, Activation, 0)                                         \
  X(cos,             1, Activation, 0)                                         \
  X(tan,             1, Activation, 0)                                         \
  X(tanh,            1, Activation, 0)                                         \
  X(arctan,          1, Activation, 0)                                         \
  X(sqrt,            1, Activation, 0)                                         \
  X(rsqrt,           1, Activation, 0)                                         \
  X(reciprocal,      1, Activation, 0)                                         \
  X(square,          1, Activation, 0)                                         \
  X(sigmoid,         1, Activation, 0)                                         \
  X(relu,            1, Activation, 0)                                         \
  X(prelu,           2, Activation, 0)   /* x, or x * relu_param below 0 */    \
  X(gelu,            1, Activation, 0)                                         \
  X(gelu_dx,         1, Activation, 0)                                         \
  X(gelu_apprx_tanh, 1, Activation, 0)                                         \
  X(gelu_apprx_sigmoid, 1, Activation, 0)                                      \
  X(gelu_apprx_sigmoid_dx, 1, Activation, 0)                                   \
  X(silu,            1, Activation, 0)                                         \
  X(silu_dx,         1, Activation, 0)                                         \
  X(erf,             1, Activation, 0)                                         \
  X(erf_dx,          1, Activation, 0)                                         \
  X(softplus,        1, Activation, 0)                                         \
  X(mish,            1, Activation, 0)

#define NKIC_ALU_KINDS(X) X(Arith) X(Compare) X(Logical) X(Bitvec) X(Activation)
enum class AluKind : uint8_t {
#define NKIC_ALU_KIND_ENUM(n) n,
  NKIC_ALU_KINDS(NKIC_ALU_KIND_ENUM)
#undef NKIC_ALU_KIND_ENUM
};
const char* name(AluKind k);

enum class AluOp : uint8_t {
#define NKIC_ALU_ENUM(name, arity, kind, nc) name,
  NKIC_ALU_OPS(NKIC_ALU_ENUM)
#undef NKIC_ALU_ENUM
};
#define NKIC_ALU_ONE(...) +1
inline constexpr int kNumAluOps = 0 NKIC_ALU_OPS(NKIC_ALU_ONE);
#undef NKIC_ALU_ONE

struct AluOpInfo {
  std::string_view name;
  int arity;
  AluKind kind;
  int min_nc_version;  // the first NeuronCore generation whose engines have it (0: every one)
};

const AluOpInfo& info(AluOp op);
inline std::string_view name(AluOp op) { return info(op).name; }
// An activation function of the data and a parameter (prelu's relu_param): the op= of an
// activation, never an ALU operator of two tensors.
inline bool is_parametric_activation(AluOp op) { return info(op).kind == AluKind::Activation && info(op).arity == 2; }
std::optional<AluOp> alu_op_from_name(std::string_view n);
// A sequencer scalar's ALU (nki 0.7+ NkiScalar): `a op b` at `width` bits (32 or 64), two's
// complement. +, -, * wrap; divide truncates toward zero and fmod takes a's sign (b != 0, the
// operands 32-bit); maximum, minimum; comparisons give 1 or 0; bypass is a; any other op 0.
int64_t scalar_alu_value(AluOp op, int64_t a, int64_t b, int width);

}  // namespace nkic::ir
