#include "sim/InstPlan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/Numerics.h"
#include "sim/Simulator.h"

namespace nkic::sim {

using ir::AluKind;
using ir::AluOp;
using ir::DType;
using Kind = InstPlan::Kind;
using Path = InstPlan::Path;
using Choice = InstPlan::Choice;
using Operand = InstPlan::Operand;

namespace {

bool integral(double v) { return std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 0x1p63; }

IntFormat format_of(DType t) {
  if (ir::is_float(t)) return {32, true};
  return {8 * ir::size_of(t), ir::info(t).is_signed};
}

[[noreturn]] void reject(const ir::Instruction& in, const std::string& why) {
  throw std::invalid_argument(std::string("simulate: ") + ir::name(in.opcode) + " " + why);
}

// The ops a reduction folds with: associative ones, plus subtract (a - b - c ...).
bool foldable(AluOp op) {
  switch (op) {
    case AluOp::add:
    case AluOp::subtract:
    case AluOp::multiply:
    case AluOp::maximum:
    case AluOp::minimum:
    case AluOp::abs_max:
    case AluOp::abs_min:
    case AluOp::logical_and:
    case AluOp::logical_or:
    case AluOp::logical_xor:
    case AluOp::bitwise_and:
    case AluOp::bitwise_or:
    case AluOp::bitwise_xor: return true;
    default: return false;
  }
}

// Matmul reads stationary on coords (K, M), moving on (K, N) and writes (M, N):
// an access using the third coord has no place in the blocked kernel.
void check_matmul_coords(const InstPlan& p, const ir::Instruction& in) {
  static const char* const what[] = {"dst", "stationary", "moving"};
  static const int unused[] = {0, 2, 1};
  for (int e = 0; e < 3; ++e)
    for (const SplitExpr& x : p.accesses[e].dims)
      if (x.grid[unused[e]] != 0)
        reject(in, std::string(what[e]) + " index uses iteration coordinate " +
                       std::to_string(unused[e]));
}

// Operands, reads, kind and compute path, from the opcode, op and dtypes.
void choose_path(InstPlan& p, const ir::Instruction& in) {
  const Operand src0{1, -1, 0.0};
  const auto imm = [&](size_t i) { return Operand{-1, -1, in.imms[i]}; };
  const ir::Exec exec = ir::info(in.opcode).exec;
  const std::vector<ir::AluStep> steps = ir::pipeline(in);
  const auto step_operand = [&](const ir::AluStep& s) {
    return s.src >= 0 ? Operand{s.src + 1, -1, 0.0} : Operand{-1, -1, s.imm};
  };
  const ir::Form form = ir::info(in.opcode).form;
  switch (form) {
    case ir::Form::fill: p.operands = {imm(0)}; break;
    case ir::Form::fold:
      p.op = in.alu;
      p.operands = {src0};
      break;
    case ir::Form::product: p.operands = {src0, {2, -1, 0.0}}; break;
    case ir::Form::pick:
      p.choice = in.reverse ? Choice::TensorZero : Choice::Tensor;
      p.operands = {{2, -1, 0.0}, in.srcs.size() == 3 ? Operand{3, -1, 0.0} : imm(0)};
      break;
    case ir::Form::range:
      p.choice = Choice::Range;
      p.forms.push_back(SplitExpr::from(in.value, static_cast<int>(in.shape.size())));
      for (size_t k = 0; k < 2; ++k) {
        p.range_ops[k] = in.steps.at(k).op;
        p.range_bounds[k] = step_operand(in.steps[k]);
      }
      p.operands = {src0, imm(0)};
      break;
    case ir::Form::cond:
      p.choice = Choice::Cond;
      for (const ir::Constraint& c : in.cond) {
        p.forms.push_back(SplitExpr::from(c.expr, static_cast<int>(in.shape.size())));
        p.cond_kinds.push_back(c.kind);
      }
      p.operands = {src0, imm(0)};
      break;
    case ir::Form::index:
      p.forms.push_back(SplitExpr::from(in.value, static_cast<int>(in.shape.size())));
      p.operands = {{-1, 0, 0.0}};
      break;
    default:
      if (exec == ir::Exec::Move || steps.empty()) {
        p.operands = {src0};
      } else if (steps.size() == 1) {
        const ir::AluStep& s = steps[0];
        p.op = s.op;
        p.operands = {src0};
        if (ir::info(s.op).arity == 2)
          p.operands.insert(s.reverse ? p.operands.begin() : p.operands.end(), step_operand(s));
      } else {
        p.operands = {src0};
        for (const ir::AluStep& s : steps) {
          int k = -1;
          if (ir::info(s.op).arity == 2) {
            k = static_cast<int>(p.operands.size());
            p.operands.push_back(step_operand(s));
          }
          p.steps.push_back({s.op, k, s.reverse});
        }
      }
  }
  for (const ir::AluStep& s : steps)
    if (ir::info(s.op).arity == 1 && s.src >= 0)
      reject(in, "cannot apply 1-operand op " + std::string(ir::name(s.op)) + " to an operand");
  if (form == ir::Form::fold) {
    p.kind = Kind::Reduce;
    if (!foldable(p.op)) reject(in, "cannot fold with op " + std::string(ir::name(p.op)));
  } else if (form == ir::Form::product) {
    p.kind = Kind::Matmul;
    check_matmul_coords(p, in);
  } else if (exec == ir::Exec::Elementwise && steps.size() == 1 &&
             ir::info(p.op).arity != static_cast<int>(p.operands.size())) {
    reject(in, "cannot apply " + std::to_string(ir::info(p.op).arity) + "-operand op " +
                   std::string(ir::name(p.op)));
  }

  const DType dst = p.accesses[0].dtype;
  const bool copy = exec == ir::Exec::Move;
  bool all_int = true;
  bool have_format = false;
  for (const Operand& o : p.operands) {
    if (o.access < 0) {
      all_int = all_int && (o.form >= 0 || integral(o.constant));
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
  if (!in.accumulate && copy) {
    p.path = Path::Move;
    p.dma = ir::engine_of(in) == ir::Engine::dma;
  } else if (!in.accumulate && form == ir::Form::fill) {
    p.path = Path::Fill;
    store_element(dst, p.fill.data(), 0, in.imms[0]);
  } else if (form == ir::Form::index) {
    // Exact values round once into the dst; only accumulation into a float
    // dst goes through fp32, as every accumulation does.
    p.path = in.accumulate && ir::is_float(dst) ? Path::Float : Path::Int;
  } else if (form == ir::Form::product) {
    p.path = Path::Float;
  } else if (!p.steps.empty()) {
    // A fused pipeline keeps its running value in fp32, or, for bitvec ops, in
    // the data's integer bits; only the final result rounds into the dst.
    const bool bitvec = std::any_of(p.steps.begin(), p.steps.end(), [](const InstPlan::Step& s) {
      return ir::info(s.op).kind == AluKind::Bitvec;
    });
    p.path = bitvec ? Path::Int : Path::Float;
    if (bitvec) p.format = format_of(p.accesses[1].dtype);
  } else if (form == ir::Form::fold) {
    // The hardware folds in fp32; only bitwise folds need the integers' bits.
    p.path = ir::info(p.op).kind == AluKind::Bitvec ? Path::Int : Path::Float;
  } else {
    // NKI_API §3.2: engines cast arithmetic inputs to fp32; only integer add,
    // subtract and multiply run exactly (GpSimd), and selections move values
    // untouched. Bitvec ops work on the bits, in the width of an integer result.
    const bool exact_int_op = p.op == ir::AluOp::add || p.op == ir::AluOp::subtract ||
                              p.op == ir::AluOp::multiply || p.op == ir::AluOp::bypass;
    switch (ir::info(p.op).kind) {
      case AluKind::Bitvec:
        p.path = Path::Int;
        if (ir::is_integer(dst) && dst != DType::bool_) p.format = format_of(dst);
        break;
      case AluKind::Compare:
      case AluKind::Logical: p.path = Path::Float; break;
      case AluKind::Arith: p.path = all_int && exact_int_op && ir::is_integer(dst) ? Path::Int : Path::Float; break;
      case AluKind::Activation: p.path = Path::Float; break;
    }
  }

  for (const Operand& o : p.operands)
    if (o.access >= 0) p.reads.push_back(o.access);
  if (p.choice == Choice::Tensor || p.choice == Choice::TensorZero) p.reads.push_back(1);
  if (p.choice == Choice::Range)
    for (const Operand& o : p.range_bounds)
      if (o.access >= 0) p.reads.push_back(o.access);
  p.accumulate = in.accumulate;
  p.negate = in.negate;
  p.scale = form == ir::Form::fold && !in.imms.empty() ? in.imms[0] : 1.0;
  if (in.accumulate) p.reads.push_back(0);
}

}  // namespace

void build_plan(InstPlan& p, const ir::Instruction& in, const std::vector<TensorMem>& mem) {
  const int rank = static_cast<int>(in.shape.size());
  p.accesses.resize(1 + in.srcs.size());
  auto set_access = [&](InstPlan::Access& ap, const ir::Access& a) {
    const TensorMem& t = mem[a.tensor];
    ap.tensor = a.tensor;
    ap.dtype = t.decl->dtype;
    ap.flat.set(0, rank);
    ap.dims.resize(a.index.size());
    for (size_t d = 0; d < a.index.size(); ++d) {
      ap.dims[d].set(a.index[d], rank);
      ap.flat.add_scaled(ap.dims[d], t.strides[d]);
    }
  };
  set_access(p.accesses[0], in.dst);
  for (size_t i = 0; i < in.srcs.size(); ++i) set_access(p.accesses[i + 1], in.srcs[i]);
  p.constraints.resize(in.predicate.size());
  for (size_t i = 0; i < in.predicate.size(); ++i) p.constraints[i].set(in.predicate[i].expr, rank);
  p.kind = Kind::Elementwise;
  p.forms.clear();
  p.cond_kinds.clear();
  p.path = Path::Move;
  p.op = AluOp::bypass;
  p.operands.clear();
  p.steps.clear();
  p.choice = Choice::None;
  p.reads.clear();
  p.format = {};
  p.dma = false;
  p.fill = {};
  p.grid_divs.clear();
  choose_path(p, in);
  auto collect = [&](const SplitExpr& x) {
    for (const ir::DivTerm& d : x.divs)
      if (d.num.uses(ir::VarKind::Grid)) p.grid_divs.push_back(d);
  };
  for (const InstPlan::Access& a : p.accesses) collect(a.flat);
  for (const SplitExpr& x : p.constraints) collect(x);
  for (const SplitExpr& x : p.forms) collect(x);
  // A reduction or matmul folds over its whole box at once: sub-boxes would not.
  if (!p.grid_divs.empty() && p.kind != InstPlan::Kind::Elementwise)
    sim_error("err_non_affine_index_expression",
                   "'//' or '%' of a tile index (nl.arange) on an operand of a reduction or matmul is not "
                   "supported: index with an affine expression of nl.arange instead",
                   in.loc);
}

std::unique_ptr<InstPlan> make_plan(const ir::Instruction& in, const std::vector<TensorMem>& mem) {
  auto p = std::make_unique<InstPlan>();
  build_plan(*p, in, mem);
  return p;
}

}  // namespace nkic::sim
