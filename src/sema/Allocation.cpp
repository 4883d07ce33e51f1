#include "sema/Allocation.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "sema/ErrorCatalog.h"

namespace nkic::sema {

int64_t partition_bytes(const ir::TensorDecl& t) {
  int64_t n = ir::size_of(t.dtype);
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (static_cast<int>(d) != t.partition_dim) n *= t.shape[d];
  return n;
}

int64_t allocated_bytes(const ir::TensorDecl& t) {
  int64_t blocks = 1;
  for (int d = 0; d < t.partition_dim && static_cast<size_t>(d) < t.shape.size(); ++d) blocks *= t.shape[d];
  return partition_bytes(t) / std::max<int64_t>(1, blocks);
}

namespace {

bool on_chip(const ir::TensorDecl& t) {
  return t.alias_of < 0 && (t.memory == ir::Memory::SBUF || t.memory == ir::Memory::PSUM);
}

// Numbers the instructions in program order and records each root tensor's live range and the
// physical cores whose instructions touch it (bit c: core c; each core of a kernel[n] launch
// holds only the tiles it uses); `sites` gets the instructions and the core each runs on (-1: an
// exchange, on every core).
class Walker {
 public:
  Walker(const ir::Kernel& k, std::vector<const ir::Instruction*>* sites, std::vector<int>* cores)
      : k_(k), live_(k.tensors.size()), owners_(k.tensors.size(), 0), parent_(std::max(0, k.num_axes), -1),
        seen_(k.tensors.size(), -1), sites_(sites), cores_(cores) {}

  void kernel() {
    std::vector<int> stmt_core(k_.body.size(), 0);
    for (const ir::Kernel::CoreSpan& span : k_.core_spans)
      for (size_t i = span.first; i < span.last && i < stmt_core.size(); ++i) stmt_core[i] = span.core;
    open_body();
    for (size_t i = 0; i < k_.body.size(); ++i) {
      core_ = stmt_core[i];
      stmt(*k_.body[i], -1);
    }
  }

  std::vector<LiveRange> ranges() && { return std::move(live_); }
  std::vector<uint64_t> owners() && { return std::move(owners_); }

 private:
  void stmt(const ir::Stmt& s, int loop_axis) {
    if (s.kind == ir::StmtKind::Instruction) {
      const auto& in = static_cast<const ir::Instruction&>(s);
      const int64_t at = pos_++;
      if (sites_) sites_->push_back(&in), cores_->push_back(core_);
      auto touch = [&](const ir::Access& a) {
        if (a.tensor < 0) return;
        use(k_.root(a.tensor), at);
        for (const ir::IndirectIndex& i : a.indirect)
          if (i.index.tensor >= 0) use(k_.root(i.index.tensor), at);
      };
      if (in.has_dst()) touch(in.dst);
      for (const ir::Access& a : in.srcs) touch(a);
      for (const ir::Access& a : in.extra_dsts) touch(a);
      return;
    }
    const auto& l = static_cast<const ir::Loop&>(s);
    if (l.axis >= 0 && static_cast<size_t>(l.axis) < parent_.size()) parent_[l.axis] = loop_axis;
    const int64_t start = pos_;
    open_body();
    for (const ir::StmtPtr& t : l.body) stmt(*t, l.axis);
    std::vector<int> touched = std::move(touched_.back());
    touched_.pop_back(), body_ids_.pop_back();
    // A body that runs again reaches every tensor it did not declare in every iteration.
    const bool repeats = l.runtime() || l.tripcount() > 1;
    for (int id : touched) {
      if (repeats && pos_ > start && !declared_within(k_.tensor(id).alloc_axis, l.axis)) {
        LiveRange& r = live_[id];
        r.first = std::min(r.first, start);
        r.last = std::max(r.last, pos_ - 1);
      }
      note_touched(id);
    }
  }

  bool declared_within(int alloc_axis, int axis) const {
    for (int a = alloc_axis; a >= 0 && static_cast<size_t>(a) < parent_.size(); a = parent_[a])
      if (a == axis) return true;
    return false;
  }

  void use(int id, int64_t at) {
    owners_[id] |= core_ < 0 ? ~uint64_t{0} : uint64_t{1} << (core_ & 63);
    LiveRange& r = live_[id];
    r.first = r.first < 0 ? at : std::min(r.first, at);
    r.last = std::max(r.last, at);
    note_touched(id);
  }

  // Records `id` in the innermost open body's list, once per body while nothing inside it
  // intervenes (a repeat only extends a range again).
  void note_touched(int id) {
    if (seen_[id] == body_ids_.back()) return;
    seen_[id] = body_ids_.back();
    touched_.back().push_back(id);
  }

  void open_body() {
    touched_.emplace_back();
    body_ids_.push_back(++bodies_);
  }

  const ir::Kernel& k_;
  std::vector<LiveRange> live_;
  std::vector<uint64_t> owners_;
  std::vector<int> parent_;  // by loop axis: the loop around it, -1: the kernel body
  std::vector<std::vector<int>> touched_;
  std::vector<int64_t> seen_, body_ids_;  // by tensor: the body that listed it last
  int64_t bodies_ = 0, pos_ = 0;
  int core_ = 0;
  std::vector<const ir::Instruction*>* sites_;
  std::vector<int>* cores_;
};

}  // namespace

std::vector<LiveRange> live_ranges(const ir::Kernel& k) {
  Walker w(k, nullptr, nullptr);
  w.kernel();
  return std::move(w).ranges();
}

namespace {

struct Analysis {
  std::vector<LiveRange> live;
  std::vector<uint64_t> owners;  // by root tensor: the cores that hold it (Walker)
  std::vector<const ir::Instruction*> sites;
  std::vector<int> cores;
  std::vector<int64_t> held;  // by tensor: held_blocks
};

Analysis analyse(const ir::Kernel& k) {
  Analysis a;
  a.held = held_blocks(k);
  Walker w(k, &a.sites, &a.cores);
  w.kernel();
  a.owners = std::move(w).owners();
  a.live = std::move(w).ranges();
  return a;
}

// The live bytes per partition at each site of the tensors core `core` holds (`owners`, by
// tensor): SBUF adds bytes; PSUM takes whole banks for a tile of a bank or more, and packs the
// smaller tiles into shared banks.
std::vector<int64_t> live_bytes(const ir::Kernel& k, const Target& t, const Analysis& a, size_t sites,
                                ir::Memory memory, int core) {
  const std::vector<LiveRange>& live = a.live;
  const std::vector<uint64_t>& owners = a.owners;
  const int64_t bank = t.psum_par_size_in_bytes;
  std::vector<int64_t> whole(sites + 1, 0), shared(sites + 1, 0);
  for (const ir::TensorDecl& d : k.tensors) {
    const LiveRange& r = live[d.id];
    if (!on_chip(d) || d.memory != memory || r.first < 0 || !(owners[d.id] >> (core & 63) & 1)) continue;
    const int64_t n = held_bytes(d, a.held);
    const bool banked = memory == ir::Memory::PSUM && bank > 0;
    std::vector<int64_t>& v = banked && n < bank ? shared : whole;
    const int64_t add = banked && n >= bank ? (n + bank - 1) / bank * bank : n;
    v[r.first] += add;
    v[r.last + 1] -= add;
  }
  std::vector<int64_t> out(sites, 0);
  int64_t w = 0, s = 0;
  for (size_t i = 0; i < sites; ++i) {
    w += whole[i], s += shared[i];
    out[i] = w + (memory == ir::Memory::PSUM && bank > 0 ? (s + bank - 1) / bank * bank : s);
  }
  return out;
}

std::vector<MemoryPeak> peaks(const ir::Kernel& k, const Target& t, const Analysis& a) {
  std::vector<MemoryPeak> out;
  if (k.direct_allocation) return out;
  const size_t n = a.sites.size();
  const std::vector<uint64_t>& owners = a.owners;
  for (ir::Memory memory : {ir::Memory::SBUF, ir::Memory::PSUM}) {
    for (int core = 0; core < std::max(1, k.physical_cores); ++core) {
      const std::vector<int64_t> bytes = live_bytes(k, t, a, n, memory, core);
      MemoryPeak p;
      p.memory = memory, p.core = core;
      p.capacity = memory == ir::Memory::PSUM ? t.psum_par_size_in_bytes * t.psum_num_banks
                                              : t.statebuf_par_size_in_bytes;
      for (size_t s = 0; s < n; ++s)
        if ((a.cores[s] == core || a.cores[s] < 0) && bytes[s] > p.bytes) p.bytes = bytes[s], p.at = static_cast<int64_t>(s);
      if (p.at >= 0)
        for (const ir::TensorDecl& d : k.tensors)
          if (on_chip(d) && d.memory == memory && a.live[d.id].first <= p.at && p.at <= a.live[d.id].last &&
              (owners[d.id] >> (core & 63) & 1))
            p.tensors.push_back(d.id);
      std::stable_sort(p.tensors.begin(), p.tensors.end(),
                       [&](int x, int y) { return held_bytes(k.tensor(x), a.held) > held_bytes(k.tensor(y), a.held); });
      out.push_back(std::move(p));
    }
  }
  return out;
}

// "'t' (line 12, 32768 bytes), 'acc' (line 20, 2048 bytes each, 8 tiles)": the live tensors,
// those of one name, line and size together, with a note at each declaration; a block-dim
// tile a loop holds says how many blocks.
std::string live_list(const ir::Kernel& k, const Analysis& a, const MemoryPeak& p, Diagnostic& d,
                      const std::function<std::string(const std::string&)>& display) {
  using Key = std::tuple<std::string, int, int64_t>;
  std::map<Key, int> count;
  std::vector<std::pair<Key, const ir::TensorDecl*>> order;
  for (int id : p.tensors) {
    const ir::TensorDecl& t = k.tensor(id);
    Key key{display(t.name), t.loc.line, held_bytes(t, a.held)};
    if (count[key]++ == 0) order.emplace_back(key, &t);
  }
  std::string text;
  for (const auto& [key, t] : order) {
    const auto& [name, line, bytes] = key;
    const int n = count[key];
    const int64_t held = a.held[t->id];
    if (!text.empty()) text += ", ";
    text += "'" + name + "' (" + (line > 0 ? "line " + std::to_string(line) + ", " : "") + std::to_string(bytes) +
            " bytes" + (n > 1 ? " each, " + std::to_string(n) + " tiles" : "") +
            (held > 1 ? ": " + std::to_string(held) + " blocks a loop reads in every iteration" : "") + ")";
    if (t->loc.known()) d.notes.push_back({t->loc, "'" + name + "' is declared here"});
  }
  return text;
}

}  // namespace

std::vector<MemoryPeak> allocation_peaks(const ir::Kernel& k, const Target& t) { return peaks(k, t, analyse(k)); }

AllocationVerdict check_allocation(const ir::Kernel& k, const Target& t,
                                   const std::function<std::string(const std::string&)>& display,
                                   const AllocationOptions& o) {
  AllocationVerdict v;
  const Analysis a = analyse(k);
  for (const MemoryPeak& p : peaks(k, t, a)) {
    const bool sbuf = p.memory == ir::Memory::SBUF;
    const int64_t ring = sbuf ? o.prefetch_ring : 0;
    if (p.bytes <= p.capacity - ring || p.at < 0) continue;
    Diagnostic notes;
    const std::string live = live_list(k, a, p, notes, display);
    const int64_t bank = t.psum_par_size_in_bytes;
    Diagnostic d = !sbuf          ? err_psum_over_capacity(t.name, p.bytes / bank, t.psum_num_banks, bank, live)
                   : o.no_fallback ? err_sbuf_over_capacity(t.name, p.bytes, p.capacity, live, ring)
                                   : warn_sbuf_spill(t.name, p.bytes, p.capacity, live, ring);
    d.loc = a.sites[p.at]->loc;
    d.api = a.sites[p.at]->api;  // the call that brings the peak
    d.notes = std::move(notes.notes);
    if (!sbuf || o.no_fallback) {
      if (!v.error) v.error = std::move(d);
    } else {
      v.warnings.push_back(std::move(d));
    }
  }
  return v;
}

}  // namespace nkic::sema
