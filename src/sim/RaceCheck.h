// The affine-loop race check (SimOptions::check_races). nl.affine_range asserts
// that iterations are independent; the hardware may reorder or overlap them,
// and the compiler does not verify the claim. A race is what can change a
// result. While an Affine loop runs, every element an instruction writes is
// stamped with the iteration that wrote it:
//  - reading an element another iteration of the same loop execution wrote is
//    a loop-carried dependency;
//  - two iterations writing one HBM element race for the final value;
//  - two iterations writing one on-chip (SBUF/PSUM) element is also how a tile
//    allocated in the loop body is reused. The IR records no allocation points,
//    but the tracer rejects any use of a body tile after its loop
//    (err_local_variable_used_out_of_scope), so the write is fine by itself: the
//    element becomes ambiguous, and reading it after that loop execution ends,
//    before a rewrite, is the race (its value depends on the iteration order).
// Associative reductions are not loop-carried dependencies (seed 003 §4.1): an
// accumulation into any memory (`+=`, an accumulating matmul) and an add, max or
// min of a tile into its own operand (one instruction, or the op into a
// temporary copied straight back) commute, so they never race with each other,
// and their read of the accumulated tile is not checked. An accumulated element
// keeps the stamp of its first contributor inside the running loops, so a plain
// read of a sum other iterations contributed to is still reported.
// Sequential loops are never checked: their iterations run in order.
//
// Stamps: a counter advances at the start of every iteration of every checked
// loop. An element's stamp is the counter at its last write inside a checked
// loop, so for a running loop, a stamp in [its first iteration's start, its
// current iteration's start) belongs to an earlier iteration of this execution.
// Stamps never need resetting; writes outside checked loops leave stale stamps,
// which every later loop execution sees as older than itself.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class RaceCheck {
 public:
  RaceCheck(const std::vector<TensorMem>& mem, const ir::Kernel& k);

  // Whether `in` writes its dst as an associative accumulation, and the source
  // (index into in.srcs) whose read is that accumulation's read of the tile, or -1.
  bool accumulates(const ir::Instruction& in) const;
  int accumulated_src(const ir::Instruction& in) const;

  // An Affine loop execution: enter, next_iteration before each body run, leave.
  void enter(const ir::Loop& l);
  void next_iteration();
  void leave();
  // A tensor starts over: a new program instance, or a tile allocated in a loop body.
  void fresh(int tensor);

  // Whether the reads / writes of `tensor` need reporting now.
  bool watches_reads(int tensor) const;
  bool watches_writes(int tensor) const;
  // Elements start + i*step (i < n) of `tensor` are read / written. Throw
  // the diagnostic err_unexpected_output_dependencies, at the loop, on a race.
  void read(int tensor, int64_t start, int64_t step, int64_t n);
  void write(int tensor, int64_t start, int64_t step, int64_t n, bool accumulating);

 private:
  struct Level {
    const ir::Loop* loop = nullptr;
    std::vector<int64_t> starts;  // the counter at each iteration's start
    bool recorded = false;        // in executions_
  };
  struct Marks {
    std::vector<int64_t> stamp;      // per element, once written in a checked loop
    std::vector<int64_t> ambiguous;  // per element: the execution (its first stamp), or 0
    bool has_ambiguous = false;
  };

  // The level an earlier iteration of which stamped `s` (at most one can), or -1.
  int conflict(int64_t s) const;
  bool running(int64_t execution) const;
  int64_t induction(const Level& l, int64_t stamp) const;
  [[noreturn]] void report_write(int level, int64_t stamp, int tensor, int64_t at) const;
  [[noreturn]] void report_read(int level, int64_t stamp, int tensor, int64_t at) const;
  [[noreturn]] void report_ambiguous(int64_t execution, int tensor, int64_t at) const;

  const std::vector<TensorMem>& mem_;
  std::vector<Marks> marks_;
  std::vector<Level> levels_;  // the running checked loops, outermost first
  int64_t now_ = 0;
  // The loop of each execution that left ambiguous elements, for messages.
  std::vector<std::pair<int64_t, const ir::Loop*>> executions_;
  // The associative accumulations besides `accumulate`: instruction -> the source
  // read as the accumulated tile (-1 for the copy back of a temporary).
  std::unordered_map<const ir::Instruction*, int> associative_;
};

}  // namespace nkic::sim
