#include "sema/Target.h"

namespace nkic::sema {

namespace {

// HARDWARE_COSTS.md "Per engine" and "Instruction costs" (the Neuron architecture
// guides, the perf guide, the DMA bandwidth guide). Not published, and so the same
// on every generation: the Scalar Engine's fixed cost (the one measured initiation
// interval, 264 cycles on NC-v2), and the GpSimd Engine, modelled like the Vector
// Engine at its own clock and 128 lanes. dma_buffer_overhead_bytes (512) is read
// off the DMA guide's curve (256 B per partition overhead-bound, 2 KiB near peak).
CostFigures cost_figures(int gen) {
  CostFigures c;
  const double act_fixed = 264, dve_fixed = 100;
  // The nki.isa reference's MIN_II, "roughly 64 engine cycles": the Vector and GpSimd
  // engines' smallest initiation interval (aws-neuron-sdk 716f08dc nki/api/nki/isa/__init__.py,
  // every Vector-Engine instruction's max(MIN_II, N)). The Scalar Engine's measured interval
  // (264 cycles) is its fixed cost.
  const double min_ii = 64;
  if (gen == 2) {
    c.pe = {2.8, 1, 1, 0, 0};
    c.act = {1.4, 1, 1, 0, act_fixed};
    c.dve = {1.12, 1, 1, 0, dve_fixed};
    c.pool = {1.4, 1, 1, 0, dve_fixed};
    c.dma_queue_bytes_per_ns = 17;
    c.hbm_bytes_per_ns_per_chip = 820;
    c.cores_per_chip = 2;
    c.dve_pool_share_sbuf_port = true;
    c.dve_act_psum_port = CostFigures::PsumPort::shared;
    // Not published for NC-v2, only that nl.load_transpose2d "can degrade DMA bandwidth
    // significantly": the lowest transpose figure published (trn2's SBUF to SBUF, 50 %).
    c.dma_transpose_efficiency = c.dma_transpose_sbuf_efficiency = 0.5;
  } else if (gen == 3) {
    // trainium2_arch.rst: 2.4 GHz; 79 BF16 and 20 FP32 dense TFLOPS per NeuronCore-v3, so FP32
    // takes 4x the BF16 time (2 x 128 x 128 x 2.4 GHz = 78.6 TFLOPS; / 4 = 19.7); its transpose
    // mode gives "2x speedup in FP32 transpose".
    c.pe = {2.4, 1, 1, 0, 0};
    c.fp32_transpose_cycle_factor = 2;
    c.act = {1.2, 1, 1, 0, act_fixed};
    c.dve = {0.96, 2, 4, 2, dve_fixed};  // 256 elements/cycle, 512 for BF16/FP16
    c.pool = {1.2, 1, 1, 0, dve_fixed};
    c.dma_queue_bytes_per_ns = 23;
    c.hbm_bytes_per_ns_per_chip = 2900;
    c.cores_per_chip = 8;
    c.link_bytes_per_ns_per_chip = 1280;  // trainium2.rst: NeuronLink-v3, 1.28 TB/s per chip
    // trainium2_arch.rst, "Descriptor Generation Engine": two DGE instances per NeuronCore-v3;
    // "each DGE-based DMA instruction takes about 600 ns to execute".
    c.dge_instances = 2;
    c.hwdge_issue_ns = 600;
    c.dve_act_psum_port = CostFigures::PsumPort::per_bank;
    c.dma_transpose_efficiency = 0.9;       // trn2 architecture guide: up to 90 % (HBM to SBUF)
    c.dma_transpose_sbuf_efficiency = 0.5;  // and up to 50 % (SBUF to SBUF)
  } else if (gen == 4) {
    c.pe = {2.4, 1, 1, 0, 0};
    // trainium3_arch.rst: 79 BF16 and 20 FP32 TFLOPS per NeuronCore-v4 (FP32 at 4x); transpose mode as on v3.
    c.fp32_transpose_cycle_factor = 2;
    c.act = {1.2, 1, 2, 2, act_fixed};   // 256 lanes' worth for BF16/FP16/FP8
    c.dve = {1.2, 2, 4, 2, dve_fixed};   // 512 for BF16/FP16/FP8, 256 otherwise
    c.pool = {1.2, 1, 1, 0, dve_fixed};
    c.dma_queue_bytes_per_ns = 33;
    c.hbm_bytes_per_ns_per_chip = 4900;
    c.cores_per_chip = 8;
    c.link_bytes_per_ns_per_chip = 2560;  // trainium3.rst: NeuronLink-v4, 2.56 TB/s per device
    // No NeuronCore-v4 DGE figure is published: NC-v3's.
    c.dge_instances = 2;
    c.hwdge_issue_ns = 600;
    c.dve_act_psum_port = CostFigures::PsumPort::per_bank;
    c.dma_transpose_efficiency = 0.9;       // trn2 architecture guide: up to 90 % (HBM to SBUF)
    c.dma_transpose_sbuf_efficiency = 0.5;  // and up to 50 % (SBUF to SBUF)
  }
  c.dve.min_ii_cycles = c.pool.min_ii_cycles = min_ii;
  return c;
}
// Per-partition usable SBUF bytes follow NKI_API.md §5 / tile_size.total_available_sbuf_size;
// the physical ones are the architecture guides' 192 / 224 / 256 KiB (NC-v2 / v3 / v4).
Target make(std::string name, int gen, int64_t sbuf_bytes, int64_t psum_partitions, int cores, int64_t hbm_gib) {
  Target t;
  t.hbm_capacity_bytes = hbm_gib << 30;
  t.name = std::move(name);
  t.nc_version = gen;
  t.statebuf_par_size_in_bytes = sbuf_bytes;
  t.statebuf_physical_par_size_in_bytes = (gen >= 4 ? 256 : gen == 3 ? 224 : 192) << 10;
  t.psum_num_partitions = psum_partitions;
  t.max_num_physical_cores = cores;
  t.has_hwdge = gen >= 3;  // NKI_API.md: HWDGE needs NeuronCore-v3+
  if (gen >= 4) t.matmul_moving_fmax_fp32 = 4096, t.matmul_moving_fmax_bf16 = 8192;
  t.cost = cost_figures(gen);
  return t;
}
}  // namespace

const std::vector<Target>& all_targets() {
  static const std::vector<Target> targets = {
      // HBM per chip: 32 GiB (trn1 / inf2), 96 GiB (trn2), 144 GiB (trn3), from the Neuron
      // architecture guides; Inferentia gen1 has 8 GiB of DRAM per chip (inf1 product docs).
      make("inf1", 1, 180224, 64, 1, 8),   // Inferentia gen1: PSUM has 64 partitions
      make("trn1", 2, 180224, 128, 1, 32),
      make("inf2", 2, 180224, 128, 1, 32),
      make("trn2", 3, 212984, 128, 2, 96),
      make("trn3", 4, 245752, 128, 2, 144),
  };
  return targets;
}

const Target* find_target(const std::string& name) {
  for (const Target& t : all_targets())
    if (t.name == name) return &t;
  return nullptr;
}

const Target& default_target() { return *find_target("trn2"); }

std::vector<std::string> api_targets(bool current_api) {
  if (current_api) return {"trn2", "trn3"};
  return {"trn1", "inf2", "trn2"};
}

std::vector<std::pair<std::string, int64_t>> tile_sizes(const Target& t, TileSizeOptions o) {
  constexpr int64_t fp32_bytes = 4;
  std::vector<std::pair<std::string, int64_t>> sizes = {
      {"pmax", t.statebuf_num_partitions},
      {"psum_fmax", t.psum_par_size_in_bytes / fp32_bytes},  // fp32 elements in one PSUM bank
      {"gemm_stationary_fmax", t.gemm_stationary_fmax},
      {"gemm_moving_fmax", t.gemm_moving_fmax},
      {"bn_stats_fmax", t.bn_stats_fmax},
      {"psum_min_align", t.psum_min_align},
      {"sbuf_min_align", t.sbuf_min_align},
      {"total_available_sbuf_size", t.statebuf_par_size_in_bytes}};
  if (!o.current_api) return sizes;
  // nc_transpose keeps the last bank when DMA transposes run on the Tensor Engine (NC-v3+).
  const bool reserved = o.dma_transpose_as_pe && t.nc_version >= 3;
  sizes.insert(sizes.end(), {{"psum_bank_fmax", t.psum_par_size_in_bytes / fp32_bytes},
                             {"psum_bank_fmax_bytes", t.psum_par_size_in_bytes},
                             {"psum_num_banks", t.psum_num_banks - (reserved ? 1 : 0)},
                             {"sbuf_size_bytes", t.statebuf_num_partitions * t.statebuf_physical_par_size_in_bytes},
                             {"sbuf_fmax", t.statebuf_par_size_in_bytes / fp32_bytes},
                             {"sbuf_fmax_bytes", t.statebuf_par_size_in_bytes}});
  return sizes;
}

}  // namespace nkic::sema
