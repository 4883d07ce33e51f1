#include "codegen/Cores.h"

#include <sstream>

#include "codegen/KernelBuilder.h"
#include "codegen/Ops.h"

#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

// What a loop the cores run together is among the sync points of the block around it.
constexpr const char* kDeviceLoop = "a device loop";

// The version's word on the call: nki.lnc is NKI 0.8's, nisa.sendrecv_compute 0.7's; from 0.8 a
// nisa form is deprecated, naming its nki.lnc form (sema::versioned_forms()).
void check_version(KernelBuilder& b, const LncForm& form) { b.check_versioned_form(form.lnc ? "nki.lnc" : b.api()); }

void check_core_barrier(KernelBuilder& b, const types::TensorVal& data, const std::vector<int64_t>& cores, int n,
                        const LncForm& form) {
  const std::string api = b.api();
  if (form.lnc && cores != std::vector<int64_t>{0, 1})
    b.fail(sema::err_unsupported_args(api, "cores is (0, 1), the two physical cores of an HBM stack; got " +
                                               sema::shape_str(cores)));
  b.require_unrolled("a core_barrier");
  b.check_live(data);
  // The docs ask for shared HBM; the kernel library's router also passes the SBUF tile it
  // staged the data in. The barrier orders every instruction either way.
  const ir::Memory m = b.tensor(data.tensor).memory;
  if (m != ir::Memory::SharedHBM && m != ir::Memory::SBUF)
    b.fail(sema::err_unsupported_args(api, "data is the shared HBM (or SBUF) tensor the cores synchronise on; `" +
                                               KernelBuilder::display_name(b.tensor(data.tensor).name) + "` is in " +
                                               ir::name(m)));
  std::vector<int64_t> all;
  for (int c = 0; c < n; ++c) all.push_back(c);
  if (n > 1 && cores != all)
    b.fail(sema::err_unsupported_args(api, "cores names every core of the launch, " + sema::shape_str(all) +
                                               "; got " + sema::shape_str(cores)));
}

void check_lnc_form(KernelBuilder& b, const LncForm& form, int n) {
  const std::string& api = b.api();
  if (!form.lnc) return;
  if (n != 2)
    b.fail(sema::err_unsupported_args(api, "runs at LNC=2 only (kernel[2]); the kernel runs at LNC=" +
                                               std::to_string(n)));
  if (form.priority && form.gpsimd_dma)
    b.fail(sema::err_unsupported_args(api, "with dma_engine=gpsimd_dma explicit priorities are rejected; leave "
                                           "priority=None"));
  if (form.priority && (*form.priority < 0 || *form.priority > 3))
    b.fail(sema::err_unsupported_args(api, "priority is 0 (highest) to 3 (lowest); got " +
                                               std::to_string(*form.priority)));
}

void check_sendrecv(KernelBuilder& b, const types::TensorVal& src, const types::TensorVal& dst, int64_t send_to,
                    int64_t recv_from, std::optional<ir::AluOp> reduce_op, int self, int n, const LncForm& form) {
  const std::string api = b.api();
  b.require_unrolled("a sendrecv");
  check_lnc_form(b, form, n);
  // "The DMA engine" reduces with add, max or min (the sendrecv_compute reference).
  if (reduce_op && *reduce_op != ir::AluOp::add && *reduce_op != ir::AluOp::maximum &&
      *reduce_op != ir::AluOp::minimum)
    b.fail(sema::err_unsupported_args(api, "reduce_op is " + std::string(ir::name(*reduce_op)) +
                                               "; the DMA engine reduces with nl.add, nl.maximum or nl.minimum"));
  if (n < 2) b.fail(sema::err_unsupported_args(api, "exchanges tiles between the cores of a kernel[2] launch"));
  // lnc.sendrecv_compute's operands are both in SBUF or both in private HBM (never shared HBM).
  const bool private_pair = form.lnc && reduce_op && b.tensor(src.tensor).memory == ir::Memory::PrivateHBM;
  for (const types::TensorVal* t : {&src, &dst}) {
    b.check_live(*t);
    const ir::Memory m = b.tensor(t->tensor).memory;
    if (private_pair && m != ir::Memory::PrivateHBM)
      b.fail(sema::err_unsupported_args(api, "src and dst are both in SBUF or both in private HBM; src is in "
                                             "private_hbm, dst in " + std::string(ir::name(m))));
    if (!private_pair && m != ir::Memory::SBUF)
      b.fail(sema::err_unsupported_memory(t == &src ? "src" : "dst", api,
                                          form.lnc && reduce_op ? "sbuf or private_hbm" : "sbuf", ir::name(m)));
  }
  if (src.shape != dst.shape || b.tensor(src.tensor).dtype != b.tensor(dst.tensor).dtype)
    b.fail(sema::err_unsupported_args(api, "src and dst have one shape and dtype"));
  for (const int64_t r : {send_to, recv_from})
    if (r < 0 || r >= n || r == self)
      b.fail(sema::err_unsupported_args(api, "the ranks are the other core of the launch (0 .. " +
                                                 std::to_string(n - 1) + ", not " + std::to_string(self) +
                                                 "); got " + std::to_string(r)));
}

void check_sendrecv_pairs(KernelBuilder& b, const std::vector<CoreSegments::Arrival>& point) {
  std::vector<std::array<int64_t, 3>> pairs;
  for (const CoreSegments::Arrival& a : point) pairs.push_back({a.core, a.send_to, a.recv_from});
  for (const auto& [c, to, from] : pairs) {
    bool received = false;
    for (const auto& [peer, peer_to, peer_from] : pairs) received |= peer == to && peer_from == c;
    if (!received)
      b.fail(sema::err_unsupported_args(b.api(), "core " + std::to_string(c) + " sends to core " +
                                                             std::to_string(to) + ", which does not receive from it"));
  }
}

}  // namespace

void CoreSegments::begin_core(KernelBuilder& b, int c) {
  ir::Block& body = b.kernel().body;
  if (c != static_cast<int>(regions_.empty() ? 0 : regions_[0].segments.size()) || open_.size() > 1)
    b.fail(sema::err_internal("cores are traced in order"));
  if (regions_.empty()) {
    Region top;
    top.block = &body;
    regions_.push_back(std::move(top));
  }
  if (c > 0) regions_[0].segments[c - 1].back().second = body.size();
  regions_[0].segments.push_back({{body.size(), body.size()}});
  open_ = {Open{nullptr, 0, 0, 0}};
  core_ = c;
  allocated_ = 0;
}

void core_barrier(KernelBuilder& b, const types::TensorVal& data, const std::vector<int64_t>& cores,
                  const LncForm& form) {
  check_version(b, form);
  check_core_barrier(b, data, cores, b.cores ? b.cores->count() : 1, form);
  CoreSegments::Arrival barrier;
  barrier.api = b.api();
  if (b.cores) b.cores->sync(b, std::move(barrier));  // one core has nothing to wait for
}

void sendrecv(KernelBuilder& b, const types::TensorVal& src, const types::TensorVal& dst, int64_t send_to,
              int64_t recv_from, std::optional<ir::AluOp> reduce_op, const LncForm& form) {
  check_version(b, form);
  check_sendrecv(b, src, dst, send_to, recv_from, reduce_op, b.cores ? b.cores->current() : 0,
                 b.cores ? b.cores->count() : 1, form);
  const std::vector<CoreSegments::Arrival>* point =
      b.cores->sync(b, {0, b.api(), src, dst, send_to, recv_from, reduce_op});
  if (!point) return;
  check_sendrecv_pairs(b, *point);
  b.cores->begin_exchange(b);
  OpArgs args;
  args.engine = ir::Engine::dma;
  for (const CoreSegments::Arrival& from : *point)
    for (const CoreSegments::Arrival& to : *point) {
      if (to.core != from.send_to) continue;
      if (to.reduce_op != from.reduce_op)
        b.fail(sema::err_unsupported_args(b.api(), "core " + std::to_string(from.core) + " reduces with " +
                                                       std::string(ir::name(*from.reduce_op)) + ", core " +
                                                       std::to_string(to.core) + " with " +
                                                       std::string(ir::name(*to.reduce_op)) +
                                                       ": the pair names one reduce_op"));
      if (to.reduce_op && ir::is_hbm(b.tensor(to.dst->tensor).memory)) {
        // Private HBM (lnc.sendrecv_compute): the DMA engine reduces in place of an engine's tile op.
        auto in = make_instruction(ir::Opcode::TensorTensor, b, *to.dst, to.dst->shape);
        in->srcs = {access_for(b, *to.src, to.dst->shape), access_for(b, *from.src, to.dst->shape)};
        in->alu = *to.reduce_op;
        in->engine = ir::Engine::dma;
        b.emit(std::move(in));
      } else if (to.reduce_op) {
        tensor_tensor(b, Dst::into(*to.dst), *to.reduce_op, *to.src, *from.src, ir::Engine::dma, args);
      } else {
        dma_copy(b, *to.dst, Value(*from.src), std::nullopt, args);
      }
    }
  b.cores->end_exchange(b);
}

types::TensorVal CoreSegments::shared_tensor(KernelBuilder& b, std::vector<int64_t> shape, ir::DType dtype,
                                             const std::string& name) {
  const size_t k = allocated_++;
  if (current() == 0) {
    shared_.push_back(alloc_tensor(b, name, std::move(shape), dtype, ir::Memory::SharedHBM));
    return shared_.back();
  }
  if (k >= shared_.size() || shared_[k].shape != shape || b.tensor(shared_[k].tensor).dtype != dtype)
    b.fail(sema::err_unsupported_args("nl.ndarray", "core " + std::to_string(current()) + " allocates shared HBM tensor #" +
                                                        std::to_string(k) + " unlike core 0 (every core must follow the "
                                                                            "same control flow)"));
  return shared_[k];
}

const std::vector<CoreSegments::Arrival>* CoreSegments::sync(KernelBuilder& b, Arrival arrival) {
  if (core_ == 0) share_open_loops(b);
  const Open& in = open_.back();
  if (in.region < 0)
    b.fail(sema::err_core_sync_mismatch("core " + std::to_string(core_) + " synchronises in it and core 0 does not"));
  const size_t end = regions_[in.region].block->size();
  return arrive(b, in.region, std::move(arrival), end, end);
}

const std::vector<CoreSegments::Arrival>* CoreSegments::arrive(KernelBuilder& b, size_t region, Arrival arrival,
                                                               size_t end, size_t next) {
  Region& g = regions_[region];
  std::vector<std::pair<size_t, size_t>>& mine = g.segments.at(core_);
  mine.back().second = end;
  mine.push_back({next, next});
  const size_t s = mine.size() - 2;  // this core's sync points passed here before this one
  if (s == g.points.size()) g.points.emplace_back();
  std::vector<Arrival>& point = g.points[s];
  const std::string& api = arrival.api;
  // The nisa and nki.lnc forms of one call pair up ("nisa.sendrecv", "nki.lnc.sendrecv").
  auto call = [](const std::string& a) { return a.substr(a.rfind('.') + 1); };
  if (!point.empty() && call(point.front().api) != call(api))
    b.fail(sema::err_unsupported_args(api, "core " + std::to_string(core_) + "'s synchronisation point #" +
                                               std::to_string(s) + " is " + api + ", core 0's is " +
                                               point.front().api + " (every core must follow the same control flow)"));
  arrival.core = core_;
  point.push_back(std::move(arrival));
  return core_ == n_ - 1 ? &point : nullptr;
}

void CoreSegments::share_open_loops(KernelBuilder& b) {
  for (size_t i = 1; i < open_.size(); ++i) {
    if (open_[i].region >= 0) continue;
    const size_t parent = static_cast<size_t>(open_[i - 1].region);
    // The loop is the last statement of its parent's block: core 0 is still in it.
    const size_t at = regions_[parent].block->size() - 1;
    Arrival loop;
    loop.api = kDeviceLoop;
    arrive(b, parent, std::move(loop), at, at + 1);
    regions_[parent].exchanges[regions_[parent].points.size() - 1] = {at, at + 1};
    regions_[parent].shared[open_[i].position] = regions_.size();
    open_[i].region = static_cast<int>(regions_.size());
    Region r;
    r.block = &open_[i].loop->body;
    r.loop = open_[i].loop;
    r.segments = {{{0, 0}}};  // core 0's statements in the loop so far, then its next ones
    regions_.push_back(std::move(r));
  }
}

ir::Loop* CoreSegments::join_loop(KernelBuilder& b, int64_t lb, int64_t ub, int64_t stride,
                                  const std::optional<ir::Access>& dynamic_ub) {
  Open& parent = open_.back();
  const int position = parent.children++;
  const int parent_region = parent.region;
  open_.push_back({nullptr, -1, 0, position});
  if (core_ == 0 || parent_region < 0) return nullptr;
  const auto it = regions_[parent_region].shared.find(position);
  if (it == regions_[parent_region].shared.end()) return nullptr;
  Region& g = regions_[it->second];
  ir::Loop& l = *g.loop;
  const std::string me = "core " + std::to_string(core_);
  if (l.dynamic_ub.has_value() != dynamic_ub.has_value())
    b.fail(sema::err_core_sync_mismatch(std::string(l.dynamic_ub ? "core 0's" : me + "'s") +
                                        " bound is read at run time and the other's is known when traced"));
  if (lb != l.lb || stride != l.stride || (!dynamic_ub && ir::trip_count(lb, ub, stride) != l.tripcount()))
    b.fail(sema::err_core_sync_mismatch(
        "core 0 counts range(" + std::to_string(l.lb) + ", " + (l.dynamic_ub ? "<run time>" : std::to_string(l.ub)) +
        ", " + std::to_string(l.stride) + "), " + me + " range(" + std::to_string(lb) + ", " +
        (dynamic_ub ? "<run time>" : std::to_string(ub)) + ", " + std::to_string(stride) + ")"));
  if (dynamic_ub) {
    l.peers.resize(n_ - 1, *dynamic_ub);
    l.peers[core_ - 1] = *dynamic_ub;
  }
  const size_t end = regions_[parent_region].block->size();
  Arrival loop;
  loop.api = kDeviceLoop;
  arrive(b, parent_region, std::move(loop), end, end);
  g.segments.resize(core_ + 1);
  g.segments[core_] = {{l.body.size(), l.body.size()}};
  open_.back() = {&l, static_cast<int>(it->second), 0, position};
  return &l;
}

bool CoreSegments::peer_condition(const ir::Access& cond) {
  const Open& in = open_.back();
  if (core_ == 0 || in.region < 0) return false;
  ir::Loop& l = *in.loop;
  l.peers.resize(n_ - 1, cond);
  l.peers[core_ - 1] = cond;
  return true;
}

void CoreSegments::closed_loop(KernelBuilder& b) {
  const Open e = open_.back();
  open_.pop_back();
  if (e.region < 0) return;
  Region& g = regions_[e.region];
  g.segments[core_].back().second = g.block->size();
  if (core_ == n_ - 1) order(b, g, &g.loop->core_spans);
}

void CoreSegments::begin_exchange(KernelBuilder& b) { exchange_start_ = regions_[open_.back().region].block->size(); }

void CoreSegments::end_exchange(KernelBuilder&) {
  Region& g = regions_[open_.back().region];
  std::vector<std::pair<size_t, size_t>>& mine = g.segments[core_];
  g.exchanges[mine.size() - 2] = {exchange_start_, g.block->size()};
  // The last core's next segment starts after the exchange.
  mine.back() = {g.block->size(), g.block->size()};
}

void CoreSegments::finish(KernelBuilder& b) {
  Region& top = regions_.at(0);
  top.segments.back().back().second = top.block->size();
  // A loop a core never joined first: it is where the cores parted.
  for (const Region& g : regions_)
    if (g.loop && g.segments.size() < static_cast<size_t>(n_)) {
      sema::Diagnostic d = sema::err_core_sync_mismatch("core " + std::to_string(g.segments.size()) +
                                                        " does not run it");
      d.loc = g.loop->loc;
      b.fail(std::move(d));
    }
  const size_t syncs = top.segments[0].size() - 1;
  for (size_t c = 1; c < top.segments.size(); ++c)
    if (top.segments[c].size() - 1 != syncs)
      b.fail(sema::err_unsupported_args("nki.jit", "core 0 passes " + std::to_string(syncs) +
                                                       " synchronisation points (core_barrier, sendrecv) and core " +
                                                       std::to_string(c) + " " +
                                                       std::to_string(top.segments[c].size() - 1) +
                                                       ": every core must follow the same control flow"));
  std::vector<ir::Kernel::CoreSpan> spans;
  order(b, top, &spans);
  b.kernel().core_spans = std::move(spans);
  b.kernel().physical_cores = n_;
}

void CoreSegments::order(KernelBuilder& b, Region& g, std::vector<ir::CoreSpan>* spans) {
  for (size_t c = 1; c < g.segments.size(); ++c)
    if (g.segments[c].size() != g.segments[0].size())
      b.fail(sema::err_core_sync_mismatch("core 0 passes " + std::to_string(g.segments[0].size() - 1) +
                                          " synchronisation point(s) in it, core " + std::to_string(c) + " " +
                                          std::to_string(g.segments[c].size() - 1)));
  ir::Block& body = *g.block;
  ir::Block ordered;
  ordered.reserve(body.size());
  // The cost model runs each span on its core's engines (perf/CostModel.h).
  auto take = [&](size_t from, size_t to, int core, int segment) {
    if (to <= from) return;
    if (spans && !spans->empty() && spans->back().core == core && spans->back().segment == segment &&
        spans->back().last == ordered.size())
      spans->back().last += to - from;  // the same core's next statement
    else if (spans)
      spans->push_back({ordered.size(), ordered.size() + (to - from), core, segment});
    for (size_t i = from; i < to; ++i) ordered.push_back(std::move(body[i]));
  };
  take(0, g.segments[0][0].first, 0, 0);  // allocations and copies before core 0 started (none in practice)
  for (size_t s = 0; s < g.segments[0].size(); ++s) {
    // The cores run at once: their statements are interleaved one by one, so that a core's early
    // writes (its initialisation) precede another core's later ones, as they do on the device.
    const int seg = static_cast<int>(s);
    std::vector<size_t> next(g.segments.size());
    for (size_t c = 0; c < g.segments.size(); ++c) next[c] = g.segments[c][s].first;
    for (bool more = true; more;) {
      more = false;
      for (size_t c = 0; c < g.segments.size(); ++c)
        if (next[c] < g.segments[c][s].second) {
          take(next[c], next[c] + 1, static_cast<int>(c), seg);
          ++next[c];
          more = true;
        }
    }
    if (const auto x = g.exchanges.find(s); x != g.exchanges.end()) take(x->second.first, x->second.second, -1, seg + 1);
  }
  if (ordered.size() != body.size()) b.fail(sema::err_internal("per-core segments do not cover the block"));
  body = std::move(ordered);
}

namespace {

// The integer `text` holds, or nullopt.
std::optional<int64_t> integer(const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return std::nullopt;
  return v;
}

// The --lnc of neuronx-cc's flags ("--lnc=2" or "--lnc 2"), its text; empty when not given.
std::string lnc_flag(const std::string& flags) {
  std::istringstream words(flags);
  std::string w, value;
  while (words >> w) {
    if (w.rfind("--lnc=", 0) == 0) value = w.substr(6);
    else if (w == "--lnc" && !(words >> value)) value = " ";
  }
  return value;
}

}  // namespace

int64_t resolve_lnc(KernelBuilder& b, const std::string& kernel, std::optional<int64_t> bracket,
                    const std::string& runtime, const std::string& cc_flags, bool tracer) {
  const sema::Target& t = b.target();
  const std::optional<int64_t> configured = integer(runtime);
  int64_t lnc = bracket.value_or(1);
  if (!bracket && tracer && !runtime.empty()) {
    if (!configured || *configured < 1)
      b.fail(sema::err_invalid_environment_value("NEURON_LOGICAL_NC_CONFIG", runtime, "an LNC degree (1 or 2)"));
    lnc = *configured;
  }
  if (lnc < 1 || lnc > t.max_num_physical_cores) {
    const std::string launch = bracket ? "kernel[" + std::to_string(lnc) + "]" : "NEURON_LOGICAL_NC_CONFIG=" + runtime;
    b.fail(sema::err_lnc_not_supported(launch, lnc, t.name, t.max_num_physical_cores));
  }
  if (!runtime.empty() && (!tracer || bracket) && configured != lnc) b.fail(sema::err_lnc_config_mismatch(lnc, runtime));
  const std::string graph = tracer ? lnc_flag(cc_flags) : "";
  if (!graph.empty()) {
    const std::optional<int64_t> compiler = integer(graph);
    if (!compiler || *compiler < 1)
      b.fail(sema::err_invalid_environment_value("NEURON_CC_FLAGS", cc_flags, "flags whose --lnc is 1 or 2"));
    if (*compiler != lnc) b.fail(sema::err_lnc_compiler_mismatch(kernel, lnc, *compiler));
  }
  return lnc;
}

}  // namespace nkic::codegen
