#include "ir/AluOp.h"

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

}  // namespace nkic::ir
