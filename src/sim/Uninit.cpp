#include "sim/Uninit.h"

#include <algorithm>

#include "sim/Simulator.h"

namespace nkic::sim::uninit {

namespace {

struct Current {
  Tracker* tracker = nullptr;
  const ir::Instruction* in = nullptr;
  int origin = -1;  // the taint of what the instruction writes next, or -1
};
thread_local Current current;

std::string line_of(ir::SourceLoc loc) { return "line " + std::to_string(loc.line); }

}  // namespace

int Tracker::origin_of(const TensorMem& t) const {
  for (const TensorMem* m = &t;; m = &mem_[m->decl->alias_of]) {
    if (origin_of_[id(*m)] >= 0) return origin_of_[id(*m)];
    if (m->decl->alias_of < 0) return -1;
  }
}

int Tracker::origin(const TensorMem& t, int64_t at, const ir::Instruction& in) {
  if (t.written[at] == kPoisoned) {
    if (const int o = origin_of(t); o >= 0) return o;
  }
  // One origin per reading instruction and tensor: a loop reads the same rows again and again.
  const auto key = std::make_tuple(in.loc.file, in.loc.line, in.loc.col, id(t));
  if (const auto it = first_read_.find(key); it != first_read_.end()) return it->second;
  origins_.push_back({in.loc, "element " + element_str(t, at) + " of tensor `" + t.decl->name + "`"});
  return first_read_[key] = static_cast<int>(origins_.size()) - 1;
}

// A tensor keeps the first origin it was poisoned from: the root of what follows.
void Tracker::poisoned(const TensorMem& t, int origin) {
  if (origin_of_[id(t)] < 0) origin_of_[id(t)] = origin;
}

void Tracker::reaches_output(const ir::Instruction& in, const TensorMem& t, int64_t at, int origin) const {
  const Origin& o = origins_.at(origin);
  ir::fail({"err_read_uninitialized_memory",
            "Read of uninitialized memory reaches an output: element " + element_str(t, at) + " of tensor `" +
                t.decl->name + "` is computed from " + o.what + ", which was never written in this program instance (read at " +
                line_of(o.loc) + ")",
            ir::ErrorKind::Runtime,
            in.loc,
            {{o.loc, "the uninitialized value is read here"}},
            "",  // the hint of the kernel's API (sema/Hints.cpp)
            ""});
}

void Tracker::used_as(const TensorMem& t, int64_t at, ir::SourceLoc loc, const std::string& use) const {
  const std::string what = "element " + element_str(t, at) + " of tensor `" + t.decl->name + "`";
  const int o = t.written[at] == kPoisoned ? origin_of(t) : -1;
  sim_error("err_read_uninitialized_memory",
            o < 0 ? "Read of uninitialized memory: " + what + " is used as " + use +
                        " but was never written in this program instance"
                  : "Read of uninitialized memory: " + what + " is used as " + use + " but is computed from " +
                        origins_[o].what + ", which was never written in this program instance (read at " +
                        line_of(origins_[o].loc) + ")",
            loc);
}

std::optional<ir::Diagnostic> Tracker::dropped() const {
  if (origins_.empty()) return std::nullopt;
  const Origin& o = origins_.front();
  return ir::Diagnostic{"warn_uninitialized_value_dropped",
                        "this instruction reads " + o.what +
                            ", which was never written in this program instance; no output, branch or address uses "
                            "what is computed from it, so the results do not depend on it",
                        ir::ErrorKind::Runtime, o.loc, {}, "", ""};
}

Scope::Scope(Tracker& tracker, const ir::Instruction& in) { current = {&tracker, &in, -1}; }

Scope::~Scope() { current = {}; }

bool active() { return current.tracker != nullptr; }

// Of several uninitialized reads, the one recorded first names the origin: a
// poisoned operand's root read comes before this instruction's own.
void read(const TensorMem& t, int64_t at) {
  if (!current.tracker || !unclean(t, at)) return;
  if (current.origin >= 0 && t.written[at] == kUnwritten) return;
  const int origin = current.tracker->origin(t, at, *current.in);
  current.origin = current.origin < 0 ? origin : std::min(current.origin, origin);
}

int taint() { return current.origin; }

void row_start() { current.origin = -1; }

void poison(TensorMem& t, int64_t at, int origin) {
  if (!t.tracked) current.tracker->reaches_output(*current.in, t, at, origin);
  t.written[at] = kPoisoned;
  current.tracker->poisoned(t, origin);
}

void wrote(TensorMem& t, int64_t at) {
  if (current.origin >= 0) return poison(t, at, current.origin);
  if (t.tracked || t.accumulator) t.written[at] = kWritten;
}

void wrote(TensorMem& t, int64_t at, int64_t step, int64_t n) {
  for (int64_t i = 0; i < n; ++i) wrote(t, at + i * step);
}

void use(const TensorMem& t, int64_t at, ir::SourceLoc loc, const char* what) {
  if (current.tracker && unclean(t, at)) current.tracker->used_as(t, at, loc, what);
}

}  // namespace nkic::sim::uninit
