#include "perf/Buffers.h"

#include <algorithm>
#include <limits>

#include "sema/Allocation.h"

namespace nkic::perf {

namespace {

// A PSUM tile takes whole banks (a matmul accumulates within one bank).
int64_t buffer_bytes(const ir::TensorDecl& t, const sema::Target& target, const std::vector<int64_t>& held) {
  const int64_t n = sema::held_bytes(t, held), bank = target.psum_par_size_in_bytes;
  return t.memory == ir::Memory::PSUM && bank > 0 ? (n + bank - 1) / bank * bank : n;
}

// A loop's body sites [s0, s1), how many times its body runs in a program (its iterations
// as the cost model runs them, times its enclosing loops'), its depth.
struct LoopSpan {
  int s0 = -1, s1 = -1;
  int64_t runs = 0, trips = 0;
  int depth = 0;
};

// Numbers the instructions as the cost model does (program order, loop bodies in place).
void spans(const ir::Block& b, int depth, int64_t outer, int& site, std::vector<LoopSpan>& out) {
  for (const ir::StmtPtr& s : b) {
    if (s->kind == ir::StmtKind::Instruction) {
      ++site;
      continue;
    }
    const auto* l = static_cast<const ir::Loop*>(s.get());
    LoopSpan span;
    span.s0 = site;
    const int64_t trips = l->runtime() ? 1 : std::max<int64_t>(0, l->tripcount());
    span.runs = trips > 0 && outer > std::numeric_limits<int64_t>::max() / trips ? std::numeric_limits<int64_t>::max()
                                                                                 : outer * trips;
    span.trips = trips;
    span.depth = depth;
    spans(l->body, depth + 1, span.runs, site, out);
    span.s1 = site;
    if (l->axis >= 0 && static_cast<size_t>(l->axis) < out.size()) out[l->axis] = span;
  }
}

// How many instructions statement `s` holds, loop bodies included.
int instructions_in(const ir::Stmt& s) {
  if (s.kind == ir::StmtKind::Instruction) return 1;
  int n = 0;
  for (const ir::StmtPtr& t : static_cast<const ir::Loop&>(s).body) n += instructions_in(*t);
  return n;
}

// kernel[n]: the physical core whose SBUF and PSUM each site's tiles are in (each core has its
// own); -1: an exchange between cores (its tiles count on every core). One core: all 0.
std::vector<int> site_cores(const ir::Kernel& k, size_t sites) {
  std::vector<int> stmt_core(k.body.size(), 0), core;
  for (const ir::Kernel::CoreSpan& span : k.core_spans)
    for (size_t i = span.first; i < span.last && i < stmt_core.size(); ++i) stmt_core[i] = span.core;
  for (size_t i = 0; i < k.body.size(); ++i) core.insert(core.end(), instructions_in(*k.body[i]), stmt_core[i]);
  core.resize(sites, 0);
  return core;
}

// A tile's claim on one memory's ring: bytes per partition, live over sites [from, to].
struct Claim {
  int id, from, to;
  int64_t bytes;
  bool rotates;  // a loop tile: its own buffers handle its reuse
};

// The ring allocation of one memory (see Buffers.h): fills `reuses` of the tiles that do
// not rotate. A tile that finds no room (the program-order footprint is over the capacity:
// the spill estimate's case) gets no dependency.
// `lowest`: each tile at the lowest address free (MAX_REUSE) rather than past the previous one.
void place_ring(std::vector<Claim> claims, int64_t capacity, std::vector<std::vector<int>>& reuses, bool lowest) {
  struct Placed {
    int64_t lo, hi;
    int id, to;
    bool rotates;
  };
  std::stable_sort(claims.begin(), claims.end(), [](const Claim& a, const Claim& b) { return a.from < b.from; });
  std::vector<Placed> placed;
  int64_t next = 0;
  for (const Claim& c : claims) {
    if (c.bytes <= 0 || c.bytes > capacity) continue;
    int64_t lo = lowest ? 0 : next;
    int wraps = 0;
    for (bool moved = true; moved && wraps < 2;) {
      moved = false;
      if (lo + c.bytes > capacity) lo = 0, ++wraps;
      for (const Placed& p : placed)
        if (p.to >= c.from && p.lo < lo + c.bytes && lo < p.hi) {
          lo = p.hi;
          moved = true;
          break;
        }
    }
    if (wraps >= 2) continue;
    const int64_t hi = lo + c.bytes;
    if (!c.rotates)
      for (const Placed& p : placed)
        if (!p.rotates && p.lo < hi && lo < p.hi) reuses[c.id].push_back(p.id);
    placed.erase(std::remove_if(placed.begin(), placed.end(), [&](const Placed& p) { return lo <= p.lo && p.hi <= hi; }),
                 placed.end());
    placed.push_back({lo, hi, c.id, c.to, c.rotates});
    next = hi;
  }
}

// One core's part of the plan: its sites are those of `core` (and the exchanges').
void plan_core(const ir::Kernel& k, const sema::Target& t, const std::vector<const ir::Instruction*>& order,
               const std::vector<LoopSpan>& loops, const std::vector<int>& cores, int core, BufferPlan& p,
               std::vector<int>& count, bool max_reuse) {
  const size_t n = order.size();
  auto mine = [&](size_t s) { return cores[s] == core || cores[s] < 0; };
  auto within = [&](int id, const LoopSpan& l) {
    const ir::TensorDecl& d = k.tensor(id);
    if (d.alloc_axis < 0 || static_cast<size_t>(d.alloc_axis) >= loops.size()) return false;
    const LoopSpan& a = loops[d.alloc_axis];
    return a.s0 >= l.s0 && a.s1 <= l.s1;
  };
  auto each_root = [&](const ir::Instruction& in, auto&& f) {
    if (in.has_dst()) f(k.root(in.dst.tensor));
    for (const ir::Access& a : in.srcs) f(k.root(a.tensor));
    for (const ir::Access& a : in.extra_dsts) f(k.root(a.tensor));
  };
  // Each root tensor's first and last site, and the live bytes per site, per memory, with one
  // buffer per tile. A tile that a loop reaches without declaring it is live over the loop's
  // whole body while the loop has iterations to come: every iteration reaches it again. A
  // hoisted instruction runs once per entry of its loop: what it reads is not held over that
  // loop for it, and its result is, as every iteration reads it.
  std::vector<int> first, last;
  std::vector<int64_t> sbuf, psum;
  auto is_buffer = [&](const ir::TensorDecl& d) { return d.alias_of < 0 && !ir::is_hbm(d.memory) && first[d.id] >= 0; };
  auto footprint = [&] {
    first.assign(k.tensors.size(), -1), last.assign(k.tensors.size(), -1);
    auto span = [&](int id, int from, int to) {
      if (first[id] < 0 || from < first[id]) first[id] = from;
      last[id] = std::max(last[id], to);
    };
    for (size_t s = 0; s < n; ++s)
      if (mine(s)) each_root(*order[s], [&](int id) { span(id, static_cast<int>(s), static_cast<int>(s)); });
    for (size_t axis = 0; axis < loops.size(); ++axis) {
      const LoopSpan& l = loops[axis];
      if (l.s0 < 0 || l.trips < 2) continue;
      for (int s = l.s0; s < l.s1; ++s) {
        if (!mine(s)) continue;
        const ir::Instruction& in = *order[s];
        if (p.hoisted[s] == static_cast<int>(axis)) {
          if (in.has_dst()) span(k.root(in.dst.tensor), l.s0, l.s1 - 1);
          continue;
        }
        each_root(in, [&](int id) {
          if (!within(id, l)) span(id, l.s0, l.s1 - 1);
        });
      }
    }
    sbuf.assign(n + 1, 0), psum.assign(n + 1, 0);
    for (const ir::TensorDecl& d : k.tensors) {
      if (!is_buffer(d)) continue;
      std::vector<int64_t>& live = d.memory == ir::Memory::PSUM ? psum : sbuf;
      const int64_t bytes = buffer_bytes(d, t, p.blocks);
      live[first[d.id]] += bytes;
      live[last[d.id] + 1] -= bytes;
    }
    for (size_t s = 1; s <= n; ++s) sbuf[s] += sbuf[s - 1], psum[s] += psum[s - 1];
  };
  footprint();
  // The compiler holds a loop-invariant result over its loop only where the loop's tiles fit
  // with it: otherwise holding it would spill, and it computes it again in every iteration.
  bool recomputed = false;
  for (size_t s = 0; s < n; ++s) {
    const int axis = p.hoisted[s];
    if (!mine(s) || axis < 0 || !order[s]->has_dst()) continue;
    const LoopSpan& l = loops[axis];
    const bool in_psum = k.tensor(k.root(order[s]->dst.tensor)).memory == ir::Memory::PSUM;
    const std::vector<int64_t>& live = in_psum ? psum : sbuf;
    const int64_t capacity = in_psum ? p.psum_capacity : p.sbuf_capacity;
    if (capacity > 0 && *std::max_element(live.begin() + l.s0, live.begin() + l.s1) > capacity) {
      p.hoisted[s] = -1;
      ++p.recomputed;
      recomputed = true;
    }
  }
  if (recomputed) footprint();
  int64_t peak = 0;
  int peak_site = -1;
  for (size_t s = 0; s < n; ++s) {
    if (!mine(s)) continue;
    if (sbuf[s] > peak) peak = sbuf[s], peak_site = static_cast<int>(s);
    p.psum_peak = std::max(p.psum_peak, psum[s]);
  }
  p.sbuf_peak = std::max(p.sbuf_peak, peak);
  if (p.sbuf_capacity > 0 && peak - p.sbuf_capacity > p.spill_bytes)
    p.spill_bytes = peak - p.sbuf_capacity, p.spill_site = peak_site;

  // The loop tiles, innermost loops first, then in declaration order; a hoisted result is
  // written once per loop entry and keeps its one buffer.
  std::vector<bool> held(k.tensors.size(), false);
  for (size_t s = 0; s < n; ++s)
    if (mine(s) && p.hoisted[s] >= 0 && order[s]->has_dst()) held[k.root(order[s]->dst.tensor)] = true;
  std::vector<int> tiles;
  for (const ir::TensorDecl& d : k.tensors)
    if (is_buffer(d) && d.alloc_axis >= 0 && static_cast<size_t>(d.alloc_axis) < loops.size() &&
        loops[d.alloc_axis].s0 >= 0) {
      count[d.id] = 1;
      if (!held[d.id]) tiles.push_back(d.id);
    }
  std::stable_sort(tiles.begin(), tiles.end(), [&](int a, int b) {
    return loops[k.tensor(a).alloc_axis].depth > loops[k.tensor(b).alloc_axis].depth;
  });
  // Each round gives every loop tile that got one in the last round one more buffer, live
  // over its loop body, where that stays within the capacity (none under MAX_REUSE).
  for (int r = 2; !max_reuse; ++r) {
    bool grew = false;
    for (int id : tiles) {
      const ir::TensorDecl& d = k.tensor(id);
      const LoopSpan& l = loops[d.alloc_axis];
      if (count[id] != r - 1 || l.runs < r || l.s1 <= l.s0) continue;
      const bool in_psum = d.memory == ir::Memory::PSUM;
      std::vector<int64_t>& live = in_psum ? psum : sbuf;
      const int64_t bytes = buffer_bytes(d, t, p.blocks), capacity = in_psum ? p.psum_capacity : p.sbuf_capacity;
      if (*std::max_element(live.begin() + l.s0, live.begin() + l.s1) + bytes > capacity) continue;
      for (int s = l.s0; s < l.s1; ++s) live[s] += bytes;
      count[id] = r;
      grew = true;
    }
    if (!grew) break;
  }

  // The tiles outside the loops that more than one instruction writes: an instruction that
  // overwrites one whole starts a new live range (Schedule::renamed), which the compiler may
  // put in another buffer. Each gets a buffer per write, while what is live stays within the
  // capacity (in declaration order).
  std::vector<int> writes(k.tensors.size(), 0);
  for (size_t s = 0; s < n; ++s) {
    if (!mine(s)) continue;
    const ir::Instruction& in = *order[s];
    if (in.has_dst()) ++writes[k.root(in.dst.tensor)];
    for (const ir::Access& a : in.extra_dsts) ++writes[k.root(a.tensor)];
  }
  for (const ir::TensorDecl& d : k.tensors) {
    if (!is_buffer(d) || count[d.id] > 0 || writes[d.id] < 2 || max_reuse) continue;  // MAX_REUSE: the ring's
    const bool in_psum = d.memory == ir::Memory::PSUM;
    std::vector<int64_t>& live = in_psum ? psum : sbuf;
    const int64_t bytes = buffer_bytes(d, t, p.blocks), capacity = in_psum ? p.psum_capacity : p.sbuf_capacity;
    const int64_t peak = *std::max_element(live.begin() + first[d.id], live.begin() + last[d.id] + 1);
    const int64_t extra = bytes > 0 && capacity > peak ? (capacity - peak) / bytes : 0;
    count[d.id] = static_cast<int>(std::min<int64_t>(writes[d.id], 1 + extra));
    for (int s = first[d.id]; s <= last[d.id]; ++s) live[s] += (count[d.id] - 1) * bytes;
  }

  std::vector<Claim> sbuf_claims, psum_claims;
  for (const ir::TensorDecl& d : k.tensors) {
    if (!is_buffer(d)) continue;
    // A loop tile holds its buffers over its loop body; a renamed one over its own live range.
    const bool rotates = count[d.id] > 0, loop_tile = rotates && d.alloc_axis >= 0;
    const LoopSpan* l = loop_tile ? &loops[d.alloc_axis] : nullptr;
    Claim c{d.id, loop_tile ? l->s0 : first[d.id], loop_tile ? l->s1 - 1 : last[d.id],
            buffer_bytes(d, t, p.blocks) * std::max(1, count[d.id]), rotates};
    (d.memory == ir::Memory::PSUM ? psum_claims : sbuf_claims).push_back(c);
  }
  place_ring(std::move(sbuf_claims), p.sbuf_capacity, p.reuses, max_reuse);
  place_ring(std::move(psum_claims), p.psum_capacity, p.reuses, max_reuse);
}

}  // namespace

BufferPlan plan_buffers(const ir::Kernel& k, const sema::Target& t, const std::vector<const ir::Instruction*>& order,
                        std::vector<int> hoisted, const BufferOptions& o) {
  BufferPlan p;
  p.hoisted = std::move(hoisted);
  p.hoisted.resize(order.size(), -1);
  p.count.assign(k.tensors.size(), 0);
  p.reuses.assign(k.tensors.size(), {});
  p.sbuf_capacity = t.statebuf_par_size_in_bytes - o.prefetch_ring;
  p.psum_capacity = t.psum_par_size_in_bytes * t.psum_num_banks;
  // A kernel that places its tiles itself (ncc.sbuf/psum alloc) chose its buffers; the IR
  // does not record how many, so its tiles stay fresh in every iteration.
  if (k.direct_allocation) return p;
  std::vector<LoopSpan> loops(std::max(0, k.num_axes));
  int site = 0;
  spans(k.body, 0, 1, site, loops);
  const std::vector<int> cores = site_cores(k, order.size());
  p.blocks = sema::held_blocks(k);
  // A tile on several cores gets the buffers every one of them holds.
  for (int c = 0; c < std::max(1, k.physical_cores); ++c) {
    std::vector<int> count(k.tensors.size(), 0);
    plan_core(k, t, order, loops, cores, c, p, count, o.max_reuse);
    for (size_t id = 0; id < count.size(); ++id)
      if (count[id] > 0) p.count[id] = p.count[id] > 0 ? std::min(p.count[id], count[id]) : count[id];
  }
  return p;
}

}  // namespace nkic::perf
