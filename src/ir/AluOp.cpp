#include "ir/AluOp.h"

#include <algorithm>
#include <array>

namespace nkic::ir {

namespace {
constexpr AluOpInfo kInfo[] = {
#define NKIC_ALU_INFO(name, arity, kind, nc) {#name, arity, AluKind::kind, nc},
    NKIC_ALU_OPS(NKIC_ALU_INFO)
#undef NKIC_ALU_INFO
};
}  // namespace

const AluOpInfo& info(AluOp op) { return kInfo[static_cast<int>(op)]; }

std::optional<AluOp> alu_op_from_name(std::string_view n) {
  for (size_t i = 0; i < std::size(kInfo); ++i)
    if (kInfo[i].name == n) return static_cast<AluOp>(i);
  return std::nullopt;
}

const char* name(AluKind k) {
  static const char* const kNames[] = {
#define NKIC_ALU_KIND_NAME(n) #n,
      NKIC_ALU_KINDS(NKIC_ALU_KIND_NAME)
#undef NKIC_ALU_KIND_NAME
  };
  return kNames[static_cast<int>(k)];
}

namespace {
int64_t wrap(uint64_t v, int width) {
  return width == 32 ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))) : static_cast<int64_t>(v);
}
}  // namespace

int64_t scalar_alu_value(AluOp op, int64_t a, int64_t b, int width) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case AluOp::bypass: return wrap(ua, width);
    case AluOp::add: return wrap(ua + ub, width);
    case AluOp::subtract: return wrap(ua - ub, width);
    case AluOp::multiply: return wrap(ua * ub, width);
    // INT32_MIN / -1 wraps; INT64_MIN / -1 (trace-time ints only) wraps too.
    case AluOp::divide: return b == -1 ? wrap(0 - ua, width) : wrap(static_cast<uint64_t>(a / b), width);
    case AluOp::fmod: return b == -1 ? 0 : wrap(static_cast<uint64_t>(a % b), width);
    case AluOp::maximum: return std::max(a, b);
    case AluOp::minimum: return std::min(a, b);
    case AluOp::equal: return a == b;
    case AluOp::not_equal: return a != b;
    case AluOp::less: return a < b;
    case AluOp::less_equal: return a <= b;
    case AluOp::greater: return a > b;
    case AluOp::greater_equal: return a >= b;
    default: return 0;
  }
}

}  // namespace nkic::ir
