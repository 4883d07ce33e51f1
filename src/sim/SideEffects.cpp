#include "sim/SideEffects.h"

#include <functional>
#include <sstream>

#include "sim/Numerics.h"

namespace nkic::sim {

namespace {

// Calls f(point) for every point of the iteration space the predicate keeps, in row-major order.
template <class F>
void for_each_point(const ir::Instruction& in, const int64_t* loops, const int64_t* pids, F f) {
  std::vector<int64_t> point(in.shape.size(), 0);
  auto value_of = [&](ir::Var v) -> int64_t {
    switch (v.kind) {
      case ir::VarKind::Grid: return point[v.id];
      case ir::VarKind::Loop: return loops[v.id];
      case ir::VarKind::ProgramId: return pids[v.id];
    }
    return 0;
  };
  while (true) {
    bool keep = true;
    for (const ir::Constraint& c : in.predicate) keep = keep && c.holds(c.expr.eval(value_of));
    if (keep) f(value_of);
    size_t d = point.size();
    while (d > 0 && ++point[d - 1] == in.shape[d - 1]) point[--d] = 0;
    if (d == 0) return;
  }
}

int64_t offset_of(const TensorMem& t, const ir::Access& a, const std::function<int64_t(ir::Var)>& value_of) {
  int64_t off = 0;
  for (size_t d = 0; d < a.index.size(); ++d) off += a.index[d].eval(value_of) * t.strides[d];
  return off;
}

}  // namespace

double SideEffects::next_uniform() {
  // xorshift64*: fast, and the same sequence for the same seed on every machine.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return static_cast<double>((state_ * 0x2545F4914F6CDD1Dull) >> 40) / static_cast<double>(1ull << 24);
}

void SideEffects::run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  switch (in.opcode) {
    case ir::Opcode::RandomSeed:
      state_ = static_cast<uint64_t>(static_cast<int64_t>(in.imms.at(0))) * 0x9E3779B97F4A7C15ull + 1;
      return;
    case ir::Opcode::Rand: {
      TensorMem& t = mem_.at(in.dst.tensor);
      if (t.pending_fill) {
        fill_fresh(t);
        t.pending_fill = false;
      }
      for_each_point(in, loops, pids, [&](const auto& value_of) {
        int64_t off = offset_of(t, in.dst, value_of);
        store_element(t.decl->dtype, t.data, off, next_uniform());
        if (t.tracked) t.written.at(off) = 1;
      });
      return;
    }
    case ir::Opcode::Print: {
      const TensorMem& t = mem_.at(in.srcs.at(0).tensor);
      std::ostringstream os;
      os << in.text << " [";
      bool first = true;
      for_each_point(in, loops, pids, [&](const auto& value_of) {
        os << (first ? "" : ", ") << load_element(t.decl->dtype, t.data, offset_of(t, in.srcs[0], value_of));
        first = false;
      });
      os << "] shape=[";
      for (size_t d = 0; d < in.shape.size(); ++d) os << (d ? ", " : "") << in.shape[d];
      out_ << os.str() << "]\n";
      return;
    }
    default: return;
  }
}

}  // namespace nkic::sim
