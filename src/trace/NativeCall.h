// The plain forms of the most frequent calls (the legacy nl.load, nl.store, the one-
// and two-operand elementwise ops; the current API's nisa.dma_copy(dst, src) and
// nisa.tensor_tensor(dst, data1, data2, op)), which the front end runs straight from
// the call site without entering the API's Python function: which form an API
// function declares, and where each argument of a call goes. The front end
// converts the argument values only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/AluOp.h"

namespace nkic::trace {

struct NativeForm {
  enum class Kind : uint8_t { Load, Store, Elementwise, DmaCopy, TensorTensor, NdArray };
  Kind kind = Kind::Load;
  ir::AluOp op = ir::AluOp::bypass;  // Elementwise: the op
  size_t arity = 1;                  // Elementwise: its operands
};

// The form an API function declares by its marker: "load", "store", "elementwise:<op>",
// "dma_copy", "tensor_tensor" or "ndarray"; null for any other marker. The form lives as long as the process.
const NativeForm* native_form(std::string_view marker);

// A keyword argument as the call passed it: its name, and whether its value is None.
struct Keyword {
  std::string_view name;
  bool is_none = false;
};

// Where the arguments of one call go, as positions in the call's argument list
// (the positional ones, then the keyword values in order); -1 when absent.
struct NativeArgs {
  // Load: src; Store: dst, value; Elementwise: x[, y]; DmaCopy: dst, src;
  // TensorTensor: dst, data1, data2, op; NdArray: shape, dtype[, buffer].
  int operands[4] = {-1, -1, -1, -1};
  int mask = -1;
};

// Binds a call of `form` with `nargs` positional arguments and `nkw` keywords as
// the API's Python signature does: nl.load(src, *, mask=None, dtype=None),
// nl.store(dst, value, *, mask=None), nl.<op>(x[, y], *, dtype=None, mask=None), and the
// current nisa.dma_copy(dst, src, ..., name=None) and nisa.tensor_tensor(dst, data1, data2,
// op, ..., name=None) with their other arguments left to their defaults, and the current
// nl.ndarray(shape, dtype, buffer=sbuf) without a name or an address.
// False when the call takes another form (a dtype, another keyword or count):
// the API's Python function then handles it, with its own defaults and errors.
bool bind_native(const NativeForm& form, size_t nargs, const Keyword* keywords, size_t nkw, NativeArgs& out);

}  // namespace nkic::trace
