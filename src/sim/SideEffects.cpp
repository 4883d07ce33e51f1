#include "sim/SideEffects.h"

#include <sstream>

#include "sim/Convert.h"
#include "sim/Numerics.h"
#include "sim/PointWalk.h"
#include "sim/Uninit.h"

namespace nkic::sim {

double SideEffects::next_uniform() {
  // xorshift64*: fast, and the same sequence for the same seed on every machine.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return static_cast<double>((state_ * 0x2545F4914F6CDD1Dull) >> 40) / static_cast<double>(1ull << 24);
}

uint32_t SideEffects::next_bits(Xorwow& s) {
  // Marsaglia's xorwow (2003), as cuRAND's XORWOW: a xorshift over five words plus a Weyl sequence.
  uint32_t t = s[4];
  const uint32_t first = s[0];
  s[4] = s[3];
  s[3] = s[2];
  s[2] = s[1];
  s[1] = first;
  t ^= t >> 2;
  t ^= t << 1;
  t ^= first ^ (first << 4);
  s[0] = t;
  s[5] += 362437u;
  return t + s[5];
}

SideEffects::Xorwow SideEffects::seeded(uint32_t seed, int64_t partition) {
  // splitmix64 of (seed, partition) fills the words: distinct, never all zero, per partition.
  uint64_t z = (static_cast<uint64_t>(seed) << 32 | static_cast<uint64_t>(partition)) + 0x9E3779B97F4A7C15ull;
  Xorwow s{};
  for (int w = 0; w < 6; ++w) {
    z += 0x9E3779B97F4A7C15ull;
    uint64_t x = z;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    s[w] = static_cast<uint32_t>(x ^ (x >> 31));
  }
  if ((s[0] | s[1] | s[2] | s[3] | s[4]) == 0) s[0] = 1;
  return s;
}

std::vector<SideEffects::Xorwow>& SideEffects::generators(ir::Engine e) {
  std::vector<Xorwow>& g = e == ir::Engine::pool ? gpsimd_ : vector_;
  if (g.empty())
    for (int64_t p = 0; p < 128; ++p) g.push_back(seeded(0, p));
  return g;
}

// Each point takes the next draw of its partition's generator, in row-major order
// over the partition's free elements.
void SideEffects::xorwow(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  std::vector<Xorwow>& gen = generators(ir::engine_of(in));
  const ir::Var partition{ir::VarKind::Grid, 0};
  if (in.opcode == ir::Opcode::SetRngSeed) {
    const TensorMem& t = mem_.at(in.srcs.at(0).tensor);
    for_each_point(in, loops, pids, [&](const auto& value_of) {
      const auto seed = static_cast<uint32_t>(static_cast<int64_t>(
          load_element(t.decl->dtype, t.data, point_offset(mem_, in, in.srcs[0], value_of))));
      for (size_t p = 0; p < gen.size(); ++p) gen[p] = seeded(seed, static_cast<int64_t>(p));
    });
    return;
  }
  std::vector<int64_t> word(in.shape.at(0), 0);  // the next state word per partition
  for_each_point(in, loops, pids, [&](const auto& value_of) {
    const int64_t p = value_of(partition);
    Xorwow& g = gen.at(p);
    if (in.opcode == ir::Opcode::RandSetState) {
      const TensorMem& t = mem_.at(in.srcs.at(0).tensor);
      g[word[p]++] = static_cast<uint32_t>(static_cast<int64_t>(
          load_element(t.decl->dtype, t.data, point_offset(mem_, in, in.srcs[0], value_of))));
      return;
    }
    TensorMem& t = mem_.at(in.dst.tensor);
    ensure_filled(t);
    double v = 0.0;
    if (in.opcode == ir::Opcode::RandGetState) {
      v = g[word[p]++];
    } else if (in.opcode == ir::Opcode::Rng) {
      // The low bits of the draw, as the dtype's own integer (two's complement for signed).
      const uint32_t bits = next_bits(g);
      const bool is_signed = ir::info(t.decl->dtype).is_signed;
      switch (ir::size_of(t.decl->dtype)) {
        case 1: v = is_signed ? double(static_cast<int8_t>(bits)) : double(static_cast<uint8_t>(bits)); break;
        case 2: v = is_signed ? double(static_cast<int16_t>(bits)) : double(static_cast<uint16_t>(bits)); break;
        default: v = is_signed ? double(static_cast<int32_t>(bits)) : double(bits);
      }
    } else {  // Rand2: 24 random bits as a fp32 fraction in [0, 1), scaled into [min, max)
      const float u = static_cast<float>(next_bits(g) >> 8) * (1.0f / 16777216.0f);
      float lo = static_cast<float>(in.imms.empty() ? 0.0 : in.imms[0]);
      float hi = static_cast<float>(in.imms.empty() ? 0.0 : in.imms[1]);
      if (in.imms.empty()) {
        lo = static_cast<float>(load_element(mem_.at(in.srcs[0].tensor).decl->dtype, mem_.at(in.srcs[0].tensor).data,
                                             read_offset(mem_, in, in.srcs[0], value_of)));
        hi = static_cast<float>(load_element(mem_.at(in.srcs[1].tensor).decl->dtype, mem_.at(in.srcs[1].tensor).data,
                                             read_offset(mem_, in, in.srcs[1], value_of)));
      }
      v = lo + u * (hi - lo);
    }
    const int64_t off = point_offset(mem_, in, in.dst, value_of);
    store_element(t.decl->dtype, t.data, off, v);
    uninit::wrote(t, off);
  });
}

// The draws of an nl.rand of data's shape (every point, masked or not, in fp32), each
// point then kept where its draw >= the rate, as greater_equal and a select would: the
// data moves exactly between integer formats, through fp32 otherwise.
void SideEffects::dropout(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  TensorMem& dst = mem_.at(in.dst.tensor);
  const TensorMem& data = mem_.at(in.srcs.at(0).tensor);
  ensure_filled(dst);
  const ir::DType to = dst.decl->dtype, from = data.decl->dtype;
  const bool exact = ir::is_integer(to) && ir::is_integer(from);
  ir::Instruction every = in;
  every.predicate.clear();
  for_each_point(every, loops, pids, [&](const auto& value_of) {
    const float draw = static_cast<float>(next_uniform());
    for (const ir::Constraint& c : in.predicate)
      if (!c.holds(c.expr.eval(value_of))) return;
    uninit::row_start();  // each point depends on its own data and rate
    float rate = static_cast<float>(in.imms.empty() ? 0.0 : in.imms[0]);
    if (in.srcs.size() > 1) {
      const TensorMem& r = mem_.at(in.srcs[1].tensor);
      gather_float(r.decl->dtype, r.data, read_offset(mem_, in, in.srcs[1], value_of), 1, 1, &rate);
    }
    const bool keep = draw >= rate;
    const int64_t at = read_offset(mem_, in, in.srcs[0], value_of);
    const int64_t off = point_offset(mem_, in, in.dst, value_of);
    if (exact) {
      int64_t v = 0;
      if (keep) gather_int(from, data.data, at, 1, 1, &v);
      scatter_int(to, dst.data, off, 1, 1, &v);
    } else {
      float v = 0.0f;
      if (keep) gather_float(from, data.data, at, 1, 1, &v);
      scatter_float(to, dst.data, off, 1, 1, &v);
    }
    uninit::wrote(dst, off);
  });
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
        uninit::wrote(t, off);
      });
      return;
    }
    case ir::Opcode::Dropout: return dropout(in, loops, pids);
    case ir::Opcode::Rng:
    case ir::Opcode::Rand2:
    case ir::Opcode::SetRngSeed:
    case ir::Opcode::RandSetState:
    case ir::Opcode::RandGetState: return xorwow(in, loops, pids);
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
