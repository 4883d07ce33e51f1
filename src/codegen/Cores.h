// kernel[n] of the current nki API specialises the kernel per physical core
// (NKI_CURRENT_API.md §8.1): the body is traced once per core, with a
// compile-time program id, into one instruction stream. Each core's top-level
// statements are cut at its synchronisation points (nisa.core_barrier,
// nisa.sendrecv), and the stream is ordered segment by segment: every core's
// segment s, their top-level statements interleaved one by one (the cores run
// at once), then the exchanges of sync point s, then segment s + 1.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/AluOp.h"
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
  int current() const { return cuts_.empty() ? 0 : static_cast<int>(cuts_.size()) - 1; }
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
  // The current core reaches its next synchronisation point (raises unless at the kernel's top
  // level, or when core 0's point there is another API); every core's arrival there once the
  // last core has reached it, null before.
  const std::vector<Arrival>* sync(KernelBuilder& b, Arrival arrival);
  // The statements an exchange (sendrecv's copies) emits after the last core reached sync point s.
  void begin_exchange(KernelBuilder& b);
  void end_exchange(KernelBuilder& b);
  // Reorders the kernel body; raises when the cores passed different numbers of sync points.
  void finish(KernelBuilder& b);

 private:
  int n_;
  std::vector<std::vector<size_t>> cuts_;  // per core: where each of its segments starts
  std::vector<types::TensorVal> shared_;   // core 0's shared-HBM tensors, in order
  size_t allocated_ = 0;                   // how many the current core has made
  std::vector<std::vector<Arrival>> syncs_;  // per sync point: the cores that reached it
  std::map<size_t, std::pair<size_t, size_t>> exchanges_;  // by sync point: the exchange's statements
  size_t exchange_start_ = 0;
};

}  // namespace nkic::codegen
