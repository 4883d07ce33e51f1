// The CPU simulator: runs a kernel's IR with the numbers a NeuronCore would
// produce (fp32 compute, one rounding to each destination format) and reports
// what hardware would punish: out-of-bound accesses, reads of never-written
// memory, affine_range iterations that depend on each other.
#pragma once
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/IR.h"

namespace nkic::sim {

class Rendezvous;

struct SimOptions {
  // Track which elements of on-chip and private HBM tensors each program
  // instance has written, and which values are computed from elements it never
  // wrote (sim/Uninit.h): such a value written to an output, or read as an address
  // or loop bound, is an error; one only dropped gives a warning.
  bool check_uninitialized = false;
  // Receives the warnings of a run that completes (an uninitialized value read and
  // dropped), on the simulating thread; none are reported when empty.
  std::function<void(const ir::Diagnostic&)> warning = {};
  // Where nl.device_print output goes (std::cout when null).
  std::ostream* print_stream = nullptr;
  // Report loop-carried dependencies in Affine loops (err_unexpected_output_dependencies):
  // an iteration reading what another iteration of the same loop wrote, two
  // iterations writing one HBM element, or a read after the loop of an on-chip
  // element several iterations wrote (sim/RaceCheck.h). Associative accumulation
  // (`+=`, an accumulating matmul, an add/max/min into its own operand) is exempt.
  bool check_races = false;
  // The budget simulate() checks before it allocates (sim/Budget.h): the estimated
  // run time in seconds (0: unlimited) and the host memory in bytes (0: what the
  // host has available).
  double time_limit_seconds = 600;
  double memory_limit_bytes = 0;
  // The caller has run check_budget with these options (before allocating the
  // outputs): simulate() does not walk the kernel for it again.
  bool budget_checked = false;
  // Threads for independent SPMD programs and loop iterations (0: NKIC_THREADS,
  // else the machine's cores). No count changes a result.
  int threads = 0;
  // Called on the simulating thread with the fraction done (0..1], after each
  // program instance and each iteration of the kernel body's outermost loops,
  // whenever it has grown by at least a hundredth.
  std::function<void(double)> progress = {};
  // The rank this run is, and where it meets the others at collectives (sim/Rendezvous.h);
  // null: a world of one rank.
  Rendezvous* ranks = nullptr;
  int rank = 0;
};

// Raises a simulation failure attributable to one instruction (out-of-bounds
// access, an uninitialized value reaching an output when checked) or loop (a race, when
// checked) as the one diagnostic type (ir::NkiError): `code` err_*, at the
// instruction's or loop's `loc`; an out-of-bound access is an IndexError, as the
// same check at trace time is.
[[noreturn]] void sim_error(std::string code, std::string message, ir::SourceLoc loc, std::string hint = "",
                            ir::ErrorKind kind = ir::ErrorKind::Runtime);

// Runs every program instance of `k` (row-major over k.grid; an empty grid is one
// instance). bindings[id] points at caller-owned row-major memory for tensor `id`
// in the TensorDecl's dtype (inputs and outputs), or is null (or beyond the end):
// the simulator owns the others. Bound and shared-HBM tensors are shared by all
// instances; the simulator's private-HBM, SBUF and PSUM tensors start fresh in each,
// filled with NaN (float formats) or 0x5A bytes (integers) so reads of
// uninitialised memory show. Throws std::invalid_argument for a malformed kernel
// (ir::verify) or too many bindings, and raises (sim_error) the diagnostic of a failing instruction.
void simulate(const ir::Kernel& k, const std::vector<void*>& bindings, const SimOptions& opts = {});

// nki.multi_rank_simulate: runs `k` once per rank, bindings[r] being rank r's (as simulate()
// takes them), all ranks at once on threads of their own that meet at each collective
// (sim/Rendezvous.h). Raises the first failure of any rank; the warnings of a run that
// completes reach opts.warning on the calling thread.
void simulate_ranks(const ir::Kernel& k, const std::vector<std::vector<void*>>& bindings, const SimOptions& opts = {});

}  // namespace nkic::sim
