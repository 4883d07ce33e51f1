#include "ir/Isa.h"

namespace nkic::ir {

namespace {

// Each row's operand rules, ended by an empty rule so that a row without rules still
// makes an array.
#define NKIC_OPCODE_OPERANDS(n, printed, engine, exec, min_srcs, max_srcs, min_imms, has_dst, cost, form, gen, \
                             shapes, ...)                                                                       \
  constexpr OperandRule k##n##Operands[] = {__VA_ARGS__ __VA_OPT__(, ) OperandRule{}};
NKIC_OPCODES(NKIC_OPCODE_OPERANDS)
#undef NKIC_OPCODE_OPERANDS

}  // namespace

constexpr OpcodeInfo kOpcodeInfo[] = {
#define NKIC_OPCODE_INFO(n, printed, engine, exec, min_srcs, max_srcs, min_imms, has_dst, cost, form, gen, shapes, \
                         ...)                                                                                   \
  {printed, Engine::engine, Exec::exec, min_srcs, max_srcs, min_imms, has_dst, Cost::cost, Form::form, gen,         \
   Shapes::shapes, {k##n##Operands, std::size(k##n##Operands) - 1}},
    NKIC_OPCODES(NKIC_OPCODE_INFO)
#undef NKIC_OPCODE_INFO
};

const char* name(Opcode op) { return info(op).name; }

std::optional<Opcode> opcode_from_name(std::string_view isa_name) {
  for (size_t i = 0; i < std::size(kOpcodeInfo); ++i)
    if (isa_name == kOpcodeInfo[i].name) return static_cast<Opcode>(i);
  return std::nullopt;
}

namespace {
// The call table's second column: a row's opcode, or `none`.
struct NoOpcode {};
constexpr std::optional<Opcode> emits(Opcode op) { return op; }
constexpr std::optional<Opcode> emits(NoOpcode) { return std::nullopt; }
namespace rows {
using enum Opcode;
constexpr NoOpcode none{};
}  // namespace rows
#define NKIC_CALL_ROW(call, opcode, engine) {#call, emits(rows::opcode), Engine::engine},
constexpr NisaCall kCalls[] = {NKIC_NISA_CALLS(NKIC_CALL_ROW)};
#undef NKIC_CALL_ROW
}  // namespace

std::span<const NisaCall> nisa_calls() { return kCalls; }

Engine call_engine(std::string_view name) {
  for (const NisaCall& c : kCalls)
    if (name == c.name) return c.engine;
  return Engine::none;
}

const char* name(Engine e) {
  static const char* const kNames[] = {
#define NKIC_ENGINE_NAME(n) #n,
      NKIC_ENGINES(NKIC_ENGINE_NAME)
#undef NKIC_ENGINE_NAME
  };
  return kNames[static_cast<int>(e)];
}

const char* name(Exec e) {
  static const char* const kNames[] = {
#define NKIC_EXEC_NAME(n) #n,
      NKIC_EXECS(NKIC_EXEC_NAME)
#undef NKIC_EXEC_NAME
  };
  return kNames[static_cast<int>(e)];
}

Engine engine_from_nki(int nki_engine) {
  switch (nki_engine) {
    case 1: return Engine::pe;
    case 2: return Engine::act;
    case 3: return Engine::pool;
    case 5: return Engine::dve;
    case 6: return Engine::dma;  // nisa.dma_engine is engine.sync
    default: return Engine::none;
  }
}

}  // namespace nkic::ir
