#include "sim/MxExec.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "sim/MxNumerics.h"
#include "sim/Numerics.h"
#include "sim/PointWalk.h"
#include "sim/Uninit.h"

namespace nkic::sim {

namespace {

constexpr int kLane = 3;  // the grid coordinate of the lane in every mx space

const std::byte* element(const TensorMem& t, int64_t off) { return t.data + off * ir::size_of(t.decl->dtype); }

// A scale tile (uint8 or float8_e8m0fnu, one byte) holds the E8M0 code itself.
void write_scale(TensorMem& t, int64_t off, uint8_t s) {
  t.data[off] = static_cast<std::byte>(s);
  uninit::wrote(t, off);
}

uint8_t read_scale(const TensorMem& t, int64_t off) { return static_cast<uint8_t>(t.data[off]); }

}  // namespace

void MxExec::run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  ensure_filled(mem_.at(in.dst.tensor));
  for (const ir::Access& a : in.srcs) ensure_filled(mem_.at(a.tensor));
  switch (in.opcode) {
    case ir::Opcode::MxScale: return scale(in, loops, pids);
    case ir::Opcode::MxQuantize: return quantize(in, loops, pids);
    default: return matmul(in, loops, pids);
  }
}

int64_t MxExec::read_at(const ir::Instruction& in, const ir::Access& a,
                        const ValueOf& value_of) {
  return read_offset(mem_, in, a, value_of);
}

// The block's largest magnitude, then its scale: a fold over the points that share a dst element.
void MxExec::scale(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  TensorMem& dst = mem_.at(in.dst.tensor);
  const TensorMem& src = mem_.at(in.srcs[0].tensor);
  std::unordered_map<int64_t, float> amax;
  std::vector<int64_t> order;
  for_each_point(in, loops, pids, [&](const ValueOf& value_of) {
    const float v = std::fabs(static_cast<float>(load_element(src.decl->dtype, src.data, read_at(in, in.srcs[0], value_of))));
    auto [it, fresh] = amax.try_emplace(point_offset(mem_, in, in.dst, value_of), v);
    if (fresh) order.push_back(it->first);
    else it->second = std::isnan(it->second) || std::isnan(v) ? NAN : std::max(it->second, v);
  });
  const int emax = static_cast<int>(in.imms.at(0)), bias = static_cast<int>(in.imms.at(1));
  for (int64_t off : order) write_scale(dst, off, mx_block_scale(emax, bias, amax[off]));
}

void MxExec::quantize(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  TensorMem& dst = mem_.at(in.dst.tensor);
  const TensorMem& src = mem_.at(in.srcs[0].tensor);
  const TensorMem& sc = mem_.at(in.srcs[1].tensor);
  for_each_point(in, loops, pids, [&](const ValueOf& value_of) {
    uninit::row_start();  // each point quantizes its own value
    const float v = static_cast<float>(load_element(src.decl->dtype, src.data, read_at(in, in.srcs[0], value_of)));
    const uint8_t s = read_scale(sc, read_at(in, in.srcs[1], value_of));
    const int64_t off = point_offset(mem_, in, in.dst, value_of);
    const float q = s == 255 ? NAN : std::ldexp(v, 127 - s);
    mx_lane_store(dst.decl->dtype, dst.data + off * ir::size_of(dst.decl->dtype), static_cast<int>(value_of({ir::VarKind::Grid, kLane})), q);
    uninit::wrote(dst, off);
  });
}

// Dequantizes both operands into [K*4, M] and [K*4, N] panels, then one fp32
// product per dst element, written to dst or, under `accumulate`, added to it
// (PSUM: an element never written in this instance starts an accumulation
// group at zero). The
// predicate can only restrict M and N: the builder masks no contraction.
void MxExec::matmul(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  const int64_t rows = in.shape[0] * 4 * 8 * 4, m = in.shape[4], n = in.shape[5];
  std::vector<int64_t> point(6, 0);
  ValueOf value_of = [&](ir::Var v) -> int64_t {
    return v.kind == ir::VarKind::Grid ? point[v.id] : v.kind == ir::VarKind::Loop ? loops[v.id] : pids[v.id];
  };
  auto panel = [&](int data, int cols, int col_dim) {
    const TensorMem& t = mem_.at(in.srcs[data].tensor);
    const TensorMem& sc = mem_.at(in.srcs[data + 2].tensor);
    std::vector<float> out(rows * cols);
    point.assign(6, 0);
    for (int64_t r = 0; r < rows; ++r) {
      point[0] = r / 128, point[1] = r / 32 % 4, point[2] = r / 4 % 8, point[kLane] = r % 4;
      for (int64_t c = 0; c < cols; ++c) {
        point[col_dim] = c;
        const float v = mx_lane_load(t.decl->dtype, element(t, read_at(in, in.srcs[data], value_of)),
                                     static_cast<int>(point[kLane]));
        const uint8_t s = read_scale(sc, read_at(in, in.srcs[data + 2], value_of));
        out[r * cols + c] = v * e8m0_to_float(s);
      }
    }
    point[col_dim] = 0;
    return out;
  };
  const std::vector<float> st = panel(0, m, 4), mv = panel(1, n, 5);
  TensorMem& dst = mem_.at(in.dst.tensor);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      point.assign(6, 0);
      point[4] = i, point[5] = j;
      bool keep = true;
      for (const ir::Constraint& c : in.predicate) keep = keep && c.holds(c.expr.eval(value_of));
      if (!keep) continue;
      float acc = 0.0f;
      for (int64_t r = 0; r < rows; ++r) acc += st[r * m + i] * mv[r * n + j];
      const int64_t off = point_offset(mem_, in, in.dst, value_of);
      const bool starts = !in.accumulate || (dst.accumulator && !dst.written[off]);
      const float prior = starts ? 0.0f : static_cast<float>(load_element(dst.decl->dtype, dst.data, off));
      store_element(dst.decl->dtype, dst.data, off, prior + acc);
      uninit::wrote(dst, off);
    }
  }
}

}  // namespace nkic::sim
