// The instruction set, written once: every ISA instruction the IR can hold, with
// the facts the rest of nkic derives from it (the printer's name and engine tag,
// the verifier's operand counts, the simulator's executor, the cost model's
// class). One IR instruction is one machine instruction.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

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
enum class Exec : uint8_t { Move, Elementwise, Reduce, Matmul, Row, Mx, Side, Collective, Shuffle };

// What the cost model charges an instruction by (issue-level detail lives in
// the cost model; the table only says which formula applies).
enum class Cost : uint8_t { none, dma, matmul, stream, row, collective };

// What an instruction's operands are, for the printer, the verifier and the
// simulator's plan (the executor of its Exec kind reads them so):
//   pipe     the data (srcs[0]) through the ALU pipeline (ir::pipeline), or moved
//   fill     imms[0] at every point
//   fold     srcs[0] folded with `alu` over the coords dst omits
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

//  name                 printed name             engine exec         srcs  imms  dst  cost   form
#define NKIC_OPCODES(X)                                                                            \
  X(Load,               "load",                   dma,  Move,        1, 1, 0, true,  dma, pipe)      \
  X(Store,              "store",                  dma,  Move,        1, 1, 0, true,  dma, pipe)      \
  X(Copy,               "tensor_copy",            dve,  Move,        1, 1, 0, true,  stream, pipe)   \
  X(Transpose,          "nc_transpose",           pe,   Move,        1, 1, 0, true,  matmul, pipe)   \
  X(Memset,             "memset",                 dve,  Elementwise, 0, 0, 1, true,  stream, fill)   \
  X(TensorTensor,       "tensor_tensor",          dve,  Elementwise, 2, 2, 0, true,  stream, pipe)   \
  X(TensorScalar,       "tensor_scalar",          dve,  Elementwise, 1, 3, 0, true,  stream, pipe)   \
  X(ScalarTensorTensor, "scalar_tensor_tensor",   dve,  Elementwise, 2, 3, 0, true,  stream, pipe)   \
  X(Activation,         "activation",             act,  Elementwise, 1, 3, 0, true,  stream, pipe)   \
  X(Activate2,          "activate2",              act,  Elementwise, 1, 3, 0, true,  stream, pipe)   \
  X(Exponential,        "exponential",            dve,  Elementwise, 1, 2, 0, true,  stream, pipe)   \
  X(Select,             "select",                 dve,  Elementwise, 2, 3, 0, true,  stream, pick)   \
  /* range_select keeps srcs[0] where steps[0] and steps[1] (each comparing `value`, the         \
     position, with a bound) both hold, else imms[0]. */                                          \
  X(RangeSelect,        "range_select",           dve,  Elementwise, 1, 3, 1, true,  stream, range)  \
  /* tensor_copy_predicated writes dst where the predicate holds and reads dst (its last src)      \
     elsewhere; a scalar src is imms[0], picked where the predicate does not hold (reverse). */    \
  X(CopyPredicated,     "tensor_copy_predicated", dve,  Elementwise, 2, 3, 0, true,  stream, pick)   \
  X(AffineSelect,       "affine_select",          pool, Elementwise, 1, 1, 1, true,  stream, cond)   \
  X(Iota,               "iota",                   pool, Elementwise, 0, 0, 0, true,  stream, index)  \
  X(TensorReduce,       "tensor_reduce",          dve,  Reduce,      1, 1, 0, true,  stream, fold)   \
  X(Matmul,             "nc_matmul",              pe,   Matmul,      2, 2, 0, true,  matmul, product) \
  X(TensorTensorScan,   "tensor_tensor_scan",     dve,  Row,         2, 3, 0, true,  row, pipe)      \
  X(BnStats,            "bn_stats",               dve,  Row,         1, 1, 0, true,  row, pipe)      \
  X(BnAggr,             "bn_aggr",                dve,  Row,         1, 1, 0, true,  row, pipe)      \
  X(Max8,               "max8",                   dve,  Row,         1, 1, 0, true,  row, pipe)      \
  X(FindIndex8,         "nc_find_index8",         dve,  Row,         2, 2, 0, true,  row, pipe)      \
  X(MatchReplace8,      "nc_match_replace8",      dve,  Row,         2, 3, 1, true,  row, pipe)      \
  X(SequenceBounds,     "sequence_bounds",        pool, Row,         1, 1, 0, true,  row, pipe)      \
  X(TensorScalarCumulative, "tensor_scalar_cumulative", dve, Row,     1, 3, 0, true,  row, pipe)     \
  /* topk reads one 16-partition snake per GpSimd core; nonzero_with_count row 0 of each core. */ \
  X(TopK,               "topk",                   pool, Row,         1, 1, 1, true,  row, pipe)      \
  X(NonzeroWithCount,   "nonzero_with_count",     pool, Row,         1, 1, 2, true,  row, pipe)      \
  X(Rand,               "rand",                   pool, Side,        0, 0, 0, true,  stream, pipe)   \
  X(RandomSeed,         "random_seed",            pool, Side,        0, 0, 1, false, none, pipe)     \
  /* The engines' XORWOW generators, one per partition (sim/SideEffects). */                      \
  X(Rng,                "rng",                    dve,  Side,        0, 0, 0, true,  stream, pipe)   \
  X(Rand2,              "rand2",                  dve,  Side,        0, 2, 0, true,  stream, pipe)   \
  X(SetRngSeed,         "set_rng_seed",           dve,  Side,        1, 1, 0, false, stream, pipe)   \
  X(RandSetState,       "rand_set_state",         pool, Side,        1, 1, 0, false, stream, pipe)   \
  X(RandGetState,       "rand_get_state",         pool, Side,        0, 0, 0, true,  stream, pipe)   \
  /* dropout takes one draw of nl.rand's state per point, as nl.rand of data's shape would. */    \
  X(Dropout,            "dropout",                dve,  Side,        1, 2, 0, true,  stream, gate)   \
  X(Print,              "device_print",           sp,   Side,        1, 1, 0, false, none, pipe)     \
  X(AllReduce,          "all_reduce",             pool, Collective,  1, 1, 0, true,  collective, pipe) \
  /* nc_stream_shuffle: imms are the 32 source partitions of a quadrant (255: dst keeps its row);  \
     widths are dst's and src's partitions, each access walked over [its partitions, shape[1]]. */ \
  X(StreamShuffle,      "nc_stream_shuffle",      dve,  Shuffle,     1, 1, 32, true, stream, pipe)   \
  /* The mx ops iterate over [Q, 4, 8, 4, ...]: partition p = 32*g0 + 8*g1 + g2 of the data       \
     (quadrant, block of 8 in it, row), g3 the lane of a packed element; the block's E8M0 scale   \
     sits in row 32*g0 + g1 of the scale tile. MxScale writes the scales, MxQuantize the data. */  \
  X(MxScale,            "quantize_mx.scale",      dve,  Mx,          1, 1, 1, true,  stream, pipe)   \
  X(MxQuantize,         "quantize_mx",            dve,  Mx,          2, 2, 0, true,  stream, pipe)   \
  X(MatmulMx,           "nc_matmul_mx",           pe,   Mx,          4, 4, 0, true,  matmul, pipe)

enum class Opcode : uint8_t {
#define NKIC_OPCODE_ENUM(n, ...) n,
  NKIC_OPCODES(NKIC_OPCODE_ENUM)
#undef NKIC_OPCODE_ENUM
};

struct OpcodeInfo {
  const char* name;   // the ISA's name, as `nkic trace` prints it
  Engine engine;      // the default engine
  Exec exec;
  uint8_t min_srcs, max_srcs;
  uint8_t min_imms;
  bool has_dst;
  Cost cost;
  Form form;
};
const OpcodeInfo& info(Opcode op);
const char* name(Opcode op);
std::optional<Opcode> opcode_from_name(std::string_view isa_name);

}  // namespace nkic::ir
