#include "types/Promotion.h"

namespace nkic::types {

using ir::DType;

namespace {

DType promote_floats(DType a, DType b) {
  if (a == b) return a;
  int sa = ir::size_of(a), sb = ir::size_of(b);
  if (sa != sb) return sa > sb ? a : b;
  // Same width, different formats: fp16/bf16 widen to fp32, the two fp8s to
  // bf16, tf32 with fp32 to fp32.
  if (sa == 1) return DType::bfloat16;
  return DType::float32;
}

DType signed_of_size(int size) {
  switch (size) {
    case 1: return DType::int8;
    case 2: return DType::int16;
    case 4: return DType::int32;
  }
  return DType::float32;  // no 64-bit integers on the hardware
}

DType promote_ints(DType a, DType b) {
  if (a == DType::bool_) a = DType::uint8;
  if (b == DType::bool_) b = DType::uint8;
  if (a == b) return a;
  bool sa = ir::info(a).is_signed, sb = ir::info(b).is_signed;
  int za = ir::size_of(a), zb = ir::size_of(b);
  if (sa == sb) return za >= zb ? a : b;
  DType s = sa ? a : b, u = sa ? b : a;
  if (ir::size_of(s) > ir::size_of(u)) return s;
  return signed_of_size(2 * ir::size_of(u));
}

}  // namespace

DType promote(DType a, DType b) {
  bool fa = ir::is_float(a), fb = ir::is_float(b);
  if (fa && fb) return promote_floats(a, b);
  if (fa) return a;
  if (fb) return b;
  return promote_ints(a, b);
}

DType scalar_dtype(const Other& o) {
  if (o.dtype) return *o.dtype;
  if (o.is_bool) return DType::uint8;
  if (o.is_int) return DType::int32;
  return DType::float32;
}

}  // namespace nkic::types
