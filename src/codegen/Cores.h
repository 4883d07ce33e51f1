// kernel[n] of the current nki API specialises the kernel per physical core
// (NKI_CURRENT_API.md §8.1): the body is traced once per core, with a
// compile-time program id, into one instruction stream. Each core's top-level
// statements are cut at its synchronisation points (nisa.core_barrier,
// nisa.sendrecv), and the stream is ordered segment by segment: every core's
// segment s, their top-level statements interleaved one by one (the cores run
// at once), then the exchanges of sync point s, then segment s + 1.
// A device loop the cores synchronise in is one loop of the stream that every
// core runs: its body holds each core's statements, ordered the same way, and
// the loop itself is a sync point of the block around it (the cores enter it
// together and leave it together, as their per-iteration sync points make them).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/AluOp.h"
#include "ir/IR.h"
#include "types/Values.h"

namespace nkic::codegen {

class KernelBuilder;

// nki.lnc (NKI 0.8, NKI_07_08_API.md §5) is where these calls live now; their nisa forms
// still work and warn that they are deprecated (warn_deprecated_in_nki_version), naming it.
// lnc.sendrecv and lnc.sendrecv_compute run at LNC=2 only and take priority= (0 highest to 3;
// none with dma_engine=gpsimd_dma); lnc.sendrecv_compute also takes operands both in private
// HBM; lnc.core_barrier names cores (0, 1) at LNC 1 and 2.
struct LncForm {
  bool lnc = false;  // the nki.lnc form (else the deprecated nisa one)
  bool gpsimd_dma = false;
  std::optional<int64_t> priority;
};

// nisa.core_barrier(data, cores): data in shared HBM or SBUF; with n cores, `cores` lists 0 .. n-1.
// Under kernel[n] every core's instructions before it run before any core's after it.
void core_barrier(KernelBuilder& b, const types::TensorVal& data, const std::vector<int64_t>& cores,
                  const LncForm& form = {});
// nisa.sendrecv: src and dst SBUF tiles of one shape and dtype, the ranks other cores of the
// kernel[n] launch, every core's pair matching up. Core c's src lands in core send_to's dst once
// every core has reached the call: one DMA per core, between the cores' segments.
// nisa.sendrecv_compute (NKI 0.7) also takes `reduce_op` (nl.add, nl.maximum or nl.minimum):
// each core's dst becomes reduce_op(its own src, the src it receives), computed by the DMA
// engine (in fp32, as dma_compute) once every core has reached the call.
void sendrecv(KernelBuilder& b, const types::TensorVal& src, const types::TensorVal& dst, int64_t send_to,
              int64_t recv_from, std::optional<ir::AluOp> reduce_op = std::nullopt, const LncForm& form = {});
// The LNC degree of a kernel: 1 up to the target's physical cores per logical NeuronCore.
// `bracket`: kernel[n]'s n; `runtime`, `cc_flags`: the texts of NEURON_LOGICAL_NC_CONFIG and
// NEURON_CC_FLAGS (empty when unset). With `tracer` (nki 0.7+) the degree is the bracket's, else
// the runtime's, else 1, and a graph --lnc=N in the flags that differs is NCC_EVRF066
// (err_lnc_compiler_mismatch); without it (0.6) the degree is the bracket's or 1. Either way a
// bracket must equal a runtime degree that is set (err_lnc_config_mismatch).
int64_t resolve_lnc(KernelBuilder& b, const std::string& kernel, std::optional<int64_t> bracket,
                    const std::string& runtime, const std::string& cc_flags, bool tracer);

class CoreSegments {
 public:
  explicit CoreSegments(int n) : n_(n) {}
  // The launch's cores.
  int count() const { return n_; }
  // Core `c` starts here (cores in order, from 0).
  void begin_core(KernelBuilder& b, int c);
  // The core being traced.
  int current() const { return core_; }
  // The current core's next shared-HBM tensor: core 0 allocates it (`shape`, `dtype`, `name`);
  // every core follows the same control flow, so another core's k-th is core 0's k-th.
  types::TensorVal shared_tensor(KernelBuilder& b, std::vector<int64_t> shape, ir::DType dtype, const std::string& name);
  // What a core hands over at a synchronisation point (a sendrecv's tiles and ranks).
  struct Arrival {
    int core = 0;
    std::string api;
    std::optional<types::TensorVal> src, dst;
    int64_t send_to = -1, recv_from = -1;
    std::optional<ir::AluOp> reduce_op;  // sendrecv_compute's
  };
  // The current core reaches its next synchronisation point in the innermost block (raises when
  // core 0's point there is another API, or when core 0 does not synchronise in that loop);
  // every core's arrival there once the last core has reached it, null before.
  const std::vector<Arrival>* sync(KernelBuilder& b, Arrival arrival);
  // The statements an exchange (sendrecv's copies) emits after the last core reached the sync point.
  void begin_exchange(KernelBuilder& b);
  void end_exchange(KernelBuilder& b);
  // A device loop opens (range(lb, ub, stride), or up to `dynamic_ub`): when core 0's loop at
  // the same place (the same position among the loops opened in the same block) synchronises
  // the cores, a later core runs that loop (returned), after checking it counts alike; else null.
  ir::Loop* join_loop(KernelBuilder& b, int64_t lb, int64_t ub, int64_t stride,
                      const std::optional<ir::Access>& dynamic_ub);
  // The loop the current core opened itself, when join_loop returned null.
  void opened_loop(ir::Loop& l) { open_.back().loop = &l; }
  // The innermost loop closes (the last core to close a loop the cores run orders its body).
  void closed_loop(KernelBuilder& b);
  // A do-while condition for the innermost loop: a later core's own in the loop it joined
  // (kept as that core's peer, true), or false when the loop is the core's own.
  bool peer_condition(const ir::Access& cond);
  // Reorders the kernel body; raises when the cores passed different numbers of sync points.
  void finish(KernelBuilder& b);

 private:
  // A block ordered segment by segment: the kernel body, or the body of a loop the cores run together.
  struct Region {
    ir::Block* block = nullptr;
    ir::Loop* loop = nullptr;  // null for the kernel body
    std::vector<std::vector<std::pair<size_t, size_t>>> segments;  // per core: each segment's [first, last)
    std::vector<std::vector<Arrival>> points;  // per sync point: the cores that reached it
    // By sync point: the statements after it (sendrecv's copies, or a loop the cores run together).
    std::map<size_t, std::pair<size_t, size_t>> exchanges;
    std::map<int, size_t> shared;  // core 0's loops opened directly in it that the cores run, by position
  };
  // The top level or a device loop the current core is in.
  struct Open {
    ir::Loop* loop = nullptr;
    int region = -1;    // its region, once the cores run it together
    int children = 0;   // loops opened directly in it so far
    int position = 0;   // its place among its parent's loops
  };
  const std::vector<Arrival>* arrive(KernelBuilder& b, size_t region, Arrival arrival, size_t end, size_t next);
  // Core 0 synchronises: the loops it is in become loops the cores run together.
  void share_open_loops(KernelBuilder& b);
  void order(KernelBuilder& b, Region& g, std::vector<ir::CoreSpan>* spans);

  int n_;
  int core_ = 0;
  std::vector<types::TensorVal> shared_;   // core 0's shared-HBM tensors, in order
  size_t allocated_ = 0;                   // how many the current core has made
  std::deque<Region> regions_;             // [0]: the kernel body
  std::vector<Open> open_;                 // the current core's: the top level, then its open loops
  size_t exchange_start_ = 0;
};

}  // namespace nkic::codegen
