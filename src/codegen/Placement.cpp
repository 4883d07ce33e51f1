#include "codegen/Placement.h"

#include <algorithm>

#include "sema/Allocation.h"
#include "sema/ErrorCatalog.h"
#include "sema/Target.h"

namespace nkic::codegen {

void check_placement_overlap(KernelBuilder& b) {
  if (b.placements.size() < 2) return;
  const ir::Kernel& k = b.kernel();
  const std::vector<sema::LiveRange> live = sema::live_ranges(k);
  auto bytes = [&](int t) { return k.tensor(t).num_elements() / k.tensor(t).shape.at(0) * ir::size_of(k.tensor(t).dtype); };
  for (size_t j = 1; j < b.placements.size(); ++j) {
    const auto& pj = b.placements[j];
    const sema::LiveRange& lj = live[pj.tensor];
    if (lj.first < 0) continue;
    const ir::TensorDecl& tj = k.tensor(pj.tensor);
    for (size_t i = 0; i < j; ++i) {
      const auto& pi = b.placements[i];
      const ir::TensorDecl& ti = k.tensor(pi.tensor);
      const sema::LiveRange& li = live[pi.tensor];
      // Cores of kernel[n] place into their own SBUF and PSUM: only one core's tensors can collide.
      if (li.first < 0 || ti.memory != tj.memory || pi.core != pj.core) continue;
      const int64_t p0 = std::max(pi.partition, pj.partition);
      const int64_t p1 = std::min(pi.partition + ti.shape[0], pj.partition + tj.shape[0]);
      const int64_t f0 = std::max(pi.offset, pj.offset);
      const int64_t f1 = std::min(pi.offset + bytes(pi.tensor), pj.offset + bytes(pj.tensor));
      const bool in_use = li.first <= lj.last && lj.first <= li.last;
      if (p0 >= p1 || f0 >= f1 || !in_use) continue;
      sema::Diagnostic d = sema::err_address_overlap(
          KernelBuilder::display_name(tj.name), KernelBuilder::display_name(ti.name),
          "partitions " + std::to_string(p0) + ".." + std::to_string(p1 - 1) + ", bytes " + std::to_string(f0) + ".." +
              std::to_string(f1 - 1) + " of " + ir::name(tj.memory));
      d.loc = tj.loc;
      d.notes.push_back({ti.loc, "'" + KernelBuilder::display_name(ti.name) + "' is placed here"});
      b.fail(std::move(d));
    }
  }
}

void check_address(KernelBuilder& b, const types::TensorVal& t, int64_t partition, int64_t free_offset) {
  const ir::TensorDecl& d = b.tensor(t.tensor);
  const sema::Target& target = b.target();
  std::string name = KernelBuilder::display_name(d.name);
  if (d.memory != ir::Memory::SBUF && d.memory != ir::Memory::PSUM)
    b.fail(sema::err_address_out_of_range(name, "only SBUF and PSUM tensors are placed"));
  bool psum = d.memory == ir::Memory::PSUM;
  int64_t partitions = psum ? target.psum_num_partitions : target.statebuf_num_partitions;
  int64_t capacity = psum ? target.psum_par_size_in_bytes * target.psum_num_banks : target.statebuf_par_size_in_bytes;
  int64_t bytes = d.num_elements() / d.shape.at(0) * ir::size_of(d.dtype);
  if (partition < 0 || partition + d.shape[0] > partitions)
    b.fail(sema::err_address_out_of_range(name, "partitions " + std::to_string(partition) + ".." +
                                                    std::to_string(partition + d.shape[0] - 1) + " of " +
                                                    std::to_string(partitions)));
  if (free_offset < 0 || free_offset + bytes > capacity)
    b.fail(sema::err_address_out_of_range(name, "bytes " + std::to_string(free_offset) + ".." +
                                                    std::to_string(free_offset + bytes - 1) + " of a " +
                                                    std::to_string(capacity) + "-byte partition on " + target.name));
  if (psum && free_offset % target.psum_par_size_in_bytes != 0)
    b.fail(sema::err_psum_address_not_bank_aligned(name, free_offset, target.psum_par_size_in_bytes));
  b.require_unrolled("an address= placement");
  b.placements.push_back({t.tensor, partition, free_offset, b.cores ? b.cores->current() : 0});
}

}  // namespace nkic::codegen
