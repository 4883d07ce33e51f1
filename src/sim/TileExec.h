// Execution of single tile instructions over tensor memory: the predicate,
// bounds and initialisation checks, then one tight loop per row of the
// iteration space (gather to fp32 or int64, evaluate, round once on store).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"
#include "sim/Simulator.h"
#include "sim/TileSpace.h"

namespace nkic::sim {

// One tensor's memory while a kernel runs.
struct TensorMem {
  const ir::TensorDecl* decl = nullptr;
  std::byte* data = nullptr;
  std::vector<int64_t> strides;  // row-major, in elements
  bool tracked = false;          // reads of never-written elements are errors
  std::vector<uint8_t> written;  // one flag per element, when tracked
};

struct InstPlan;

class TileExecutor {
 public:
  TileExecutor(std::vector<TensorMem>& mem, const SimOptions& opts);
  ~TileExecutor();
  TileExecutor(const TileExecutor&) = delete;
  TileExecutor& operator=(const TileExecutor&) = delete;

  // Executes `in` once, with the Loop and ProgramId values of `env`.
  void run(const ir::Instruction& in, const Env& env);

  // Points per compute chunk: the buffers of one chunk stay in L1.
  static constexpr int64_t kChunk = 2048;

 private:
  const InstPlan& plan_for(const ir::Instruction& in);
  // Applies the predicate's constraints with at most one Grid var to the box
  // [lo_, hi_) and collects the others in multi_; false if nothing executes.
  bool clamp_box(const InstPlan& p, const ir::Instruction& in, const Env& env);
  void check_bounds(const InstPlan& p, const ir::Instruction& in, const Env& env);
  void check_exact_bounds(const InstPlan& p, const ir::Instruction& in, const Env& env);
  void check_reads(const InstPlan& p, const ir::Instruction& in);
  void bind_data(const InstPlan& p);
  void run_chunk(const InstPlan& p, int64_t m);
  void move_chunk(const InstPlan& p, int64_t m);
  void float_chunk(const InstPlan& p, int64_t m);
  void int_chunk(const InstPlan& p, int64_t m);
  const float* const_floats(int slot, float v, int64_t m);
  const int64_t* const_ints(int slot, int64_t v, int64_t m);
  void mark_written(const InstPlan& p, int64_t m);

  std::vector<TensorMem>& mem_;
  SimOptions opts_;
  std::unordered_map<const ir::Instruction*, std::unique_ptr<InstPlan>> plans_;

  // Per-execution state, kept to reuse its storage.
  std::vector<int64_t> lo_, hi_;
  std::vector<std::pair<int, int64_t>> multi_;  // (constraint, base) over several Grid vars
  RowSpace space_, check_space_;
  std::vector<int64_t> bases_;          // per access: element offset at Grid origin
  std::vector<int64_t> step_, off_;     // per access: step along a row, chunk start
  std::vector<std::byte*> data_;        // per access: memory read (a snapshot when aliased)
  std::vector<std::byte> snapshot_[2];  // per operand
  bool dst_direct_ = true;              // fp32 results may be written straight into the dst

  // Compute buffers: operand 0, operand 1, result, accumulator.
  std::vector<float> fbuf_[4];
  std::vector<int64_t> ibuf_[4];
  // Constant operands, filled once and reused while the value stays the same.
  std::vector<float> fconst_[2];
  std::vector<int64_t> iconst_[2];
  uint32_t fconst_bits_[2] = {};
  int64_t iconst_val_[2] = {};
  int64_t fconst_len_[2] = {}, iconst_len_[2] = {};
};

}  // namespace nkic::sim
