#include "ir/IR.h"

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

const char* name(Opcode op) {
  static const char* kNames[] = {
#define NKIC_OPCODE_NAME(n) #n,
      NKIC_OPCODES(NKIC_OPCODE_NAME)
#undef NKIC_OPCODE_NAME
  };
  return kNames[static_cast<int>(op)];
}

const char* name(AxisType t) { return t == AxisType::Affine ? "Affine" : "Sequential"; }

int64_t TensorDecl::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t Loop::tripcount() const {
  if (stride > 0) return ub > lb ? (ub - lb + stride - 1) / stride : 0;
  return lb > ub ? (lb - ub - stride - 1) / -stride : 0;
}

int64_t Kernel::num_programs() const {
  int64_t n = 1;
  for (int64_t g : grid) n *= g;
  return n;
}

}  // namespace nkic::ir
