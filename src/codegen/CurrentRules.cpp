#include "codegen/CurrentRules.h"

#include <cmath>
#include <sstream>

#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"
#include "sema/OpTable.h"

namespace nkic::codegen {

namespace {

// priority=, the DMA's quality-of-service level (0-3, lower first): NeuronCore-v4 and newer.
void check_priority(KernelBuilder& b, std::optional<int64_t> priority) {
  if (!priority) return;
  sema::assert_nc_version(b.target(), 4, b.api() + "(priority=)", b.raiser());
  if (*priority < 0 || *priority > 3)
    b.fail(sema::err_unsupported_args(b.api(), "priority " + std::to_string(*priority) +
                                                   " is not a DMA priority level 0-3 (lower is served first)"));
}

}  // namespace

void check_dma_copy(KernelBuilder& b, const types::TensorVal& dst, const types::TensorVal& src, bool hwdge,
                    std::optional<int64_t> priority) {
  const ir::TensorDecl& s = b.tensor(src.tensor);
  const ir::TensorDecl& d = b.tensor(dst.tensor);
  // 0.3: a DMA reads SBUF or HBM; PSUM goes through tensor_copy first.
  if (s.memory == ir::Memory::PSUM) b.fail(sema::err_unsupported_memory("src", b.api(), "sbuf or hbm", "psum"));
  check_priority(b, priority);
  if (!hwdge) return;
  sema::check_hwdge(b.api(), b.target(), b.raiser());
  if (s.dtype != d.dtype) b.fail(sema::err_hwdge_dtype_mismatch(ir::name(s.dtype), ir::name(d.dtype)));
}

void check_dma_transpose(KernelBuilder& b, bool hwdge, std::optional<int64_t> priority) {
  if (hwdge) sema::check_hwdge(b.api(), b.target(), b.raiser());
  check_priority(b, priority);
}

void check_memset_value(KernelBuilder& b, const types::TensorVal& dst, double value, bool is_integer) {
  ir::DType t = b.tensor(dst.tensor).dtype;
  std::ostringstream v;
  v << value;
  if (ir::is_packed(t) && value != 0.0)
    b.fail(sema::err_memset_value_dtype(v.str(), ir::name(t), "packed x4 tensors are set to 0 only"));
  // A float with an integral value (the kernel library's `value=0.0` into uint32 tiles) fits.
  if (ir::is_integer(t) && !is_integer && value != std::trunc(value))
    b.fail(sema::err_memset_value_dtype(v.str(), ir::name(t), "an integer tensor takes an integer value"));
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

void check_lnc(KernelBuilder& b, int64_t lnc, const std::string& runtime) {
  const sema::Target& t = b.target();
  if (lnc < 1 || lnc > t.max_num_physical_cores)
    b.fail(sema::err_lnc_not_supported(lnc, t.name, t.max_num_physical_cores));
  if (runtime.empty()) return;
  char* end = nullptr;
  long long configured = std::strtoll(runtime.c_str(), &end, 10);
  if (*end != '\0' || configured != lnc) b.fail(sema::err_lnc_config_mismatch(lnc, runtime));
}

void check_outputs_shared_hbm(KernelBuilder& b, const std::vector<types::TensorVal>& outputs) {
  for (const types::TensorVal& o : outputs) {
    const ir::TensorDecl& t = b.tensor(o.tensor);
    if (t.memory == ir::Memory::SharedHBM || t.role == ir::Role::Input) continue;
    // Reported where the output was allocated: that is the line to change.
    sema::Diagnostic d = sema::err_output_not_in_shared_hbm(KernelBuilder::display_name(t.name), ir::name(t.memory));
    d.loc = t.loc;
    b.fail(std::move(d));
  }
}

}  // namespace nkic::codegen
