#include "ir/IR.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace nkic::ir {

const char* name(Memory m) {
  switch (m) {
    case Memory::SharedHBM: return "shared_hbm";
    case Memory::PrivateHBM: return "private_hbm";
    case Memory::SBUF: return "sbuf";
    case Memory::PSUM: return "psum";
  }
  return "?";
}

const char* name(Role r) {
  switch (r) {
    case Role::Input: return "input";
    case Role::Output: return "output";
    case Role::Local: return "local";
  }
  return "?";
}

const char* name(AccCmd c) {
  switch (c) {
    case AccCmd::none: return "none";
    case AccCmd::reset: return "reset";
    case AccCmd::reduce: return "reduce";
    case AccCmd::reset_reduce: return "reset_reduce";
    case AccCmd::load_reduce: return "load_reduce";
  }
  return "?";
}

const char* name(AxisType t) { return t == AxisType::Affine ? "Affine" : "Sequential"; }

const Access* load_reduce_source(const Instruction& in) {
  if (in.acc_cmd != AccCmd::load_reduce || in.steps.empty()) return nullptr;
  if (in.opcode != Opcode::TensorScalarCumulative && in.opcode != Opcode::Exponential &&
      in.opcode != Opcode::TensorScalar)
    return nullptr;
  size_t read = 1;  // the data, then the tiles the steps take
  for (const AluStep& s : in.steps)
    if (s.src >= 0) read = std::max(read, static_cast<size_t>(s.src) + 1);
  return in.srcs.size() > read ? &in.srcs.back() : nullptr;
}

std::vector<AluStep> pipeline(const Instruction& in) {
  const OpcodeInfo& op = info(in.opcode);
  if (!in.steps.empty() || op.exec != Exec::Elementwise || op.form != Form::pipe) return in.steps;
  // The one-op form: `alu` on the data and the second source of a two-source instruction,
  // else on the data and the immediate (a one-operand op ignores it).
  if (op.min_srcs >= 2) return {{in.alu, 1, 0.0, false}};
  return {{in.alu, -1, in.imms.empty() ? 0.0 : in.imms[0], in.reverse}};
}

Engine engine_of(const Instruction& in) { return in.engine == Engine::none ? info(in.opcode).engine : in.engine; }

void throw_no_tensor(int id) { throw std::out_of_range("the kernel has no tensor " + std::to_string(id)); }

int64_t TensorDecl::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t trip_count(int64_t lb, int64_t ub, int64_t stride) {
  if (stride > 0 ? ub <= lb : ub >= lb) return 0;
  // In uint64 the differences are exact: the span of two int64s fits, and so does |stride|.
  const uint64_t span = stride > 0 ? static_cast<uint64_t>(ub) - static_cast<uint64_t>(lb)
                                   : static_cast<uint64_t>(lb) - static_cast<uint64_t>(ub);
  const uint64_t step = stride > 0 ? static_cast<uint64_t>(stride) : 0 - static_cast<uint64_t>(stride);
  const uint64_t trips = (span - 1) / step + 1;
  return trips > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                             : static_cast<int64_t>(trips);
}

int64_t Kernel::num_programs() const {
  int64_t n = 1;
  for (int64_t g : grid) n *= g;
  return n;
}

}  // namespace nkic::ir
