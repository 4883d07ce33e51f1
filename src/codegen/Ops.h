// The op builders: each turns one nl.* / operator call into sema checks plus
// IR instructions, at the insertion point of the KernelBuilder.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

using types::MaskVal;
using types::TensorVal;
using types::Value;

// The keyword arguments every API shares.
struct OpArgs {
  const MaskVal* mask = nullptr;
  std::optional<ir::DType> dtype;
};

// Where each operand of an instruction reads: the view aligned (numpy rules,
// broadcast dims dropped) to the instruction's iteration space.
ir::Access access_for(const KernelBuilder& b, const TensorVal& v, const std::vector<int64_t>& iter);
ir::Predicate predicate_for(const KernelBuilder& b, const OpArgs& args, size_t rank);

// Creation and memory (OpsMemory.cpp).
TensorVal alloc_tensor(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype,
                       ir::Memory memory);
TensorVal full(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype,
               ir::Memory memory, double value);
TensorVal load(KernelBuilder& b, const TensorVal& src, const OpArgs& args);
void store(KernelBuilder& b, const TensorVal& dst, const Value& value, const OpArgs& args);
// `dst[...] = value` (accumulate: `dst[...] += value`, a PSUM-style accumulation).
void assign(KernelBuilder& b, const TensorVal& dst, const Value& value, bool accumulate);

// Elementwise math (OpsElementwise.cpp): one or two operands, tensors or scalars.
Value elementwise(KernelBuilder& b, ir::AluOp op, const std::vector<Value>& operands, const OpArgs& args);
// `dst op= value` in place.
void update_inplace(KernelBuilder& b, ir::AluOp op, const TensorVal& dst, const Value& value);

}  // namespace nkic::codegen
