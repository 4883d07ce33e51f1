#include "sim/ScalarExec.h"

#include <utility>

#include "sim/Convert.h"
#include "sim/PointWalk.h"
#include "sim/Simulator.h"
#include "sim/Uninit.h"

namespace nkic::sim {

void run_scalar(std::vector<TensorMem>& mem, const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  const std::vector<int64_t> point(in.shape.size(), 0);
  const ValueOf value_of = values_at(point, loops, pids);
  auto read = [&](const ir::Access& a) {
    const TensorMem& t = mem.at(a.tensor);
    const int64_t off = read_offset(mem, in, a, value_of);
    int64_t v = 0;
    gather_int(t.decl->dtype, t.data, off, 1, 1, &v);
    return v;
  };
  int64_t a = read(in.srcs.at(0));
  int64_t b = in.srcs.size() > 1 ? read(in.srcs[1]) : in.value.constant();
  if (in.reverse) std::swap(a, b);
  if ((in.alu == ir::AluOp::divide || in.alu == ir::AluOp::fmod) && b == 0)
    sim_error("err_scalar_division_by_zero",
              "scalar_alu " + std::string(ir::name(in.alu)) + " by a scalar holding 0", in.loc,
              "test the divisor with nl.if_else before dividing");
  TensorMem& dst = mem.at(in.dst.tensor);
  ensure_filled(dst);
  const int64_t off = point_offset(mem, in, in.dst, value_of);
  const int64_t v = ir::scalar_alu_value(in.alu, a, b, ir::size_of(dst.decl->dtype) * 8);
  scatter_int_wrapped(dst.decl->dtype, dst.data, off, 1, 1, &v);
  uninit::wrote(dst, off);
}

}  // namespace nkic::sim
