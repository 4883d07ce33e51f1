// What the simulator precomputes once per instruction: its accesses split for
// execution, its operands and the compute path.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/IR.h"
#include "sim/AluEval.h"
#include "sim/TensorMem.h"
#include "sim/TileSpace.h"

namespace nkic::sim {

struct InstPlan {
  // Elementwise: one result per point. Reduce: a fold of src0 into dst elements
  // shared by several points. Matmul: the [K, M, N] product.
  enum class Kind : uint8_t { Elementwise, Reduce, Matmul };
  // Move: dst = cast(src0), exact between any two formats. Fill: dst = one
  // encoded value. Float: the op in fp32. Int: the op exactly in int64.
  enum class Path : uint8_t { Move, Fill, Float, Int };
  // Select and AffineSelect pick operands[0] where the choice holds, else
  // operands[1]; the choice is src0 != 0 (Tensor), src0 == 0 (TensorZero, a
  // select with reverse_pred), every condition form (Cond) or both of
  // range_select's comparisons of the position (forms[0]) with its bounds (Range).
  enum class Choice : uint8_t { None, Tensor, TensorZero, Cond, Range };
  struct Access {
    int tensor = -1;
    ir::DType dtype = ir::DType::float32;
    SplitExpr flat;               // element offset
    std::vector<SplitExpr> dims;  // index per tensor dimension
  };
  // A value the op reads: accesses[access], the exact value of forms[form], or
  // `constant` when both are negative.
  struct Operand {
    int access = -1;
    int form = -1;
    double constant = 0.0;
  };

  Kind kind = Kind::Elementwise;
  std::vector<Access> accesses;  // [0] is dst, then the srcs in order
  std::vector<SplitExpr> constraints;
  // Affine expressions tracked along the walk after the access offsets:
  // AffineSelect's condition constraints (kinds in cond_kinds), or Iota's value.
  std::vector<SplitExpr> forms;
  std::vector<ir::CmpKind> cond_kinds;
  Path path = Path::Move;
  ir::AluOp op = ir::AluOp::bypass;
  std::vector<Operand> operands;  // one per op argument
  // A fused pipeline (two or more ALU ops in one instruction: activation's
  // scale/bias/op, tensor_scalar's op0/op1): operands[0] is the data, each step
  // applies `op` to the running value and operands[operand] (-1: none).
  struct Step {
    ir::AluOp op = ir::AluOp::bypass;
    int operand = -1;
    bool reverse = false;
  };
  std::vector<Step> steps;
  Choice choice = Choice::None;
  // Range: each comparison's op and bound (a [P, 1] access or a constant).
  std::array<ir::AluOp, 2> range_ops{};
  std::array<Operand, 2> range_bounds{};
  std::vector<int> reads;  // accesses whose memory the instruction reads
  IntFormat format;
  bool accumulate = false;
  bool negate = false;
  double scale = 1.0;  // a fold's result times this (Form::fold's imms[0])
  bool dma = false;  // a load or store: same-width integer conversions keep the bits
  std::array<std::byte, 4> fill{};
  // Floor-divisions over Grid coords anywhere in the plan: execution splits the
  // box into sub-boxes on which each is constant.
  std::vector<ir::DivTerm> grid_divs;
};

// Throws std::invalid_argument when the opcode cannot apply the instruction's op
// or its accesses do not fit the opcode (a matmul operand on the wrong coords).
std::unique_ptr<InstPlan> make_plan(const ir::Instruction& in, const std::vector<TensorMem>& mem);
// The same into `p`, reusing the storage it holds: an instruction that runs once
// needs no plan of its own, and rebuilding one plan allocates nothing once warm.
void build_plan(InstPlan& p, const ir::Instruction& in, const std::vector<TensorMem>& mem);

}  // namespace nkic::sim
