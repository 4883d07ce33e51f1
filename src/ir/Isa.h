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
enum class Exec : uint8_t { Move, Elementwise, Reduce, Matmul, Row, Mx, Side, Collective };

// What the cost model charges an instruction by (issue-level detail lives in
// the cost model; the table only says which formula applies).
enum class Cost : uint8_t { none, dma, matmul, stream, row, collective };

//  name                 printed name             engine exec         srcs  imms  dst  cost
#define NKIC_OPCODES(X)                                                                            \
  X(Load,               "load",                   dma,  Move,        1, 1, 0, true,  dma)          \
  X(Store,              "store",                  dma,  Move,        1, 1, 0, true,  dma)          \
  X(Copy,               "tensor_copy",            dve,  Move,        1, 1, 0, true,  stream)       \
  X(Transpose,          "nc_transpose",           pe,   Move,        1, 1, 0, true,  matmul)       \
  X(Memset,             "memset",                 dve,  Elementwise, 0, 0, 1, true,  stream)       \
  X(TensorTensor,       "tensor_tensor",          dve,  Elementwise, 2, 2, 0, true,  stream)       \
  X(TensorScalar,       "tensor_scalar",          dve,  Elementwise, 1, 3, 0, true,  stream)       \
  X(ScalarTensorTensor, "scalar_tensor_tensor",   dve,  Elementwise, 2, 3, 0, true,  stream)       \
  X(Activation,         "activation",             act,  Elementwise, 1, 3, 0, true,  stream)       \
  X(Activate2,          "activate2",              act,  Elementwise, 1, 3, 0, true,  stream)       \
  X(Exponential,        "exponential",            dve,  Elementwise, 1, 2, 0, true,  stream)       \
  X(Select,             "select",                 dve,  Elementwise, 2, 3, 0, true,  stream)       \
  /* range_select keeps srcs[0] where steps[0] and steps[1] (each comparing `value`, the         \
     position, with a bound) both hold, else imms[0]. */                                          \
  X(RangeSelect,        "range_select",           dve,  Elementwise, 1, 3, 1, true,  stream)       \
  X(AffineSelect,       "affine_select",          pool, Elementwise, 1, 1, 1, true,  stream)       \
  X(Iota,               "iota",                   pool, Elementwise, 0, 0, 0, true,  stream)       \
  X(TensorReduce,       "tensor_reduce",          dve,  Reduce,      1, 1, 0, true,  stream)       \
  X(Matmul,             "nc_matmul",              pe,   Matmul,      2, 2, 0, true,  matmul)       \
  X(TensorTensorScan,   "tensor_tensor_scan",     dve,  Row,         2, 3, 0, true,  row)          \
  X(BnStats,            "bn_stats",               dve,  Row,         1, 1, 0, true,  row)          \
  X(BnAggr,             "bn_aggr",                dve,  Row,         1, 1, 0, true,  row)          \
  X(Max8,               "max8",                   dve,  Row,         1, 1, 0, true,  row)          \
  X(FindIndex8,         "nc_find_index8",         dve,  Row,         2, 2, 0, true,  row)          \
  X(MatchReplace8,      "nc_match_replace8",      dve,  Row,         2, 3, 1, true,  row)          \
  X(SequenceBounds,     "sequence_bounds",        pool, Row,         1, 1, 0, true,  row)          \
  X(TensorScalarCumulative, "tensor_scalar_cumulative", dve, Row,     1, 3, 0, true,  row)          \
  /* topk reads one 16-partition snake per GpSimd core; nonzero_with_count row 0 of each core. */ \
  X(TopK,               "topk",                   pool, Row,         1, 1, 1, true,  row)          \
  X(NonzeroWithCount,   "nonzero_with_count",     pool, Row,         1, 1, 2, true,  row)          \
  X(Rand,               "rand",                   pool, Side,        0, 0, 0, true,  stream)       \
  X(RandomSeed,         "random_seed",            pool, Side,        0, 0, 1, false, none)         \
  /* The engines' XORWOW generators, one per partition (sim/SideEffects). */                      \
  X(Rng,                "rng",                    dve,  Side,        0, 0, 0, true,  stream)       \
  X(Rand2,              "rand2",                  dve,  Side,        0, 2, 0, true,  stream)       \
  X(SetRngSeed,         "set_rng_seed",           dve,  Side,        1, 1, 0, false, stream)       \
  X(RandSetState,       "rand_set_state",         pool, Side,        1, 1, 0, false, stream)       \
  X(RandGetState,       "rand_get_state",         pool, Side,        0, 0, 0, true,  stream)       \
  X(Print,              "device_print",           sp,   Side,        1, 1, 0, false, none)         \
  X(AllReduce,          "all_reduce",             pool, Collective,  1, 1, 0, true,  collective)   \
  /* The mx ops iterate over [Q, 4, 8, 4, ...]: partition p = 32*g0 + 8*g1 + g2 of the data       \
     (quadrant, block of 8 in it, row), g3 the lane of a packed element; the block's E8M0 scale   \
     sits in row 32*g0 + g1 of the scale tile. MxScale writes the scales, MxQuantize the data. */  \
  X(MxScale,            "quantize_mx.scale",      dve,  Mx,          1, 1, 1, true,  stream)       \
  X(MxQuantize,         "quantize_mx",            dve,  Mx,          2, 2, 0, true,  stream)       \
  X(MatmulMx,           "nc_matmul_mx",           pe,   Mx,          4, 4, 0, true,  matmul)

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
};
const OpcodeInfo& info(Opcode op);
const char* name(Opcode op);
std::optional<Opcode> opcode_from_name(std::string_view isa_name);

}  // namespace nkic::ir
