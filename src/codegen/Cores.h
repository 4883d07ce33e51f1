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
#include <string>
#include <string_view>
#include <vector>

#include "types/Values.h"

namespace nkic::codegen {

class KernelBuilder;

// nisa.core_barrier(data, cores): data in shared HBM or SBUF; with n cores, `cores` lists 0 .. n-1.
void check_core_barrier(KernelBuilder& b, const types::TensorVal& data, const std::vector<int64_t>& cores, int n);
// nisa.sendrecv on core `self` of `n`: src and dst SBUF tiles of one shape and dtype, the ranks
// other cores. `pairs` (core, send_to, recv_from) of every core at one sync point must match up.
void check_sendrecv(KernelBuilder& b, const types::TensorVal& src, const types::TensorVal& dst, int64_t send_to,
                    int64_t recv_from, int self, int n);
void check_sendrecv_pairs(KernelBuilder& b, const std::vector<std::array<int64_t, 3>>& pairs);
// kernel[lnc]: 1 up to the target's physical cores per logical NeuronCore, and equal to the
// runtime's NEURON_LOGICAL_NC_CONFIG (`runtime`, the variable's text) when that is set.
void check_lnc(KernelBuilder& b, int64_t lnc, const std::string& runtime);

class CoreSegments {
 public:
  // Core `c` starts here (cores in order, from 0).
  void begin_core(KernelBuilder& b, int c);
  // The core being traced.
  int current() const { return cuts_.empty() ? 0 : static_cast<int>(cuts_.size()) - 1; }
  // A synchronisation point of the current core; raises unless at the kernel's top level.
  void sync(KernelBuilder& b, std::string_view api);
  // The statements an exchange (sendrecv's copies) emits after the last core reached sync point s.
  void begin_exchange(KernelBuilder& b);
  void end_exchange(KernelBuilder& b);
  // Reorders the kernel body; raises when the cores passed different numbers of sync points.
  void finish(KernelBuilder& b);

 private:
  std::vector<std::vector<size_t>> cuts_;  // per core: where each of its segments starts
  std::map<size_t, std::pair<size_t, size_t>> exchanges_;  // by sync point: the exchange's statements
  size_t exchange_start_ = 0;
};

}  // namespace nkic::codegen
