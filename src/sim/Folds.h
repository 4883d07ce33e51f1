// The binary folds of the engines' reductions (tensor_reduce and the reduce
// accumulator stage of activation, tensor_scalar and select), shared so both
// fold with the same operations.
#pragma once
#include <cstdint>
#include <type_traits>

#include "ir/AluOp.h"

namespace nkic::sim {

inline bool logical_fold(ir::AluOp op) {
  return op == ir::AluOp::logical_and || op == ir::AluOp::logical_or || op == ir::AluOp::logical_xor;
}

// Logical folds work on truth values: each operand (and a fold's starting
// value) becomes 1 or 0 first, so a single element folds to its truth too.
template <class T>
void to_truth(T* x, int64_t m) {
  for (int64_t i = 0; i < m; ++i) x[i] = x[i] != T{0} ? T{1} : T{0};
}

// abs_max / abs_min (NKI 0.4): the operand of larger / smaller magnitude, its sign
// kept, the second on ties; NaN-propagating like maximum / minimum.
template <class T>
T abs_larger(T a, T b) {
  if (a != a) return a;
  return (a < T{0} ? -a : a) > (b < T{0} ? -b : b) ? a : b;
}
template <class T>
T abs_smaller(T a, T b) {
  if (a != a) return a;
  return (a < T{0} ? -a : a) < (b < T{0} ? -b : b) ? a : b;
}

// Calls body(f) with the binary fold function of `op` over T.
template <class T, class Body>
void with_fold(ir::AluOp op, Body body) {
  using ir::AluOp;
  switch (op) {
    case AluOp::add: return body([](T a, T b) { return a + b; });
    case AluOp::subtract: return body([](T a, T b) { return a - b; });
    case AluOp::multiply: return body([](T a, T b) { return a * b; });
    // NaN-propagating, like nl.maximum / nl.minimum.
    case AluOp::maximum: return body([](T a, T b) { return (a != a || a > b) ? a : b; });
    case AluOp::minimum: return body([](T a, T b) { return (a != a || a < b) ? a : b; });
    case AluOp::abs_max: return body([](T a, T b) { return abs_larger(a, b); });
    case AluOp::abs_min: return body([](T a, T b) { return abs_smaller(a, b); });
    case AluOp::logical_and: return body([](T a, T b) { return a * b; });
    case AluOp::logical_or: return body([](T a, T b) { return a + b - a * b; });
    case AluOp::logical_xor: return body([](T a, T b) { return a == b ? T{0} : T{1}; });
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case AluOp::bitwise_and: return body([](T a, T b) { return a & b; });
      case AluOp::bitwise_or: return body([](T a, T b) { return a | b; });
      case AluOp::bitwise_xor: return body([](T a, T b) { return a ^ b; });
      default: break;
    }
  }
}

}  // namespace nkic::sim
