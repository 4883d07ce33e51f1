// Per-instruction cost facts of the nki.isa reference ("Estimated instruction cost" of each
// instruction, aws-neuron-sdk 716f08dc, Release 2.26.1: nki/api/nki/isa/__init__.py) where
// they differ from the stream formula's N cycles per streamed input (Durations.h). One row
// per instruction, with its source; the formulas read them, scaled by the engine's rate.
#pragma once
#include <optional>
#include <vector>

#include "ir/AluOp.h"
#include "ir/IR.h"

namespace nkic::perf {

struct InstructionFacts {
  ir::Opcode opcode;
  // The ALU op the row is for, where an opcode's instructions differ by op (an activation
  // that computes a reciprocal); none: every instruction of the opcode.
  std::optional<ir::AluOp> alu;
  // Cycles per element per partition, replacing the count of streamed inputs (0: count them).
  double cycles_per_element = 0;
  // Whether its last src is the destination it keeps (read, not streamed), and whether two
  // inputs stream at once when one is in SBUF and the other in PSUM (N), else in turn (2N).
  bool keeps_dst = false;
  bool pair = false;
  // The engine's fixed cost for this instruction, in its cycles (< 0: the Target's figure).
  double fixed_cycles = -1;
  const char* source = "";
  // Only for kernels of the current nki API, whose compiler keeps the instruction as written;
  // neuronx-cc's measured legacy kernels show it does not pay the figure.
  bool current_api_only = false;
};

// The row of instruction `in` of a kernel of the current API or not, or null when the
// stream formula holds as it is.
const InstructionFacts* facts_of(const ir::Instruction& in, bool current_api);

// The engines the compiler chooses from for an instruction whose kernel names none
// (engine=unknown_engine, the default): a tensor_scalar whose ops the Scalar Engine runs
// (multiply then add, multiply, or add; the same reference, lines 1660-1663 and 1698) goes to the
// Vector or the Scalar Engine. The reference lets the compiler choose for tensor_copy,
// tensor_tensor and memset too; those stay on their own engines: NKIBench's kernels on trn1
// say the compiler does not move them by engine workload alone (docs/performance.md).
// Its own engine first; one engine: no choice.
std::vector<ir::Engine> compiler_engines(const ir::Instruction& in, const ir::Kernel& k);

}  // namespace nkic::perf
