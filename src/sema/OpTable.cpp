#include "sema/OpTable.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>

#include "sema/ErrorCatalog.h"

namespace nkic::sema {

namespace {

using namespace ir;  // the memory masks and dtype sets of the instruction table
using D = DType;
constexpr D kUint16[] = {D::uint16};

const std::vector<OpSpec>& table() {
  static const std::vector<OpSpec> ops = {
      {"nl.load", {{"src", kHBM}}},
      {"nl.store", {{"dst", kHBM}, {"value", kOnChip}}},
      {"nl.load_transpose2d", {{"src", kHBM, {}, 2, 2}}},
      {"nisa.dma_transpose", {{"src", kHBM | kOnChip, {}, 2, 4}}},
      {"nl.matmul", {{"x", kSBUF, dtypes::kMatmul, 2, 2}, {"y", kSBUF, dtypes::kMatmul, 2, 2}}},
      {"nl.transpose", {{"x", kOnChip, {}, 2, 2}}},
      {"nl.where", {{"condition", kOnChip, {}, 2}, {"x", kOnChip, {}, 2}, {"y", kOnChip, {}, 2}}},
      {"nisa.select_reduce",
       {{"dst", kOnChip, {}, 2}, {"predicate", kOnChip, {}, 2}, {"on_true", kOnChip, {}, 2}, {"on_false", kOnChip, {}, 2}}},
      {"nisa.local_gather", {{"src_buffer", kSBUF, {}, 2}, {"index", kSBUF, kUint16, 2, 2}}},
      {"nl.gather_flattened", {{"data", kSBUF, {}, 2}, {"indices", kSBUF, {}, 2, 4}}},
      // NKI 0.7: data (and so dst) has at most 4 free dims.
      {"nisa.tensor_partition_reduce", {{"data", kOnChip, {}, 1, 5}}},
      {"nl.atomic_rmw", {{"dst", kHBM}, {"value", kOnChip}}},
      {"nisa.core_barrier", {{"data", kHBM}}, Shapes::bcast, 3},
      {"nisa.sendrecv", {{"src", kSBUF}, {"dst", kSBUF}}, Shapes::bcast, 3},
  };
  return ops;
}

// The spec of an instruction's own nisa call, from its row of the instruction table.
OpSpec instruction_spec(std::string_view api, const OpcodeInfo& row) {
  return {api, {row.operands.begin(), row.operands.end()}, row.shapes, row.min_nc_version};
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
  static const std::deque<std::string> instruction_apis = [] {
    std::deque<std::string> names;
    for (int op = 0; op < ir::kNumOpcodes; ++op) names.push_back("nisa." + std::string(ir::name(ir::Opcode(op))));
    return names;
  }();
  static const std::deque<OpSpec> instruction_specs = [] {
    std::deque<OpSpec> specs;
    for (int op = 0; op < ir::kNumOpcodes; ++op)
      specs.push_back(instruction_spec(instruction_apis[op], ir::info(ir::Opcode(op))));
    return specs;
  }();
  static const std::unordered_map<std::string_view, const OpSpec*> by_api = [] {
    std::unordered_map<std::string_view, const OpSpec*> m;
    for (const OpSpec& op : table()) m.emplace(op.api, &op);
    for (const OpSpec& op : instruction_specs) m.emplace(op.api, &op);
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
