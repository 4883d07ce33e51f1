// The legality assert families of seed 004. Each reads its limit off the
// Target and, on the failing side of its comparison, funnels an err_* builder
// into the single raise. `Raise` attaches location and API (KernelBuilder::fail).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/IR.h"
#include "sema/Diagnostic.h"
#include "sema/Target.h"

namespace nkic::sema {

using Raise = std::function<void(Diagnostic)>;

// Partition family (Py_GT): par_dim > statebuf/psum_num_partitions fails.
void assert_par_dim(int64_t par_dim, ir::Memory m, const Target& t, const Raise& raise);
// Free-dim byte budget (Py_LT): capacity < required fails. SBUF: the flat
// per-partition budget; PSUM: all banks together (the per-bank rule is the allocator's).
void assert_free_dim(const std::vector<int64_t>& shape, ir::DType dtype, ir::Memory m, const Target& t,
                     const Raise& raise);
// PSUM accumulates in its accumulator formats only: float32 or int32. A
// Tensor-Engine transpose passes its data through: it may also write bfloat16,
// and from NeuronCore-v3 the data's own dtype (`transposed`, when it is one).
void assert_dtype_psum(ir::DType dtype, const Raise& raise, const ir::DType* transposed = nullptr,
                       const Target* target = nullptr);
// Shape family: on-chip tiles have at least 2 dims ("Insufficient rank").
void assert_min_rank(const std::vector<int64_t>& shape, size_t min_rank, const std::string& what,
                     const Raise& raise);

// Element-count companions (seed 004), for ops with a fixed lane structure:
// n outside [min_size, max_size] elements per partition fails.
void assert_elements_per_partition(int64_t n, int64_t min_size, int64_t max_size, std::string_view operand,
                                   std::string_view api, const Raise& raise);
inline void assert_exact_elements(int64_t n, int64_t exact, std::string_view operand, std::string_view api,
                                  const Raise& raise) {
  assert_elements_per_partition(n, exact, exact, operand, api, raise);
}
// APIs of later NeuronCores (Py_LT): the target's nc_version < min_version fails.
void assert_nc_version(const Target& t, int min_version, std::string_view api, const Raise& raise);
// Packed mx dtypes carry four values per element: only raw moves (load, store,
// copy without a cast) and the mx instructions may touch them.
void assert_packed_operands(const ir::Instruction& in, const std::function<const ir::TensorDecl&(int)>& tensor,
                            std::string_view api, const Raise& raise);

}  // namespace nkic::sema
