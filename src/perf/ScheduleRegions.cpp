// Schedule's memory bookkeeping: what each access waits for (the regions of a tensor its
// instructions read and wrote, and when), and the live ranges of the physical buffers a loop
// tile rotates through (BufferPlan).
#include "perf/Schedule.h"

#include <algorithm>
#include <limits>

namespace nkic::perf {

namespace {

constexpr size_t kMaxRegions = 256;  // per tensor; beyond, the oldest merges into its nearest region

Box hull(const Box& a, const Box& b) {
  if (a.whole || b.whole || a.dim.size() != b.dim.size()) return Box{{}, true};
  Box h = a;
  for (size_t d = 0; d < h.dim.size(); ++d)
    h.dim[d] = {std::min(a.dim[d].first, b.dim[d].first), std::max(a.dim[d].second, b.dim[d].second)};
  return h;
}

// Elements a box covers (a whole box: every element there is).
double volume(const Box& b) {
  if (b.whole) return std::numeric_limits<double>::infinity();
  double v = 1;
  for (const auto& [lo, hi] : b.dim) v *= static_cast<double>(std::max<int64_t>(0, hi - lo + 1));
  return v;
}

}  // namespace

void Schedule::read(int tensor, const Box& b, double& ready, int64_t& dep) const {
  const int id = root(tensor);
  for (const Region& r : regions_[id])
    if (r.write_ready > ready && orders(id, r) && r.box.overlaps(b)) ready = r.write_ready, dep = r.writer;
}

void Schedule::write_deps(int tensor, const Box& b, double& ready, int64_t& dep) const {
  const int id = root(tensor);
  if (const Use& u = reuse_[id]; u.done > ready) ready = u.done, dep = u.node;
  if (!plan_.reuses.empty())
    for (int p : plan_.reuses[id])
      if (const Use& u = done_[p]; u.done > ready) ready = u.done, dep = u.node;
  for (const Region& r : regions_[id]) {
    if (!orders(id, r) || !r.box.overlaps(b)) continue;
    if (r.write_ready > ready) ready = r.write_ready, dep = r.writer;
    if (r.read_done > ready) ready = r.read_done, dep = r.reader;
  }
}

void Schedule::record_read(int tensor, Box b, double end, int64_t node) {
  const int id = root(tensor);
  if (!written_[id]) return;  // nothing will ever wait for this read
  bool covered = false;
  for (Region& r : regions_[id]) {
    if (!orders(id, r) || !r.box.overlaps(b)) continue;
    if (end > r.read_done) r.read_done = end, r.reader = node, r.read_stamp = num_nodes();
    covered = covered || r.box.contains(b);
  }
  if (!covered) {
    Region r;
    r.box = std::move(b);
    r.read_done = end;
    r.reader = node;
    r.read_stamp = num_nodes();
    r.core = core_;
    keep(regions_[id], std::move(r));
  }
}

void Schedule::record_write(int tensor, Box b, double end, int64_t node) {
  const int id = root(tensor);
  std::vector<Region>& rs = regions_[id];
  rs.erase(std::remove_if(rs.begin(), rs.end(), [&](const Region& r) { return orders(id, r) && b.contains(r.box); }),
           rs.end());
  Region r;
  r.box = std::move(b);
  r.write_ready = end;
  r.writer = node;
  r.write_stamp = num_nodes();
  r.core = core_;
  keep(rs, std::move(r));
}

void Schedule::keep(std::vector<Region>& rs, Region r) {
  rs.push_back(std::move(r));
  if (rs.size() <= kMaxRegions) return;
  // The oldest merges into the region its hull grows least: a false dependency on the
  // elements the hull adds is the price, so the neighbour with the fewest of them pays it.
  const Region& o = rs[0];
  size_t best = 1;
  double least = std::numeric_limits<double>::infinity();
  for (size_t j = 1; j < rs.size(); ++j) {
    const double added = volume(hull(o.box, rs[j].box)) - volume(rs[j].box);
    if (added < least) least = added, best = j;
  }
  Region& a = rs[best];
  a.box = hull(a.box, o.box);
  if (o.write_ready > a.write_ready) a.write_ready = o.write_ready, a.writer = o.writer;
  if (o.read_done > a.read_done) a.read_done = o.read_done, a.reader = o.reader;
  a.write_stamp = std::max(a.write_stamp, o.write_stamp);
  a.read_stamp = std::max(a.read_stamp, o.read_stamp);
  if (a.core != o.core) a.core = -1;
  rs.erase(rs.begin());
}

void Schedule::touch(int tensor, double start, double end, int64_t node) {
  const int id = root(tensor);
  if (ir::is_hbm(k_.tensor(id).memory)) return;
  if (Use& u = done_[id]; end >= u.done) u = {end, node, num_nodes()};
  Live& l = live_[id];
  if (l.first < 0) l.first = start, l.core = core_;
  // Stamped by the access that ends last: a steady loop moves the end only if it set it.
  if (end >= l.last) l.last = end, l.stamp = num_nodes();
}

void Schedule::retire(int id, const std::vector<Region>& regions) {
  // The live range ending used one buffer; the next takes the one used n live ranges ago.
  const int n = plan_.count[id];
  Use u;
  for (const Region& r : regions) {
    if (r.read_done > u.done) u.done = r.read_done, u.node = r.reader, u.stamp = r.read_stamp;
    if (r.write_ready > u.done) u.done = r.write_ready, u.node = r.writer, u.stamp = r.write_stamp;
  }
  std::deque<Use>& ring = ring_[id];
  ring.push_back(u);
  if (static_cast<int>(ring.size()) > n) ring.pop_front();
  reuse_[id] = static_cast<int>(ring.size()) == n ? ring.front() : Use{};
}

void Schedule::release(int id, bool rotate) {
  if (rotate && plan_.count[id] > 0 && !regions_[id].empty()) {
    retire(id, regions_[id]);
  } else if (!rotate) {
    reuse_[id] = Use{};
  }
  regions_[id].clear();
  Live& l = live_[id];
  if (l.first >= 0) intervals_.push_back({l.first, l.last, id, l.core});
  l = Live{};
}

void Schedule::renamed(int tensor, const Box& b, const std::vector<std::pair<int, Box>>& reads, bool accumulate) {
  const int id = root(tensor);
  if (accumulate || plan_.count.empty() || plan_.count[id] == 0 || k_.tensor(id).alloc_axis >= 0 ||
      regions_[id].empty())
    return;
  for (const auto& [rid, rb] : reads)
    if (root(rid) == id) return;  // it reads what it overwrites: the contents live on
  std::vector<Region>& rs = regions_[id];
  if (std::all_of(rs.begin(), rs.end(), [&](const Region& r) { return b.contains(r.box); })) {
    release(id, true);
    return;
  }
  // One whole block of a block-dim tile [B.., P, F..] (all of its partition and free dims):
  // that block's contents start a new live range, as a whole tile's would.
  const ir::TensorDecl& d = k_.tensor(id);
  if (d.partition_dim <= 0 || b.whole || b.dim.size() != d.shape.size()) return;
  for (size_t k = static_cast<size_t>(d.partition_dim); k < d.shape.size(); ++k)
    if (b.dim[k].first != 0 || b.dim[k].second != d.shape[k] - 1) return;
  // A region across blocks keeps its times outside this block (the pieces of its box around
  // b's block range, dim by dim); its part inside goes with the block's live range.
  std::vector<Region> kept, inside;
  for (Region& r : rs) {
    if (r.box.whole || !r.box.overlaps(b)) {
      keep(kept, std::move(r));
      continue;
    }
    Box rest = r.box;
    for (int k = 0; k < d.partition_dim; ++k) {
      const auto [lo, hi] = rest.dim[k];
      for (const auto& [from, to] : {std::pair{lo, b.dim[k].first - 1}, std::pair{b.dim[k].second + 1, hi}}) {
        if (from > to) continue;
        Region piece = r;
        piece.box = rest;
        piece.box.dim[k] = {from, to};
        keep(kept, std::move(piece));
      }
      rest.dim[k] = {std::max(lo, b.dim[k].first), std::min(hi, b.dim[k].second)};
    }
    r.box = std::move(rest);
    inside.push_back(std::move(r));
  }
  rs = std::move(kept);
  retire(id, inside);
}

bool Schedule::rotated(const std::vector<int>& ids) const {
  for (int id : ids)
    if (static_cast<int>(ring_[id].size()) < plan_.count[id]) return false;
  return true;
}

}  // namespace nkic::perf
