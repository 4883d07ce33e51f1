// One declarative table of every op's operands: the memories, dtypes and ranks
// each accepts. An op gets its operand checks by declaration, not by code:
// builders call check_operand with the API in flight and the operand's name.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/IR.h"
#include "sema/Asserts.h"
#include "sema/Target.h"

namespace nkic::sema {

enum MemoryMask : uint8_t { kHBM = 1, kSBUF = 2, kPSUM = 4, kOnChip = kSBUF | kPSUM };

struct OperandSpec {
  std::string_view name;
  uint8_t memories = kOnChip;
  std::vector<ir::DType> dtypes = {};  // empty: any dtype
  int min_rank = 1;
  int max_rank = 8;
};

struct OpSpec {
  std::string_view api;
  std::vector<OperandSpec> operands;
  bool broadcast = true;  // false: tile operands need equal partitions and elements per partition
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
