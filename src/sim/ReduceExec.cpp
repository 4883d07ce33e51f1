// TensorReduce: folds src0 over the Grid coords its dst index omits. Every dst
// element folds its points' values in row-major iteration order, sequentially
// (the hardware accumulates in fp32 in that order), starting from the first
// value, or from the dst's value under `accumulate`; `negate` then negates the
// fold. Each element rounds once, on store; an element no executed point maps
// to stays untouched.
#include <algorithm>

#include "sim/Convert.h"
#include "sim/Folds.h"
#include "sim/InstPlan.h"
#include "sim/TileExec.h"

namespace nkic::sim {

using ir::AluOp;
using Path = InstPlan::Path;

namespace {

// Folds x[0..m) into acc[at + j*step]. seen[] marks slots holding a partial
// fold; an unseen slot starts from its first value, or from the preloaded dst
// value when `from_dst`.
template <class T, class F>
void fold(const T* x, int64_t m, T* acc, uint8_t* seen, int64_t at, int64_t step, bool from_dst,
          F f) {
  if (step == 0) {
    int64_t j = 0;
    T a = acc[at];
    if (!seen[at] && !from_dst) a = x[j++];
    seen[at] = 1;
    for (; j < m; ++j) a = f(a, x[j]);
    acc[at] = a;
    return;
  }
  for (int64_t j = 0; j < m; ++j, at += step) {
    if (!seen[at]) {
      seen[at] = 1;
      if (!from_dst) {
        acc[at] = x[j];
        continue;
      }
    }
    acc[at] = f(acc[at], x[j]);
  }
}

// Rows that each fold into one slot (a dst omitting the row's coord), folded
// kLanes at a time with one accumulator per row: the rows' chains of dependent
// operations interleave, and each row still folds its values in order.
constexpr int kLanes = 8;
struct LaneRow {
  int64_t slot, src;
};

// Folds rows[0..n) (each m values of x_rows[r], laid out [j][r] in t) into acc.
template <class T, class F>
void fold_lanes(const LaneRow* rows, int n, const T* t, int64_t m, T* acc, uint8_t* seen,
                bool from_dst, F f) {
  T a[kLanes] = {};
  for (int r = 0; r < n; ++r) {
    const int64_t at = rows[r].slot;
    a[r] = !seen[at] && !from_dst ? t[r] : f(acc[at], t[r]);
    seen[at] = 1;
  }
  for (int64_t j = 1; j < m; ++j) {
    const T* x = t + j * kLanes;
    for (int r = 0; r < kLanes; ++r) a[r] = f(a[r], x[r]);
  }
  for (int r = 0; r < n; ++r) acc[rows[r].slot] = a[r];
}

}  // namespace

template <class T>
void TileExecutor::fold_rows(const InstPlan& p, T* acc, int64_t first_slot) {
  constexpr bool is_float = std::is_same_v<T, float>;
  const ir::DType st = p.accesses[1].dtype;
  T* x;
  if constexpr (is_float) {
    x = fbuf_[0].data();
  } else {
    x = ibuf_[0].data();
  }
  const bool truth = logical_fold(p.op);
  uint8_t* seen = rseen_.data();
  with_fold<T>(p.op, [&](auto f) {
    // Float rows of one length folding into distinct slots wait in `lanes`.
    LaneRow lanes[kLanes];
    int pending = 0;
    int64_t lane_len = 0;
    auto flush = [&] {
      if constexpr (is_float) {
        if (pending == 0) return;
        float* t = lane_buf_.data();
        for (int64_t j = 0; j < lane_len; j += kChunk) {
          const int64_t m = std::min(kChunk, lane_len - j);
          for (int r = 0; r < pending; ++r) {
            gather_float(st, data_[1], lanes[r].src + j * step_[1], step_[1], m, x);
            if (truth) to_truth(x, m);
            for (int64_t i = 0; i < m; ++i) t[i * kLanes + r] = x[i];
          }
          for (int r = pending; r < kLanes; ++r)
            for (int64_t i = 0; i < m; ++i) t[i * kLanes + r] = 0.0f;
          fold_lanes(lanes, pending, t, m, acc, seen, p.accumulate, f);
        }
        pending = 0;
      }
    };
    space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
      if (is_float && step_[0] == 0 && b - a > 1) {
        const int64_t slot = start[0] - first_slot;
        bool clash = pending > 0 && b - a != lane_len;
        for (int r = 0; r < pending; ++r) clash |= lanes[r].slot == slot;
        if (clash) flush();
        lane_len = b - a;
        lanes[pending++] = {slot, start[1] + a * step_[1]};
        if (pending == kLanes) flush();
        return;
      }
      flush();
      for (int64_t j = a; j < b; j += kChunk) {
        const int64_t m = std::min(kChunk, b - j);
        if constexpr (is_float) {
          gather_float(st, data_[1], start[1] + j * step_[1], step_[1], m, x);
        } else {
          gather_int(st, data_[1], start[1] + j * step_[1], step_[1], m, x);
        }
        if (truth) to_truth(x, m);
        fold(x, m, acc, seen, start[0] + j * step_[0] - first_slot, step_[0], p.accumulate, f);
      }
    });
    flush();
  });
}

void TileExecutor::run_reduce(const InstPlan& p) {
  bind_direct(p);
  const InstPlan::Access& dst = p.accesses[0];
  const int64_t numel = mem_[dst.tensor].decl->num_elements();
  // One accumulator slot per dst offset the box can reach (every executed point
  // is in bounds, so the tensor's extent clips the corners' range).
  int64_t mn = bases_[0], mx = bases_[0];
  for (size_t k = 0; k < lo_.size(); ++k) {
    const int64_t c = dst.flat.grid[k];
    mn += c * (c > 0 ? lo_[k] : hi_[k] - 1);
    mx += c * (c > 0 ? hi_[k] - 1 : lo_[k]);
  }
  mn = std::max<int64_t>(mn, 0);
  mx = std::min(mx, numel - 1);
  const int64_t slots = mx - mn + 1;
  rseen_.assign(slots, 0);
  const uint8_t* seen = rseen_.data();
  const bool truth = logical_fold(p.op);

  // Stores each run of folded slots, rounding once to the dst format.
  auto store_runs = [&](auto scatter, auto* acc) {
    for (int64_t i = 0; i < slots;) {
      if (!seen[i]) {
        ++i;
        continue;
      }
      int64_t j = i;
      while (j < slots && seen[j]) ++j;
      scatter(dst.dtype, data_[0], mn + i, 1, j - i, acc + i);
      i = j;
    }
  };

  if (p.path == Path::Int) {
    riacc_.resize(slots);
    int64_t* acc = riacc_.data();
    if (p.accumulate) {
      gather_int(dst.dtype, data_[0], mn, 1, slots, acc);
      if (truth) to_truth(acc, slots);
    }
    fold_rows(p, acc, mn);
    if (p.negate)
      for (int64_t i = 0; i < slots; ++i) acc[i] = seen[i] ? -acc[i] : 0;
    store_runs(scatter_int, acc);
    return;
  }
  racc_.resize(slots);
  float* acc = racc_.data();
  if (p.accumulate) {
    gather_float(dst.dtype, data_[0], mn, 1, slots, acc);
    if (truth) to_truth(acc, slots);
  }
  fold_rows(p, acc, mn);
  if (p.negate)
    for (int64_t i = 0; i < slots; ++i) acc[i] = -acc[i];
  if (p.scale != 1.0)
    for (int64_t i = 0; i < slots; ++i) acc[i] *= static_cast<float>(p.scale);
  store_runs(scatter_float, acc);
}

}  // namespace nkic::sim
