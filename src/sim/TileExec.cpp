#include "sim/TileExec.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "sim/AluEval.h"
#include "sim/Convert.h"
#include "sim/Numerics.h"

namespace nkic::sim {

using ir::AluKind;
using ir::AluOp;
using ir::DType;
using ir::Opcode;

// Everything about one instruction that does not change between executions.
struct InstPlan {
  // Move: dst = cast(src0), exact between any two formats. Fill: dst = one
  // encoded value. Float: the op in fp32. Int: the op exactly in int64.
  enum class Path : uint8_t { Move, Fill, Float, Int };
  struct Access {
    int tensor = -1;
    DType dtype = DType::float32;
    SplitExpr flat;               // element offset
    std::vector<SplitExpr> dims;  // index per tensor dimension
  };
  // A value the op reads: accesses[access], or `constant` when access < 0.
  struct Operand {
    int access = -1;
    double constant = 0.0;
  };

  std::vector<Access> accesses;  // [0] is dst, then the srcs in order
  std::vector<SplitExpr> constraints;
  Path path = Path::Move;
  AluOp op = AluOp::bypass;
  std::vector<Operand> operands;  // one per op argument
  std::vector<int> reads;         // accesses whose memory the op reads
  IntFormat format;
  bool accumulate = false;
  std::array<std::byte, 4> fill{};
};

using Path = InstPlan::Path;
using Operand = InstPlan::Operand;
using AccessPlan = InstPlan::Access;

namespace {

bool integral(double v) { return std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 0x1p63; }

// Nearest integer, ties to even, NaN -> 0, saturated: a float value as an int64.
int64_t to_int64(double v) {
  if (v != v) return 0;
  if (v >= 0x1p63) return INT64_MAX;
  if (v <= -0x1p63) return INT64_MIN;
  return static_cast<int64_t>(std::nearbyint(v));
}

IntFormat format_of(DType t) {
  if (ir::is_float(t)) return {32, true};
  return {8 * ir::size_of(t), ir::info(t).is_signed};
}

std::string range_str(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

// The operands and the compute path of an instruction, from its opcode, op and dtypes.
void choose_path(InstPlan& p, const ir::Instruction& in) {
  const bool copy =
      in.opcode == Opcode::Load || in.opcode == Opcode::Store || in.opcode == Opcode::Copy;
  const Operand src0{1, 0.0};
  switch (in.opcode) {
    case Opcode::Load:
    case Opcode::Store:
    case Opcode::Copy: p.operands = {src0}; break;
    case Opcode::Memset: p.operands = {{-1, in.imms[0]}}; break;
    case Opcode::Activation:
      p.op = in.alu;
      p.operands = {src0};
      break;
    case Opcode::TensorTensor:
    case Opcode::TensorScalar: {
      p.op = in.alu;
      const bool tt = in.opcode == Opcode::TensorTensor;
      const Operand second = tt ? Operand{2, 0.0} : Operand{-1, in.imms[0]};
      p.operands = !tt && in.reverse ? std::vector<Operand>{second, src0}
                                     : std::vector<Operand>{src0, second};
      break;
    }
    default:
      throw std::logic_error(std::string("simulate: no simulator kernel for opcode ") +
                             ir::name(in.opcode));
  }
  const bool uses_alu = in.opcode == Opcode::Activation || in.opcode == Opcode::TensorTensor ||
                        in.opcode == Opcode::TensorScalar;
  if (uses_alu && ir::info(p.op).arity != static_cast<int>(p.operands.size()))
    throw std::invalid_argument(std::string("simulate: ") + ir::name(in.opcode) + " cannot apply " +
                                std::to_string(ir::info(p.op).arity) + "-operand op " +
                                std::string(ir::name(p.op)));

  const DType dst = p.accesses[0].dtype;
  if (!in.accumulate && copy) {
    p.path = Path::Move;
  } else if (!in.accumulate && in.opcode == Opcode::Memset) {
    p.path = Path::Fill;
    store_element(dst, p.fill.data(), 0, in.imms[0]);
  } else {
    bool all_int = true;
    bool have_format = false;
    for (const Operand& o : p.operands) {
      if (o.access < 0) {
        all_int = all_int && integral(o.constant);
        continue;
      }
      DType t = p.accesses[o.access].dtype;
      all_int = all_int && ir::is_integer(t);
      IntFormat f = format_of(t);
      p.format = have_format
                     ? IntFormat{std::max(p.format.bits, f.bits), p.format.is_signed || f.is_signed}
                     : f;
      have_format = true;
    }
    switch (ir::info(p.op).kind) {
      case AluKind::Bitvec: p.path = Path::Int; break;
      case AluKind::Compare:
      case AluKind::Logical: p.path = all_int ? Path::Int : Path::Float; break;
      case AluKind::Arith: p.path = all_int && ir::is_integer(dst) ? Path::Int : Path::Float; break;
      case AluKind::Activation: p.path = Path::Float; break;
    }
  }

  for (const Operand& o : p.operands)
    if (o.access >= 0) p.reads.push_back(o.access);
  p.accumulate = in.accumulate;
  if (in.accumulate) p.reads.push_back(0);
}

}  // namespace

TileExecutor::TileExecutor(std::vector<TensorMem>& mem, const SimOptions& opts)
    : mem_(mem), opts_(opts) {
  for (int i = 0; i < 4; ++i) {
    fbuf_[i].resize(kChunk);
    ibuf_[i].resize(kChunk);
  }
  for (int i = 0; i < 2; ++i) {
    fconst_[i].resize(kChunk);
    iconst_[i].resize(kChunk);
  }
}

TileExecutor::~TileExecutor() = default;

const InstPlan& TileExecutor::plan_for(const ir::Instruction& in) {
  std::unique_ptr<InstPlan>& slot = plans_[&in];
  if (slot) return *slot;
  auto p = std::make_unique<InstPlan>();
  const int rank = static_cast<int>(in.shape.size());
  auto add_access = [&](const ir::Access& a) {
    const TensorMem& t = mem_[a.tensor];
    AccessPlan ap;
    ap.tensor = a.tensor;
    ap.dtype = t.decl->dtype;
    ap.flat = SplitExpr::from(0, rank);
    for (size_t d = 0; d < a.index.size(); ++d) {
      ap.dims.push_back(SplitExpr::from(a.index[d], rank));
      ap.flat.add_scaled(ap.dims.back(), t.strides[d]);
    }
    p->accesses.push_back(std::move(ap));
  };
  add_access(in.dst);
  for (const ir::Access& a : in.srcs) add_access(a);
  for (const ir::Constraint& c : in.predicate)
    p->constraints.push_back(SplitExpr::from(c.expr, rank));
  choose_path(*p, in);
  slot = std::move(p);
  return *slot;
}

void TileExecutor::run(const ir::Instruction& in, const Env& env) {
  const InstPlan& p = plan_for(in);
  if (!clamp_box(p, in, env)) return;
  check_bounds(p, in, env);

  const int n = static_cast<int>(p.accesses.size());
  space_.reset(lo_, hi_);
  bases_.resize(n);
  for (int e = 0; e < n; ++e) {
    bases_[e] = p.accesses[e].flat.base(env);
    space_.add_form(bases_[e], p.accesses[e].flat.grid.data());
  }
  for (auto [c, base] : multi_)
    space_.add_cond(base, p.constraints[c].grid.data(), in.predicate[c].kind);
  space_.finish();
  step_.resize(n);
  off_.resize(n);
  for (int e = 0; e < n; ++e) step_[e] = space_.row_step(e);

  if (opts_.check_uninitialized) check_reads(p, in);
  bind_data(p);
  space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
    for (int64_t j = a; j < b; j += kChunk) {
      for (int e = 0; e < n; ++e) off_[e] = start[e] + j * step_[e];
      run_chunk(p, std::min(kChunk, b - j));
    }
  });
}

bool TileExecutor::clamp_box(const InstPlan& p, const ir::Instruction& in, const Env& env) {
  lo_.assign(in.shape.size(), 0);
  hi_.assign(in.shape.begin(), in.shape.end());
  multi_.clear();
  for (size_t c = 0; c < p.constraints.size(); ++c) {
    const SplitExpr& x = p.constraints[c];
    const ir::CmpKind kind = in.predicate[c].kind;
    int64_t base = x.base(env);
    if (x.num_grid_vars == 0) {
      if (!holds(kind, base)) return false;
    } else if (x.num_grid_vars == 1) {
      int k = 0;
      while (x.grid[k] == 0) ++k;
      clamp_range(x.grid[k], base, kind, lo_[k], hi_[k]);
    } else {
      multi_.emplace_back(static_cast<int>(c), base);
    }
  }
  for (size_t k = 0; k < lo_.size(); ++k)
    if (lo_[k] >= hi_[k]) return false;
  return true;
}

namespace {
[[noreturn]] void throw_oob(const ir::Instruction& in, const ir::TensorDecl& t, size_t dim,
                            int64_t lo, int64_t hi) {
  throw SimError("err_tensor_access_out_of_bound",
                 "Out-of-bound access for tensor `" + t.name + "` on dimension " +
                     std::to_string(dim) + ": index range " + range_str(lo, hi) +
                     " exceed dimension size of " + std::to_string(t.shape[dim]),
                 in.loc);
}
}  // namespace

// Each index is affine in the Grid coordinates, so its extremes over the box are
// at corners chosen by the coefficients' signs. Points the multi-var constraints
// mask out may be among them: then only the exact check can tell.
void TileExecutor::check_bounds(const InstPlan& p, const ir::Instruction& in, const Env& env) {
  for (const AccessPlan& a : p.accesses) {
    const ir::TensorDecl& t = *mem_[a.tensor].decl;
    for (size_t d = 0; d < a.dims.size(); ++d) {
      const SplitExpr& x = a.dims[d];
      int64_t mn = x.base(env), mx = mn;
      for (size_t k = 0; k < x.grid.size(); ++k) {
        int64_t c = x.grid[k];
        mn += c * (c > 0 ? lo_[k] : hi_[k] - 1);
        mx += c * (c > 0 ? hi_[k] - 1 : lo_[k]);
      }
      if (mn >= 0 && mx < t.shape[d]) continue;
      if (multi_.empty()) throw_oob(in, t, d, mn, mx);
      return check_exact_bounds(p, in, env);
    }
  }
}

void TileExecutor::check_exact_bounds(const InstPlan& p, const ir::Instruction& in,
                                      const Env& env) {
  check_space_.reset(lo_, hi_);
  for (const AccessPlan& a : p.accesses)
    for (const SplitExpr& x : a.dims) check_space_.add_form(x.base(env), x.grid.data());
  for (auto [c, base] : multi_)
    check_space_.add_cond(base, p.constraints[c].grid.data(), in.predicate[c].kind);
  check_space_.finish();
  const int forms = check_space_.num_forms();
  std::vector<int64_t> mn(forms, INT64_MAX), mx(forms, INT64_MIN);
  check_space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
    for (int f = 0; f < forms; ++f) {
      int64_t first = start[f] + a * check_space_.row_step(f);
      int64_t last = start[f] + (b - 1) * check_space_.row_step(f);
      mn[f] = std::min({mn[f], first, last});
      mx[f] = std::max({mx[f], first, last});
    }
  });
  int f = 0;
  for (const AccessPlan& a : p.accesses) {
    const ir::TensorDecl& t = *mem_[a.tensor].decl;
    for (size_t d = 0; d < a.dims.size(); ++d, ++f)
      if (mn[f] <= mx[f] && (mn[f] < 0 || mx[f] >= t.shape[d])) throw_oob(in, t, d, mn[f], mx[f]);
  }
}

void TileExecutor::check_reads(const InstPlan& p, const ir::Instruction& in) {
  for (int e : p.reads) {
    const TensorMem& t = mem_[p.accesses[e].tensor];
    if (!t.tracked) continue;
    const uint8_t* written = t.written.data();
    const int64_t step = step_[e];
    space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
      for (int64_t j = a; j < b; ++j) {
        int64_t at = start[e] + j * step;
        if (written[at]) continue;
        std::string index;
        for (size_t d = 0; d < t.strides.size(); ++d)
          index += (d ? ", " : "") + std::to_string(at / t.strides[d] % t.decl->shape[d]);
        throw SimError("err_read_uninitialized_memory",
                       "Read of uninitialized memory: element [" + index + "] of tensor `" +
                           t.decl->name + "` was never written in this program instance",
                       in.loc);
      }
    });
  }
}

namespace {
bool overlaps(const TensorMem& a, const TensorMem& b) {
  const auto bytes = [](const TensorMem& t) {
    return t.decl->num_elements() * ir::size_of(t.decl->dtype);
  };
  return a.data < b.data + bytes(b) && b.data < a.data + bytes(a);
}
}  // namespace

// An operand whose memory overlaps the dst's (the same tensor, or bindings that
// share memory) could see values this instruction already wrote. The hardware
// reads a tile before writing it, so unless the operand reads exactly the points
// it writes, it reads a copy taken before the instruction. Either way results
// go through a buffer, never straight into the dst.
void TileExecutor::bind_data(const InstPlan& p) {
  const int n = static_cast<int>(p.accesses.size());
  data_.resize(n);
  for (int e = 0; e < n; ++e) data_[e] = mem_[p.accesses[e].tensor].data;
  const AccessPlan& dst = p.accesses[0];
  const TensorMem& dst_mem = mem_[dst.tensor];
  dst_direct_ = true;
  for (size_t k = 0; k < p.operands.size(); ++k) {
    const int e = p.operands[k].access;
    if (e < 0) continue;
    const AccessPlan& a = p.accesses[e];
    const TensorMem& t = mem_[a.tensor];
    if (!overlaps(t, dst_mem)) continue;
    dst_direct_ = false;
    if (a.tensor == dst.tensor && bases_[e] == bases_[0] && a.flat.grid == dst.flat.grid) continue;
    snapshot_[k].assign(t.data, t.data + t.decl->num_elements() * ir::size_of(t.decl->dtype));
    data_[e] = snapshot_[k].data();
  }
}

void TileExecutor::run_chunk(const InstPlan& p, int64_t m) {
  switch (p.path) {
    case Path::Move: move_chunk(p, m); break;
    case Path::Fill: {
      const AccessPlan& dst = p.accesses[0];
      fill_elements(ir::size_of(dst.dtype), p.fill.data(), data_[0], off_[0], step_[0], m);
      break;
    }
    case Path::Float: float_chunk(p, m); break;
    case Path::Int: int_chunk(p, m); break;
  }
  mark_written(p, m);
}

void TileExecutor::move_chunk(const InstPlan& p, int64_t m) {
  const DType to = p.accesses[0].dtype, from = p.accesses[1].dtype;
  if (to == from) {
    copy_elements(ir::size_of(to), data_[1], off_[1], step_[1], data_[0], off_[0], step_[0], m);
  } else if (ir::is_float(from)) {
    gather_float(from, data_[1], off_[1], step_[1], m, fbuf_[0].data());
    scatter_float(to, data_[0], off_[0], step_[0], m, fbuf_[0].data());
  } else {
    gather_int(from, data_[1], off_[1], step_[1], m, ibuf_[0].data());
    scatter_int(to, data_[0], off_[0], step_[0], m, ibuf_[0].data());
  }
}

void TileExecutor::float_chunk(const InstPlan& p, int64_t m) {
  const float* args[2] = {};
  for (size_t k = 0; k < p.operands.size(); ++k) {
    const Operand& o = p.operands[k];
    const int slot = static_cast<int>(k);
    if (o.access < 0) {
      args[k] = const_floats(slot, static_cast<float>(o.constant), m);
      continue;
    }
    const int e = o.access;
    const DType t = p.accesses[e].dtype;
    if (t == DType::float32 && step_[e] == 1) {
      args[k] = reinterpret_cast<const float*>(data_[e]) + off_[e];
    } else {
      gather_float(t, data_[e], off_[e], step_[e], m, fbuf_[k].data());
      args[k] = fbuf_[k].data();
    }
  }
  const DType dt = p.accesses[0].dtype;
  const bool direct = dt == DType::float32 && step_[0] == 1 && !p.accumulate && dst_direct_;
  float* out = direct ? reinterpret_cast<float*>(data_[0]) + off_[0] : fbuf_[2].data();
  if (p.operands.size() == 1)
    eval_unary(p.op, args[0], out, m);
  else
    eval_binary(p.op, args[0], args[1], out, m);
  if (p.accumulate) {
    gather_float(dt, data_[0], off_[0], step_[0], m, fbuf_[3].data());
    sim::accumulate(fbuf_[3].data(), out, m);
  }
  if (!direct) scatter_float(dt, data_[0], off_[0], step_[0], m, out);
}

void TileExecutor::int_chunk(const InstPlan& p, int64_t m) {
  const int64_t* args[2] = {};
  for (size_t k = 0; k < p.operands.size(); ++k) {
    const Operand& o = p.operands[k];
    if (o.access < 0) {
      args[k] = const_ints(static_cast<int>(k), to_int64(o.constant), m);
      continue;
    }
    const int e = o.access;
    gather_int(p.accesses[e].dtype, data_[e], off_[e], step_[e], m, ibuf_[k].data());
    args[k] = ibuf_[k].data();
  }
  int64_t* out = ibuf_[2].data();
  if (p.operands.size() == 1)
    eval_unary_int(p.op, args[0], out, m, p.format);
  else
    eval_binary_int(p.op, args[0], args[1], out, m, p.format);
  const DType dt = p.accesses[0].dtype;
  if (p.accumulate) {
    gather_int(dt, data_[0], off_[0], step_[0], m, ibuf_[3].data());
    accumulate_int(ibuf_[3].data(), out, m);
  }
  scatter_int(dt, data_[0], off_[0], step_[0], m, out);
}

const float* TileExecutor::const_floats(int slot, float v, int64_t m) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  if (bits != fconst_bits_[slot] || fconst_len_[slot] < m) {
    std::fill_n(fconst_[slot].data(), m, v);
    fconst_bits_[slot] = bits;
    fconst_len_[slot] = m;
  }
  return fconst_[slot].data();
}

const int64_t* TileExecutor::const_ints(int slot, int64_t v, int64_t m) {
  if (v != iconst_val_[slot] || iconst_len_[slot] < m) {
    std::fill_n(iconst_[slot].data(), m, v);
    iconst_val_[slot] = v;
    iconst_len_[slot] = m;
  }
  return iconst_[slot].data();
}

void TileExecutor::mark_written(const InstPlan& p, int64_t m) {
  TensorMem& t = mem_[p.accesses[0].tensor];
  if (!t.tracked) return;
  uint8_t* w = t.written.data() + off_[0];
  if (step_[0] == 1) {
    std::memset(w, 1, m);
  } else {
    for (int64_t i = 0; i < m; ++i) w[i * step_[0]] = 1;
  }
}

}  // namespace nkic::sim
