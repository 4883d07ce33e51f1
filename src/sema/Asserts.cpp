#include "sema/Asserts.h"

#include <algorithm>

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
  // A product past int64 is over any capacity: saturate instead of wrapping to a small number.
  for (size_t d = 1; d < shape.size(); ++d)
    if (__builtin_mul_overflow(required, shape[d], &required)) required = INT64_MAX;
  bool psum = m == ir::Memory::PSUM;
  int64_t capacity = psum ? t.psum_par_size_in_bytes * t.psum_num_banks : t.statebuf_par_size_in_bytes;
  if (capacity < required) raise(err_stack_overflow(psum, required, capacity, t.name));
}

void assert_dtype_psum(ir::DType dtype, const Raise& raise, const ir::DType* transposed, const Target* target) {
  if (dtype == ir::DType::float32 || dtype == ir::DType::int32) return;
  if (transposed && dtype == ir::DType::bfloat16) return;
  const bool pass_through = target && target->nc_version >= 3;
  if (transposed && pass_through && dtype == *transposed) return;
  std::string rule = "a PSUM tensor must be float32 or int32 (the accumulator formats)";
  if (transposed && pass_through)
    rule = "a PSUM tensor receiving a Tensor-Engine transpose must be float32, int32, bfloat16 or the data's dtype (" +
           std::string(ir::name(*transposed)) + ")";
  else if (transposed)
    rule = "a PSUM tensor receiving a Tensor-Engine transpose must be float32, int32 or bfloat16" +
           (target ? " on " + target->name + " (also the data's dtype from NeuronCore-v3)" : std::string());
  Diagnostic d = err_supported_operand_dtype(rule + ", got " + std::string(ir::name(dtype)));
  d.hint = "accumulate in float32 on PSUM and cast when copying to SBUF";
  raise(d);
}

void assert_elements_per_partition(int64_t n, int64_t min_size, int64_t max_size, std::string_view operand,
                                   std::string_view api, const Raise& raise) {
  if (n < min_size || n > max_size) raise(err_elements_per_partition_mismatch(operand, api, n, min_size, max_size));
}

void assert_nc_version(const Target& t, int min_version, std::string_view api, const Raise& raise) {
  if (t.nc_version < min_version) raise(err_min_arch_support_for_inst(api, min_version, t.name, t.nc_version));
}

void assert_packed_operands(const ir::Instruction& in, const std::function<const ir::TensorDecl&(int)>& tensor,
                            std::string_view api, const Raise& raise) {
  using ir::Opcode;
  // Every traced instruction passes here; almost none has a packed operand.
  auto packed = [&](const ir::Access& a) { return ir::is_packed(tensor(a.tensor).dtype); };
  if (!(in.has_dst() && packed(in.dst)) && std::none_of(in.srcs.begin(), in.srcs.end(), packed)) return;
  std::vector<const ir::Access*> all;
  if (in.has_dst()) all.push_back(&in.dst);
  for (const ir::Access& a : in.srcs) all.push_back(&a);
  const bool move = ir::info(in.opcode).exec == ir::Exec::Move &&
                    !in.accumulate &&
                    std::all_of(all.begin(), all.end(), [&](const ir::Access* a) {
                      return tensor(a->tensor).dtype == tensor(all.front()->tensor).dtype;
                    });
  for (size_t i = 0; i < all.size(); ++i) {
    const ir::TensorDecl& t = tensor(all[i]->tensor);
    if (!ir::is_packed(t.dtype) || move) continue;
    const bool mx_operand = (in.opcode == Opcode::MxQuantize && i == 0) || (in.opcode == Opcode::MatmulMx && (i == 1 || i == 2));
    if (!mx_operand) raise(err_packed_dtype_not_computable(t.name, ir::name(t.dtype), api));
  }
}

}  // namespace nkic::sema
