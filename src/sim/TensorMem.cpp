#include "sim/TensorMem.h"

#include <cmath>
#include <cstring>

#include "sim/Convert.h"
#include "sim/Numerics.h"

namespace nkic::sim {

void fill_fresh(const TensorMem& t) {
  const int64_t n = t.decl->num_elements();
  const ir::DType dt = t.decl->dtype;
  if (ir::is_integer(dt) || ir::is_packed(dt)) {  // packed fp8 lanes: 0xFF is NaN
    std::memset(t.data, ir::is_packed(dt) ? 0xFF : 0x5A, n * ir::size_of(dt));
    return;
  }
  std::byte nan[4];
  store_element(dt, nan, 0, NAN);
  fill_elements(ir::size_of(dt), nan, t.data, 0, 1, n);
}

void ensure_filled(TensorMem& t) {
  if (!t.pending_fill) return;
  fill_fresh(t);
  t.pending_fill = false;
}

std::string element_str(const TensorMem& t, int64_t at) {
  std::string s = "[";
  for (size_t d = 0; d < t.strides.size(); ++d)
    s += (d ? ", " : "") + std::to_string(at / t.strides[d] % t.decl->shape[d]);
  return s + "]";
}

}  // namespace nkic::sim
