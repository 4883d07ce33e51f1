#include "sim/PointWalk.h"

#include "sim/Numerics.h"
#include "sim/Simulator.h"
#include "sim/Uninit.h"

namespace nkic::sim {

void point_indices(const std::vector<TensorMem>& mem, const ir::Instruction& in, const ir::Access& a,
                   const ValueOf& value_of, std::vector<int64_t>& idx) {
  idx.resize(a.index.size());
  for (size_t d = 0; d < a.index.size(); ++d) idx[d] = a.index[d].eval(value_of);
  for (const ir::IndirectIndex& ind : a.indirect) {
    const TensorMem& it = mem.at(ind.index.tensor);
    const int64_t at = point_offset(mem, in, ind.index, value_of);
    uninit::use(it, at, in.loc, "an address");
    idx[ind.dim] += ind.step * static_cast<int64_t>(load_element(it.decl->dtype, it.data, at));
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
                    const ValueOf& value_of) {
  const int64_t off = point_offset(mem, in, a, value_of);
  if (off >= 0) uninit::read(mem.at(a.tensor), off);
  return off;
}

}  // namespace nkic::sim
