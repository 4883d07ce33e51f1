// Every operator an NKI program can name (nl.add, np.add, nl.exp, np.max, ...)
// maps to exactly one AluOp through one table. Instructions carry the AluOp as a
// value; the simulator evaluates it with one switch (sim/AluEval).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace nkic::ir {

#define NKIC_ALU_OPS(X)                                                         \
  /* name            arity kind        */                                       \
  X(bypass,          1, Arith)         /* identity: copy / np.copy */           \
  X(add,             2, Arith)                                                  \
  X(subtract,        2, Arith)                                                  \
  X(multiply,        2, Arith)                                                  \
  X(divide,          2, Arith)                                                  \
  X(maximum,         2, Arith)                                                  \
  X(minimum,         2, Arith)                                                  \
  X(power,           2, Arith)                                                  \
  X(mod,             2, Arith)                                                  \
  X(fmod,            2, Arith)                                                  \
  X(equal,           2, Compare)                                                \
  X(not_equal,       2, Compare)                                                \
  X(greater,         2, Compare)                                                \
  X(greater_equal,   2, Compare)                                                \
  X(less,            2, Compare)                                                \
  X(less_equal,      2, Compare)                                                \
  X(logical_and,     2, Logical)                                                \
  X(logical_or,      2, Logical)                                                \
  X(logical_xor,     2, Logical)                                                \
  X(logical_not,     1, Logical)                                                \
  X(bitwise_and,     2, Bitvec)                                                 \
  X(bitwise_or,      2, Bitvec)                                                 \
  X(bitwise_xor,     2, Bitvec)                                                 \
  X(left_shift,      2, Bitvec)                                                 \
  X(right_shift,     2, Bitvec)                                                 \
  X(invert,          1, Bitvec)                                                 \
  X(abs,             1, Activation)                                             \
  X(negative,        1, Activation)                                             \
  X(sign,            1, Activation)                                             \
  X(trunc,           1, Activation)                                             \
  X(floor,           1, Activation)                                             \
  X(ceil,            1, Activation)                                             \
  X(exp,             1, Activation)                                             \
  X(log,             1, Activation)                                             \
  X(sin,             1, Activation)                                             \
  X(cos,             1, Activation)                                             \
  X(tan,             1, Activation)                                             \
  X(tanh,            1, Activation)                                             \
  X(arctan,          1, Activation)                                             \
  X(sqrt,            1, Activation)                                             \
  X(rsqrt,           1, Activation)                                             \
  X(reciprocal,      1, Activation)                                             \
  X(square,          1, Activation)                                             \
  X(sigmoid,         1, Activation)                                             \
  X(relu,            1, Activation)                                             \
  X(gelu,            1, Activation)                                             \
  X(gelu_dx,         1, Activation)                                             \
  X(gelu_apprx_tanh, 1, Activation)                                             \
  X(gelu_apprx_sigmoid, 1, Activation)                                          \
  X(silu,            1, Activation)                                             \
  X(silu_dx,         1, Activation)                                             \
  X(erf,             1, Activation)                                             \
  X(erf_dx,          1, Activation)                                             \
  X(softplus,        1, Activation)                                             \
  X(mish,            1, Activation)

enum class AluKind : uint8_t { Arith, Compare, Logical, Bitvec, Activation };

enum class AluOp : uint8_t {
#define NKIC_ALU_ENUM(name, arity, kind) name,
  NKIC_ALU_OPS(NKIC_ALU_ENUM)
#undef NKIC_ALU_ENUM
};

struct AluOpInfo {
  std::string_view name;
  int arity;
  AluKind kind;
};

const AluOpInfo& info(AluOp op);
inline std::string_view name(AluOp op) { return info(op).name; }
std::optional<AluOp> alu_op_from_name(std::string_view n);

}  // namespace nkic::ir
