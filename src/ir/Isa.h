// The instruction set, written once: every ISA instruction the IR can hold, with
// the facts the rest of nkic derives from it (the printer's name and engine tag,
// the verifier's operand counts, the simulator's executor, the cost model's
// class). One IR instruction is one machine instruction.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ir/DType.h"

namespace nkic::ir {

// The NeuronCore engines (neuron-profile's names): Tensor (pe), Scalar (act),
// Vector (dve), GpSimd (pool), the DMA queues (dma) and the sync engine (sp).
// `none` on an instruction means "its opcode's default engine".
#define NKIC_ENGINES(X) X(none) X(pe) X(act) X(dve) X(pool) X(dma) X(sp)
enum class Engine : uint8_t {
#define NKIC_ENGINE_ENUM(n) n,
  NKIC_ENGINES(NKIC_ENGINE_ENUM)
#undef NKIC_ENGINE_ENUM
};
const char* name(Engine e);
// The engine an nisa `engine=` argument names (nisa.engine: 1 tensor, 2 scalar,
// 3 gpsimd, 5 vector, 6 sync = nisa.dma_engine); none for unknown (0) or any other value.
Engine engine_from_nki(int nki_engine);

// How the simulator executes an instruction:
//   Move        dst <- cast(src0) (DMA and copies: exact between formats)
//   Elementwise one result per point (a pipeline of ALU ops, selects, fills, iota)
//   Reduce      a fold of src0 over the Grid coords dst omits
//   Matmul      the [K, M, N] product on the Tensor Engine
//   Row         a per-partition walk along the free elements (scan, bn_stats, max8, ...)
//   Mx          the microscaling kernels
//   Side        effects outside the tensors (random state, printing)
//   Collective  a fold across SPMD programs
//   Shuffle     a move of whole partitions to other partitions of their quadrant
//   Ranks       an exchange with the other ranks of a replica group (nki.collectives), met
//               at a rendezvous (sim/Rendezvous.h)
//   Scalar      one exact integer of a sequencer register (nki 0.7+ NkiScalar), see ScalarAlu
#define NKIC_EXECS(X) X(Move) X(Elementwise) X(Reduce) X(Matmul) X(Row) X(Mx) X(Side) X(Collective) X(Shuffle) \
  X(Ranks) X(Scalar)
enum class Exec : uint8_t {
#define NKIC_EXEC_ENUM(n) n,
  NKIC_EXECS(NKIC_EXEC_ENUM)
#undef NKIC_EXEC_ENUM
};
const char* name(Exec e);
// Row and Ranks instructions walk each access over its own extent (Instruction::widths).
inline bool walks_own_width(Exec e) { return e == Exec::Row || e == Exec::Ranks; }

// What the cost model charges an instruction by (issue-level detail lives in
// the cost model; the table only says which formula applies). `stream_pair`: a
// stream whose two tile inputs are read at once when one is in PSUM and the other in
// SBUF (the nisa docs' estimated cost: N cycles, 2N from one memory). `ranks`: a collective
// across ranks, over the chip's NeuronLink (perf/Durations.cpp). `scalar`: one instruction
// of an engine's sequencer ALU (CostFigures::sequencer_alu_cycles).
enum class Cost : uint8_t { none, dma, matmul, stream, stream_pair, row, collective, ranks, scalar };

// Where an operand may live: a mask of memories.
enum MemoryMask : uint8_t { kHBM = 1, kSBUF = 2, kPSUM = 4, kOnChip = kSBUF | kPSUM };

// What the nisa call of an instruction accepts in one operand (named as the call
// names it): its memories, its dtypes (empty: any) and its ranks.
struct OperandRule {
  std::string_view name;
  uint8_t memories = kOnChip;
  std::span<const DType> dtypes = {};
  int min_rank = 1;
  int max_rank = 8;
};

// How the tile operands of the nisa call relate: `bcast` lets a [P, 1] or [1, F]
// operand stand for a whole tile; `equal` needs equal partitions and elements per partition.
enum class Shapes : uint8_t { bcast, equal };

// Dtype sets the operand rules below share (NKI_API.md §3, NKI_CURRENT_API.md §6.5-6.7).
namespace dtypes {
using D = DType;
inline constexpr D kMatmul[] = {D::float8_e4m3, D::float8_e5m2, D::float8_e4m3fn, D::bfloat16, D::float16, D::tfloat32,
                                D::float32};
inline constexpr D kMx[] = {D::float8_e4m3fn_x4, D::float8_e5m2_x4, D::float4_e2m1fn_x4};
inline constexpr D kMxData[] = {D::float8_e4m3fn_x4, D::float8_e5m2_x4};
inline constexpr D kMxSrc[] = {D::bfloat16, D::float16};
inline constexpr D kMxScale[] = {D::float8_e8m0fnu, D::uint8};  // e8m0 preferred (0.5+), uint8 kept
inline constexpr D kMxDst[] = {D::float32, D::bfloat16};
inline constexpr D kSelect[] = {D::float32, D::float16, D::bfloat16, D::tfloat32, D::float8_e4m3, D::float8_e5m2,
                                D::int8, D::uint8, D::int16, D::uint16};
inline constexpr D kExpSrc[] = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::int8,
                                D::int16, D::int32, D::uint8, D::uint16, D::uint32};
inline constexpr D kExpDst[] = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::tfloat32,
                                D::int8, D::int16, D::int32, D::uint8, D::uint16};
inline constexpr D kFloatRes[] = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::tfloat32};
inline constexpr D kCumulative[] = {D::bfloat16, D::float16, D::float32, D::float8_e4m3, D::float8_e5m2,
                                    D::uint8, D::uint16, D::int8, D::int16};
inline constexpr D kRngBits[] = {D::int8, D::int16, D::int32, D::uint8, D::uint16, D::uint32};
inline constexpr D kRand2[] = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::tfloat32,
                               D::int8, D::int16, D::int32, D::uint8, D::uint16, D::uint32};
inline constexpr D kFp32[] = {D::float32};
inline constexpr D kUint32[] = {D::uint32};
inline constexpr D kBf16[] = {D::bfloat16};
inline constexpr D kInt32[] = {D::int32};
inline constexpr D kFp32OrInt32[] = {D::float32, D::int32};
inline constexpr D kSeeds[] = {D::uint32, D::int32};
inline constexpr D kScalar[] = {D::int32, D::int64};
}  // namespace dtypes

// What an instruction's operands are, for the printer, the verifier and the
// simulator's plan (the executor of its Exec kind reads them so):
//   pipe     the data (srcs[0]) through the ALU pipeline (ir::pipeline), or moved
//   fill     imms[0] at every point
//   fold     srcs[0] folded with `alu` over the coords dst omits, times imms[0] when
//            there is one (tensor_partition_reduce's average: 1 / partitions)
//   product  stationary srcs[0] [K, M] and moving srcs[1] [K, N] on [K, M, N]
//   pick     srcs[1] where srcs[0] != 0 (== 0 with `reverse`), else srcs[2], or
//            imms[0] when there is no srcs[2]
//   range    srcs[0] where steps[0] and steps[1] compare `value` (the position)
//            true, else imms[0]
//   cond     srcs[0] where every `cond` holds, else imms[0]
//   index    the exact value of `value` at each point
//   gate     srcs[0] where a uniform draw of the random state is >= the rate
//            (srcs[1], or imms[0] when there is no srcs[1]), else 0
enum class Form : uint8_t { pipe, fill, fold, product, pick, range, cond, index, gate };

// One row per instruction: its enum name, its printed name, its default engine, how
// the simulator executes it, its source and immediate counts, whether it writes a
// destination, its cost class, its operand form, the first NeuronCore generation that
// has it (0: every one), how its nisa call's tile operands relate, and the rules of
// those operands (the call `nisa.<printed name>`; an operand without a rule must be
// on-chip).
//  name                 printed name             engine exec         srcs  imms  dst  cost  form  gen shapes operands
#define NKIC_OPCODES(X)                                                                                          \
  X(Load,               "load",                   dma,  Move,        1, 1, 0, true,  dma, pipe,    0, bcast)     \
  X(Store,              "store",                  dma,  Move,        1, 1, 0, true,  dma, pipe,    0, bcast)     \
  X(Copy,               "tensor_copy",            dve,  Move,        1, 1, 0, true,  stream, pipe, 0, bcast)     \
  X(Transpose,          "nc_transpose",           pe,   Move,        1, 1, 0, true,  matmul, pipe, 0, bcast,     \
    {"x", kOnChip, {}, 2, 2})                                                                                    \
  X(Memset,             "memset",                 dve,  Elementwise, 0, 0, 1, true,  stream, fill, 0, bcast)     \
  X(TensorTensor,       "tensor_tensor",          dve,  Elementwise, 2, 2, 0, true,  stream_pair, pipe, 0, equal, \
    {"data1", kOnChip, {}, 2}, {"data2", kOnChip, {}, 2})                                                        \
  X(TensorScalar,       "tensor_scalar",          dve,  Elementwise, 1, 3, 0, true,  stream, pipe, 0, bcast)     \
  X(ScalarTensorTensor, "scalar_tensor_tensor",   dve,  Elementwise, 2, 3, 0, true,  stream, pipe, 0, bcast)     \
  X(Activation,         "activation",             act,  Elementwise, 1, 3, 0, true,  stream, pipe, 0, bcast)     \
  X(Activate2,          "activate2",              act,  Elementwise, 1, 3, 0, true,  stream, pipe, 4, bcast)     \
  X(Exponential,        "exponential",            dve,  Elementwise, 1, 3, 0, true,  stream, pipe, 4, bcast,     \
    {"src", kOnChip, dtypes::kExpSrc, 1, 4}, {"dst", kOnChip, dtypes::kExpDst, 1, 4},                            \
    {"max_value", kOnChip, dtypes::kFp32}, {"reduce_res", kOnChip, dtypes::kFloatRes})                           \
  X(Select,             "select",                 dve,  Elementwise, 2, 3, 0, true,  stream, pick, 0, bcast)     \
  /* range_select keeps srcs[0] where steps[0] and steps[1] (each comparing `value`, the                         \
     position, with a bound) both hold, else imms[0]. */                                                         \
  X(RangeSelect,        "range_select",           dve,  Elementwise, 1, 3, 1, true,  stream, range, 3, bcast,    \
    {"on_true_tile", kOnChip, {}, 2})                                                                            \
  /* tensor_copy_predicated writes dst where the predicate holds and reads dst (its last src)                    \
     elsewhere; a scalar src is imms[0], picked where the predicate does not hold (reverse). */                  \
  X(CopyPredicated,     "tensor_copy_predicated", dve,  Elementwise, 2, 3, 0, true,  stream, pick, 0, bcast,     \
    {"dst", kOnChip, {}, 2}, {"src", kOnChip, {}, 2}, {"predicate", kOnChip, {}, 2})                             \
  X(AffineSelect,       "affine_select",          pool, Elementwise, 1, 1, 1, true,  stream, cond, 0, bcast,     \
    {"on_true_tile", kOnChip, dtypes::kSelect, 2})                                                               \
  X(Iota,               "iota",                   pool, Elementwise, 0, 0, 0, true,  stream, index, 0, bcast)    \
  X(TensorReduce,       "tensor_reduce",          dve,  Reduce,      1, 1, 0, true,  stream, fold, 0, bcast)     \
  X(Matmul,             "nc_matmul",              pe,   Matmul,      2, 2, 0, true,  matmul, product, 0, bcast,  \
    {"stationary", kSBUF, dtypes::kMatmul, 2, 2}, {"moving", kSBUF, dtypes::kMatmul, 2, 4})                      \
  X(TensorTensorScan,   "tensor_tensor_scan",     dve,  Row,         2, 3, 0, true,  row, pipe,    0, bcast)     \
  X(BnStats,            "bn_stats",               dve,  Row,         1, 1, 0, true,  row, pipe,    0, bcast)     \
  X(BnAggr,             "bn_aggr",                dve,  Row,         1, 1, 0, true,  row, pipe,    0, bcast)     \
  X(Max8,               "max8",                   dve,  Row,         1, 1, 0, true,  row, pipe,    0, bcast)     \
  X(FindIndex8,         "nc_find_index8",         dve,  Row,         2, 2, 0, true,  row, pipe,    0, bcast)     \
  X(MatchReplace8,      "nc_match_replace8",      dve,  Row,         2, 3, 1, true,  row, pipe,    0, bcast)     \
  X(SequenceBounds,     "sequence_bounds",        pool, Row,         1, 1, 0, true,  row, pipe,    0, bcast,     \
    {"segment_ids", kSBUF, dtypes::kFp32OrInt32, 2, 2}, {"dst", kSBUF, dtypes::kFp32OrInt32})                    \
  X(TensorScalarCumulative, "tensor_scalar_cumulative", dve, Row,     1, 3, 0, true,  row, pipe,    0, bcast,    \
    {"src", kOnChip, dtypes::kCumulative}, {"dst", kOnChip, dtypes::kCumulative},                                \
    {"imm0", kOnChip, dtypes::kFp32}, {"imm1", kOnChip, dtypes::kFp32})                                          \
  /* topk reads one 16-partition snake per GpSimd core; nonzero_with_count row 0 of each core. */                \
  X(TopK,               "topk",                   pool, Row,         1, 1, 1, true,  row, pipe,    0, bcast,     \
    {"src", kSBUF, dtypes::kBf16, 2, 2}, {"val_dst", kSBUF, dtypes::kBf16, 2, 2},                                \
    {"idx_dst", kSBUF, dtypes::kUint32, 2, 2})                                                                   \
  X(NonzeroWithCount,   "nonzero_with_count",     pool, Row,         1, 1, 2, true,  row, pipe,    3, bcast,     \
    {"src", kSBUF, dtypes::kFp32OrInt32, 2}, {"dst", kSBUF, dtypes::kInt32, 2})                                  \
  X(Rand,               "rand",                   pool, Side,        0, 0, 0, true,  stream, pipe, 0, bcast)     \
  X(RandomSeed,         "random_seed",            pool, Side,        0, 0, 1, false, none, pipe,   0, bcast)     \
  /* The engines' XORWOW generators, one per partition (sim/SideEffects). */                                     \
  X(Rng,                "rng",                    dve,  Side,        0, 0, 0, true,  stream, pipe, 0, bcast,     \
    {"dst", kOnChip, dtypes::kRngBits})                                                                          \
  X(Rand2,              "rand2",                  dve,  Side,        0, 2, 0, true,  stream, pipe, 4, bcast,     \
    {"dst", kOnChip, dtypes::kRand2}, {"min", kOnChip, dtypes::kFp32}, {"max", kOnChip, dtypes::kFp32})          \
  X(SetRngSeed,         "set_rng_seed",           dve,  Side,        1, 1, 0, false, stream, pipe, 0, bcast,     \
    {"src_seeds", kOnChip, dtypes::kSeeds, 2, 2})                                                                \
  X(RandSetState,       "rand_set_state",         pool, Side,        1, 1, 0, false, stream, pipe, 3, bcast,     \
    {"src_seeds", kSBUF, dtypes::kUint32, 2, 2})                                                                 \
  X(RandGetState,       "rand_get_state",         pool, Side,        0, 0, 0, true,  stream, pipe, 3, bcast,     \
    {"dst", kOnChip, dtypes::kUint32, 2, 2})                                                                     \
  /* dropout takes one draw of nl.rand's state per point, as nl.rand of data's shape would. */                   \
  X(Dropout,            "dropout",                dve,  Side,        1, 2, 0, true,  stream, gate, 0, bcast)     \
  X(Print,              "device_print",           sp,   Side,        1, 1, 0, false, none, pipe,   0, bcast)     \
  X(AllReduce,          "all_reduce",             pool, Collective,  1, 1, 0, true,  collective, pipe, 0, bcast) \
  /* nc_stream_shuffle: imms are the 32 source partitions of a quadrant (255: dst keeps its row);                \
     widths are dst's and src's partitions, each access walked over [its partitions, shape[1]]. */               \
  X(StreamShuffle,      "nc_stream_shuffle",      dve,  Shuffle,     1, 1, 32, true, stream, pipe, 0, bcast,     \
    {"src", kOnChip, {}, 2}, {"dst", kOnChip, {}, 2})                                                            \
  /* The mx ops iterate over [Q, 4, 8, 4, ...]: partition p = 32*g0 + 8*g1 + g2 of the data                      \
     (quadrant, block of 8 in it, row), g3 the lane of a packed element; the block's E8M0 scale                  \
     sits in row 32*g0 + g1 of the scale tile. MxScale writes the scales, MxQuantize the data                    \
     (nisa.quantize_mx emits both). */                                                                           \
  X(MxScale,            "quantize_mx.scale",      dve,  Mx,          1, 1, 1, true,  stream, pipe, 4, bcast)     \
  X(MxQuantize,         "quantize_mx",            dve,  Mx,          2, 2, 0, true,  stream, pipe, 4, bcast,     \
    {"src", kSBUF, dtypes::kMxSrc, 2}, {"dst", kSBUF, dtypes::kMxData, 2},                                       \
    {"dst_scale", kSBUF, dtypes::kMxScale, 2})                                                                  \
  /* dma_compute of several sources: srcs[0] plus each further source (one add step each), summed in       \
     fp32 by the DMA engine; its copy and read-modify-write forms are the DMA rows above. */                      \
  X(DmaCompute,         "dma_compute",            dma,  Elementwise, 1, 16, 0, true, dma, pipe,    0, equal,     \
    {"dst", kHBM | kSBUF})                                                                                       \
  X(MatmulMx,           "nc_matmul_mx",           pe,   Mx,          4, 4, 0, true,  matmul, pipe, 4, bcast,     \
    {"dst", kPSUM, dtypes::kMxDst, 2, 2}, {"stationary", kSBUF, dtypes::kMx, 2, 2},                             \
    {"moving", kSBUF, dtypes::kMx, 2, 2},                                                                        \
    {"stationary_scale", kSBUF, dtypes::kMxScale, 2, 2}, {"moving_scale", kSBUF, dtypes::kMxScale, 2, 2}) \
  /* nki.collectives (NKI_07_08_API.md §8), run by the CC-cores over the DMA rings: every access                 \
     walks its own widths[] elements in row-major order (Grid coord 1); dst, extra_dsts pair with srcs             \
     in list order. imms: collective_dim, the replica group's list size, then its ranks list by list               \
     (cc_permute: 2, then its (source, target) pairs). `alu` is the reduction of all_reduce / reduce_scatter. */           \
  X(CcAllReduce,        "cc_all_reduce",          dma,  Ranks,       1, 64, 2, true, ranks, pipe,  3, bcast)     \
  X(CcAllGather,        "cc_all_gather",          dma,  Ranks,       1, 64, 2, true, ranks, pipe,  3, bcast)     \
  X(CcReduceScatter,    "cc_reduce_scatter",      dma,  Ranks,       1, 64, 2, true, ranks, pipe,  3, bcast)     \
  X(CcAllToAll,         "cc_all_to_all",          dma,  Ranks,       1, 64, 2, true, ranks, pipe,  3, bcast)     \
  X(CcPermute,          "cc_permute",             dma,  Ranks,       1, 64, 2, true, ranks, pipe,  3, bcast)     \
  /* collective_permute_implicit(_reduce): per channel c (dst, extra_dsts in channel order), each rank of a        \
     list sends srcs[c] (the reduce: alu(srcs[c], srcs[channels + c]) in fp32) to its successor in the list,        \
     the last to the first. imms: 0, the list size, the lists' ranks. */                                           \
  X(CcPermuteImplicit,  "cc_permute_implicit",    dma,  Ranks,       1, 4,  2, true, ranks, pipe,  3, bcast)     \
  X(CcPermuteImplicitReduce, "cc_permute_implicit_reduce", dma, Ranks, 2, 8, 2, true, ranks, pipe, 3, bcast)     \
  /* The variable-length forms read a uint32 metadata tensor at run time (srcs[1]; [rows, list size]:            \
     send counts, send displacements, receive counts, receive displacements): imms[0] holds flags                   \
     instead of a dim (1 recv_counts_known, 2 has_rdispls, 4 the metadata of the last cc_prepare, 8 an             \
     all_gather_v's cc_prepare). An                                                                                  \
     all_to_all_v writes the receive counts (extra_dsts[0], the metadata) unless known. cc_prepare reads             \
     the metadata only; srcs[1] and srcs[2] name the buffers its trigger moves. */                                  \
  X(CcAllToAllV,        "cc_all_to_all_v",        dma,  Ranks,       2, 2,  2, true, ranks, pipe,  3, bcast)     \
  X(CcAllGatherV,       "cc_all_gather_v",        dma,  Ranks,       2, 2,  2, true, ranks, pipe,  3, bcast)     \
  X(CcPrepare,          "cc_prepare",             dma,  Ranks,       3, 3,  2, false, none, pipe,  3, bcast)     \
  /* ncc.rank_id: the caller's rank, into a register ([1, 1] int32), read by the sequencer */                     \
  X(RankId,             "rank_id",                sp,   Ranks,       0, 0,  0, true, none,  pipe,  3, bcast)     \
  /* ncc.collective_permute_implicit_current_processing_rank_id: the rank whose data a ring permute brings         \
     at step imms[0] (the caller's own at 0, then its predecessors'); imms[1..]: the list size, the lists. */       \
  X(CcProcessingRankId, "cc_current_processing_rank_id", sp, Ranks,  0, 0,  2, true, none,  pipe,  3, bcast)     \
  /* The sequencer's scalar ALU (nki 0.7+ NkiScalar): a register is a [1, 1] int32 or int64                      \
     SBUF tile. scalar_load/scalar_store move one integer between memory and a register;                         \
     scalar_alu computes dst = alu(srcs[0], srcs[1]), or with the exact constant `value` when                   \
     there is one source (reverse: the constant is the left operand), wrapping to dst's width. */               \
  X(ScalarLoad,         "scalar_load",            dve,  Scalar,      1, 1, 0, true,  scalar, pipe, 0, bcast,     \
    {"src", kHBM | kSBUF, dtypes::kScalar})                                                                      \
  X(ScalarStore,        "scalar_store",           dve,  Scalar,      1, 1, 0, true,  scalar, pipe, 0, bcast,     \
    {"dst", kHBM | kSBUF, dtypes::kScalar})                                                                      \
  X(ScalarAlu,          "scalar_alu",             dve,  Scalar,      1, 2, 0, true,  scalar, pipe, 0, bcast)

enum class Opcode : uint8_t {
#define NKIC_OPCODE_ENUM(n, ...) n,
  NKIC_OPCODES(NKIC_OPCODE_ENUM)
#undef NKIC_OPCODE_ENUM
};
#define NKIC_OPCODE_ONE(...) +1
inline constexpr int kNumOpcodes = 0 NKIC_OPCODES(NKIC_OPCODE_ONE);
#undef NKIC_OPCODE_ONE

// The nisa calls that have no row above: each traces onto the instruction of another row (or
// onto none: a query, a synchronisation, register bookkeeping), on the engine the ISA
// reference runs it on; the builders read that engine here.
//  call (nisa.<name>)          the row it emits   engine
#define NKIC_NISA_CALLS(X)                                                              \
  X(activation_reduce,          Activation,        act)                                 \
  X(tensor_scalar_reduce,       TensorScalar,      dve)                                 \
  X(select_reduce,              Select,            dve)                                 \
  /* the Vector Engine's reciprocal: the one-operand ALU form of an activation */        \
  X(reciprocal,                 Activation,        dve)                                 \
  X(tensor_partition_reduce,    TensorReduce,      pool)                                \
  X(local_gather,               Copy,              pool)                                \
  X(nc_n_gather,                Copy,              pool)                                \
  /* the DMAs: a Load, Store or Copy on a DMA queue, by the memories they move between */ \
  X(dma_copy,                   Load,              dma)                                 \
  X(dma_transpose,              Load,              dma)                                 \
  X(sendrecv,                   Copy,              dma)                                 \
  X(sendrecv_compute,           TensorTensor,      dma)                                 \
  /* the legacy copies at runtime offsets (removed in nki 0.4) */                       \
  X(tensor_copy_dynamic_src,    Copy,              dve)                                 \
  X(tensor_copy_dynamic_dst,    Copy,              dve)                                 \
  X(core_barrier,               none,              none)                                \
  X(register_alloc,             Memset,            dve)                                 \
  X(register_load,              Copy,              dma)                                 \
  X(register_store,             Copy,              dma)                                 \
  X(register_move,              Copy,              dve)                                 \
  X(get_nc_version,             none,              none)                                \
  X(get_nc_sub_version,         none,              none)

struct OpcodeInfo {
  const char* name;   // the ISA's name, as `nkic trace` prints it
  Engine engine;      // the default engine
  Exec exec;
  uint8_t min_srcs, max_srcs;
  uint8_t min_imms;
  bool has_dst;
  Cost cost;
  Form form;
  uint8_t min_nc_version;  // the first NeuronCore generation with it (0: every one)
  Shapes shapes;
  std::span<const OperandRule> operands;
};
// The instruction table, one row per Opcode; read through info().
extern const OpcodeInfo kOpcodeInfo[];
// Inline: every builder, check and executor asks it, several times per instruction.
inline const OpcodeInfo& info(Opcode op) { return kOpcodeInfo[static_cast<int>(op)]; }

// A nisa call without a row of its own: the instruction it emits (nullopt: none) and its engine.
struct NisaCall {
  const char* name;
  std::optional<Opcode> emits;
  Engine engine;
};
std::span<const NisaCall> nisa_calls();
// The engine of nisa.<name> (a call of NKIC_NISA_CALLS; `none` for any other).
Engine call_engine(std::string_view name);
const char* name(Opcode op);
std::optional<Opcode> opcode_from_name(std::string_view isa_name);

}  // namespace nkic::ir
