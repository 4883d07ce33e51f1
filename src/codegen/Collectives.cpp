#include "codegen/Collectives.h"

#include <algorithm>
#include <set>

#include "codegen/Ops.h"
#include "ir/IRVisitor.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

ir::Opcode opcode_of(Collective k) {
  switch (k) {
    case Collective::all_reduce: return ir::Opcode::CcAllReduce;
    case Collective::all_gather: return ir::Opcode::CcAllGather;
    case Collective::reduce_scatter: return ir::Opcode::CcReduceScatter;
    case Collective::all_to_all: return ir::Opcode::CcAllToAll;
    case Collective::permute: return ir::Opcode::CcPermute;
    case Collective::all_to_all_v: return ir::Opcode::CcAllToAllV;
    case Collective::all_gather_v: return ir::Opcode::CcAllGatherV;
    case Collective::permute_implicit: return ir::Opcode::CcPermuteImplicit;
    case Collective::permute_implicit_reduce: return ir::Opcode::CcPermuteImplicitReduce;
  }
  return ir::Opcode::CcAllReduce;
}

std::string lists_str(const std::vector<std::vector<int64_t>>& lists) {
  std::string s = "[";
  for (size_t i = 0; i < lists.size(); ++i) s += (i ? ", " : "") + sema::shape_str(lists[i]);
  return s + "]";
}

// The replica group's lists: non-empty, of one size (one trace serves every rank), no rank
// twice. collective_permute's pairs: a rank sends at most once and receives at most once.
void check_groups(KernelBuilder& b, const CollectiveCall& c) {
  const std::string api = b.api();
  if (c.groups.empty() || c.groups[0].empty())
    b.fail(sema::err_unsupported_args(api, c.kind == Collective::permute ? "source_target_pairs lists no pair"
                                                                          : "the replica group lists no rank"));
  if (c.kind == Collective::permute) {
    std::set<int64_t> sources, targets;
    for (const std::vector<int64_t>& p : c.groups) {
      if (p.size() != 2 || p[0] < 0 || p[1] < 0)
        b.fail(sema::err_unsupported_args(api, "source_target_pairs are (source, target) pairs of ranks; got " +
                                                   sema::shape_str(p)));
      if (!sources.insert(p[0]).second || !targets.insert(p[1]).second)
        b.fail(sema::err_unsupported_args(api, "a rank sends at most once and receives at most once; " +
                                                   lists_str(c.groups) + " repeats one"));
    }
    return;
  }
  std::set<int64_t> seen;
  for (const std::vector<int64_t>& list : c.groups) {
    if (list.size() != c.groups[0].size())
      b.fail(sema::err_unsupported_args(api, "the replica group's lists have one size (the shapes follow from it); " +
                                                 lists_str(c.groups) + " mixes sizes"));
    for (int64_t r : list)
      if (r < 0 || !seen.insert(r).second)
        b.fail(sema::err_unsupported_args(api, "the replica group's lists name each rank (0 or more) once; got " +
                                                   lists_str(c.groups)));
  }
}

bool is_ring(Collective k) { return k == Collective::permute_implicit || k == Collective::permute_implicit_reduce; }

int lnc_of(const KernelBuilder& b) { return b.cores ? b.cores->count() : 1; }

// At LNC=2 each physical core takes part on its own (see check_launch), so a tensor written in
// shared HBM, one allocation for both cores, is computed from tensors read in shared HBM only
// (from per-core ones the two cores' results would differ and overwrite each other), and from
// other tensors than itself or its views (the second core would read what the first wrote).
void check_shared_dsts(KernelBuilder& b, const std::vector<types::TensorVal>& reads,
                       const std::vector<types::TensorVal>& writes) {
  if (lnc_of(b) == 1) return;
  auto name = [&](const types::TensorVal& t) { return "`" + KernelBuilder::display_name(b.tensor(t.tensor).name) + "`"; };
  auto named = [&](const types::TensorVal& t) { return name(t) + " is in " + ir::name(b.tensor(t.tensor).memory); };
  for (const types::TensorVal& w : writes) {
    if (b.tensor(w.tensor).memory != ir::Memory::SharedHBM) continue;
    for (const types::TensorVal& r : reads) {
      if (b.tensor(r.tensor).memory != ir::Memory::SharedHBM)
        b.fail(sema::err_unsupported_args(b.api(), "at LNC=2 each physical core runs the collective on its own "
                                                   "data, so a dst in shared HBM (one allocation for both cores) "
                                                   "takes srcs in shared HBM; " + named(r) + ", " + named(w)));
      if (b.kernel().root(r.tensor) == b.kernel().root(w.tensor))
        b.fail(sema::err_unsupported_args(b.api(), "at LNC=2 both cores run the collective, the second reading "
                                                   "what the first wrote, so a dst in shared HBM is another tensor "
                                                   "than the srcs; " + (name(r) == name(w) ? name(w) + " is both" :
                                                   name(r) + " and " + name(w) + " are views of one tensor")));
    }
  }
}

// Tensors all in HBM or all in SBUF; several (coalesced) only in HBM (a ring permute's channels
// are not coalesced); all_reduce's HBM rules
// (NKI_07_08_API.md §8): srcs all private or all shared, dsts likewise; at LNC=1 srcs private,
// dsts shared only under NKI_LNC1_SHARED_HBM=1.
void check_memories(KernelBuilder& b, const CollectiveCall& c) {
  const std::string api = b.api();
  auto memory = [&](const types::TensorVal& t) { return b.tensor(t.tensor).memory; };
  auto named = [&](const types::TensorVal& t) {
    return "`" + KernelBuilder::display_name(b.tensor(t.tensor).name) + "` is in " + ir::name(memory(t));
  };
  const types::TensorVal& first = c.srcs[0];
  for (const auto* list : {&c.srcs, &c.dsts})
    for (const types::TensorVal& t : *list) {
      if (memory(t) == ir::Memory::PSUM)
        b.fail(sema::err_unsupported_memory(list == &c.srcs ? "srcs" : "dsts", api, "hbm or sbuf", "psum"));
      if (ir::is_hbm(memory(t)) != ir::is_hbm(memory(first)))
        b.fail(sema::err_unsupported_args(api, "the tensors are all in HBM or all in SBUF, not a mix: " + named(first) +
                                                   ", " + named(t)));
    }
  if (c.srcs.size() > 1 && !ir::is_hbm(memory(first)) && !is_ring(c.kind))
    b.fail(sema::err_unsupported_args(api, "several tensors in one collective (coalesced) are in HBM only; " +
                                               named(first)));
  check_shared_dsts(b, c.srcs, c.dsts);
  if (c.kind != Collective::all_reduce || !ir::is_hbm(memory(first))) return;
  for (const auto* list : {&c.srcs, &c.dsts})
    for (const types::TensorVal& t : *list)
      if (memory(t) != memory((*list)[0]))
        b.fail(sema::err_unsupported_args(api, std::string(list == &c.srcs ? "srcs" : "dsts") +
                                                   " are all private or all shared HBM: " + named((*list)[0]) + ", " +
                                                   named(t)));
  if (lnc_of(b) > 1) return;
  if (memory(c.srcs[0]) != ir::Memory::PrivateHBM)
    b.fail(sema::err_unsupported_args(api, "at LNC=1 srcs are in private HBM (nl.private_hbm); " + named(c.srcs[0])));
  if (memory(c.dsts[0]) == ir::Memory::SharedHBM && !c.lnc1_shared_hbm)
    b.fail(sema::err_unsupported_args(api, "at LNC=1 dsts are in private HBM, or in shared HBM when "
                                           "NKI_LNC1_SHARED_HBM=1 is set; " + named(c.dsts[0])));
}

// The shape dst has when src is exchanged over lists of `n` ranks, or "" when the pair fits.
std::string shape_problem(const CollectiveCall& c, const types::TensorVal& src, const types::TensorVal& dst,
                          int64_t n) {
  std::vector<int64_t> want = src.shape;
  const auto d = static_cast<size_t>(c.collective_dim);
  if (c.kind == Collective::all_gather) want[d] *= n;
  if (c.kind == Collective::reduce_scatter) {
    if (want[d] % n != 0)
      return "src " + sema::shape_str(src.shape) + " splits into " + std::to_string(n) + " equal parts along dim " +
             std::to_string(d);
    want[d] /= n;
  }
  if (c.kind == Collective::all_to_all && want[d] % n != 0)
    return "src " + sema::shape_str(src.shape) + " splits into " + std::to_string(n) + " equal parts along dim " +
           std::to_string(d);
  if (dst.shape != want)
    return "dst is " + sema::shape_str(want) + " for src " + sema::shape_str(src.shape) + " over lists of " +
           std::to_string(n) + " rank(s); got " + sema::shape_str(dst.shape);
  return "";
}

void check_priority(KernelBuilder& b, const CollectiveCall& c) {
  if (c.priority && (*c.priority < 0 || *c.priority > 3))
    b.fail(sema::err_unsupported_args(b.api(), "priority is 0 (highest) to 3 (lowest); got " +
                                                   std::to_string(*c.priority)));
}

// Live whole views (no run-time index), reduced with add, maximum or minimum.
void check_views_and_op(KernelBuilder& b, const CollectiveCall& c) {
  for (const auto* list : {&c.srcs, &c.dsts})
    for (const types::TensorVal& t : *list) {
      b.check_live(t);
      if (!t.indirect.empty())
        b.fail(sema::err_unsupported_args(b.api(), "a collective moves whole views; `" +
                                                       KernelBuilder::display_name(b.tensor(t.tensor).name) +
                                                       "` is indexed at run time"));
    }
  if (c.op && *c.op != ir::AluOp::add && *c.op != ir::AluOp::maximum && *c.op != ir::AluOp::minimum)
    b.fail(sema::err_unsupported_args(b.api(), "op is " + std::string(ir::name(*c.op)) +
                                                   "; collectives reduce with nl.add, nl.maximum or nl.minimum"));
  check_priority(b, c);
}

void check_operands(KernelBuilder& b, const CollectiveCall& c) {
  const std::string api = b.api();
  if (c.srcs.empty() || c.srcs.size() != c.dsts.size())
    b.fail(sema::err_unsupported_args(api, "srcs and dsts are lists of one length, at least 1; got " +
                                               std::to_string(c.srcs.size()) + " and " +
                                               std::to_string(c.dsts.size())));
  if (c.srcs.size() > ir::info(opcode_of(c.kind)).max_srcs)
    b.fail(sema::err_unsupported_args(api, "takes at most " + std::to_string(ir::info(opcode_of(c.kind)).max_srcs) +
                                               " tensors"));
  check_views_and_op(b, c);
  // Dim 0, or 1 for an all_gather of 2-D SBUF tiles (NKI_CURRENT_API.md §8.2).
  const bool sbuf_gather = c.kind == Collective::all_gather && !ir::is_hbm(b.tensor(c.srcs[0].tensor).memory) &&
                           c.srcs[0].shape.size() == 2;
  if (c.collective_dim != 0 && !(sbuf_gather && c.collective_dim == 1))
    b.fail(sema::err_unsupported_args(api, "collective_dim is 0" + std::string(sbuf_gather ? " or 1" : "") +
                                               "; got " + std::to_string(c.collective_dim)));
  const int64_t n = c.kind == Collective::permute ? 1 : static_cast<int64_t>(c.groups[0].size());
  for (size_t i = 0; i < c.srcs.size(); ++i) {
    const types::TensorVal &src = c.srcs[i], &dst = c.dsts[i];
    if (b.tensor(src.tensor).dtype != b.tensor(dst.tensor).dtype)
      b.fail(sema::err_unsupported_args(api, "srcs[" + std::to_string(i) + "] and dsts[" + std::to_string(i) +
                                                 "] have one dtype; got " + std::string(ir::name(b.tensor(src.tensor).dtype)) +
                                                 " and " + std::string(ir::name(b.tensor(dst.tensor).dtype))));
    if (src.shape.empty() || static_cast<size_t>(c.collective_dim) >= src.shape.size())
      b.fail(sema::err_unsupported_args(api, "srcs[" + std::to_string(i) + "] has no dim " +
                                                 std::to_string(c.collective_dim)));
    if (std::string why = shape_problem(c, src, dst, n); !why.empty())
      b.fail(sema::err_unsupported_args(api, "srcs[" + std::to_string(i) + "], dsts[" + std::to_string(i) + "]: " + why));
  }
}

// The access walking view `v` element by element in row-major order (Grid coord 1); with
// parts > 1, dim `dim` split into `parts` blocks walked outermost: [parts, v.shape with dim / parts].
ir::Access walk(const KernelBuilder& b, const types::TensorVal& v, size_t dim = 0, int64_t parts = 1) {
  ir::Access a = access_for(b, v, v.shape);
  std::vector<int64_t> walked = {parts};
  walked.insert(walked.end(), v.shape.begin(), v.shape.end());
  walked[1 + dim] /= parts;
  std::vector<int64_t> stride(walked.size(), 1);
  for (size_t d = walked.size() - 1; d-- > 0;) stride[d] = stride[d + 1] * walked[d + 1];
  // The walk's position is below the walked size: the outermost coordinate needs no modulo.
  auto coord = [&](size_t d) {
    const ir::AffineExpr q = ir::AffineExpr::floordiv(ir::AffineExpr::grid(1), stride[d]);
    return d == 0 ? q : ir::AffineExpr::mod(q, walked[d]);
  };
  std::vector<ir::AffineExpr> subst;
  for (size_t d = 0; d < v.shape.size(); ++d)
    subst.push_back(d == dim ? coord(0) * walked[1 + d] + coord(1 + d) : coord(1 + d));
  for (ir::AffineExpr& e : a.index) e = e.substitute_grid(subst);
  return a;
}

int64_t elements(const types::TensorVal& v) {
  int64_t n = 1;
  for (int64_t d : v.shape) n *= d;
  return n;
}

// The variable-length forms (NKI_CURRENT_API.md §8.2): one flat HBM buffer per side and a uint32
// metadata tensor, [rows, list size] in HBM or [1, rows, list size] in SBUF, of send counts, send
// displacements, receive counts (and receive displacements with has_rdispls); all_gather_v reads
// the first column of its first two rows and has no has_rdispls.
void check_variable(KernelBuilder& b, const CollectiveCall& c) {
  const std::string api = b.api();
  if (c.srcs.size() != 1 || c.dsts.size() != 1)
    b.fail(sema::err_unsupported_args(api, "srcs and dsts hold one tensor each; got " + std::to_string(c.srcs.size()) +
                                               " and " + std::to_string(c.dsts.size())));
  for (const types::TensorVal* t : {&c.srcs[0], &c.dsts[0]}) {
    b.check_live(*t);
    if (!ir::is_hbm(b.tensor(t->tensor).memory))
      b.fail(sema::err_unsupported_memory(t == &c.srcs[0] ? "srcs" : "dsts", api, "hbm",
                                          ir::name(b.tensor(t->tensor).memory)));
  }
  if (b.tensor(c.srcs[0].tensor).dtype != b.tensor(c.dsts[0].tensor).dtype)
    b.fail(sema::err_unsupported_args(api, "srcs[0] and dsts[0] have one dtype"));
  check_priority(b, c);
  if (c.kind == Collective::all_gather_v && c.has_rdispls)
    b.fail(sema::err_unsupported_args(api, "all_gather_v has no receive displacements (has_rdispls=False)"));
  const types::TensorVal& m = *c.metadata;
  b.check_live(m);
  const auto n = static_cast<int64_t>(c.groups[0].size());
  const int64_t rows = c.kind == Collective::all_gather_v ? 2 : 3 + (c.has_rdispls ? 1 : 0);
  const ir::TensorDecl& md = b.tensor(m.tensor);
  const bool hbm = ir::is_hbm(md.memory);
  const std::vector<int64_t>& shape = m.shape;
  const bool fits = hbm ? shape.size() == 2 && shape[0] >= rows && shape[1] == n
                        : md.memory == ir::Memory::SBUF && shape.size() == 3 && shape[0] == 1 && shape[1] >= rows &&
                              shape[2] == n;
  if (md.dtype != ir::DType::uint32 || !fits)
    b.fail(sema::err_unsupported_args(api, "metadata_tensor is uint32 [" + std::to_string(rows) + ", " +
                                               std::to_string(n) + "] in HBM or [1, " + std::to_string(rows) + ", " +
                                               std::to_string(n) + "] in SBUF (rows by the list's ranks); got " +
                                               std::string(ir::name(md.dtype)) + sema::shape_str(shape) + " in " +
                                               ir::name(md.memory)));
  // all_to_all_v writes the receive counts into the metadata unless they are known.
  std::vector<types::TensorVal> writes = c.dsts;
  if (c.kind == Collective::all_to_all_v && !c.recv_counts_known) writes.push_back(m);
  check_shared_dsts(b, {c.srcs[0], m}, writes);
  if (elements(c.dsts[0]) % n != 0)
    b.fail(sema::err_unsupported_args(api, "dsts[0] holds one slot per rank of the list: its " +
                                               std::to_string(elements(c.dsts[0])) + " elements do not split into " +
                                               std::to_string(n)));
}

double flags_of(const CollectiveCall& c) {
  return (c.recv_counts_known ? 1 : 0) + (c.has_rdispls ? 2 : 0);
}

// The prepare awaiting its trigger, if any: the last cc_prepare no trigger follows.
const ir::Instruction* pending_prepare(const KernelBuilder& b) {
  struct Walk final : ir::IRVisitor {
    const ir::Instruction* pending = nullptr;
    void visit(const ir::Instruction& in) override {
      if (in.opcode == ir::Opcode::CcPrepare) pending = &in;
      if ((in.opcode == ir::Opcode::CcAllToAllV || in.opcode == ir::Opcode::CcAllGatherV) &&
          (static_cast<int>(in.imms[0]) & 4))
        pending = nullptr;
    }
  } walk;
  walk.visit_block(b.kernel().body);
  return walk.pending;
}

const ir::Instruction* instruction_with_id(const KernelBuilder& b, int64_t id) {
  struct Walk final : ir::IRVisitor {
    int64_t id;
    const ir::Instruction* found = nullptr;
    void visit(const ir::Instruction& in) override {
      if (in.id == id) found = &in;
    }
  } walk;
  walk.id = id;
  walk.visit_block(b.kernel().body);
  return walk.found;
}

// imms: `first` (collective_dim, or the flags), the list size, then the lists' ranks.
std::vector<double> group_imms(const CollectiveCall& c, double first) {
  std::vector<double> imms = {first, static_cast<double>(c.groups[0].size())};
  for (const std::vector<int64_t>& list : c.groups)
    for (int64_t r : list) imms.push_back(static_cast<double>(r));
  return imms;
}

// The variable-length collective moving src to dst by `metadata` (an access of the prepare's when triggered).
void emit_variable(KernelBuilder& b, ir::Opcode op, ir::Access src, ir::Access metadata, ir::Access dst,
                   std::vector<int64_t> widths, std::vector<double> imms) {
  auto in = make_instruction(op, {});
  const int64_t wsrc = widths[0], wmeta = widths[1], wdst = widths[2];
  in->dst = std::move(dst);
  in->widths = {wdst};
  if (op == ir::Opcode::CcAllToAllV && !(static_cast<int>(imms[0]) & 1)) {
    in->extra_dsts.push_back(metadata);  // the receive counts it writes
    in->widths.push_back(wmeta);
  }
  in->srcs = {std::move(src), std::move(metadata)};
  in->widths.push_back(wsrc);
  in->widths.push_back(wmeta);
  in->shape = {1, std::max({wsrc, wmeta, wdst})};
  in->imms = std::move(imms);
  b.emit(std::move(in));
}

// The instruction of a checked collective: dst, extra_dsts, then srcs, each walking its own elements.
void emit_collective(KernelBuilder& b, const CollectiveCall& c) {
  const bool pairwise = c.kind == Collective::permute || is_ring(c.kind);
  const int64_t n = pairwise ? 1 : static_cast<int64_t>(c.groups[0].size());
  const auto dim = static_cast<size_t>(c.collective_dim);
  auto in = make_instruction(opcode_of(c.kind), {});
  int64_t widest = 1;
  auto add = [&](const types::TensorVal& v, ir::Access& slot, bool split) {
    slot = walk(b, v, dim, split ? n : 1);
    in->widths.push_back(elements(v));
    widest = std::max(widest, elements(v));
  };
  // all_gather's dst, reduce_scatter's src and both sides of all_to_all walk one block per member.
  const bool split_dst = c.kind == Collective::all_gather || c.kind == Collective::all_to_all;
  const bool split_src = c.kind == Collective::reduce_scatter || c.kind == Collective::all_to_all;
  for (size_t i = 0; i < c.dsts.size(); ++i) add(c.dsts[i], i == 0 ? in->dst : in->extra_dsts.emplace_back(), split_dst);
  for (const types::TensorVal& s : c.srcs) add(s, in->srcs.emplace_back(), split_src);
  in->shape = {1, widest};
  in->alu = c.op.value_or(ir::AluOp::bypass);
  in->imms = group_imms(c, static_cast<double>(c.collective_dim));
  b.emit(std::move(in));
}

// Where a collective may be issued: unrolled, on NeuronCore-v3 or newer. Under kernel[2] the
// replica group still names logical ranks (rank_id is the logical NeuronCore's), and each physical
// core issues the call as a participant of its own: core c of a rank meets core c of the other
// ranks of its list, with its own SBUF and private-HBM tensors (nki-library's fgcc lays out
// rank r, core c's rows at [r][c]; NKI_07_08_API.md §8 gives no other pairing).
void check_launch(KernelBuilder& b, Collective kind) {
  b.require_unrolled("a collective");
  sema::assert_nc_version(b.target(), ir::info(opcode_of(kind)).min_nc_version, b.api(), b.raiser());
}

}  // namespace

void collective(KernelBuilder& b, const CollectiveCall& c) {
  check_launch(b, c.kind);
  check_groups(b, c);
  if (c.metadata) {
    check_variable(b, c);
    emit_variable(b, opcode_of(c.kind), walk(b, c.srcs[0]), walk(b, *c.metadata), walk(b, c.dsts[0]),
                  {elements(c.srcs[0]), elements(*c.metadata), elements(c.dsts[0])}, group_imms(c, flags_of(c)));
    return;
  }
  check_operands(b, c);
  check_memories(b, c);
  emit_collective(b, c);
}

namespace {

// The most channels a ring permute over `groups` has: 4 over one list (every device of the node), else 2.
int64_t max_channels(const std::vector<std::vector<int64_t>>& groups) { return groups.size() == 1 ? 4 : 2; }

// A ring permute's channels: one list per channel on every side, each of exactly one tensor (no
// coalescing), ids 0, 1, ..., no more than the group has; a channel's tensors of one dtype and shape.
void check_channels(KernelBuilder& b, const RingPermuteCall& c) {
  using Side = std::pair<std::string, const std::vector<std::vector<types::TensorVal>>*>;
  const std::vector<Side> sides =
      c.op ? std::vector<Side>{{"srcs0_by_channel", &c.srcs}, {"srcs1_by_channel", &c.srcs1}, {"dsts_by_channel", &c.dsts}}
           : std::vector<Side>{{"srcs_by_channel", &c.srcs}, {"dsts_by_channel", &c.dsts}};
  const size_t n = c.dsts.size();
  std::string names, counts;
  bool one_count = n > 0;
  for (size_t i = 0; i < sides.size(); ++i) {
    const std::string sep = i == 0 ? "" : i + 1 == sides.size() ? " and " : ", ";
    names += sep + sides[i].first;
    counts += sep + std::to_string(sides[i].second->size());
    one_count &= sides[i].second->size() == n;
  }
  if (!one_count)
    b.fail(sema::err_unsupported_args(b.api(), names + " hold one list per channel, at least 1; got " + counts));
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int64_t>(i);
  if (c.channel_ids != ids)
    b.fail(sema::err_unsupported_args(b.api(), "channel_ids number the channels consecutively from 0: " +
                                                   sema::shape_str(ids) + " for " + std::to_string(n) +
                                                   " channel(s); got " + sema::shape_str(c.channel_ids)));
  if (static_cast<int64_t>(n) > max_channels(c.groups))
    b.fail(sema::err_unsupported_args(b.api(), "at most 4 channels when the replica group is one list (every device "
                                               "of the node), else at most 2; got " + std::to_string(n) +
                                                   " channels over " + std::to_string(c.groups.size()) + " list(s)"));
  for (const auto& [name, lists] : sides)
    for (size_t ch = 0; ch < n; ++ch)
      if ((*lists)[ch].size() != 1)
        b.fail(sema::err_unsupported_args(b.api(), "each channel's list holds exactly one tensor (coalesced "
                                                   "collectives are not supported); " + name + "[" +
                                                       std::to_string(ch) + "] holds " +
                                                       std::to_string((*lists)[ch].size())));
  auto what = [&](const types::TensorVal& t) {
    return std::string(ir::name(b.tensor(t.tensor).dtype)) + sema::shape_str(t.shape);
  };
  for (size_t ch = 0; ch < n; ++ch)
    for (size_t i = 0; i + 1 < sides.size(); ++i) {
      const types::TensorVal &src = (*sides[i].second)[ch][0], &dst = c.dsts[ch][0];
      if (b.tensor(src.tensor).dtype != b.tensor(dst.tensor).dtype || src.shape != dst.shape)
        b.fail(sema::err_unsupported_args(b.api(), sides[i].first + "[" + std::to_string(ch) +
                                                       "][0] and dsts_by_channel[" + std::to_string(ch) +
                                                       "][0] have one dtype and shape; got " + what(src) + " and " +
                                                       what(dst)));
    }
}

}  // namespace

void collective_permute_implicit(KernelBuilder& b, const RingPermuteCall& c) {
  CollectiveCall flat;
  flat.kind = c.op ? Collective::permute_implicit_reduce : Collective::permute_implicit;
  flat.groups = c.groups;
  flat.op = c.op;
  flat.priority = c.priority;
  check_launch(b, flat.kind);
  check_groups(b, flat);
  check_channels(b, c);
  // One instruction: the channels' dsts, then their srcs (the reduce's left operands, then its right ones).
  for (const auto* side : {&c.srcs, &c.srcs1})
    for (const std::vector<types::TensorVal>& list : *side) flat.srcs.push_back(list[0]);
  for (const std::vector<types::TensorVal>& list : c.dsts) flat.dsts.push_back(list[0]);
  check_views_and_op(b, flat);
  check_memories(b, flat);
  emit_collective(b, flat);
}

void collective_prepare(KernelBuilder& b, const CollectiveCall& c) {
  b.require_unrolled("a collective");
  sema::assert_nc_version(b.target(), ir::info(ir::Opcode::CcPrepare).min_nc_version, b.api(), b.raiser());
  if (const ir::Instruction* p = pending_prepare(b))
    b.fail(sema::err_unsupported_args(b.api(), "the prepare at line " + std::to_string(p->loc.line) +
                                                   " has no trigger yet: each prepare is followed by exactly one "
                                                   "trigger, and an intervening prepare of any kind is rejected"));
  check_groups(b, c);
  check_variable(b, c);
  auto in = make_instruction(ir::Opcode::CcPrepare, {});
  in->srcs = {walk(b, *c.metadata), walk(b, c.srcs[0]), walk(b, c.dsts[0])};
  in->widths = {0, elements(*c.metadata), elements(c.srcs[0]), elements(c.dsts[0])};
  in->shape = {1, std::max({in->widths[1], in->widths[2], in->widths[3]})};
  in->imms = group_imms(c, flags_of(c) + (c.kind == Collective::all_gather_v ? 8 : 0));
  b.emit(std::move(in));
}

void collective_trigger(KernelBuilder& b, Collective kind, int64_t prepare_id) {
  const ir::Instruction* p = instruction_with_id(b, prepare_id);
  if (!p || p->opcode != ir::Opcode::CcPrepare)
    b.fail(sema::err_unsupported_args(b.api(), "prepare_instr is what an ncc.*_v_prepare call returned; got the "
                                               "instruction of " + (p ? p->api : std::string("another call"))));
  const bool gather = static_cast<int>(p->imms[0]) & 8;
  if (gather != (kind == Collective::all_gather_v))
    b.fail(sema::err_unsupported_args(b.api(), "prepare_instr is an " + p->api + "; trigger it with its own trigger"));
  if (pending_prepare(b) != p)
    b.fail(sema::err_unsupported_args(b.api(), "the prepare at line " + std::to_string(p->loc.line) +
                                                   " is triggered already: each prepare is followed by exactly "
                                                   "one trigger"));
  std::vector<double> imms = p->imms;
  imms[0] = static_cast<double>((static_cast<int>(imms[0]) & 3) | 4);
  emit_variable(b, opcode_of(kind), p->srcs[1], p->srcs[0], p->srcs[2], {p->widths[2], p->widths[1], p->widths[3]},
                std::move(imms));
}

void check_prepares_triggered(KernelBuilder& b) {
  if (const ir::Instruction* p = pending_prepare(b)) {
    sema::Diagnostic d = sema::err_unsupported_args(p->api, "this prepare has no trigger: each prepare is followed "
                                                            "by exactly one trigger (ncc.*_v_trigger(prepare_instr))");
    d.loc = p->loc;
    d.api = p->api;
    sema::fail(d);
  }
}

namespace {

// A register-writing rank instruction: rank_id (with the group's imms: the caller's position in its
// list) or cc_current_processing_rank_id.
void emit_rank_id(KernelBuilder& b, const types::TensorVal& reg, std::vector<double> imms,
                  ir::Opcode op = ir::Opcode::RankId) {
  b.require_unrolled(b.api());
  sema::assert_nc_version(b.target(), ir::info(op).min_nc_version, b.api(), b.raiser());
  auto in = make_instruction(op, {1, 1});
  in->dst = walk(b, reg);
  in->widths = {1};
  in->imms = std::move(imms);
  b.emit(std::move(in));
}

}  // namespace

void rank_id(KernelBuilder& b, const types::TensorVal& reg) { emit_rank_id(b, reg, {}); }

void self_index_in_replica_group(KernelBuilder& b, const types::TensorVal& reg,
                                 const std::vector<std::vector<int64_t>>& groups) {
  b.check_versioned_form("ncc.self_index_in_replica_group");
  CollectiveCall c;
  c.groups = groups;
  check_groups(b, c);
  emit_rank_id(b, reg, group_imms(c, 0));
}

void current_processing_rank_id(KernelBuilder& b, const types::TensorVal& reg, int64_t iteration,
                                const std::vector<std::vector<int64_t>>& groups, int64_t channel_id) {
  CollectiveCall c;
  c.groups = groups;
  check_groups(b, c);
  if (iteration < 0)
    b.fail(sema::err_unsupported_args(b.api(), "iteration_id is the ring step, 0 or more; got " +
                                                   std::to_string(iteration)));
  if (channel_id < 0 || channel_id >= max_channels(groups))
    b.fail(sema::err_unsupported_args(b.api(), "channel_id is 0 to " + std::to_string(max_channels(groups) - 1) +
                                                   " for a replica group of " + std::to_string(groups.size()) +
                                                   " list(s) (4 channels over one list, else 2); got " +
                                                   std::to_string(channel_id)));
  emit_rank_id(b, reg, group_imms(c, static_cast<double>(iteration)), ir::Opcode::CcProcessingRankId);
}

std::vector<std::vector<int64_t>> replica_groups_from_partition_op(int64_t world_size, const std::string& op,
                                                                    int64_t operand) {
  constexpr std::string_view api = "ReplicaGroup.from_partition_op";
  if (world_size < 1) sema::fail(sema::err_unsupported_args(api, "world_size is at least 1; got " + std::to_string(world_size)));
  if (op != "div" && op != "mod" && op != "bitwise_and")
    sema::fail(sema::err_unsupported_args(api, "op is rg_partition_op.div, .mod or .bitwise_and; got " + op));
  if (op != "bitwise_and" && operand < 1)
    sema::fail(sema::err_unsupported_args(api, "the operand of rg_partition_op." + op + " is at least 1; got " +
                                                   std::to_string(operand)));
  std::vector<int64_t> keys;
  std::vector<std::vector<int64_t>> lists;
  for (int64_t r = 0; r < world_size; ++r) {
    const int64_t key = op == "div" ? r / operand : op == "mod" ? r % operand : (r & operand);
    const auto at = std::find(keys.begin(), keys.end(), key) - keys.begin();
    if (at == static_cast<int64_t>(keys.size())) {
      keys.push_back(key);
      lists.emplace_back();
    }
    lists[at].push_back(r);
  }
  return lists;
}

void check_uniform_arguments(const std::vector<std::vector<std::pair<std::string, std::string>>>& ranks) {
  for (size_t r = 1; r < ranks.size(); ++r)
    for (size_t i = 0; i < ranks[0].size(); ++i) {
      const auto& [name, first] = ranks[0][i];
      std::string theirs = "missing";
      for (const auto& [n, what] : ranks[r])
        if (n == name) theirs = what;
      if (theirs != first) sema::fail(sema::err_multi_rank_arguments(name, static_cast<int64_t>(r), first, theirs));
    }
  for (size_t r = 1; r < ranks.size(); ++r)
    for (const auto& [name, what] : ranks[r]) {
      bool known = false;
      for (const auto& [n, first] : ranks[0]) known |= n == name;
      if (!known) sema::fail(sema::err_multi_rank_arguments(name, static_cast<int64_t>(r), "missing", what));
    }
}

}  // namespace nkic::codegen
