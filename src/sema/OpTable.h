// The operand rules of every API: the memories, dtypes and ranks each operand
// accepts. An instruction's own nisa call (`nisa.<instruction>`) takes its rules
// from the instruction table (ir/Isa.h); the table here holds the APIs that are not
// one instruction's call (the nl conveniences, DMA transposes, gathers, barriers).
// An op gets its operand checks by declaration, not by code: builders call
// check_operand with the API in flight and the operand's name.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/IR.h"
#include "sema/Asserts.h"
#include "sema/Target.h"

namespace nkic::sema {

using OperandSpec = ir::OperandRule;

struct OpSpec {
  std::string_view api;
  std::vector<OperandSpec> operands;
  ir::Shapes shapes = ir::Shapes::bcast;
  int min_nc_version = 0;  // the first NeuronCore generation with this API
};

// The spec of `api`, or the default for compute APIs (every operand on-chip).
const OpSpec& op_spec(std::string_view api);

// Checks one operand (its tensor's declaration and the view's shape) against the table.
void check_operand(std::string_view api, std::string_view operand, const ir::TensorDecl& t,
                   const std::vector<int64_t>& view_shape, const Raise& raise);
// The same with the API's spec already looked up (op_spec(api)).
void check_operand(const OpSpec& op, std::string_view api, std::string_view operand, const ir::TensorDecl& t,
                   const std::vector<int64_t>& view_shape, const Raise& raise);

// err_min_arch_support_for_hwdge when the target has no hardware DGE.
void check_hwdge(std::string_view api, const Target& target, const Raise& raise);

}  // namespace nkic::sema
