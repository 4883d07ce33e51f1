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
  Diagnostic d;
  d.code = "err_insufficient_rank";
  d.message = "Insufficient rank: " + what + " " + shape_str(shape) + " must have at least " +
              std::to_string(min_rank) + " dimensions (partition and free)";
  d.hint = "use a [N, 1] tile instead of [N]";
  raise(d);
}

}  // namespace nkic::sema
