// The affine-loop race check (SimOptions::check_races). nl.affine_range asserts
// that iterations are independent; the hardware may reorder or overlap them,
// and the compiler does not verify the claim. While an Affine loop runs, every
// element an instruction writes is stamped with the iteration that wrote it:
//  - reading an element another iteration of the same loop execution wrote is
//    a loop-carried dependency;
//  - two iterations writing one HBM element race for the final value;
//  - two iterations writing one on-chip (SBUF/PSUM) element is also how a tile
//    allocated in the loop body is reused. The IR records no allocation points,
//    but the tracer rejects any use of a body tile after its loop
//    (err_local_variable_used_out_of_scope), so the write is fine by itself: the
//    element becomes ambiguous, and reading it after that loop execution ends,
//    before a rewrite, is the race (its value depends on the iteration order).
// Accumulating writes into PSUM (`+=`) commute, so they never race with each other,
// and such an accumulation's read of its own dst is not checked. That exemption is
// PSUM's alone (NKI_API.md §1.5): `+=` into SBUF reads its dst like any read. An accumulated
// element keeps the stamp of its first contributor inside the running loops, so
// a plain read of a sum other iterations contributed to is still reported.
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
#include <utility>
#include <vector>

#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim {

class RaceCheck {
 public:
  explicit RaceCheck(const std::vector<TensorMem>& mem);

  // An Affine loop execution: enter, next_iteration before each body run, leave.
  void enter(const ir::Loop& l);
  void next_iteration();
  void leave();
  // A per-instance tensor starts over in a new program instance.
  void fresh(int tensor);

  // Whether the reads / writes of `tensor` need reporting now.
  bool watches_reads(int tensor) const;
  bool watches_writes(int tensor) const;
  // Elements start + i*step (i < n) of `tensor` are read / written. Throw
  // the diagnostic err_unexpected_output_dependencies, at the loop, on a race.
  // `accumulation`: the read is an SBUF `+=` reading its own dst.
  void read(int tensor, int64_t start, int64_t step, int64_t n, bool accumulation = false);
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
  [[noreturn]] void report_read(int level, int64_t stamp, int tensor, int64_t at, bool accumulation) const;
  [[noreturn]] void report_ambiguous(int64_t execution, int tensor, int64_t at) const;

  const std::vector<TensorMem>& mem_;
  std::vector<Marks> marks_;
  std::vector<Level> levels_;  // the running checked loops, outermost first
  int64_t now_ = 0;
  // The loop of each execution that left ambiguous elements, for messages.
  std::vector<std::pair<int64_t, const ir::Loop*>> executions_;
};

}  // namespace nkic::sim
