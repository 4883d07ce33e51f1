#include "sim/PointWalk.h"

#include "sim/Numerics.h"
#include "sim/Simulator.h"

namespace nkic::sim {

void point_indices(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                   const ValueOf& value_of, std::vector<int64_t>& idx) {
  idx.resize(a.index.size());
  for (size_t d = 0; d < a.index.size(); ++d) idx[d] = a.index[d].eval(value_of);
  for (const ir::IndirectIndex& ind : a.indirect) {
    const TensorMem& it = mem.at(ind.index.tensor);
    idx[ind.dim] +=
        ind.step * static_cast<int64_t>(load_element(it.decl->dtype, it.data, point_offset(mem, in, ind.index, value_of)));
  }
}

int64_t point_offset(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                     const ValueOf& value_of) {
  const TensorMem& t = mem.at(a.tensor);
  std::vector<int64_t> idx;
  point_indices(mem, in, a, value_of, idx);
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    if ((idx[d] < 0 || idx[d] >= t.decl->shape[d]) && in.oob_skip) return -1;
    if (idx[d] < 0 || idx[d] >= t.decl->shape[d])
      sim_error("err_tensor_access_out_of_bound",
                "Out-of-bound access for tensor `" + t.decl->name + "` on dimension " + std::to_string(d) +
                    ": index " + std::to_string(idx[d]) + " exceed dimension size of " +
                    std::to_string(t.decl->shape[d]),
                in.loc, "", ir::ErrorKind::Index);
    off += idx[d] * t.strides[d];
  }
  return off;
}

int64_t read_offset(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                    const ValueOf& value_of, bool check_uninitialized) {
  const TensorMem& t = mem.at(a.tensor);
  const int64_t off = point_offset(mem, in, a, value_of);
  if (check_uninitialized && off >= 0 && t.tracked && !t.written[off])
    sim_error("err_read_uninitialized_memory",
                   "Read of uninitialized memory: element " + element_str(t, off) + " of tensor `" + t.decl->name +
                       "` was never written in this program instance",
                   in.loc);
  return off;
}

}  // namespace nkic::sim
