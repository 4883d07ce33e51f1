// Fused elementwise pipelines: one instruction applying several ALU ops in turn
// (activation's scale, bias and function; tensor_scalar's op0 and op1). The
// running value stays in fp32 (or, for bitvec ops, in int64 bits of the data's
// format) between the steps and rounds once into the dst, as the engines do.
#include <algorithm>

#include "sim/Convert.h"
#include "sim/InstPlan.h"
#include "sim/TileExec.h"

namespace nkic::sim {

namespace {

// The operand slot of step j: step 0 reads beside the data (slot 1); later
// steps alternate so that each constant keeps its cached buffer across chunks.
int slot_of(size_t j) { return j % 2 == 0 ? 1 : 0; }

}  // namespace

void TileExecutor::fused_float_chunk(const InstPlan& p, int64_t m) {
  const float* v = float_operand(p, 0, m, 0);
  float* out = nullptr;
  for (size_t j = 0; j < p.steps.size(); ++j) {
    const InstPlan::Step& s = p.steps[j];
    out = fuse_[j % 2].data();
    if (s.operand < 0) {
      eval_unary(s.op, v, out, m);
    } else {
      const float* o = float_operand(p, s.operand, m, slot_of(j));
      eval_binary(s.op, s.reverse ? o : v, s.reverse ? v : o, out, m);
    }
    v = out;
  }
  const ir::DType dt = p.accesses[0].dtype;
  if (p.accumulate) {
    gather_float(dt, data_[0], off_[0], step_[0], m, fbuf_[3].data());
    sim::accumulate(fbuf_[3].data(), out, m);
  }
  scatter_float(dt, data_[0], off_[0], step_[0], m, out);
}

void TileExecutor::fused_int_chunk(const InstPlan& p, int64_t m) {
  const int64_t* v = int_operand(p, 0, m, 0);
  int64_t* out = nullptr;
  for (size_t j = 0; j < p.steps.size(); ++j) {
    const InstPlan::Step& s = p.steps[j];
    out = ifuse_[j % 2].data();
    if (s.operand < 0) {
      eval_unary_int(s.op, v, out, m, p.format);
    } else {
      const int64_t* o = int_operand(p, s.operand, m, slot_of(j));
      eval_binary_int(s.op, s.reverse ? o : v, s.reverse ? v : o, out, m, p.format);
    }
    v = out;
  }
  const ir::DType dt = p.accesses[0].dtype;
  if (p.accumulate) {
    gather_int(dt, data_[0], off_[0], step_[0], m, ibuf_[3].data());
    accumulate_int(ibuf_[3].data(), out, m);
  }
  scatter_int(dt, data_[0], off_[0], step_[0], m, out);
}

}  // namespace nkic::sim
