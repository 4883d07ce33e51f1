#include "codegen/Registers.h"

#include <functional>
#include <numeric>

#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

void check_register_operand(KernelBuilder& b, const types::TensorVal& t, std::string_view api, std::string_view what) {
  b.check_live(t);
  const int64_t n = std::accumulate(t.shape.begin(), t.shape.end(), int64_t{1}, std::multiplies<>());
  if (n != 1)
    b.fail(sema::err_unsupported_args(api, std::string(what) + " is a one-element tensor ([1] or [1, 1]), got " +
                                               sema::shape_str(t.shape)));
  if (b.tensor(t.tensor).memory == ir::Memory::PSUM)
    b.fail(sema::err_unsupported_args(api, std::string(what) + " is in SBUF or HBM, not PSUM"));
}

}  // namespace nkic::codegen
