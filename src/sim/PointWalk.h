// Point-by-point execution helpers for the rare instructions that do not go
// through the planned tile kernels (side effects, indirect accesses).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

using ValueOf = std::function<int64_t(ir::Var)>;

// The variables' values at `point` (the Grid coords, read when called) of an
// instruction running with these loop and program ids.
inline ValueOf values_at(const std::vector<int64_t>& point, const int64_t* loops, const int64_t* pids) {
  return [&point, loops, pids](ir::Var v) -> int64_t {
    switch (v.kind) {
      case ir::VarKind::Grid: return point[v.id];
      case ir::VarKind::Loop: return loops[v.id];
      case ir::VarKind::ProgramId: return pids[v.id];
    }
    return 0;
  };
}

// Calls f(value_of) for every point of the iteration space the predicate keeps, row-major.
template <class F>
void for_each_point(const ir::Instruction& in, const int64_t* loops, const int64_t* pids, F f) {
  std::vector<int64_t> point(in.shape.size(), 0);
  ValueOf value_of = values_at(point, loops, pids);
  while (true) {
    bool keep = true;
    for (const ir::Constraint& c : in.predicate) keep = keep && c.holds(c.expr.eval(value_of));
    if (keep) f(value_of);
    size_t d = point.size();
    while (d > 0 && ++point[d - 1] == in.shape[d - 1]) point[--d] = 0;
    if (d == 0) return;
  }
}

// The index `a` touches at a point in each dim of its tensor, reading indirect index
// values from their tiles (an uninitialized index is an error under the check);
// not checked against the tensor's bounds.
void point_indices(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                   const ValueOf& value_of, std::vector<int64_t>& idx);

// The element offset `a` touches at a point, reading indirect index values from
// their tiles; outside the tensor it raises err_tensor_access_out_of_bound (sim_error),
// or returns -1 when the instruction skips out-of-bound points (oob_mode.skip).
int64_t point_offset(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                     const ValueOf& value_of);

// point_offset for a read of data: under the uninitialized-value check, what the
// instruction computes from an unwritten or poisoned element is poisoned (sim/Uninit.h).
int64_t read_offset(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                    const ValueOf& value_of);

}  // namespace nkic::sim
