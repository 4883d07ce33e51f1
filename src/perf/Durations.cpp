#include "perf/Durations.h"

#include <algorithm>
#include <cmath>

#include "perf/InstructionFacts.h"

namespace nkic::perf {

Track track_of(ir::Engine e) {
  switch (e) {
    case ir::Engine::pe: return Track::pe;
    case ir::Engine::act: return Track::act;
    case ir::Engine::pool: return Track::pool;
    case ir::Engine::dma: return Track::dma;
    default: return Track::dve;
  }
}

const sema::EngineFigures& figures(const sema::CostFigures& f, Track t) {
  switch (t) {
    case Track::pe: return f.pe;
    case Track::act: return f.act;
    case Track::pool: return f.pool;
    default: return f.dve;
  }
}

namespace {

// How long each of `queues` queues is busy with its share of `bytes` in `buffers` contiguous
// buffers, limited by the chip's HBM share when one side is HBM.
double transfer_interval(double bytes, double buffers, int queues, bool hbm, const sema::CostFigures& f) {
  const double per_queue = (bytes + buffers * f.dma_buffer_overhead_bytes) / queues / f.dma_queue_bytes_per_ns;
  return std::max(per_queue, hbm ? bytes / (f.hbm_bytes_per_ns_per_chip / f.cores_per_chip) : 0.0);
}

// The queues a transfer of `partitions` partitions of an on-chip side takes (128: 16 transfers
// of 8 buffers, as the architecture guide's example splits them), at most `runs`.
int queues_for(int64_t partitions, int64_t runs, const sema::Target& t) {
  const int64_t per_queue_partitions = std::max<int64_t>(1, t.statebuf_num_partitions / t.cost.dma_queues);
  const int64_t spread = partitions > 0 ? (partitions + per_queue_partitions - 1) / per_queue_partitions : runs;
  return static_cast<int>(std::clamp<int64_t>(std::min(spread, runs), 1, t.cost.dma_queues));
}

// A transfer split over the queues (by partitions: each queue serves an equal share
// of the 128), each paying per contiguous buffer, limited by the chip's HBM share. Coalesced
// over `spans` (Coalescing.h), it moves every iteration's points as one transfer.
InstCost dma_cost(const ir::Instruction& in, const ir::Kernel& k, const sema::Target& t, const Extents& ext,
                  const std::vector<Span>& spans) {
  const sema::CostFigures& f = t.cost;
  InstCost c;
  c.costed = true;
  c.track = Track::dma;
  // Saturating: a coalesced loop may run for as long as int64 counts.
  double trips = 1;
  for (const Span& sp : spans) trips *= static_cast<double>(std::max<int64_t>(1, sp.trips));
  const int64_t points = static_cast<int64_t>(std::min(static_cast<double>(ext.points()) * trips, 9.0e18 / 16));
  const ir::TensorDecl& dst = k.tensor(in.dst.tensor);
  int64_t partitions = 0;
  bool hbm = false;
  const bool from_hbm = !in.srcs.empty() && ir::is_hbm(k.tensor(in.srcs[0].tensor).memory);
  std::vector<const ir::Access*> sides{&in.dst};
  if (!in.srcs.empty()) sides.push_back(&in.srcs[0]);
  for (const ir::Access* a : sides) {
    const ir::TensorDecl& td = k.tensor(a->tensor);
    hbm = hbm || ir::is_hbm(td.memory);
    if (ir::is_hbm(td.memory) || ext.range.empty()) continue;
    int64_t p = ext.size(partition_coord(*a, td));
    for (const Span& sp : spans)
      if (static_cast<size_t>(td.partition_dim) < a->index.size() &&
          a->index[td.partition_dim].coeff({ir::VarKind::Loop, sp.axis}) != 0)
        p *= sp.trips;
    partitions = std::max(partitions, p);
  }
  const DmaShape shape = dma_shape(sides, k, ext, spans);
  const int64_t runs = (points + shape.run - 1) / shape.run;
  // A collective moves its data out and back in (reduce-scatter, then all-gather).
  const int64_t passes = ir::info(in.opcode).cost == ir::Cost::collective ? 2 : 1;
  c.dma_bytes = points * ir::size_of(dst.dtype) * passes;
  const double hbm_floor = hbm ? c.dma_bytes / (f.hbm_bytes_per_ns_per_chip / f.cores_per_chip) : 0.0;
  // The transposing hardware writes SBUF (from HBM or from SBUF); other transposes go element-wise.
  const double transpose_efficiency = ir::is_hbm(dst.memory) ? 0.0
                                      : from_hbm             ? f.dma_transpose_efficiency
                                                             : f.dma_transpose_sbuf_efficiency;
  if (shape.transposes && transpose_efficiency > 0) {
    // All queues cooperate, each writing its share of every [partitions, 16] block.
    c.queues = f.dma_queues;
    c.interval = c.latency =
        std::max(c.dma_bytes / (transpose_efficiency * f.dma_queues * f.dma_queue_bytes_per_ns), hbm_floor);
    return c;
  }
  // The queues share the partitions of an on-chip side; HBM to HBM by its buffers.
  c.queues = queues_for(partitions, runs, t);
  c.runs = runs * passes;
  c.interval = c.latency =
      transfer_interval(static_cast<double>(c.dma_bytes), static_cast<double>(c.runs), c.queues, hbm, f);
  return c;
}

// The Tensor Engine: max(N, mm_init_cycles) cycles per matmul, N the moving
// free size; a transpose multiplies by the identity, so N is its partition count.
InstCost pe_cost(const ir::Instruction& in, const ir::Kernel& k, const sema::Target& t, const Extents& ext) {
  const sema::CostFigures& f = t.cost;
  InstCost c;
  c.costed = true;
  c.track = Track::pe;
  const size_t r = ext.range.size();
  const double points = static_cast<double>(ext.points());
  double n = 0, elements = points;
  // A move costed as a matmul is a transpose through the identity.
  const ir::OpcodeInfo& op = ir::info(in.opcode);
  const bool pe_move = op.exec == ir::Exec::Move && op.cost == ir::Cost::matmul;
  c.transpose = pe_move || in.transpose;
  if (pe_move) {
    n = static_cast<double>(ext.size(0));
    elements = points * n;
  } else if (r >= 2) {
    n = static_cast<double>(ext.size(r - 1));
  }
  bool fp32 = false;
  for (const ir::Access& a : in.srcs) fp32 = fp32 || k.tensor(a.tensor).dtype == ir::DType::float32;
  const double factor = !fp32 ? 1.0 : c.transpose ? f.fp32_transpose_cycle_factor : f.fp32_cycle_factor;
  // An mx matmul contracts its packed lanes in the cycles one BF16 row takes.
  if (op.exec == ir::Exec::Mx) elements /= ir::info(k.tensor(in.srcs[1].tensor).dtype).lanes;
  c.pe_elements = elements * factor;
  c.interval = c.latency = std::max(n, f.mm_init_cycles) * factor / f.pe.clock_ghz;
  c.at_floor = n < f.mm_init_cycles;
  return c;
}

// Whether an operand of `in` sits in SBUF or PSUM at an offset known only at run time.
bool dynamic_on_chip(const ir::Instruction& in, const ir::Kernel& k) {
  auto dynamic = [&](const ir::Access& a) { return !a.indirect.empty() && !ir::is_hbm(k.tensor(a.tensor).memory); };
  if (in.has_dst() && dynamic(in.dst)) return true;
  return std::any_of(in.srcs.begin(), in.srcs.end(), dynamic);
}

// Vector, Scalar and GpSimd instructions stream the free elements of each
// partition: about N cycles per streamed input (at least one), at the engine's
// rate (faster when every operand is narrow), halved by strided access, with a
// fixed cost that bounds the interval from below and delays the result. An
// accumulating write (`+=`) to SBUF adds its destination, one more input, as
// tensor_tensor does (PSUM accumulates in place); a stream_pair instruction (and so
// such a write) reads an SBUF and a PSUM input at once. A partition broadcast is a
// Tensor-Engine matmul into PSUM (the architecture guide) before the instruction starts
// (InstCost::broadcast), read there when it is one matmul's output, else assembled in SBUF.
InstCost stream_cost(const ir::Instruction& in, const ir::Kernel& k, const sema::Target& t, const Extents& ext,
                     Track track) {
  const sema::EngineFigures& e = figures(t.cost, track);
  InstCost c;
  c.costed = true;
  c.track = track;
  const int rank = static_cast<int>(ext.range.size());
  const ir::Access& lead = in.has_dst() ? in.dst : in.srcs.at(0);
  const int pcoord = rank ? partition_coord(lead, k.tensor(lead.tensor)) : 0;
  const int64_t partitions = rank ? ext.size(pcoord) : 1;
  const double per_partition = static_cast<double>(ext.points()) / std::max<int64_t>(1, partitions);
  const bool broadcast_in_psum = per_partition <= static_cast<double>(t.matmul_moving_fmax_fp32);
  int sbuf_reads = 0, psum_reads = 0;
  bool narrow = e.fast_max_bytes > 0, strided = false;
  const sema::CostFigures& f = t.cost;
  double broadcast_cycles = 0;
  auto operand = [&](const ir::Access& a, bool read) {
    const ir::TensorDecl& td = k.tensor(a.tensor);
    narrow = narrow && ir::size_of(td.dtype) <= e.fast_max_bytes;
    if (!streams(a, pcoord)) return;
    const bool broadcast = read && partitions > 1 && partition_broadcast(a, td);
    if (broadcast) {
      // One matmul of a ones column with the row per PSUM bank of it, at the row's dtype rate.
      const double bank = static_cast<double>(t.matmul_moving_fmax_fp32), full = std::floor(per_partition / bank);
      const double rest = per_partition - full * bank;
      const double factor = td.dtype == ir::DType::float32 ? f.fp32_cycle_factor : 1.0;
      broadcast_cycles +=
          (full * std::max(bank, f.mm_init_cycles) + (rest > 0 ? std::max(rest, f.mm_init_cycles) : 0)) * factor;
      c.broadcast_pe_elements += static_cast<double>(partitions) * per_partition * factor;
    }
    const bool psum = td.memory == ir::Memory::PSUM || (broadcast && broadcast_in_psum);
    if (read) ++(psum ? psum_reads : sbuf_reads);
    strided = strided || minor_stride_bytes(a, td, rank) > t.cost.sbuf_stride_penalty_bytes;
  };
  const InstructionFacts* fact = facts_of(in, k.current_api);
  const bool adds_dst = in.accumulate && in.has_dst() && k.tensor(in.dst.tensor).memory != ir::Memory::PSUM;
  if (in.has_dst()) operand(in.dst, adds_dst);
  // A further result that does not stream (the reduce accumulator register, a
  // [P, 1] reduce_res) is written once per partition: it does not set the rate.
  for (const ir::Access& a : in.extra_dsts)
    if (streams(a, pcoord)) operand(a, false);
  const size_t kept = fact && fact->keeps_dst && !in.srcs.empty() ? 1 : 0;
  for (size_t i = 0; i + kept < in.srcs.size(); ++i) operand(in.srcs[i], true);
  const bool pair = ir::info(in.opcode).cost == ir::Cost::stream_pair || adds_dst || (fact && fact->pair);
  const int streamed = pair ? std::max(sbuf_reads, psum_reads) : sbuf_reads + psum_reads;
  const double per_element = fact && fact->cycles_per_element > 0 ? fact->cycles_per_element : std::max(streamed, 1);
  const double rate = narrow ? e.fast_elems_per_cycle : e.elems_per_cycle;
  const double cycles = per_partition * per_element / rate * (strided ? 2.0 : 1.0);
  const double fixed = fact && fact->fixed_cycles >= 0 ? fact->fixed_cycles : e.fixed_cycles;
  double min_ii = fact && fact->fixed_cycles >= 0 ? fact->fixed_cycles : e.min_ii();
  if (dynamic_on_chip(in, k)) min_ii = std::max(min_ii, t.cost.min_ii_dynamic_cycles);
  c.interval = std::max(cycles, min_ii) / e.clock_ghz;
  c.latency = std::max((cycles + fixed) / e.clock_ghz, c.interval);
  c.at_floor = cycles < min_ii;
  c.broadcast = broadcast_cycles / f.pe.clock_ghz;
  return c;
}

}  // namespace

InstCost spill_cost(int64_t bytes_per_partition, const sema::Target& t) {
  InstCost c;
  c.costed = true;
  c.track = Track::dma;
  const int64_t partitions = t.statebuf_num_partitions;
  c.dma_bytes = bytes_per_partition * partitions;
  c.queues = queues_for(partitions, partitions, t);
  c.interval = c.latency =
      transfer_interval(static_cast<double>(c.dma_bytes), static_cast<double>(partitions), c.queues, true, t.cost);
  return c;
}

// A collective across ranks, as a ring over its replica-group list of n ranks: all_reduce
// moves 2(n-1)/n of its bytes (reduce-scatter, then all-gather), the others (n-1)/n of the
// gathered size (a permute: the whole), over the core's share of the chip's NeuronLink; each
// of the ring's steps pays the DMA fixed latency (the first is the transfer's own, which the
// schedule adds). No per-collective latency is published. It takes one queue.
InstCost ranks_cost(const ir::Instruction& in, const ir::Kernel& k, const sema::Target& t) {
  const sema::CostFigures& f = t.cost;
  InstCost c;
  c.costed = true;
  c.track = Track::dma;
  const double n = std::max(1.0, in.imms.at(1));
  const bool permute = in.opcode == ir::Opcode::CcPermute || in.opcode == ir::Opcode::CcPermuteImplicit ||
                       in.opcode == ir::Opcode::CcPermuteImplicitReduce;
  double bytes = 0;
  for (size_t e = 0; e < in.widths.size(); ++e) {
    const ir::Access& a = e == 0 ? in.dst : e <= in.extra_dsts.size() ? in.extra_dsts[e - 1] : in.srcs[e - 1 - in.extra_dsts.size()];
    bytes = std::max(bytes, static_cast<double>(in.widths[e]) * ir::size_of(k.tensor(a.tensor).dtype));
  }
  const double steps = permute ? 1 : in.opcode == ir::Opcode::CcAllReduce ? 2 * (n - 1) : n - 1;
  const double moved = permute ? bytes : bytes * steps / n;
  c.dma_bytes = static_cast<int64_t>(moved);
  c.queues = 1;
  c.interval = c.latency = std::max(0.0, steps - 1) * f.dma_fixed_latency_ns +
                           moved / (f.link_bytes_per_ns_per_chip / f.cores_per_chip);
  return c;
}

InstCost cost_of(const ir::Instruction& in, const ir::Kernel& k, const sema::Target& t, const Extents& ext,
                 const std::vector<Span>& spans, ir::Engine on) {
  const ir::Cost cls = ir::info(in.opcode).cost;
  if (cls == ir::Cost::ranks) return ranks_cost(in, k, t);
  const ir::Engine engine = on == ir::Engine::none ? ir::engine_of(in) : on;
  if (cls == ir::Cost::none || engine == ir::Engine::sp || ext.empty()) return {};
  if (cls == ir::Cost::scalar) {
    InstCost c;
    c.costed = true;
    c.track = track_of(engine);
    c.interval = c.latency = t.cost.sequencer_alu_cycles / figures(t.cost, c.track).clock_ghz;
    return c;
  }
  if (engine == ir::Engine::dma || cls == ir::Cost::dma || cls == ir::Cost::collective) return dma_cost(in, k, t, ext, spans);
  if (engine == ir::Engine::pe) return pe_cost(in, k, t, ext);
  return stream_cost(in, k, t, ext, track_of(engine));
}

}  // namespace nkic::perf
