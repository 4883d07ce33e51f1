#include "sim/IndirectExec.h"

#include <stdexcept>

#include "sim/Numerics.h"
#include "sim/PointWalk.h"

namespace nkic::sim {

bool IndirectExec::handles(const ir::Instruction& in) {
  if (in.has_dst() && !in.dst.indirect.empty()) return true;
  for (const ir::Access& a : in.srcs)
    if (!a.indirect.empty()) return true;
  return false;
}

void IndirectExec::run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  if (ir::info(in.opcode).exec != ir::Exec::Move && ir::info(in.opcode).form != ir::Form::fill)
    throw std::invalid_argument(std::string("simulate: indirect indices on a ") + ir::name(in.opcode) +
                                " instruction (only load, store and copy take them)");
  TensorMem& dst = mem_.at(in.dst.tensor);
  ensure_filled(dst);
  ir::DType dt = dst.decl->dtype;
  for_each_point(in, loops, pids, [&](const ValueOf& value_of) {
    double v = in.imms.empty() ? 0.0 : in.imms[0];
    if (!in.srcs.empty()) {
      const TensorMem& src = mem_.at(in.srcs[0].tensor);
      const int64_t at = point_offset(mem_, in, in.srcs[0], value_of);
      if (at < 0) return;  // skipped out-of-bound read: dst keeps its value
      v = load_element(src.decl->dtype, src.data, at);
    }
    int64_t off = point_offset(mem_, in, in.dst, value_of);
    if (off < 0) return;  // skipped out-of-bound write
    if (in.accumulate) v = static_cast<float>(load_element(dt, dst.data, off)) + static_cast<float>(v);
    store_element(dt, dst.data, off, v);
    if (dst.tracked) dst.written.at(off) = 1;
  });
}

}  // namespace nkic::sim
