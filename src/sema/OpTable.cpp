#include "sema/OpTable.h"

#include <algorithm>
#include <unordered_map>

#include "sema/ErrorCatalog.h"

namespace nkic::sema {

namespace {

using D = ir::DType;
const std::vector<D> kMatmulDtypes = {D::float8_e4m3, D::float8_e5m2, D::bfloat16, D::float16, D::tfloat32, D::float32};
const std::vector<D> kMxDtypes = {D::float8_e4m3fn_x4, D::float8_e5m2_x4, D::float4_e2m1fn_x4};
const std::vector<D> kSelectDtypes = {D::float32, D::float16, D::bfloat16, D::tfloat32, D::float8_e4m3, D::float8_e5m2,
                                      D::int8, D::uint8, D::int16, D::uint16};

// The current API's instructions (NKI_CURRENT_API.md §6.5-6.7).
const std::vector<D> kExpSrc = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::int8,
                                D::int16, D::int32, D::uint8, D::uint16, D::uint32};
const std::vector<D> kExpDst = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::tfloat32,
                                D::int8, D::int16, D::int32, D::uint8, D::uint16};
const std::vector<D> kFloatRes = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::tfloat32};
const std::vector<D> kCumulative = {D::bfloat16, D::float16, D::float32, D::float8_e4m3, D::float8_e5m2,
                                    D::uint8, D::uint16, D::int8, D::int16};
const std::vector<D> kRngBits = {D::int8, D::int16, D::int32, D::uint8, D::uint16, D::uint32};
const std::vector<D> kRand2 = {D::float8_e4m3, D::float8_e5m2, D::float16, D::bfloat16, D::float32, D::tfloat32,
                               D::int8, D::int16, D::int32, D::uint8, D::uint16, D::uint32};

const std::vector<OpSpec>& table() {
  static const std::vector<OpSpec> ops = {
      {"nl.load", {{"src", kHBM}}},
      {"nl.store", {{"dst", kHBM}, {"value", kOnChip}}},
      {"nl.load_transpose2d", {{"src", kHBM, {}, 2, 2}}},
      {"nisa.dma_transpose", {{"src", kHBM | kOnChip, {}, 2, 2}}},
      {"nl.matmul", {{"x", kSBUF, kMatmulDtypes, 2, 2}, {"y", kSBUF, kMatmulDtypes, 2, 2}}},
      {"nisa.nc_matmul", {{"stationary", kSBUF, kMatmulDtypes, 2, 2}, {"moving", kSBUF, kMatmulDtypes, 2, 4}}},
      {"nl.transpose", {{"x", kOnChip, {}, 2, 2}}},
      {"nisa.nc_transpose", {{"x", kOnChip, {}, 2, 2}}},
      {"nisa.affine_select", {{"on_true_tile", kOnChip, kSelectDtypes, 2}}},
      {"nl.where", {{"condition", kOnChip, {}, 2}, {"x", kOnChip, {}, 2}, {"y", kOnChip, {}, 2}}},
      {"nisa.select_reduce",
       {{"dst", kOnChip, {}, 2}, {"predicate", kOnChip, {}, 2}, {"on_true", kOnChip, {}, 2}, {"on_false", kOnChip, {}, 2}}},
      {"nisa.tensor_tensor", {{"data1", kOnChip, {}, 2}, {"data2", kOnChip, {}, 2}}, false},
      {"nisa.local_gather", {{"src_buffer", kSBUF, {}, 2}, {"index", kSBUF, {D::uint16}, 2, 2}}},
      {"nl.gather_flattened", {{"data", kSBUF, {}, 2}, {"indices", kSBUF, {}, 2, 4}}},
      {"nl.atomic_rmw", {{"dst", kHBM}, {"value", kOnChip}}},
      {"nisa.sequence_bounds", {{"segment_ids", kOnChip, {D::float32, D::int32}, 2, 2}}},
      {"nisa.range_select", {{"on_true_tile", kOnChip, {}, 2}}, true, 3},
      {"nisa.exponential",
       {{"src", kOnChip, kExpSrc, 1, 4}, {"dst", kOnChip, kExpDst, 1, 4}, {"max_value", kOnChip, {D::float32}},
        {"reduce_res", kOnChip, kFloatRes}},
       true,
       4},
      {"nisa.activate2", {}, true, 4},
      {"nisa.tensor_scalar_cumulative",
       {{"src", kOnChip, kCumulative}, {"dst", kOnChip, kCumulative}, {"imm0", kOnChip, {D::float32}},
        {"imm1", kOnChip, {D::float32}}}},
      {"nisa.topk", {{"src", kSBUF, {D::bfloat16}, 2, 2}, {"val_dst", kSBUF, {D::bfloat16}, 2, 2},
                     {"idx_dst", kSBUF, {D::uint32}, 2, 2}}},
      {"nisa.nonzero_with_count", {{"src", kSBUF, {D::float32, D::int32}, 2}, {"dst", kSBUF, {D::int32}, 2}},
       true,
       3},
      {"nisa.rng", {{"dst", kOnChip, kRngBits}}},
      {"nisa.rand2", {{"dst", kOnChip, kRand2}, {"min", kOnChip, {D::float32}}, {"max", kOnChip, {D::float32}}}, true,
       4},
      {"nisa.set_rng_seed", {{"src_seeds", kOnChip, {D::uint32, D::int32}, 2, 2}}},
      {"nisa.rand_set_state", {{"src_seeds", kSBUF, {D::uint32}, 2, 2}}, true, 3},
      {"nisa.core_barrier", {{"data", kHBM}}, true, 3},
      {"nisa.sendrecv", {{"src", kSBUF}, {"dst", kSBUF}}, true, 3},
      {"nisa.rand_get_state", {{"dst", kOnChip, {D::uint32}, 2, 2}}, true, 3},
      {"nisa.quantize_mx",
       {{"src", kSBUF, {D::bfloat16, D::float16}, 2, 2},
        {"dst", kSBUF, {D::float8_e4m3fn_x4, D::float8_e5m2_x4}, 2, 2},
        {"dst_scale", kSBUF, {D::uint8}, 2, 2}},
       true,
       4},
      {"nisa.nc_matmul_mx",
       {{"dst", kPSUM, {}, 2, 2},
        {"stationary", kSBUF, kMxDtypes, 2, 2},
        {"moving", kSBUF, kMxDtypes, 2, 2},
        {"stationary_scale", kSBUF, {D::uint8}, 2, 2},
        {"moving_scale", kSBUF, {D::uint8}, 2, 2}},
       true,
       4},
  };
  return ops;
}

std::string memories_str(uint8_t m) {
  std::string s;
  for (auto [bit, name] : {std::pair{kPSUM, "psum"}, std::pair{kSBUF, "sbuf"}, std::pair{kHBM, "hbm"}})
    if (m & bit) s += (s.empty() ? "" : "|") + std::string(name);
  return s;
}

uint8_t mask_of(ir::Memory m) {
  switch (m) {
    case ir::Memory::SharedHBM:
    case ir::Memory::PrivateHBM: return kHBM;
    case ir::Memory::SBUF: return kSBUF;
    case ir::Memory::PSUM: return kPSUM;
  }
  return 0;
}

}  // namespace

const OpSpec& op_spec(std::string_view api) {
  static const OpSpec compute = {"", {}};
  // Looked up several times per traced instruction: by hash, not by a scan of the table.
  static const std::unordered_map<std::string_view, const OpSpec*> by_api = [] {
    std::unordered_map<std::string_view, const OpSpec*> m;
    for (const OpSpec& op : table()) m.emplace(op.api, &op);
    return m;
  }();
  auto it = by_api.find(api);
  return it == by_api.end() ? compute : *it->second;
}

void check_operand(std::string_view api, std::string_view operand, const ir::TensorDecl& t,
                   const std::vector<int64_t>& view_shape, const Raise& raise) {
  check_operand(op_spec(api), api, operand, t, view_shape, raise);
}

void check_operand(const OpSpec& op, std::string_view api, std::string_view operand, const ir::TensorDecl& t,
                   const std::vector<int64_t>& view_shape, const Raise& raise) {
  static const OperandSpec on_chip_default = {"", kOnChip};
  const OperandSpec* spec = &on_chip_default;
  for (const OperandSpec& o : op.operands)
    if (o.name == operand) spec = &o;
  if (!(spec->memories & mask_of(t.memory))) {
    std::string actual = ir::is_hbm(t.memory) ? "hbm" : ir::name(t.memory);
    raise(err_unsupported_memory(operand, api, memories_str(spec->memories), actual));
  }
  // Packed mx tiles hold four values per element: they move unchanged, or feed
  // the ops that declare them; computing on them is meaningless.
  static const std::string_view kMoves[] = {"nl.load", "nl.store", "nisa.dma_copy", "nisa.tensor_copy", "nl.copy"};
  if (ir::is_packed(t.dtype) && spec->dtypes.empty() &&
      std::find(std::begin(kMoves), std::end(kMoves), api) == std::end(kMoves))
    raise(err_packed_dtype_not_computable(t.name, ir::name(t.dtype), api));
  if (!spec->dtypes.empty() && std::find(spec->dtypes.begin(), spec->dtypes.end(), t.dtype) == spec->dtypes.end()) {
    std::string allowed;
    for (ir::DType d : spec->dtypes) allowed += (allowed.empty() ? "" : ", ") + std::string(ir::name(d));
    raise(err_supported_operand_dtype("operand '" + std::string(operand) + "' of '" + std::string(api) +
                                      "' has dtype '" + std::string(ir::name(t.dtype)) +
                                      "', which is not supported; expected one of {" + allowed + "}"));
  }
  int rank = static_cast<int>(view_shape.size());
  if (rank > spec->max_rank)
    raise(err_exceed_max_supported_dimension(t.name + shape_str(view_shape), api, spec->max_rank));
  if (rank < spec->min_rank) assert_min_rank(view_shape, spec->min_rank, std::string(operand), raise);
}

void check_hwdge(std::string_view api, const Target& target, const Raise& raise) {
  if (!target.has_hwdge) raise(err_min_arch_support_for_hwdge(api, target.name, target.nc_version));
}

}  // namespace nkic::sema
