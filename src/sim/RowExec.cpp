#include "sim/RowExec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/AluEval.h"
#include "sim/Convert.h"
#include "sim/Numerics.h"
#include "sim/Uninit.h"

namespace nkic::sim {

using ir::AluOp;

namespace {

float alu(AluOp op, float a, float b) {
  float out;
  eval_binary(op, &a, &b, &out, 1);
  return out;
}

// The folds of tensor_reduce (sim/ReduceExec): sequential, NaN-propagating max.
float fold_max(float a, float b) { return (a != a || a > b) ? a : b; }

// What an unmatched slot of the top-8 instructions holds: 2^32 in fp32, which
// the saturating conversion turns into the all-ones index of an unsigned result.
constexpr float kNotFound = 4294967296.0f;

}  // namespace

// The instruction's accesses (dst, extra_dsts, srcs) walked one partition at a
// time: Grid coord 0 is the partition, coord 1 the position along the access.
struct RowExec::Rows {
  RowExec& ex;
  const ir::Instruction& in;
  const int64_t* loops;
  const int64_t* pids;
  std::vector<const ir::Access*> acc;
  int64_t p = 0, j = 0;
  ValueOf value_of;

  Rows(RowExec& e, const ir::Instruction& i, const int64_t* l, const int64_t* d) : ex(e), in(i), loops(l), pids(d) {
    acc.push_back(&in.dst);
    for (const ir::Access& a : in.extra_dsts) acc.push_back(&a);
    for (const ir::Access& a : in.srcs) acc.push_back(&a);
    value_of = [this](ir::Var v) -> int64_t {
      switch (v.kind) {
        case ir::VarKind::Grid: return v.id == 0 ? p : j;
        case ir::VarKind::Loop: return loops[v.id];
        case ir::VarKind::ProgramId: return pids[v.id];
      }
      return 0;
    };
  }
  int64_t partitions() const { return in.shape[0]; }
  int64_t width(size_t e) const { return in.widths[e]; }
  size_t src(size_t k) const { return 1 + in.extra_dsts.size() + k; }
  // Whether the predicate keeps position `at` of partition p (in the data's space).
  bool keep(int64_t at) {
    j = at;
    for (const ir::Constraint& c : in.predicate)
      if (!c.holds(c.expr.eval(value_of))) return false;
    return true;
  }
  bool keeps_row() {
    for (int64_t at = 0; at < width(src(0)); ++at)
      if (keep(at)) return true;
    return false;
  }
  // Row p of access e as one strided run (first element, step) when its index
  // is affine, direct, and in bounds at both ends (so everywhere in between);
  // otherwise the element-wise walk handles it, and reports what is out of bounds.
  bool run_of(size_t e, int64_t& first, int64_t& step) {
    const ir::Access& a = *acc[e];
    const TensorMem& t = ex.mem_.at(a.tensor);
    if (!a.indirect.empty()) return false;
    first = step = 0;
    for (size_t d = 0; d < a.index.size(); ++d) {
      if (!a.index[d].is_affine()) return false;
      j = 0;
      const int64_t lo = a.index[d].eval(value_of);
      j = width(e) - 1;
      const int64_t hi = a.index[d].eval(value_of);
      if (std::min(lo, hi) < 0 || std::max(lo, hi) >= t.decl->shape[d]) return false;
      j = 1;
      first += lo * t.strides[d];
      step += (a.index[d].eval(value_of) - lo) * t.strides[d];
    }
    return true;
  }
  // Row p of access e in fp32; with `masked`, only the positions the mask keeps
  // (every `group` positions share a mask position) are read, the others are 0.
  std::vector<float> read(size_t e, bool masked = false, int64_t group = 1) {
    const TensorMem& t = ex.mem_.at(acc[e]->tensor);
    std::vector<float> row(width(e), 0.0f);
    std::vector<uint8_t> kept(width(e), 1);
    bool all = true;
    if (masked)
      for (int64_t at = 0; at < width(e); ++at) all &= (kept[at] = keep(at / group)) != 0;
    int64_t first = 0, step = 0;
    if (all && run_of(e, first, step) && !unwritten(t, first, step, width(e))) {
      gather_float(t.decl->dtype, t.data, first, step, width(e), row.data());
      return row;
    }
    for (int64_t at = 0; at < width(e); ++at) {
      if (!kept[at]) continue;
      j = at;
      gather_float(t.decl->dtype, t.data, read_offset(ex.mem_, in, *acc[e], value_of),
                   1, 1, &row[at]);
    }
    return row;
  }
  // Whether a checked read of the run would meet an uninitialized element (the
  // element-wise walk then reports it).
  bool unwritten(const TensorMem& t, int64_t first, int64_t step, int64_t n) const {
    if (!uninit::active()) return false;
    for (int64_t i = 0; i < n; ++i)
      if (uninit::unclean(t, first + i * step)) return true;
    return false;
  }
  // Writes `row` to row p of access e, at the positions `kept` marks (all when null).
  void write_row(size_t e, const std::vector<float>& row, const std::vector<uint8_t>* kept = nullptr) {
    TensorMem& t = ex.mem_.at(acc[e]->tensor);
    const int64_t n = static_cast<int64_t>(row.size());
    int64_t first = 0, step = 0;
    const bool all = !kept || std::all_of(kept->begin(), kept->end(), [](uint8_t k) { return k != 0; });
    if (all && run_of(e, first, step)) {
      scatter_float(t.decl->dtype, t.data, first, step, n, row.data());
      uninit::wrote(t, first, step, n);
      return;
    }
    for (int64_t at = 0; at < n; ++at)
      if (!kept || (*kept)[at]) write(e, at, row[at]);
  }
  void write(size_t e, int64_t at, float v) {
    TensorMem& t = ex.mem_.at(acc[e]->tensor);
    j = at;
    const int64_t off = point_offset(ex.mem_, in, *acc[e], value_of);
    scatter_float(t.decl->dtype, t.data, off, 1, 1, &v);
    uninit::wrote(t, off);
  }
  // An integer result exactly (fp32 holds integers only up to 2^24).
  void write_exact(size_t e, int64_t at, double v) {
    TensorMem& t = ex.mem_.at(acc[e]->tensor);
    j = at;
    const int64_t off = point_offset(ex.mem_, in, *acc[e], value_of);
    store_element(t.decl->dtype, t.data, off, v);
    uninit::wrote(t, off);
  }
};

void RowExec::run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  Rows r(*this, in, loops, pids);
  for (const ir::Access* a : r.acc) ensure_filled(mem_.at(a->tensor));
  for (r.p = 0; r.p < r.partitions(); ++r.p) {
    uninit::row_start();  // a partition's results depend on that partition alone
    switch (in.opcode) {
      case ir::Opcode::TensorTensorScan: scan(r); break;
      case ir::Opcode::BnStats: bn_stats(r); break;
      case ir::Opcode::BnAggr: bn_aggr(r); break;
      case ir::Opcode::SequenceBounds: sequence_bounds(r); break;
      case ir::Opcode::TensorScalarCumulative: cumulative(r); break;
      case ir::Opcode::TopK: topk(r); break;
      case ir::Opcode::NonzeroWithCount: nonzero_with_count(r); break;
      default: top8(r); break;
    }
  }
}

// r[i] = op1(op0(data0[i], r[i-1]), data1[i]) from r[-1] = initial (imms[0] or
// srcs[2]); every column is computed, the mask only selects what is written.
void RowExec::scan(Rows& r) {
  const ir::Instruction& in = r.in;
  const std::vector<float> d0 = r.read(r.src(0)), d1 = r.read(r.src(1));
  float prev = in.srcs.size() == 3 ? r.read(r.src(2))[0] : static_cast<float>(in.imms.at(0));
  const ir::AluStep &first = in.steps.at(0), &second = in.steps.at(1);
  const int64_t n = static_cast<int64_t>(d0.size());
  std::vector<float> out(n);
  std::vector<uint8_t> kept(n);
  for (int64_t i = 0; i < n; ++i) {
    const float t = first.reverse ? alu(first.op, prev, d0[i]) : alu(first.op, d0[i], prev);
    prev = second.reverse ? alu(second.op, d1[i], t) : alu(second.op, t, d1[i]);
    out[i] = prev;
    kept[i] = r.keep(i);
  }
  r.write_row(0, out, &kept);
}

// Per half (even, odd positions): [count, mean, variance * count], the elements
// the mask leaves out counted with weight 0.
void RowExec::bn_stats(Rows& r) {
  const std::vector<float> x = r.read(r.src(0), true);
  const int64_t n = static_cast<int64_t>(x.size());
  for (int64_t k = 0; k < 2; ++k) {
    std::vector<float> v, w;
    for (int64_t i = k; i < n; i += 2) {
      const bool in_mask = r.keep(i);
      v.push_back(in_mask ? x[i] : 0.0f);
      w.push_back(in_mask ? 1.0f : 0.0f);
    }
    float count = 0.0f, total = 0.0f, m2 = 0.0f;
    for (size_t i = 0; i < v.size(); ++i) {
      count = i ? count + w[i] : w[i];
      total = i ? total + v[i] : v[i];
    }
    // An empty half (every element masked out) has mean 0, not 0 / 0.
    const float mean = alu(AluOp::divide, total, alu(AluOp::maximum, count, 1.0f));
    for (size_t i = 0; i < v.size(); ++i) {
      const float c = alu(AluOp::multiply, alu(AluOp::subtract, v[i], mean), w[i]);
      const float sq = alu(AluOp::multiply, c, c);
      m2 = i ? m2 + sq : sq;
    }
    r.write(0, 3 * k, count);
    r.write(0, 3 * k + 1, mean);
    r.write(0, 3 * k + 2, m2);
  }
}

// [mean, variance] from bn_stats triples (Chan's parallel formula); the mask
// selects triples (Grid coord 1 counts triples).
void RowExec::bn_aggr(Rows& r) {
  const std::vector<float> d = r.read(r.src(0), true, 3);
  const int64_t groups = static_cast<int64_t>(d.size()) / 3;
  std::vector<int64_t> kept;
  for (int64_t g = 0; g < groups; ++g)
    if (r.keep(g)) kept.push_back(g);
  if (kept.empty()) return;
  float total = 0.0f, weighted = 0.0f, m2 = 0.0f;
  for (size_t i = 0; i < kept.size(); ++i) {
    const float c = d[3 * kept[i]], wm = alu(AluOp::multiply, c, d[3 * kept[i] + 1]);
    total = i ? total + c : c;
    weighted = i ? weighted + wm : wm;
  }
  const float mean = alu(AluOp::divide, weighted, total);
  for (size_t i = 0; i < kept.size(); ++i) {
    const int64_t g = kept[i];
    const float delta = alu(AluOp::subtract, d[3 * g + 1], mean);
    const float spread = alu(AluOp::multiply, d[3 * g], alu(AluOp::multiply, delta, delta));
    const float term = alu(AluOp::add, d[3 * g + 2], spread);
    m2 = i ? m2 + term : term;
  }
  r.write(0, 0, mean);
  r.write(0, 1, alu(AluOp::divide, m2, total));
}

// max8, nc_find_index8 and nc_match_replace8: eight lookups per partition; each
// finds the first position (among those the mask keeps) still holding the value
// looked up and then replaces it, so equal values find successive positions.
// max8 looks up the largest remaining value (replaced by -inf); find_index8
// each of `vals` in order (replaced by NaN); match_replace8 each of `vals` from
// the last to the first (the engine's order), replaced by imms[0].
void RowExec::top8(Rows& r) {
  const ir::Instruction& in = r.in;
  if (!r.keeps_row()) return;
  // match_replace8 writes back every position, so it reads them all.
  std::vector<float> work = r.read(r.src(0), in.opcode != ir::Opcode::MatchReplace8);
  const int64_t n = static_cast<int64_t>(work.size());
  std::vector<uint8_t> kept(n);
  for (int64_t i = 0; i < n; ++i) kept[i] = r.keep(i);
  const bool is_max = in.opcode == ir::Opcode::Max8;
  const std::vector<float> vals = is_max ? std::vector<float>() : r.read(r.src(1));
  const float replacement = is_max ? -std::numeric_limits<float>::infinity()
                            : in.opcode == ir::Opcode::FindIndex8 ? std::numeric_limits<float>::quiet_NaN()
                                                                  : static_cast<float>(in.imms.at(0));
  float taken[8], found[8];
  for (int step = 0; step < 8; ++step) {
    const int k = in.opcode == ir::Opcode::MatchReplace8 ? 7 - step : step;
    float value = 0.0f;
    if (is_max) {
      bool first = true;
      for (int64_t i = 0; i < n; ++i)
        if (kept[i]) value = first ? work[i] : fold_max(value, work[i]), first = false;
    } else {
      value = vals.at(k);
    }
    float at = kNotFound;
    for (int64_t i = 0; i < n && at == kNotFound; ++i)
      if (kept[i] && work[i] == value) at = static_cast<float>(i);
    if (at != kNotFound) work[static_cast<int64_t>(at)] = replacement;
    taken[k] = value;
    found[k] = at;
  }
  switch (in.opcode) {
    case ir::Opcode::Max8:
      for (int k = 0; k < 8; ++k) r.write(0, k, taken[k]);
      break;
    case ir::Opcode::FindIndex8:
      for (int k = 0; k < 8; ++k) r.write(0, k, found[k]);
      break;
    default:
      r.write_row(0, work);
      if (!in.extra_dsts.empty())
        for (int k = 0; k < 8; ++k) r.write(1, k, found[k]);
  }
}

// Runs of equal segment ids (compared in fp32, as the engine reads them): each
// element gets its run's [start, end) at positions i and n + i; padding (id 0)
// gets n and -1.
void RowExec::sequence_bounds(Rows& r) {
  const std::vector<float> ids = r.read(r.src(0));
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<int64_t> end(n);
  for (int64_t i = n - 1; i >= 0; --i) end[i] = i == n - 1 || ids[i] != ids[i + 1] ? i + 1 : end[i + 1];
  std::vector<float> out(2 * n);
  int64_t start = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0 && ids[i] != ids[i - 1]) start = i;
    const bool padding = ids[i] == 0.0f;
    out[i] = padding ? static_cast<float>(n) : static_cast<float>(start);
    out[n + i] = padding ? -1.0f : static_cast<float>(end[i]);
  }
  r.write_row(0, out);
}

// reg = op1(op0(src[i], imm0), reg), dst[i] = reg, from the start reduce_cmd
// names; the accumulator (extra_dsts[0]) keeps the last value.
void RowExec::cumulative(Rows& r) {
  const ir::Instruction& in = r.in;
  const std::vector<float> x = r.read(r.src(0));
  const ir::AluStep& first = in.steps.at(0);
  const AluOp fold = in.acc_op;
  const float imm0 = first.src >= 0 ? r.read(r.src(first.src))[0] : static_cast<float>(first.imm);
  float reg = 0.0f;
  switch (in.acc_cmd) {
    case ir::AccCmd::reduce: reg = r.read(1)[0]; break;
    case ir::AccCmd::load_reduce:
      reg = ir::load_reduce_source(in) ? r.read(r.src(in.srcs.size() - 1))[0] : static_cast<float>(in.acc_init);
      break;
    default:  // reset_reduce: op1's identity
      reg = fold == AluOp::multiply   ? 1.0f
            : fold == AluOp::maximum ? -std::numeric_limits<float>::infinity()
            : fold == AluOp::minimum ? std::numeric_limits<float>::infinity()
                                     : 0.0f;
  }
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> out(n);
  std::vector<uint8_t> kept(n);
  for (int64_t i = 0; i < n; ++i) {
    const float t = first.reverse ? alu(first.op, imm0, x[i]) : alu(first.op, x[i], imm0);
    reg = alu(fold, t, reg);
    out[i] = reg;
    kept[i] = r.keep(i);
  }
  r.write_row(0, out, &kept);
  r.write(1, 0, reg);
}

// One GpSimd core's 16 partitions hold one snake of n values (element e at
// partition e % 16, column e / 16); the K largest (equal values: the lower
// position first) go, ascending, to every partition of the core, their
// positions to idx_dst (extra_dsts[0]). Computed once per core, at its first partition.
void RowExec::topk(Rows& r) {
  const int64_t first = r.p;
  if (first % 16 != 0) return;
  const int64_t n = static_cast<int64_t>(r.in.imms.at(0)), k = r.width(0);
  std::vector<std::vector<float>> rows;
  for (r.p = first; r.p < first + 16; ++r.p) rows.push_back(r.read(r.src(0)));
  std::vector<std::pair<float, int64_t>> snake;
  for (int64_t e = 0; e < n; ++e) snake.push_back({rows[e % 16][e / 16], e});
  std::stable_sort(snake.begin(), snake.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  snake.resize(k);
  std::stable_sort(snake.begin(), snake.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (a.first == b.first && a.second < b.second);
  });
  std::vector<float> vals(k), idx(k);
  for (int64_t i = 0; i < k; ++i) vals[i] = snake[i].first, idx[i] = static_cast<float>(snake[i].second);
  for (r.p = first; r.p < first + 16; ++r.p) {
    r.write_row(0, vals);
    r.write_row(1, idx);
  }
  r.p = first + 15;  // run() moves on to the next core's first partition
}

// On each GpSimd core's first partition (0, 16, ...): the positions of the nonzero
// elements plus imms[0], imms[1] (padding) in the remaining slots, then their count.
void RowExec::nonzero_with_count(Rows& r) {
  if (r.p % 16 != 0) return;
  const std::vector<float> x = r.read(r.src(0));
  const int64_t n = static_cast<int64_t>(x.size());
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i)
    if (x[i] != 0.0f) r.write_exact(0, count++, static_cast<double>(i) + r.in.imms.at(0));
  for (int64_t i = count; i < n; ++i) r.write_exact(0, i, r.in.imms.at(1));
  r.write_exact(0, n, static_cast<double>(count));
}

}  // namespace nkic::sim
