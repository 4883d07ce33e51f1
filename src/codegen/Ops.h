// The op builders: each turns one nl.* / operator call into sema checks plus
// IR instructions, at the insertion point of the KernelBuilder. An ISA builder takes
// its destination (codegen/Destination.h) right after the builder: the caller's view
// (the current API) or a fresh tile it returns (the legacy API).
#pragma once
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/Destination.h"
#include "codegen/KernelBuilder.h"
#include "types/Values.h"

namespace nkic::codegen {

using types::MaskVal;
using types::TensorVal;
using types::Value;

// The keyword arguments every API shares.
struct OpArgs {
  const MaskVal* mask = nullptr;
  std::optional<ir::DType> dtype;
  bool oob_skip = false;  // oob_mode.skip: indirect accesses out of bounds are dropped
  bool hwdge = false;     // dge_mode.hwdge: the hardware DGE generates the DMA's descriptors
  ir::Engine engine = ir::Engine::none;  // the engine the call names (none: the instruction's default)
};

// How the current API's DMA calls name their queue: the hardware DGE (dge_mode.hwdge) and priority=.
struct DmaMode {
  bool hwdge = false;
  std::optional<int64_t> priority;
};

// A new instruction of `op` over the iteration space `shape`.
std::unique_ptr<ir::Instruction> make_instruction(ir::Opcode op, std::vector<int64_t> shape);
// The same, writing `dst` over the iteration space `iter`.
std::unique_ptr<ir::Instruction> make_instruction(ir::Opcode op, const KernelBuilder& b, const TensorVal& dst,
                                                  const std::vector<int64_t>& iter);
// "name[128, 512]": a view as diagnostics show operands.
std::string describe(const KernelBuilder& b, const TensorVal& v);

// Raises the diagnostic for `v` where an instruction needs a tile or a number:
// None, an index expression, a mask or an object of no NKI meaning.
[[noreturn]] void reject_operand(KernelBuilder& b, const std::string& operand, const Value& v);

// A view's elements per partition (the product of its free dims).
int64_t free_elements(const TensorVal& t);
// `t` as [P, F]: its free dims as one row per partition, as the engines walk them.
TensorVal rows_of(KernelBuilder& b, const TensorVal& t);

// `other` walks the same rows as `data`: its partitions and elements per partition
// (`elements`, or data's) match.
void check_rows(KernelBuilder& b, const TensorVal& data, const TensorVal& other, int64_t elements = -1);
// An immediate operand `name`: a number, or a [P, 1] tile on data's partitions.
void check_immediate(KernelBuilder& b, const char* name, const Value& v, const TensorVal& data);
// `dst` as [P, F] (its partitions by its free elements), the rows a row or random
// instruction writes, resolved as a given Dst (checked live, no runtime offsets off-chip).
TensorVal destination_rows(KernelBuilder& b, const TensorVal& dst);
// A given dst holds data's partitions and elements per partition (the engines walk them flat).
void check_dst_rows(KernelBuilder& b, const Dst& dst, const TensorVal& data);

// Where each operand of an instruction reads: the view aligned (numpy rules,
// broadcast dims dropped) to the instruction's iteration space.
ir::Access access_for(const KernelBuilder& b, const TensorVal& v, const std::vector<int64_t>& iter);
ir::Predicate predicate_for(const KernelBuilder& b, const OpArgs& args, size_t rank);
// A value assigned into a destination of shape `dst`, viewed on dst's grid: it
// must broadcast to dst, or hold the same elements up to size-1 dims.
TensorVal fit_value(const KernelBuilder& b, const std::vector<int64_t>& dst, const TensorVal& value);
// `t` viewed in `shape` when only the split of their free elements differs ([128, 64] against
// a [128, 2, 32] dst: the same partitions and elements per partition, paired row-major, as the
// engines and the DMA queues walk them); otherwise `t` as it is.
TensorVal on_grid_of(KernelBuilder& b, const TensorVal& t, const std::vector<int64_t>& shape);

// Creation (OpsMemory.cpp) and the DMAs (isa/Dma.cpp).
// `partition_dim` > 0 declares deprecated block dimensions before the partition dim.
TensorVal alloc_tensor(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype,
                       ir::Memory memory, int partition_dim = 0);
TensorVal full(KernelBuilder& b, std::string name, std::vector<int64_t> shape, ir::DType dtype,
               ir::Memory memory, double value, int partition_dim = 0);
// nisa.memset: `value` at every point of dst (fresh: a new SBUF tile of `shape` and `dtype`);
// into a given dst the value is typed like it (`integer_value`: the call passed an integer).
TensorVal memset(KernelBuilder& b, const Dst& dst, std::vector<int64_t> shape, double value, bool integer_value,
                 ir::DType dtype);
TensorVal load(KernelBuilder& b, const TensorVal& src, const OpArgs& args);
// nl.shared_constant: a read-only HBM tensor holding compile-time values (row-major).
TensorVal shared_constant(KernelBuilder& b, std::vector<int64_t> shape, ir::DType dtype, std::vector<double> values);
// nl.load_transpose2d and nisa.dma_transpose: a load whose destination access is src
// permuted, (1, 0) for a 2-D src, (2, 1, 0) for 3-D, (3, 1, 2, 0) for 4-D (the ranks the
// operand table allows the api). `axes`, when the call gives them, must be that permutation;
// a given dst has exactly the permuted shape. `mode`: the current API's dma_transpose queue
// (the hardware DGE from NeuronCore-v3, priority= as dma_copy's).
TensorVal load_transpose2d(KernelBuilder& b, const Dst& dst, const TensorVal& src, const OpArgs& args,
                           const std::optional<std::vector<int64_t>>& axes = std::nullopt, const DmaMode& mode = {});
void store(KernelBuilder& b, const TensorVal& dst, const Value& value, const OpArgs& args);
// nisa.tensor_copy_dynamic_src: a copy of `src`, an on-chip view at a runtime
// free-dim offset (`x[i_p, i_f + off[0, j]]`), into a new SBUF tile.
TensorVal tensor_copy_dynamic_src(KernelBuilder& b, const TensorVal& src, const OpArgs& args);
// nisa.tensor_copy_dynamic_dst: `src` copied into `dst`, an on-chip view at a runtime offset.
void tensor_copy_dynamic_dst(KernelBuilder& b, const TensorVal& dst, const TensorVal& src, const OpArgs& args);
// nisa.dma_copy: dst = src, or with `rmw` (dst_rmw_op, add only) dst += src; in the current
// API under its DMA rules (no PSUM source; the hardware DGE copies bytes, NeuronCore-v3+; a
// priority= is a level 0-3 of NeuronCore-v4 and newer).
void dma_copy(KernelBuilder& b, const TensorVal& dst, const Value& src, std::optional<ir::AluOp> rmw,
              const OpArgs& args, const DmaMode& mode = {});
// nisa.dma_compute (the stub's reading, NKI_CURRENT_API §13 #25) as nkic supports it: one
// source other than dst, reduce_op add: dst = src, or dst += src when dst is the other source
// (a view of dst's elements, in the same order). `scales` empty is None.
void dma_compute(KernelBuilder& b, const TensorVal& dst, const std::vector<TensorVal>& srcs, ir::AluOp reduce_op,
                 const std::vector<double>& scales, bool unique_indices, bool oob_skip);
// `dst[...] = value` (accumulate: `dst[...] += value`, a PSUM-style accumulation).
// With a mask (nisa.dma_copy(mask=...)), only the masked points are written.
void assign(KernelBuilder& b, const TensorVal& dst, const Value& value, bool accumulate, const OpArgs& args = {});

// Elementwise math (isa/VectorEngine.cpp): one or two operands, tensors or scalars.
Value elementwise(KernelBuilder& b, const Dst& dst, ir::AluOp op, std::vector<Value> operands, const OpArgs& args);
// One stage of an ISA instruction's ALU pipeline as the call names it: `op` with
// its operand (a tile or a number; none for one-operand ops), reversed or not.
struct PipelineStep {
  ir::AluOp op = ir::AluOp::bypass;
  std::optional<Value> operand;
  bool reverse = false;
};
// The reduce accumulator stage an elementwise ISA instruction carries (ir::AccCmd):
// the engine folds the result per partition with `op` into its register, which
// `res` (one element per partition), when given, receives.
struct Accumulate {
  ir::AccCmd cmd = ir::AccCmd::none;
  ir::AluOp op = ir::AluOp::add;
  const TensorVal* res = nullptr;
  double init = 0.0;  // load_reduce's starting value
  const TensorVal* init_tile = nullptr;  // or per partition, a [P, 1] tile
  bool negate_res = false;               // reduce_res receives -register (tensor_scalar_reduce)
};
// One elementwise ISA instruction (activation, tensor_scalar,
// scalar_tensor_tensor) applying `steps` in turn to `data`: each operand is
// checked as the instruction's operand (reverse ? 0 : 1 in the op table), the
// running value stays in fp32 (bitvec ops: the data's integer bits), the result
// has `out` (default: the data's dtype) on `engine` (none: the table's).
TensorVal isa_pipeline(KernelBuilder& b, const Dst& dst, ir::Opcode opcode, const TensorVal& data,
                       const std::vector<PipelineStep>& steps, const OpArgs& args, ir::Engine engine = ir::Engine::none,
                       const Accumulate& acc = {});
// idle with a reduce_res reads the register a fresh fold fills (as reset_reduce).
Accumulate with_result(Accumulate acc);
// Gives `in` (an elementwise instruction over [P, ...]) the accumulator stage `acc`:
// checks its fold and reduce_res, and adds the register and reduce_res as extra dsts.
void attach_accumulator(KernelBuilder& b, ir::Instruction& in, const Accumulate& acc);

// nisa.reciprocal: 1 / data on the Vector Engine (the ISA reference's; nl.reciprocal is the
// Scalar Engine's activation).
Value reciprocal(KernelBuilder& b, const Dst& dst, const TensorVal& data, const OpArgs& args);
// nisa.tensor_tensor: data1 op data2 (a one-operand op reads data1 only); on `engine`, which
// (GpSimd, and the power op) reads no PSUM; at most one of the two in PSUM.
Value tensor_tensor(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& data1, const TensorVal& data2,
                    ir::Engine engine, const OpArgs& args);
// nisa.scalar_tensor_tensor: (data op0 operand0) op1 operand1, data and operand1 not both in PSUM.
TensorVal scalar_tensor_tensor(KernelBuilder& b, const Dst& dst, const TensorVal& data, const PipelineStep& first,
                               const PipelineStep& second, const OpArgs& args);
// nisa.tensor_copy on `engine` (none: the table's); GpSimd reads no PSUM.
TensorVal tensor_copy(KernelBuilder& b, const Dst& dst, const TensorVal& src, ir::Engine engine, const OpArgs& args);

// The ALU instructions with an accumulator stage (isa/VectorAccumulate.cpp, isa/ScalarEngine.cpp).
// nisa.activation: op(data * scale + bias) on the Scalar Engine (scale a number or
// a [P, 1] fp32 tile, bias a [P, 1] tile or a number); `cmd` idle with a reduce_res is reset_reduce.
TensorVal activation(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& data,
                     const std::optional<Value>& bias, const Value& scale, Accumulate acc, const OpArgs& args);
// nisa.tensor_scalar / tensor_scalar_reduce: one or two ALU stages (a fused pair is
// two bitvec ops or two arithmetic ones) on `engine`, with the accumulator stage `acc`.
TensorVal tensor_scalar(KernelBuilder& b, const Dst& dst, const TensorVal& data, const std::vector<PipelineStep>& steps,
                        const Accumulate& acc, const OpArgs& args);
// The current API's accumulator instructions: a given dst holds data's rows, in its dtype.
// nisa.exponential (Vector Engine, NeuronCore-v4+): exp(src - max_value), max_value
// a number or a [P, 1] tile, with the accumulator's running sum (acc.op is add).
TensorVal exponential(KernelBuilder& b, const Dst& dst, const TensorVal& src, const Value& max_value,
                      Accumulate acc);
// nisa.activate2 (Scalar Engine, NeuronCore-v4+): op((data op0 imm0) op1 imm1), each
// stage skipped when bypass; the (op0, op1) pair is one of the engine's six. relu_param
// (a number or a [P, 1] tile) is checked; no activation nkic has reads it.
TensorVal activate2(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& data,
                    const PipelineStep& first, const PipelineStep& second, const Value& relu_param, Accumulate acc);
// nisa.tensor_scalar_reduce of the current API: data op0 operand0 (one op, not bitvec)
// folded by the accumulator (reset_reduce, reduce, or load_reduce from reduce_init, a
// number or a [P, 1] tile), reduce_res optional and negated with acc.negate_res.
TensorVal tensor_scalar_reduce(KernelBuilder& b, const Dst& dst, const TensorVal& data, const PipelineStep& op0,
                               const std::optional<Value>& reduce_init, Accumulate acc);
// nisa.select_reduce (Vector Engine): dst = predicate != 0 ? on_true : on_false
// (reverse_pred: predicate == 0), on_false a tile or a number, with the accumulator
// stage `acc` (idle: none, even with a reduce_res). A predicate or on_true whose
// free elements split differently from dst's is read as dst's (the engine walks them flat).
void select_reduce(KernelBuilder& b, const TensorVal& dst, const TensorVal& predicate, const TensorVal& on_true,
                   const Value& on_false, bool reverse_pred, const Accumulate& acc, const OpArgs& args);
// nisa.range_select (Vector Engine): on_true[p, i] where both comparisons of the
// position range_start + i (i over the flattened free elements, in fp32) with their
// bound (a [P, 1] tile or a number) hold, else on_false; with the accumulator stage `acc`.
TensorVal range_select(KernelBuilder& b, const Dst& dst, const TensorVal& on_true, const PipelineStep& first,
                       const PipelineStep& second, int64_t range_start, double on_false, const Accumulate& acc,
                       const OpArgs& args);
// nisa.tensor_copy_predicated (Vector Engine): dst = src where predicate is nonzero (zero with
// reverse_pred), dst unchanged elsewhere; src a tile or a number (as memset would store it in
// dst's dtype). A src or predicate whose free elements split differently from dst's is read as dst's.
void tensor_copy_predicated(KernelBuilder& b, const TensorVal& dst, const Value& src, const TensorVal& predicate,
                            bool reverse_pred, const OpArgs& args);
// Raises err_unsupported_memory when more than one of `operands` (name, tile or null) is in
// PSUM (an engine reads at most one of its inputs from PSUM, NKI_API §3.4), naming the last.
void check_one_psum_input(KernelBuilder& b, std::initializer_list<std::pair<const char*, const TensorVal*>> operands);
// Raises err_unsupported_memory for the first of `operands` in PSUM (GpSimd reads no PSUM).
void check_no_psum(KernelBuilder& b, std::initializer_list<std::pair<const char*, const TensorVal*>> operands);
// The operand an ALU stage reads from its slot: none for the one-operand ops the tensor
// instructions take in an op slot (abs, rsqrt, reciprocal: they apply to the data).
bool ignores_slot_operand(ir::AluOp op);
std::optional<Value> slot_operand(ir::AluOp op, std::optional<Value> operand);
// `dst op= value` in place.
void update_inplace(KernelBuilder& b, ir::AluOp op, const TensorVal& dst, const Value& value);

// nisa.activation's bias and scale operands (tiles, when not numbers) and the
// direct-allocation rule that an activation names its bias.
void check_activation_operands(KernelBuilder& b, const TensorVal& data, const TensorVal* bias, const TensorVal* scale);

// Compute. The ISA builders live by engine in isa/ (TensorEngine, ScalarEngine, VectorEngine,
// VectorAccumulate, VectorReduce, GpSimd, Dma, Rows, Random, Mx); the nl.* builders that
// no nisa signature shares in nl/ (Language: one instruction each; Compositions: several).
// Folds `x` with `op` over the free axes `axes` (never 0, the partition axis).
TensorVal reduce(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& x, std::vector<int64_t> axes,
                 bool keepdims, const OpArgs& args, bool negate = false);
// The nl convenience APIs of several instructions (nl/Compositions.cpp): args.dtype is the
// call's dtype=, `compute` its compute_dtype=.
TensorVal mean(KernelBuilder& b, const TensorVal& x, const std::vector<int64_t>& axes, bool keepdims,
               const OpArgs& args);
TensorVal variance(KernelBuilder& b, const TensorVal& x, const std::vector<int64_t>& axes, const OpArgs& args);
TensorVal softmax(KernelBuilder& b, const TensorVal& x, const std::vector<int64_t>& axes,
                  std::optional<ir::DType> compute, const OpArgs& args);
// `n` divides the sum of squares (the call's n, not the axes' extent).
TensorVal rms_norm(KernelBuilder& b, const TensorVal& x, const Value& w, const std::vector<int64_t>& axes, double n,
                   double epsilon, std::optional<ir::DType> compute, const OpArgs& args);
// nisa.tensor_partition_reduce: `x` [P, F...] folded over its partitions into [1, F...].
// `mean`, the current API's mean as the kernel named it (nl.average up to 0.6, nl.mean from 0.7;
// empty for another op): the sum over the partitions divided by their number.
TensorVal partition_reduce(KernelBuilder& b, const Dst& dst, ir::AluOp op, const TensorVal& x, const OpArgs& args,
                           std::string_view mean = {});
// nisa.nc_matmul: stationary [K, M], moving [K, N] -> PSUM fp32 [M, N] = stationary.T @ moving.
// `is_transpose`: a Tensor-Engine transpose (moving is the identity), whose result may land in bf16 PSUM.
TensorVal nc_matmul(KernelBuilder& b, const Dst& dst, const TensorVal& stationary, const TensorVal& moving,
                    const OpArgs& args, bool is_transpose = false);
// nisa.nc_matmul(perf_mode="double_row_gen3"), NeuronCore-v3+: fp8 stationary [K, 2, M] and
// moving [K, 2, N], contracted over K and the pair dim (256 rows) -> PSUM fp32 [M, N].
TensorVal nc_matmul_double_row(KernelBuilder& b, const Dst& dst, const TensorVal& stationary, const TensorVal& moving,
                               const OpArgs& args);
// The PE-array tile of an nc_matmul in tiling mode (the nki.isa reference): tile_size (row_size,
// column_size) and tile_position (start_row, start_column: constants or affine expressions of loop
// variables), both empty for the whole array.
struct PeTile {
  std::vector<ir::AffineExpr> position;
  std::vector<int64_t> size;
};
// The tiling-mode rules below, for any PE-array instruction (nc_matmul, nc_matmul_mx): each an
// err_unsupported_args of the call.
void check_pe_tile(KernelBuilder& b, const TensorVal& stationary, const PeTile& tile, bool double_row);
// Places the PE-array instructions emitted since insertion point `mark` on `tile` (none: the whole array).
void place_on_pe_tile(KernelBuilder& b, size_t mark, const PeTile& tile);
// nisa.nc_matmul as the call names it: nc_matmul, or nc_matmul_double_row with `double_row`.
// Tiling mode: position and size set together; sizes 64 or 128 (32 from NeuronCore-v3, which
// tiles the array in quarters); the stationary tile within the size; a start a multiple of its
// size inside the array (a loop expression: inside it over the loops); no column tiling with
// double_row.
// Into a given dst (PSUM), `accumulate` as MatmulInto infers or takes it.
TensorVal nisa_nc_matmul(KernelBuilder& b, const Dst& dst, const TensorVal& stationary, const TensorVal& moving,
                         const OpArgs& args, bool double_row, bool is_transpose, const PeTile& tile = {},
                         std::optional<bool> accumulate = std::nullopt);
// nl.matmul: x @ y (x.T @ y with transpose_x); x's transpose is folded into its access pattern.
TensorVal matmul(KernelBuilder& b, const TensorVal& x, const TensorVal& y, bool transpose_x, const OpArgs& args);
// Partition <-> free transpose of a 2-D tile: a copy with a permuted access.
TensorVal transpose(KernelBuilder& b, const Dst& dst, const TensorVal& x, const OpArgs& args);
// nisa.nc_transpose: data's free dims flattened into one ([P, F]), transposed on the Tensor
// Engine, or on the Vector Engine (vector_transpose) when `engine` names it.
TensorVal nc_transpose(KernelBuilder& b, const Dst& dst, const TensorVal& data, ir::Engine engine, const OpArgs& args);
// nisa.nc_transpose on the Vector Engine, whose data moves only inside a 32 x 32
// block of one partition quadrant: a tile up to 32 x 32 is transposed ([P, F] ->
// [F, P]); a larger one whose dims are multiples of 32 has each block transposed
// in place ([P, F] -> [P, F]).
TensorVal vector_transpose(KernelBuilder& b, const Dst& dst, const TensorVal& x, const OpArgs& args);
// nisa.bn_stats's limits: at most bn_stats_fmax free elements. A mask that, over
// the traced extent, may leave free (reduce) elements out is a known issue of
// neuronx-cc (NKI_API.md §8), warned about; the statistics then cover the masked
// elements only, as the instruction shrunk to them does.
void check_bn_stats(KernelBuilder& b, const TensorVal& data, const OpArgs& args);
// Row instructions (isa/Rows.cpp). nisa.tensor_tensor_scan: per partition, along
// the free elements, r[i] = op1(op0(data0[i], r[i-1]), data1[i]) from r[-1] = initial
// (a number or a [P, 1] tile); each step's `reverse` swaps its operands.
TensorVal tensor_tensor_scan(KernelBuilder& b, const Dst& dst, const TensorVal& data0, const TensorVal& data1, const Value& initial,
                             const PipelineStep& op0, const PipelineStep& op1, const OpArgs& args);
// nisa.bn_stats: [P, 6], per half (even, odd free positions) [count, mean, variance * count].
TensorVal bn_stats(KernelBuilder& b, const Dst& dst, const TensorVal& data, const OpArgs& args);
// nisa.bn_aggr: [P, 2] = [mean, variance] of bn_stats triples.
TensorVal bn_aggr(KernelBuilder& b, const Dst& dst, const TensorVal& data, const OpArgs& args);
// nisa.max8: the 8 largest values per partition, descending.
TensorVal max8(KernelBuilder& b, const Dst& dst, const TensorVal& src, const OpArgs& args);
// nisa.nc_find_index8: per partition, the first position of each of the 8 vals
// (equal vals: successive positions; absent: all ones).
TensorVal find_index8(KernelBuilder& b, const Dst& dst, const TensorVal& data, const TensorVal& vals, const OpArgs& args);
// nisa.nc_match_replace8: data with the first occurrence of each of the 8 vals
// replaced by `imm` (the last val first); positions into `dst_idx` when given.
TensorVal match_replace8(KernelBuilder& b, const Dst& dst, const TensorVal& data, const TensorVal& vals, double imm,
                         const TensorVal* dst_idx, const OpArgs& args);
// nisa.sequence_bounds: [P, 2, F], per element of segment_ids [P, F] the start and
// the end (exclusive) of the run of equal ids holding it; padding (id 0): F and -1.
TensorVal sequence_bounds(KernelBuilder& b, const Dst& dst, const TensorVal& segment_ids, const OpArgs& args);
// nisa.tensor_scalar_cumulative: per partition, reg = op1(op0(src[i], imm0), reg),
// dst[i] = reg, reg starting as `cmd` says (reset_reduce: op1's identity; reduce:
// the accumulator; load_reduce: imm1); the accumulator keeps the last value.
TensorVal tensor_scalar_cumulative(KernelBuilder& b, const TensorVal& dst, const TensorVal& src,
                                   const PipelineStep& op0, ir::AluOp op1, const std::optional<Value>& imm1,
                                   ir::AccCmd cmd);
// nisa.topk: per GpSimd core (16 partitions), the K = val_dst free size largest of
// the n values of its snake (element e at partition e % 16, column e / 16),
// ascending, into every partition of the core; their positions into idx_dst.
TensorVal topk(KernelBuilder& b, const TensorVal& val_dst, const TensorVal& idx_dst, const TensorVal& src, int64_t n);
// nisa.nonzero_with_count (NeuronCore-v3+): on partitions 0, 16, ..., 112 the positions
// (+ index_offset) of src's nonzero elements, padding_val, then their count.
TensorVal nonzero_with_count(KernelBuilder& b, const TensorVal& dst, const TensorVal& src, int64_t index_offset,
                             int64_t padding_val);
// nisa.iota: materialise an index expression into an SBUF tile.
TensorVal iota(KernelBuilder& b, const Dst& dst, const types::IndexVal& expr, ir::DType dtype, const OpArgs& args);
// nisa.affine_select: pred ? on_true : on_false_value, pred an affine comparison.
TensorVal affine_select(KernelBuilder& b, const Dst& dst, const MaskVal& pred, const TensorVal& on_true, double on_false,
                        const OpArgs& args);
// The current API's access patterns: `pattern` [step, count] pairs over dst's partitions,
// offset + p * channel_multiplier + sum_k step_k * i_k of shape [P, count_0, ...]; the offset
// an integer or an affine value of loop variables.
// nisa.iota: that value into a tile of dst's dtype; nisa.affine_select: on_true_tile where
// `cmp` (a comparison) of it with 0 holds, else on_false_value, in dst's dtype.
using AffinePattern = std::vector<std::pair<int64_t, int64_t>>;
TensorVal iota_pattern(KernelBuilder& b, const TensorVal& dst, const AffinePattern& pattern, const Value& offset,
                       int64_t channel_multiplier);
TensorVal affine_select_pattern(KernelBuilder& b, const TensorVal& dst, const AffinePattern& pattern,
                                int64_t channel_multiplier, const TensorVal& on_true, double on_false, ir::AluOp cmp,
                                const Value& offset);
// nl.gather_flattened: out[p, j..] = data[p, flat(indices[p, j..])] over data's flattened free dims.
TensorVal gather_flattened(KernelBuilder& b, const Dst& dst, const TensorVal& data, const TensorVal& indices, const OpArgs& args);
// nisa.local_gather: per GpSimd core (16 partitions), the core's flattened
// indices (partition-first) pick num_elem_per_idx elements of each partition's
// flattened free dims; result [P, ceil(valid/16), 16, num_elem_per_idx].
TensorVal local_gather(KernelBuilder& b, const Dst& dst, const TensorVal& src_buffer, const TensorVal& index, int64_t num_elem_per_idx,
                       std::optional<int64_t> num_valid_indices, const OpArgs& args);
// nl.atomic_rmw: dst (indirectly indexed HBM) <- dst + value, in program order.
void atomic_rmw(KernelBuilder& b, const TensorVal& dst, const Value& value, ir::AluOp op, const OpArgs& args);
// nl.loop_reduce assigned into `dst`: the first iteration of the nest of the
// loops of `loop_vars` writes x, every later one folds x into dst with `op`.
void loop_reduce(KernelBuilder& b, const TensorVal& dst, const TensorVal& x, ir::AluOp op,
                 const std::vector<types::IndexVal>& loop_vars, const OpArgs& args);
// nl.rand: a tile of uniform [0, 1) values; nl.random_seed sets the state.
TensorVal rand(KernelBuilder& b, std::vector<int64_t> shape, ir::DType dtype, const OpArgs& args);
void random_seed(KernelBuilder& b, double seed);
// The engines' XORWOW generators (isa/Random.cpp), one per partition of the Vector
// and the GpSimd engine. nisa.rng: 32 random bits per element, truncated to
// dst's integer dtype; nisa.rand2 (Vector, NeuronCore-v4+): uniform in [min, max)
// (numbers, or both [P, 1] tiles); nisa.set_rng_seed: the Vector generators from a
// [1, 1] seed; nisa.rand_set_state / rand_get_state (NeuronCore-v3+): each
// partition's state words (6 on GpSimd, 24 on Vector from NeuronCore-v4).
TensorVal rng(KernelBuilder& b, const TensorVal& dst, ir::Engine engine);
TensorVal rand2(KernelBuilder& b, const TensorVal& dst, const Value& min, const Value& max);
void set_rng_seed(KernelBuilder& b, const TensorVal& seeds);
void rand_set_state(KernelBuilder& b, const TensorVal& seeds, ir::Engine engine);
TensorVal rand_get_state(KernelBuilder& b, const TensorVal& dst, ir::Engine engine);
// nl.dropout / nisa.dropout (Vector Engine): x where a uniform [0, 1) draw is >= rate (a number
// or a tile that broadcasts to x), else 0; one draw per element of x, masked or not, from the
// random state nl.rand reads (the same stream an nl.rand of x's shape would take).
TensorVal dropout(KernelBuilder& b, const Dst& dst, const TensorVal& x, const Value& rate, const OpArgs& args);
// nl.all_reduce: the fold of x over the SPMD programs along `axes` of the launch grid.
TensorVal all_reduce(KernelBuilder& b, const TensorVal& x, ir::AluOp op, const std::vector<int64_t>& axes,
                     const OpArgs& args);
// nisa.nc_stream_shuffle (Vector Engine): within each 32-partition quadrant, partition i of dst
// receives partition shuffle_mask[i] of src (255: dst keeps it); 32 entries, the same for every
// quadrant; dst and src hold the same elements per partition. Every source row is read before
// any is written (src may be dst).
void nc_stream_shuffle(KernelBuilder& b, const TensorVal& dst, const TensorVal& src,
                       const std::vector<int64_t>& shuffle_mask);
// nl.device_print: prints the tile when simulated.
void device_print(KernelBuilder& b, const std::string& prefix, const TensorVal& x, const OpArgs& args);
// nl.where: condition != 0 ? x : y (y a tensor or a number).
TensorVal where(KernelBuilder& b, const TensorVal& cond, const Value& x, const Value& y, const OpArgs& args);

// Microscaling (isa/Mx.cpp), NeuronCore-v4 and newer.
// nisa.quantize_mx: src [P, F] (bf16/fp16) -> dst [P, F/4] (packed fp8 x4) and
// one E8M0 scale per block of 8 partitions x 4 values in dst_scale.
void quantize_mx(KernelBuilder& b, const TensorVal& dst, const TensorVal& src, const TensorVal& dst_scale);
// nisa.nc_matmul_mx: dst [M, N] (PSUM) += dequantized stationary [K, M].T @ moving [K, N]
// (`accumulate` None: inferred as nisa.nc_matmul's), on `tile` of the PE array: nc_matmul's
// tiling rules, by rows only (NKI_CURRENT_API.md: "Row tiling only").
void nc_matmul_mx(KernelBuilder& b, const TensorVal& dst, const TensorVal& stationary, const TensorVal& moving,
                  const TensorVal& stationary_scale, const TensorVal& moving_scale,
                  std::optional<bool> accumulate = true, const PeTile& tile = {});

}  // namespace nkic::codegen
