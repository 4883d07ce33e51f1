#include "sema/Asserts.h"

#include "sema/ErrorCatalog.h"

namespace nkic::sema {

void assert_par_dim(int64_t par_dim, ir::Memory m, const Target& t, const Raise& raise) {
  if (ir::is_hbm(m)) return;
  int64_t limit = m == ir::Memory::PSUM ? t.psum_num_partitions : t.statebuf_num_partitions;
  if (par_dim > limit) raise(err_num_partition_exceed_arch_limit(par_dim, limit));
}

void assert_min_rank(const std::vector<int64_t>& shape, size_t min_rank, const std::string& what,
                     const Raise& raise) {
  if (shape.size() >= min_rank) return;
  raise(err_insufficient_rank(what, shape, min_rank));
}

void assert_free_dim(const std::vector<int64_t>& shape, ir::DType dtype, ir::Memory m, const Target& t,
                     const Raise& raise) {
  if (ir::is_hbm(m)) return;
  int64_t required = ir::size_of(dtype);
  for (size_t d = 1; d < shape.size(); ++d) required *= shape[d];
  bool psum = m == ir::Memory::PSUM;
  int64_t capacity = psum ? t.psum_par_size_in_bytes * t.psum_num_banks : t.statebuf_par_size_in_bytes;
  if (capacity < required) raise(err_stack_overflow(psum, required, capacity, t.name));
}

void assert_dtype_psum(ir::DType dtype, const Raise& raise) {
  if (dtype == ir::DType::float32 || dtype == ir::DType::int32) return;
  Diagnostic d = err_supported_operand_dtype(
      "a PSUM tensor must be float32 or int32 (the accumulator formats), got " + std::string(ir::name(dtype)));
  d.hint = "accumulate in float32 on PSUM and cast when copying to SBUF";
  raise(d);
}

}  // namespace nkic::sema
