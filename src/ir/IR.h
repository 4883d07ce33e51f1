// The tile-level IR: the contract between the tracer and every back-end
// (printer, verifier, simulator). Plain node structs, one list of node kinds,
// visitors instead of switches (IRVisitor.h). The IR knows nothing of Python.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/AluOp.h"
#include "ir/DType.h"
#include "ir/Expr.h"
#include "ir/Isa.h"
#include "ir/SourceLoc.h"

namespace nkic::ir {

enum class Memory : uint8_t { SharedHBM, PrivateHBM, SBUF, PSUM };
enum class Role : uint8_t { Input, Output, Local };
const char* name(Memory m);
const char* name(Role r);
inline bool is_hbm(Memory m) { return m == Memory::SharedHBM || m == Memory::PrivateHBM; }

struct TensorDecl {
  int id = -1;
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::float32;
  Memory memory = Memory::SBUF;
  Role role = Role::Local;
  bool is_mutable = false;  // an input annotated nt.mutable_tensor
  int partition_dim = 0;    // on-chip tensors: > 0 when deprecated block dims lead
  int alias_of = -1;        // a reshape/view: the same bytes as tensor `alias_of`
  // The innermost loop axis whose body declares the tensor (-1: the kernel
  // body). On-chip tensors declared in a loop body are fresh in every iteration.
  int alloc_axis = -1;
  std::vector<double> init; // constant contents (nl.shared_constant), row-major
  SourceLoc loc;
  int64_t num_elements() const;
};

// Which element of `tensor` one point of an instruction's iteration space
// touches: one affine expression per tensor dimension, over the instruction's
// Grid coordinates, the enclosing loop variables and the program ids.
struct IndirectIndex;
struct Access {
  int tensor = -1;
  std::vector<AffineExpr> index;
  // Indirect (runtime) indexing: dimension `dim` adds `step` times the value `index`
  // reads at the same point (an integer tile in SBUF, e.g. data[idx_tile, i_f]).
  std::vector<IndirectIndex> indirect;
};
struct IndirectIndex {
  int dim = 0;
  Access index;
  int64_t step = 1;  // elements of `dim` per unit of the value (.ap() indirect_dim rows on chip)
};

// A mask constraint: `expr >= 0` (Ge) or `expr == 0` (Eq). A predicate is their
// conjunction; an empty predicate is always true.
enum class CmpKind : uint8_t { Ge, Eq };
struct Constraint {
  AffineExpr expr;
  CmpKind kind = CmpKind::Ge;
  bool holds(int64_t v) const { return kind == CmpKind::Ge ? v >= 0 : v == 0; }
};
using Predicate = std::vector<Constraint>;



enum class StmtKind : uint8_t { Instruction, Loop };

class IRVisitor;

struct Stmt {
  explicit Stmt(StmtKind k) : kind(k) {}
  virtual ~Stmt() = default;
  virtual void accept(IRVisitor& v) const = 0;
  const StmtKind kind;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

// One stage of an elementwise pipeline: v <- op(v, operand), or op(operand, v)
// when `reverse`; the operand is srcs[src], or `imm` when src < 0 (and unused by
// one-operand ops).
struct AluStep {
  AluOp op = AluOp::bypass;
  int src = -1;
  double imm = 0.0;
  bool reverse = false;
};

// The engine's reduce accumulator (reduce_cmd): one fp32 register per partition,
// kept across instructions. An activation, tensor_scalar, select or range_select
// instruction with a command other than `none` folds its result over the free elements
// (reset_reduce: the register restarts with the fold; reduce: it folds on; reset:
// it is zeroed) and writes the register to extra_dsts[0] (the register) and, when
// present, extra_dsts[1] (the call's reduce_res). load_reduce: the register
// restarts from acc_init, then folds on. The numbering is nisa.reduce_cmd's.
enum class AccCmd : uint8_t { none, reset, reduce, reset_reduce, load_reduce };
const char* name(AccCmd c);

struct Instruction final : Stmt {
  Instruction() : Stmt(StmtKind::Instruction) {}
  void accept(IRVisitor& v) const override;

  Opcode opcode = Opcode::Copy;
  // The engine that runs it; Engine::none means the table's default (engine_of).
  Engine engine = Engine::none;
  std::vector<int64_t> shape;  // iteration space; Grid var k ranges over [0, shape[k])
  Access dst;
  // Further results of instructions with several (nc_match_replace8's indices).
  std::vector<Access> extra_dsts;
  std::vector<Access> srcs;
  AluOp alu = AluOp::bypass;
  // Elementwise instructions (Isa.h exec Elementwise): the ALU pipeline applied
  // to srcs[0]; empty means the single op `alu` (with srcs[1], or imms[0] and
  // `reverse`), see pipeline().
  std::vector<AluStep> steps;
  std::vector<double> imms;
  // TensorScalar: scalar is the left operand. Select: on_true where the condition
  // is zero (reverse_pred).
  bool reverse = false;
  bool accumulate = false;   // dst <- dst + result (PSUM accumulation, `+=`)
  bool oob_skip = false;     // indirect accesses out of bounds skip the point (oob_mode.skip)
  bool hwdge = false;        // a DMA whose descriptors the hardware DGE generates (dge_mode.hwdge)
  // TensorReduce: the fold starts from the first element; with `accumulate` it
  // starts from dst's current value. `negate` multiplies the result by -1 (with an
  // accumulator stage: the reduce_res copy of the register, tensor_scalar_reduce).
  bool negate = false;
  AccCmd acc_cmd = AccCmd::none;  // the reduce accumulator stage, see AccCmd
  AluOp acc_op = AluOp::add;      // its fold
  double acc_init = 0.0;          // load_reduce's start (tensor_scalar_cumulative: or its last source, a tile)
  bool transpose = false;    // Matmul: a Tensor-Engine transpose (is_transpose); its PSUM dst may be bf16
  // Matmul in tiling mode (nc_matmul tile_position/tile_size): the PE-array tile it runs on, from
  // row tile_row and column tile_col (expressions of loop variables), tile_rows x tile_cols PEs.
  AffineExpr tile_row, tile_col;
  int16_t tile_rows = 128, tile_cols = 128;
  Predicate cond;            // AffineSelect: the per-point condition (not a mask)
  // Iota: the value written at each point. RangeSelect: the position its steps
  // compare with the bounds (range_start + the free element's index).
  AffineExpr value;
  std::string text;          // Print: the prefix
  // Row instructions (scan, bn_stats, max8, ...): the free extent each access
  // walks per partition (dst, extra_dsts, then srcs); Grid coord 0 is the
  // partition, coord 1 the position along that access; shape is [P, width of srcs[0]].
  std::vector<int64_t> widths;
  bool has_dst() const { return info(opcode).has_dst; }
  Predicate predicate;
  std::string api;           // the NKI API that emitted it ("nl.load")
  SourceLoc loc;
  // Explicit scheduling edges (depends_on, with_schedule, no_reorder): `id` is unique in the
  // kernel (copies of one traced instruction share it); this one starts after the last
  // execution of each instruction in `after` has ended.
  int64_t id = -1;
  std::vector<int64_t> after;
};

// Where a load_reduce starts when not from acc_init: a [P, 1] tile, the last source
// after those the instruction's steps read (tensor_scalar_cumulative's imm1,
// exponential's and tensor_scalar's reduce_init); null otherwise.
const Access* load_reduce_source(const Instruction& in);
// The pipeline of an elementwise instruction (its steps, or the single op `alu`).
std::vector<AluStep> pipeline(const Instruction& in);
// The engine `in` runs on: its own, or its opcode's default.
Engine engine_of(const Instruction& in);

enum class AxisType : uint8_t { Affine, Sequential };
const char* name(AxisType t);

// Iterations of range(lb, ub, stride), stride != 0; exact at the ends of int64 (where
// ub - lb + stride - 1 would overflow), saturating at INT64_MAX.
int64_t trip_count(int64_t lb, int64_t ub, int64_t stride);

// kernel[n] (codegen/Cores.h): a run of statements of a block that one physical core runs.
struct CoreSpan {
  size_t first = 0, last = 0;  // block[first, last)
  int core = 0;                // -1: the exchange of a sync point (nisa.sendrecv's copies, a loop of every core)
  int segment = 0;             // sync points (core_barrier, sendrecv) passed before it in the block
};

struct Loop final : Stmt {
  Loop() : Stmt(StmtKind::Loop) {}
  void accept(IRVisitor& v) const override;

  int axis = -1;  // Loop var id; axes are numbered 0.. in creation order
  std::string name;
  int64_t lb = 0, ub = 0, stride = 1;
  // DynamicAxis (seed 003 has_runtime_value): the upper bound is read from this
  // one-element access when the loop starts; `ub` is then unused.
  std::optional<Access> dynamic_ub;
  // A do-while loop (2.25): after every iteration the loop repeats while this
  // one-element access reads nonzero; lb/ub/stride only count iterations.
  std::optional<Access> while_cond;
  // kernel[n]: a loop the cores run together, for they synchronise in it (codegen/Cores.h).
  // Core c's own bound (or do-while condition) is peers[c - 1]; each must read as the loop's
  // own, else the cores would pass different numbers of synchronisation points.
  std::vector<Access> peers;
  // Such a loop's body by core, as Kernel::core_spans for the kernel body.
  std::vector<CoreSpan> core_spans;
  AxisType type = AxisType::Affine;
  std::vector<std::pair<std::string, std::string>> attrs;  // loop directives
  Block body;
  SourceLoc loc;
  int64_t tripcount() const { return trip_count(lb, ub, stride); }
  // Bounded or repeated at run time (nl.fori_loop, nl.while_loop, nl.dynamic_range).
  bool runtime() const { return dynamic_ub.has_value() || while_cond.has_value(); }
};

[[noreturn]] void throw_no_tensor(int id);  // std::out_of_range: no tensor has that id

struct Kernel {
  std::string name;
  SourceLoc loc;
  std::vector<int64_t> grid;  // SPMD launch grid; empty = one instance
  std::deque<TensorDecl> tensors;  // a deque: references stay valid as tensors are added
  std::vector<int> inputs;    // tensor ids, in parameter order
  std::vector<int> outputs;   // tensor ids, in return order
  int num_axes = 0;
  Block body;
  // kernel[n] (codegen/Cores.h): which physical core runs each run of top-level statements
  // of `body`, in body order; empty when one core runs everything.
  using CoreSpan = ir::CoreSpan;
  std::vector<CoreSpan> core_spans;
  int physical_cores = 1;
  // Some tensor was placed with ncc.sbuf/psum alloc or mod_alloc: the kernel chose its
  // physical buffers, not the compiler.
  bool direct_allocation = false;
  // Traced from the current nki API, whose compiler gets the program with every
  // compile-time loop unrolled and keeps the order it is written in (no loop to hoist out of).
  bool current_api = false;
  // A float becomes an integer rounded to nearest, ties to even, and saturated (the current API
  // from NKI 0.6 on); else truncated toward zero (the legacy API, and NKI 0.2-0.5).
  bool int_round_nearest_even = false;

  // Checked as deque::at checks, but inline: the builders read tensors for every operand.
  const TensorDecl& tensor(int id) const {
    if (id < 0 || static_cast<size_t>(id) >= tensors.size()) throw_no_tensor(id);
    return tensors[static_cast<size_t>(id)];
  }
  // The tensor whose bytes `id` names: itself, or what its reshape/view aliases.
  int root(int id) const {
    while (tensor(id).alias_of >= 0) id = tensor(id).alias_of;
    return id;
  }
  int64_t num_programs() const;
};

}  // namespace nkic::ir
