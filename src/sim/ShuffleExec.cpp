#include "sim/ShuffleExec.h"

#include <cstddef>

#include "sim/Convert.h"
#include "sim/PointWalk.h"
#include "sim/Uninit.h"

namespace nkic::sim {

void run_shuffle(std::vector<TensorMem>& mem, const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  constexpr int64_t kQuadrant = 32, kKeep = 255;
  TensorMem& dst = mem.at(in.dst.tensor);
  const TensorMem& src = mem.at(in.srcs.at(0).tensor);
  ensure_filled(dst);
  const int64_t dst_rows = in.widths.at(0), src_rows = in.widths.at(1), width = in.shape.at(1);
  const ir::DType to = dst.decl->dtype, from = src.decl->dtype;
  const int size = ir::size_of(from);
  int64_t p = 0, j = 0;
  const ValueOf value_of = [&](ir::Var v) -> int64_t {
    switch (v.kind) {
      case ir::VarKind::Grid: return v.id == 0 ? p : j;
      case ir::VarKind::Loop: return loops[v.id];
      case ir::VarKind::ProgramId: return pids[v.id];
    }
    return 0;
  };
  // The source rows, as stored.
  std::vector<std::byte> rows(static_cast<size_t>(src_rows * width * size));
  std::vector<int64_t> read_at(static_cast<size_t>(src_rows * width));  // where each element came from
  for (p = 0; p < src_rows; ++p)
    for (j = 0; j < width; ++j) {
      read_at[p * width + j] = point_offset(mem, in, in.srcs[0], value_of);
      copy_elements(size, src.data, read_at[p * width + j], 1, rows.data(), p * width + j, 1, 1);
    }
  for (int64_t base = 0; base < in.shape[0]; base += kQuadrant)
    for (int64_t i = 0; i < kQuadrant && base + i < dst_rows; ++i) {
      const auto pick = static_cast<int64_t>(in.imms.at(i));
      const int64_t from_row = base + pick;
      if (pick == kKeep || from_row >= src_rows) continue;
      p = base + i;
      for (j = 0; j < width; ++j) {
        const int64_t off = point_offset(mem, in, in.dst, value_of), at = from_row * width + j;
        uninit::row_start();  // each element moves alone
        uninit::read(src, read_at[at]);
        if (to == from) {
          copy_elements(size, rows.data(), at, 1, dst.data, off, 1, 1);
        } else if (ir::is_float(from)) {
          float v;
          gather_float(from, rows.data(), at, 1, 1, &v);
          scatter_float(to, dst.data, off, 1, 1, &v);
        } else {
          int64_t v;
          gather_int(from, rows.data(), at, 1, 1, &v);
          scatter_int(to, dst.data, off, 1, 1, &v);
        }
        uninit::wrote(dst, off);
      }
    }
}

}  // namespace nkic::sim
