#include "sim/SideEffects.h"

#include <sstream>

#include "sim/Numerics.h"
#include "sim/PointWalk.h"

namespace nkic::sim {

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
      ensure_filled(t);
      for_each_point(in, loops, pids, [&](const auto& value_of) {
        int64_t off = point_offset(mem_, in, in.dst, value_of);
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
        os << (first ? "" : ", ") << load_element(t.decl->dtype, t.data, point_offset(mem_, in, in.srcs[0], value_of));
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
