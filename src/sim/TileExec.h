// Execution of single tile instructions over tensor memory: the predicate,
// bounds and initialisation checks, then one tight loop per row of the
// iteration space (gather to fp32 or int64, evaluate, round once on store).
// Elementwise kernels live in ElementwiseExec.cpp, the reduction in
// ReduceExec.cpp, the matmul in MatmulExec.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"
#include "sim/Simulator.h"
#include "sim/TensorMem.h"
#include "sim/TileSpace.h"

namespace nkic::sim {

struct InstPlan;
class RaceCheck;

class TileExecutor {
 public:
  // `races`, when not null, is told every element each instruction reads and writes.
  TileExecutor(std::vector<TensorMem>& mem, const SimOptions& opts, RaceCheck* races);
  ~TileExecutor();
  TileExecutor(const TileExecutor&) = delete;
  TileExecutor& operator=(const TileExecutor&) = delete;

  // Executes `in` once, with the Loop and ProgramId values of `env`. `only_run`:
  // the instruction runs no other time (no plan is kept for it).
  void run(const ir::Instruction& in, const Env& env, bool only_run = false);

  // Points per compute chunk: the buffers of one chunk stay in L1.
  static constexpr int64_t kChunk = 2048;

 private:
  const InstPlan& plan_for(const ir::Instruction& in, bool only_run);
  // Executes the points of the box [box_lo_, box_hi_).
  void run_box(const InstPlan& p, const ir::Instruction& in, const Env& env);
  // cuts_[k]: the boundaries along Grid coord k of sub-boxes on which every
  // floor-division of the plan is constant.
  void split_box(const InstPlan& p, const ir::Instruction& in, const Env& env);
  // Applies the predicate's constraints with at most one Grid var to the box
  // [lo_, hi_) and collects the others in multi_; false if nothing executes.
  bool clamp_box(const InstPlan& p, const ir::Instruction& in, const Env& env);
  void check_bounds(const InstPlan& p, const ir::Instruction& in, const Env& env);
  void check_exact_bounds(const InstPlan& p, const ir::Instruction& in, const Env& env);
  void fill_pending(const InstPlan& p);
  bool overwrites_dst(const InstPlan& p) const;
  template <class F>
  void for_each_access_row(const InstPlan& p, int e, F f);
  bool reads_uninitialized(const InstPlan& p);
  void collect_poison(const InstPlan& p);
  void apply_poison(const InstPlan& p);
  void race_reads(const InstPlan& p, const ir::Instruction& in);
  void race_writes(const InstPlan& p, const ir::Instruction& in);
  void mark_written(const InstPlan& p);
  void start_accumulation_groups(const InstPlan& p);
  void bind_direct(const InstPlan& p);

  // ElementwiseExec.cpp
  void run_elementwise(const InstPlan& p);
  void bind_data(const InstPlan& p);
  void run_chunk(const InstPlan& p, int64_t m);
  void move_chunk(const InstPlan& p, int64_t m);
  bool transposing_copy(const InstPlan& p);
  void float_chunk(const InstPlan& p, int64_t m);
  void int_chunk(const InstPlan& p, int64_t m);
  // Operand k of the chunk, staged (when it must be) in the buffers of `slot` (default k).
  const float* float_operand(const InstPlan& p, int k, int64_t m, int slot = -1);
  const int64_t* int_operand(const InstPlan& p, int k, int64_t m, int slot = -1);
  const uint8_t* choice_mask(const InstPlan& p, int64_t m);
  template <class T>
  void pick_chunk(const InstPlan& p, const T* a, const T* b, T* out, int64_t m);
  const float* const_floats(int slot, float v, int64_t m);
  const int64_t* const_ints(int slot, int64_t v, int64_t m);

  // FusedExec.cpp: pipelines of several ALU ops (InstPlan::steps).
  void fused_float_chunk(const InstPlan& p, int64_t m);
  void fused_int_chunk(const InstPlan& p, int64_t m);

  // ReduceExec.cpp
  void run_reduce(const InstPlan& p);
  template <class T>
  void fold_rows(const InstPlan& p, T* acc, int64_t first_slot);

  // MatmulExec.cpp
  void run_matmul(const InstPlan& p);
  void pack_operand(const InstPlan& p, int e, int coord, int64_t panel, std::vector<float>& out);
  void masked_product(const InstPlan& p, int64_t ldc);
  void store_matmul_row(const InstPlan& p, int64_t m, int64_t n, int64_t count, float* c);

  std::vector<TensorMem>& mem_;
  SimOptions opts_;
  RaceCheck* races_;
  std::unordered_map<const ir::Instruction*, std::unique_ptr<InstPlan>> plans_;
  std::unique_ptr<InstPlan> scratch_;  // the plan of an instruction that runs once

  // Per-execution state, kept to reuse its storage.
  std::vector<int64_t> box_lo_, box_hi_;
  std::vector<std::vector<int64_t>> cuts_;
  std::vector<size_t> sub_;
  std::vector<int64_t> lo_, hi_;
  // The predicate's constraints over several Grid vars, with their base values.
  struct MultiCond {
    int index;
    int64_t base;
    ir::CmpKind kind;
  };
  std::vector<MultiCond> multi_;
  RowSpace space_, check_space_, access_space_;
  std::vector<int64_t> access_hi_;
  std::vector<int64_t> bases_;       // per access: element offset at Grid origin
  std::vector<int64_t> step_, off_;  // per form (accesses, then plan forms): row step, chunk start
  std::vector<std::byte*> data_;     // per access: memory read (a snapshot when aliased)
  std::vector<std::vector<std::byte>> snapshot_;  // per access
  bool dst_direct_ = true;  // fp32 results may be written straight into the dst

  // Compute buffers: operand 0, operand 1, result, accumulator; the choice's
  // source values and the per-point choice.
  std::vector<float> fbuf_[4];
  std::vector<int64_t> ibuf_[4];
  std::vector<float> cbuf_;
  // A fused pipeline's running values, alternating between the two (fuse_[0]:
  // also range_select's comparisons).
  std::vector<float> fuse_[2];
  std::vector<int64_t> ifuse_[2];
  std::vector<uint8_t> mask_;
  // Under the uninitialized-value check: the dst elements computed from an
  // uninitialized value, with its origin (sim/Uninit.h).
  std::vector<std::pair<int64_t, int>> poison_;
  // Constant operands, filled once and reused while the value stays the same.
  std::vector<float> fconst_[2];
  std::vector<int64_t> iconst_[2];
  uint32_t fconst_bits_[2] = {};
  int64_t iconst_val_[2] = {};
  int64_t fconst_len_[2] = {}, iconst_len_[2] = {};

  // Reduction accumulators, one slot per dst element the box can reach.
  std::vector<float> racc_;
  std::vector<int64_t> riacc_;
  std::vector<uint8_t> rseen_;
  std::vector<float> lane_buf_ = std::vector<float>(8 * kChunk);  // ReduceExec's rows, interleaved
  // Matmul: packed operands, the product, and (under multi-var masks) the
  // coordinate walk and the products that received a contribution.
  std::vector<float> mm_s_, mm_v_, mm_c_;
  std::vector<uint8_t> mm_hit_;
  RowSpace coord_space_;
};

}  // namespace nkic::sim
