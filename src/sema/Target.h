// A hardware generation as the legality checks see it (seed 004's target
// attribute contract). Checkers read limits off a Target; no hardware number is
// a literal inside a checker.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nkic::sema {

// The published per-engine and DMA figures the cost model (perf/) is built from
// (HARDWARE_COSTS.md, docs/performance.md): every figure is named here, none is a
// literal in the model. A clock of 0 means "not published for this target".
struct EngineFigures {
  double clock_ghz = 0;
  // Elements per partition per cycle, normally and in the engine's fast mode
  // (every operand at most `fast_max_bytes` wide: BF16/FP16, or FP8 too).
  double elems_per_cycle = 1;
  double fast_elems_per_cycle = 1;
  int fast_max_bytes = 0;
  // Static cost of one instruction (issue, SBUF/PSUM access setup), added to every
  // result's latency; and the initiation interval of a tiny instruction (MIN_II), the
  // fewest cycles between two instructions the engine issues (< 0: fixed_cycles).
  double fixed_cycles = 0;
  double min_ii_cycles = -1;
  double min_ii() const { return min_ii_cycles >= 0 ? min_ii_cycles : fixed_cycles; }
};

struct CostFigures {
  EngineFigures pe, act, dve, pool;
  // Tensor Engine: back-to-back matmuls issue every max(N, mm_init_cycles) cycles
  // (N the moving free size); FP32 operands take fp32_cycle_factor times as long.
  double mm_init_cycles = 64;
  double fp32_cycle_factor = 4;
  // A Tensor-Engine transpose of FP32 (nc_transpose on the Tensor Engine, nc_matmul with
  // is_transpose): from NC-v3 its transpose mode takes half the FP32 matmul time.
  double fp32_transpose_cycle_factor = 4;
  int64_t pe_rows = 128, pe_cols = 128;
  // A most-minor free-dimension stride above this many bytes halves an engine's
  // SBUF/PSUM read or write bandwidth.
  int64_t sbuf_stride_penalty_bytes = 16;
  // DMA: queues per NeuronCore, each moving queue_bytes_per_ns; every transfer
  // waits fixed_latency_ns (descriptors, semaphore to start) before it moves
  // data; each contiguous DMA buffer costs as much queue time as moving
  // buffer_overhead_bytes. HBM bandwidth is the chip's, shared by its cores.
  int dma_queues = 16;
  double dma_queue_bytes_per_ns = 0;
  double dma_fixed_latency_ns = 1300;
  double dma_buffer_overhead_bytes = 512;
  // The hardware DGE (NC-v3+): each DMA instruction with dge_mode.hwdge takes one of
  // `dge_instances` for hwdge_issue_ns while it generates the instruction's descriptors.
  int dge_instances = 0;
  double hwdge_issue_ns = 0;
  double hbm_bytes_per_ns_per_chip = 0;
  int cores_per_chip = 1;
  // Collectives across ranks (nki.collectives) move their data over the chip's NeuronLink,
  // shared by its cores; each of a ring's steps pays the DMA fixed latency (perf/Durations.cpp).
  // Published for NeuronLink-v3 and v4 only (NC-v2 has no nki.collectives).
  double link_bytes_per_ns_per_chip = 0;
  // A DMA transpose (the innermost coordinate contiguous on one side, walking
  // partitions on the other) runs on all queues together at this share of their
  // bandwidth, from HBM and from SBUF; 0: element-wise (every element its own buffer).
  double dma_transpose_efficiency = 0, dma_transpose_sbuf_efficiency = 0;
  // Engines that cannot stream from the same memory at once: on NC-v2 the Vector
  // and GpSimd engines share an SBUF port, and the Vector and Scalar engines a
  // PSUM port; from NC-v3 the latter holds only within one PSUM bank.
  bool dve_pool_share_sbuf_port = false;
  enum class PsumPort : uint8_t { separate, shared, per_bank } dve_act_psum_port = PsumPort::separate;
  // The smallest initiation interval of a Vector, Scalar or GpSimd instruction whose SBUF or
  // PSUM operand sits at a dynamic (runtime) offset, in engine cycles: the nki.isa reference's
  // MIN_II_DYNAMIC ("roughly 600 engine cycles", tensor_copy_dynamic_src/dst, SDK 2.26.1).
  double min_ii_dynamic_cycles = 600;
  // One instruction of an engine's sequencer ALU (NkiScalar arithmetic, scalar_load/store):
  // no latency is published; nkic charges it this many cycles of the engine's clock.
  double sequencer_alu_cycles = 1;
};

struct Target {
  std::string name;               // "trn1", "inf2", "trn2", "trn3", "inf1"
  int nc_version = 3;             // nisa.nc_version: gen2 = 2, gen3 = 3, ...
  int64_t statebuf_num_partitions = 128;
  int64_t statebuf_par_size_in_bytes = 0;   // usable SBUF bytes per partition
  int64_t statebuf_physical_par_size_in_bytes = 0;  // SBUF bytes per partition, reserved ones included
  // SBUF bytes per partition CompileConfig(prefetch_auto=True) reserves for its prefetch ring and
  // slack band: the compiler's size is unpublished, so this is nkic's assumption (a parameter).
  int64_t prefetch_ring_par_size_in_bytes = 16384;
  int64_t psum_num_partitions = 128;
  int64_t psum_par_size_in_bytes = 2048;    // one PSUM bank per partition
  int64_t psum_num_banks = 8;
  int64_t gemm_stationary_fmax = 128;
  int64_t gemm_moving_fmax = 512;
  // The widest moving free size a matmul accepts with an fp32 dst, and with a bf16 dst: one
  // PSUM bank before NeuronCore-v4; v4 spans the 8 banks (nc_matmul's and nc_matmul_mx's docs).
  int64_t matmul_moving_fmax_fp32 = 512, matmul_moving_fmax_bf16 = 512;
  int64_t bn_stats_fmax = 512;
  int64_t psum_min_align = 4;  // bytes: PSUM tiles start on 4-byte boundaries
  int64_t sbuf_min_align = 1;
  int64_t vector_transpose_max = 32;  // nc_transpose on the Vector Engine: at most 32 x 32
  // Elements per partition the Vector Engine's top-8 instructions accept
  // (max8, nc_find_index8: 8..16384; nc_match_replace8: up to 16384).
  int64_t topk_min_elements = 8;
  int64_t topk_max_elements = 16384;
  // GpSimd: partitions each of its cores serves, and local_gather's index budget per core.
  int64_t gpsimd_partitions_per_core = 16;
  int64_t local_gather_max_indices = 4096;
  int max_num_physical_cores = 1;           // logical NeuronCore size (nl.nc)
  int64_t hbm_capacity_bytes = 0;           // device memory of one chip (HARDWARE_COSTS.md "Per chip")
  bool has_hwdge = true;                    // hardware DMA descriptor generation (dge_mode.hwdge)
  CostFigures cost;
  bool has_cost_figures() const { return cost.pe.clock_ghz > 0; }
};

// Every target nkic knows, in a stable order.
const std::vector<Target>& all_targets();
// The target called `name` (aliases: trn1/inf2 = gen2, trn2 = gen3), or null.
const Target* find_target(const std::string& name);
const Target& default_target();  // trn2
// The targets a kernel of the current nki API (`current_api`) or of the legacy neuronxcc.nki API
// builds for, the ones `check` covers unless told otherwise: the current NKI supports Trainium2
// and Trainium3, the legacy one trn1, inf2 and trn2. inf1 is in neither: checked only when named.
std::vector<std::string> api_targets(bool current_api);
// nl.tile_size of a target: (name, value) for pmax, psum_fmax, gemm_stationary_fmax,
// gemm_moving_fmax, bn_stats_fmax, psum_min_align, sbuf_min_align, total_available_sbuf_size;
// the current API (NKI 0.4+) adds psum_bank_fmax, psum_bank_fmax_bytes, psum_num_banks,
// sbuf_size_bytes, sbuf_fmax and sbuf_fmax_bytes. `dma_transpose_as_pe`
// (NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true) reserves a PSUM bank for nc_transpose from NeuronCore-v3.
struct TileSizeOptions {
  bool current_api = false;
  bool dma_transpose_as_pe = false;
};
std::vector<std::pair<std::string, int64_t>> tile_sizes(const Target& t, TileSizeOptions o = {});

}  // namespace nkic::sema
