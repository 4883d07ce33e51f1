// Elementwise instructions: one result per point, computed a chunk of points
// at a time in contiguous fp32 or int64 buffers.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>

#include "sim/Convert.h"
#include "sim/InstPlan.h"
#include "sim/TileExec.h"

namespace nkic::sim {

using ir::DType;
using AccessPlan = InstPlan::Access;
using Choice = InstPlan::Choice;
using Operand = InstPlan::Operand;
using Path = InstPlan::Path;

namespace {

// Truncated toward zero, NaN -> 0, saturated: a float value as an int64.
int64_t to_int64(double v) {
  if (v != v) return 0;
  if (v >= 0x1p63) return INT64_MAX;
  if (v <= -0x1p63) return INT64_MIN;
  return static_cast<int64_t>(std::trunc(v));
}

bool overlaps(const TensorMem& a, const TensorMem& b) {
  const auto bytes = [](const TensorMem& t) {
    return t.decl->num_elements() * ir::size_of(t.decl->dtype);
  };
  return a.data < b.data + bytes(b) && b.data < a.data + bytes(a);
}

template <class T>
void pick(const uint8_t* __restrict choose_a, const T* a, const T* b, T* __restrict out,
          int64_t m) {
  for (int64_t i = 0; i < m; ++i) out[i] = choose_a[i] ? a[i] : b[i];
}


// A copy into HBM tensors this large streams past the cache: the lines would
// be evicted before anything reads them again.
constexpr int64_t kStreamTensorBytes = int64_t{16} << 20;
constexpr int64_t kStreamRowBytes = 1024;

// Requests the cache lines of [p, p + bytes).
void prefetch(const std::byte* p, int64_t bytes) {
  for (int64_t i = 0; i < bytes; i += 64) __builtin_prefetch(p + i);
}

}  // namespace

void TileExecutor::run_elementwise(const InstPlan& p) {
  bind_data(p);
  if (p.path == Path::Move && transposing_copy(p)) return;
  const int forms = static_cast<int>(step_.size());
  const TensorMem& dst = mem_[p.accesses[0].tensor];
  const int64_t elem = ir::size_of(p.accesses[0].dtype);
  // Only a move has a source (accesses[1]); fills, iota and the rest write dst alone.
  const bool move = p.path == Path::Move && p.accesses.size() > 1;
  const bool stream = move && ir::is_hbm(dst.decl->memory) && step_[0] == 1 && step_[1] == 1 &&
                      p.accesses[1].dtype == p.accesses[0].dtype && !p.accumulate &&
                      dst.decl->num_elements() * elem >= kStreamTensorBytes;
  bool streamed = false;
  // The rows of a tile in HBM are short runs far apart, each a new stream to the
  // hardware prefetcher: while one row copies, the next (at the step between the
  // last two) is requested.
  const bool ahead = move && ir::is_hbm(mem_[p.accesses[1].tensor].decl->memory) && step_[1] == 1;
  const int64_t src_elem = ahead ? ir::size_of(p.accesses[1].dtype) : 0;
  int64_t last = -1;
  space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
    if (ahead) {
      const int64_t first = start[1] + a;
      if (last >= 0) prefetch(data_[1] + (2 * first - last) * src_elem, (b - a) * src_elem);
      last = first;
    }
    if (stream && (b - a) * elem >= kStreamRowBytes &&
        stream_copy(data_[0] + (start[0] + a) * elem, data_[1] + (start[1] + a) * elem, (b - a) * elem)) {
      streamed = true;
      return;
    }
    for (int64_t j = a; j < b; j += kChunk) {
      for (int e = 0; e < forms; ++e) off_[e] = start[e] + j * step_[e];
      run_chunk(p, std::min(kChunk, b - j));
    }
  });
  if (streamed) stream_fence();
}

// A same-dtype copy of a 2-D box where one access steps across lines along each
// row and along the line between rows: nc_transpose, or a load of a tensor's
// columns. It copies in blocks (sim/Convert.h).
bool TileExecutor::transposing_copy(const InstPlan& p) {
  if (p.accesses[0].dtype != p.accesses[1].dtype || p.accumulate || space_.rank() != 2 || space_.has_conds() ||
      step_.size() != 2)
    return false;
  const int64_t srow = space_.step(1, 0), scol = space_.step(1, 1), drow = space_.step(0, 0), dcol = space_.step(0, 1);
  const int64_t rows = space_.extent(0), cols = space_.extent(1);
  const auto unit = [](int64_t s) { return s == 1 || s == -1; };
  if (!(unit(srow) && !unit(scol)) && !(unit(drow) && !unit(dcol))) return false;
  // Blocks reorder the writes: only a dst that no two points share may take them.
  const int64_t dr = std::abs(drow), dc = std::abs(dcol);
  if (dr == 0 || dc == 0 || (dc * cols > dr && dr * rows > dc)) return false;
  copy_blocked(static_cast<int>(ir::size_of(p.accesses[0].dtype)), data_[1], space_.start(1), srow, scol, data_[0],
               space_.start(0), drow, dcol, rows, cols);
  return true;
}

// An operand whose memory overlaps the dst's (the same tensor, or bindings that
// share memory) could see values this instruction already wrote. The hardware
// reads a tile before writing it, so unless the operand reads exactly the points
// it writes, it reads a copy taken before the instruction. Either way results
// go through a buffer, never straight into the dst.
void TileExecutor::bind_data(const InstPlan& p) {
  const int n = static_cast<int>(p.accesses.size());
  bind_direct(p);
  if (static_cast<int>(snapshot_.size()) < n) snapshot_.resize(n);
  const AccessPlan& dst = p.accesses[0];
  const TensorMem& dst_mem = mem_[dst.tensor];
  dst_direct_ = true;
  for (int e : p.reads) {
    if (e == 0) continue;
    const AccessPlan& a = p.accesses[e];
    const TensorMem& t = mem_[a.tensor];
    if (!overlaps(t, dst_mem)) continue;
    dst_direct_ = false;
    if (a.tensor == dst.tensor && bases_[e] == bases_[0] && a.flat.grid == dst.flat.grid) continue;
    snapshot_[e].assign(t.data, t.data + t.decl->num_elements() * ir::size_of(t.decl->dtype));
    data_[e] = snapshot_[e].data();
  }
}

void TileExecutor::run_chunk(const InstPlan& p, int64_t m) {
  switch (p.path) {
    case Path::Move: move_chunk(p, m); break;
    case Path::Fill: {
      const AccessPlan& dst = p.accesses[0];
      fill_elements(ir::size_of(dst.dtype), p.fill.data(), data_[0], off_[0], step_[0], m);
      break;
    }
    case Path::Float: p.steps.empty() ? float_chunk(p, m) : fused_float_chunk(p, m); break;
    case Path::Int: p.steps.empty() ? int_chunk(p, m) : fused_int_chunk(p, m); break;
  }
}

void TileExecutor::move_chunk(const InstPlan& p, int64_t m) {
  const DType to = p.accesses[0].dtype, from = p.accesses[1].dtype;
  if (to == from) {
    copy_elements(ir::size_of(to), data_[1], off_[1], step_[1], data_[0], off_[0], step_[0], m);
  } else if (ir::is_float(from)) {
    gather_float(from, data_[1], off_[1], step_[1], m, fbuf_[0].data());
    scatter_float(to, data_[0], off_[0], step_[0], m, fbuf_[0].data());
  } else {
    gather_int(from, data_[1], off_[1], step_[1], m, ibuf_[0].data());
    const bool same_width = ir::is_integer(to) && ir::size_of(to) == ir::size_of(from);
    (p.dma && same_width ? scatter_int_wrapped : scatter_int)(to, data_[0], off_[0], step_[0], m, ibuf_[0].data());
  }
}

// Operand `k` of the chunk as fp32 values (form values round once to fp32).
const float* TileExecutor::float_operand(const InstPlan& p, int k, int64_t m, int slot) {
  const Operand& o = p.operands[k];
  k = slot < 0 ? k : slot;
  if (o.form >= 0) {
    const int f = static_cast<int>(p.accesses.size()) + o.form;
    float* out = fbuf_[k].data();
    for (int64_t i = 0; i < m; ++i) out[i] = static_cast<float>(off_[f] + i * step_[f]);
    return out;
  }
  if (o.access < 0) return const_floats(k, static_cast<float>(o.constant), m);
  const int e = o.access;
  const DType t = p.accesses[e].dtype;
  if (t == DType::float32 && step_[e] == 1)
    return reinterpret_cast<const float*>(data_[e]) + off_[e];
  gather_float(t, data_[e], off_[e], step_[e], m, fbuf_[k].data());
  return fbuf_[k].data();
}

const int64_t* TileExecutor::int_operand(const InstPlan& p, int k, int64_t m, int slot) {
  const Operand& o = p.operands[k];
  k = slot < 0 ? k : slot;
  if (o.form >= 0) {
    const int f = static_cast<int>(p.accesses.size()) + o.form;
    int64_t* out = ibuf_[k].data();
    for (int64_t i = 0; i < m; ++i) out[i] = off_[f] + i * step_[f];
    return out;
  }
  if (o.access < 0) return const_ints(k, to_int64(o.constant), m);
  const int e = o.access;
  gather_int(p.accesses[e].dtype, data_[e], off_[e], step_[e], m, ibuf_[k].data());
  return ibuf_[k].data();
}

// Per point: 1 where the choice picks operands[0]. A tensor choice is any
// nonzero (or NaN) element, as logical ops read truth (a reversed one: a zero
// element); a condition choice needs
// every constraint to hold.
const uint8_t* TileExecutor::choice_mask(const InstPlan& p, int64_t m) {
  uint8_t* mask = mask_.data();
  if (p.choice == Choice::Tensor || p.choice == Choice::TensorZero) {
    gather_float(p.accesses[1].dtype, data_[1], off_[1], step_[1], m, cbuf_.data());
    const float* c = cbuf_.data();
    const bool zero = p.choice == Choice::TensorZero;
    for (int64_t i = 0; i < m; ++i) mask[i] = (c[i] != 0.0f) != zero;
    return mask;
  }
  std::fill_n(mask, m, uint8_t{1});
  const int first = static_cast<int>(p.accesses.size());
  if (p.choice == Choice::Range) {
    // The position in fp32 (exact below 2^24), each comparison in fp32 as a tensor_tensor's.
    float* pos = cbuf_.data();
    for (int64_t i = 0; i < m; ++i) pos[i] = static_cast<float>(off_[first] + i * step_[first]);
    float* cmp = fuse_[0].data();
    for (size_t k = 0; k < 2; ++k) {
      const InstPlan::Operand& o = p.range_bounds[k];
      if (o.access >= 0) gather_float(p.accesses[o.access].dtype, data_[o.access], off_[o.access], step_[o.access], m, cmp);
      else std::fill_n(cmp, m, static_cast<float>(o.constant));
      eval_binary(p.range_ops[k], pos, cmp, cmp, m);
      for (int64_t i = 0; i < m; ++i) mask[i] &= cmp[i] != 0.0f;
    }
    return mask;
  }
  for (size_t c = 0; c < p.cond_kinds.size(); ++c) {
    const int64_t v = off_[first + c], s = step_[first + c];
    if (p.cond_kinds[c] == ir::CmpKind::Ge) {
      for (int64_t i = 0; i < m; ++i) mask[i] &= v + i * s >= 0;
    } else {
      for (int64_t i = 0; i < m; ++i) mask[i] &= v + i * s == 0;
    }
  }
  return mask;
}

// out = a where the choice holds, else b. A condition choice holds on one run
// of the chunk (its constraints are affine along the row): three plain copies.
template <class T>
void TileExecutor::pick_chunk(const InstPlan& p, const T* a, const T* b, T* out, int64_t m) {
  if (p.choice != Choice::Cond) return pick(choice_mask(p, m), a, b, out, m);
  int64_t lo = 0, hi = m;
  const int first = static_cast<int>(p.accesses.size());
  for (size_t c = 0; c < p.cond_kinds.size() && lo < hi; ++c) {
    const int64_t v = off_[first + c], s = step_[first + c];
    if (s == 0) {
      if (!holds(p.cond_kinds[c], v)) hi = lo;
    } else {
      clamp_range(s, v, p.cond_kinds[c], lo, hi);
    }
  }
  // An equality past the chunk's end moves lo there: the kept run is empty, not beyond m.
  lo = std::min(lo, m);
  hi = std::max(lo, std::min(hi, m));
  std::copy(b, b + lo, out);
  std::copy(a + lo, a + hi, out + lo);
  std::copy(b + hi, b + m, out + hi);
}

void TileExecutor::float_chunk(const InstPlan& p, int64_t m) {
  const float* args[2] = {};
  for (size_t k = 0; k < p.operands.size(); ++k) args[k] = float_operand(p, static_cast<int>(k), m);
  const DType dt = p.accesses[0].dtype;
  const bool direct = dt == DType::float32 && step_[0] == 1 && !p.accumulate && dst_direct_;
  float* out = direct ? reinterpret_cast<float*>(data_[0]) + off_[0] : fbuf_[2].data();
  if (p.choice != Choice::None)
    pick_chunk(p, args[0], args[1], out, m);
  else if (p.operands.size() == 1)
    eval_unary(p.op, args[0], out, m);
  else
    eval_binary(p.op, args[0], args[1], out, m);
  if (p.accumulate) {
    gather_float(dt, data_[0], off_[0], step_[0], m, fbuf_[3].data());
    sim::accumulate(fbuf_[3].data(), out, m);
  }
  if (!direct) scatter_float(dt, data_[0], off_[0], step_[0], m, out);
}

void TileExecutor::int_chunk(const InstPlan& p, int64_t m) {
  const int64_t* args[2] = {};
  for (size_t k = 0; k < p.operands.size(); ++k) args[k] = int_operand(p, static_cast<int>(k), m);
  int64_t* out = ibuf_[2].data();
  if (p.choice != Choice::None)
    pick_chunk(p, args[0], args[1], out, m);
  else if (p.operands.size() == 1)
    eval_unary_int(p.op, args[0], out, m, p.format);
  else
    eval_binary_int(p.op, args[0], args[1], out, m, p.format);
  const DType dt = p.accesses[0].dtype;
  if (p.accumulate) {
    gather_int(dt, data_[0], off_[0], step_[0], m, ibuf_[3].data());
    accumulate_int(ibuf_[3].data(), out, m);
  }
  scatter_int(dt, data_[0], off_[0], step_[0], m, out);
}

const float* TileExecutor::const_floats(int slot, float v, int64_t m) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  if (bits != fconst_bits_[slot] || fconst_len_[slot] < m) {
    std::fill_n(fconst_[slot].data(), m, v);
    fconst_bits_[slot] = bits;
    fconst_len_[slot] = m;
  }
  return fconst_[slot].data();
}

const int64_t* TileExecutor::const_ints(int slot, int64_t v, int64_t m) {
  if (v != iconst_val_[slot] || iconst_len_[slot] < m) {
    std::fill_n(iconst_[slot].data(), m, v);
    iconst_val_[slot] = v;
    iconst_len_[slot] = m;
  }
  return iconst_[slot].data();
}

}  // namespace nkic::sim
