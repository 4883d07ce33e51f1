// The legality layer in C++ (seed 004): the target attribute contract, the
// polarity of each assert family's comparison (limit passes, limit + 1 fails),
// the declarative op table, static bounds with mask narrowing, the single raise
// sink and the error catalog's documented texts (NKI_API.md §7.1).
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sema/Asserts.h"
#include "sema/Bounds.h"
#include "sema/Diagnostic.h"
#include "sema/ErrorCatalog.h"
#include "sema/OpTable.h"
#include "sema/Target.h"

namespace {

using namespace nkic;
using ir::DType;
using ir::Memory;
using sema::Diagnostic;
using sema::Target;

// A raise like the tracer's: it does not return.
const sema::Raise kThrow = [](Diagnostic d) { throw sema::NkiError(std::move(d)); };

template <typename F>
std::optional<Diagnostic> diag_of(F&& f) {
  try {
    f();
  } catch (const sema::NkiError& e) {
    return e.diag();
  }
  return std::nullopt;
}

#define EXPECT_PASSES(expr) EXPECT_FALSE(diag_of([&] { expr; }).has_value()) << #expr
#define EXPECT_CODE(expr, code_)                                      \
  do {                                                                \
    auto d_ = diag_of([&] { expr; });                                 \
    ASSERT_TRUE(d_.has_value()) << #expr << " did not raise";         \
    EXPECT_EQ(d_->code, code_) << d_->message;                        \
  } while (0)

std::string message_of(const std::optional<Diagnostic>& d) { return d ? d->message : "<no diagnostic>"; }

// The error page prints some messages as a sentence: the trailing '.' is optional there.
void expect_message_period_optional(const std::string& got, const std::string& doc) {
  EXPECT_TRUE(got == doc || got == doc + ".") << got << "\n  vs documented: " << doc;
}

struct Spec {
  const char* name;
  int nc_version;
  int64_t sbuf_bytes;
  int64_t psum_partitions;
};
const Spec kSpecs[] = {
    {"inf1", 1, 180224, 64},
    {"trn1", 2, 180224, 128},
    {"inf2", 2, 180224, 128},
    {"trn2", 3, 212984, 128},
    {"trn3", 4, 245752, 128},
};

ir::TensorDecl decl(std::string name, std::vector<int64_t> shape, DType dt, Memory m) {
  ir::TensorDecl t;
  t.id = 0;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dt;
  t.memory = m;
  return t;
}

// ------------------------------------------------------------------ target contract

TEST(SemaTarget, AllTargetsInStableOrderWithTheirAttributes) {
  const auto& all = sema::all_targets();
  ASSERT_EQ(all.size(), std::size(kSpecs));
  for (size_t i = 0; i < all.size(); ++i) {
    const Target& t = all[i];
    const Spec& s = kSpecs[i];
    SCOPED_TRACE(s.name);
    EXPECT_EQ(t.name, s.name);
    EXPECT_EQ(t.nc_version, s.nc_version);
    EXPECT_EQ(t.statebuf_num_partitions, 128);
    EXPECT_EQ(t.statebuf_par_size_in_bytes, s.sbuf_bytes);
    EXPECT_EQ(t.psum_num_partitions, s.psum_partitions);
    EXPECT_EQ(t.psum_par_size_in_bytes, 2048);
    EXPECT_EQ(t.psum_num_banks, 8);
    EXPECT_EQ(t.gemm_stationary_fmax, 128);
    EXPECT_EQ(t.gemm_moving_fmax, 512);
    EXPECT_EQ(t.bn_stats_fmax, 512);
    EXPECT_GE(t.max_num_physical_cores, 1);
  }
  EXPECT_EQ(sema::find_target("trn1")->max_num_physical_cores, 1);
  EXPECT_EQ(sema::find_target("inf2")->max_num_physical_cores, 1);
  EXPECT_EQ(sema::find_target("trn2")->max_num_physical_cores, 2);  // LNC of up to 2 physical cores
}

TEST(SemaTarget, FindTargetAndDefault) {
  for (const Target& t : sema::all_targets()) EXPECT_EQ(sema::find_target(t.name), &t);
  EXPECT_EQ(sema::find_target("trn9"), nullptr);
  EXPECT_EQ(sema::find_target(""), nullptr);
  EXPECT_EQ(sema::find_target("TRN2"), nullptr);
  EXPECT_EQ(sema::default_target().name, "trn2");
  EXPECT_EQ(&sema::default_target(), sema::find_target("trn2"));
  // 176 KiB usable per partition on gen2 (16 KiB of 192 KiB reserved), 212984 bytes on trn2.
  EXPECT_EQ(sema::find_target("trn1")->statebuf_par_size_in_bytes, 176 * 1024);
}

// ------------------------------------------------------------------ partition family

// nl.tile_size: the legacy API's eight names; the current API's six more (NKI 0.4+), the SBUF
// ones per generation, and a PSUM bank fewer when DMA transposes run on the PE (NC-v3+ only).
TEST(SemaTarget, TileSizesPerApiAndTarget) {
  auto sizes = [](const char* target, sema::TileSizeOptions o) {
    std::map<std::string, int64_t> m;
    for (const auto& [name, value] : sema::tile_sizes(*sema::find_target(target), o)) m[name] = value;
    return m;
  };
  const auto legacy = sizes("trn2", {});
  EXPECT_EQ(legacy.size(), 8u);
  EXPECT_EQ(legacy.count("sbuf_fmax"), 0u);
  EXPECT_EQ(legacy.at("total_available_sbuf_size"), 212984);
  const std::map<std::string, std::array<int64_t, 3>> current = {  // trn1, trn2, trn3
      {"psum_bank_fmax", {512, 512, 512}},
      {"psum_bank_fmax_bytes", {2048, 2048, 2048}},
      {"psum_num_banks", {8, 8, 8}},
      {"sbuf_size_bytes", {128 * 192 << 10, 128 * 224 << 10, 128 * 256 << 10}},
      {"sbuf_fmax", {180224 / 4, 212984 / 4, 245752 / 4}},
      {"sbuf_fmax_bytes", {180224, 212984, 245752}}};
  const char* targets[] = {"trn1", "trn2", "trn3"};
  for (int i = 0; i < 3; ++i) {
    const auto got = sizes(targets[i], {.current_api = true});
    EXPECT_EQ(got.size(), 14u) << targets[i];
    for (const auto& [name, values] : current) EXPECT_EQ(got.at(name), values[i]) << targets[i] << " " << name;
    const auto pe = sizes(targets[i], {.current_api = true, .dma_transpose_as_pe = true});
    EXPECT_EQ(pe.at("psum_num_banks"), i == 0 ? 8 : 7) << targets[i];
  }
}

TEST(SemaPartition, LimitPassesLimitPlusOneFailsOnEveryTarget) {
  for (const Target& t : sema::all_targets()) {
    SCOPED_TRACE(t.name);
    EXPECT_PASSES(sema::assert_par_dim(1, Memory::SBUF, t, kThrow));
    EXPECT_PASSES(sema::assert_par_dim(t.statebuf_num_partitions, Memory::SBUF, t, kThrow));
    auto d = diag_of([&] { sema::assert_par_dim(t.statebuf_num_partitions + 1, Memory::SBUF, t, kThrow); });
    ASSERT_TRUE(d);
    EXPECT_EQ(d->code, "err_num_partition_exceed_arch_limit");
    EXPECT_EQ(d->message, "number of partitions 129 exceed architecture limitation of 128.");

    EXPECT_PASSES(sema::assert_par_dim(t.psum_num_partitions, Memory::PSUM, t, kThrow));
    d = diag_of([&] { sema::assert_par_dim(t.psum_num_partitions + 1, Memory::PSUM, t, kThrow); });
    ASSERT_TRUE(d);
    EXPECT_EQ(d->code, "err_num_partition_exceed_arch_limit");
    EXPECT_EQ(d->message, "number of partitions " + std::to_string(t.psum_num_partitions + 1) +
                              " exceed architecture limitation of " + std::to_string(t.psum_num_partitions) + ".");
  }
}

TEST(SemaPartition, PsumLimitComesFromPsumNumPartitions) {
  const Target& inf1 = *sema::find_target("inf1");
  EXPECT_PASSES(sema::assert_par_dim(64, Memory::PSUM, inf1, kThrow));
  EXPECT_CODE(sema::assert_par_dim(65, Memory::PSUM, inf1, kThrow), "err_num_partition_exceed_arch_limit");
  EXPECT_PASSES(sema::assert_par_dim(128, Memory::SBUF, inf1, kThrow));  // SBUF stays 128 on gen1
  EXPECT_PASSES(sema::assert_par_dim(128, Memory::PSUM, *sema::find_target("trn1"), kThrow));
}

TEST(SemaPartition, LimitsAreReadOffTheTarget) {
  Target t = sema::default_target();
  t.statebuf_num_partitions = 32;
  t.psum_num_partitions = 16;
  EXPECT_PASSES(sema::assert_par_dim(32, Memory::SBUF, t, kThrow));
  auto d = diag_of([&] { sema::assert_par_dim(33, Memory::SBUF, t, kThrow); });
  EXPECT_EQ(message_of(d), "number of partitions 33 exceed architecture limitation of 32.");
  EXPECT_PASSES(sema::assert_par_dim(16, Memory::PSUM, t, kThrow));
  d = diag_of([&] { sema::assert_par_dim(17, Memory::PSUM, t, kThrow); });
  EXPECT_EQ(message_of(d), "number of partitions 17 exceed architecture limitation of 16.");
}

TEST(SemaPartition, HbmIsExempt) {
  for (const Target& t : sema::all_targets()) {
    EXPECT_PASSES(sema::assert_par_dim(1 << 20, Memory::SharedHBM, t, kThrow));
    EXPECT_PASSES(sema::assert_par_dim(1 << 20, Memory::PrivateHBM, t, kThrow));
  }
}

// ------------------------------------------------------------------ free-dim family

TEST(SemaFreeDim, SbufCapacityEqualToRequiredPassesOneMoreFails) {
  for (const Target& t : sema::all_targets()) {
    SCOPED_TRACE(t.name);
    int64_t cap = t.statebuf_par_size_in_bytes;
    EXPECT_PASSES(sema::assert_free_dim({128, cap}, DType::uint8, Memory::SBUF, t, kThrow));
    auto d = diag_of([&] { sema::assert_free_dim({128, cap + 1}, DType::uint8, Memory::SBUF, t, kThrow); });
    ASSERT_TRUE(d);
    EXPECT_EQ(d->code, "err_stack_overflow_sbuf");
    EXPECT_NE(d->message.find(std::to_string(cap + 1)), std::string::npos) << d->message;
    EXPECT_NE(d->message.find(std::to_string(cap)), std::string::npos) << d->message;
    // float32: one element more is four bytes more.
    ASSERT_EQ(cap % 4, 0);
    EXPECT_PASSES(sema::assert_free_dim({128, cap / 4}, DType::float32, Memory::SBUF, t, kThrow));
    EXPECT_CODE(sema::assert_free_dim({128, cap / 4 + 1}, DType::float32, Memory::SBUF, t, kThrow),
                "err_stack_overflow_sbuf");
    // Every free dim counts, the partition dim does not.
    ASSERT_EQ(cap % 8, 0);
    EXPECT_PASSES(sema::assert_free_dim({1, 2, 4, cap / 8}, DType::uint8, Memory::SBUF, t, kThrow));
    EXPECT_CODE(sema::assert_free_dim({1, 2, 4, cap / 8 + 1}, DType::uint8, Memory::SBUF, t, kThrow),
                "err_stack_overflow_sbuf");
    EXPECT_PASSES(sema::assert_free_dim({1, cap / 2}, DType::bfloat16, Memory::SBUF, t, kThrow));
  }
}

TEST(SemaFreeDim, PsumBudgetIsAllBanksTogether) {
  for (const Target& t : sema::all_targets()) {
    SCOPED_TRACE(t.name);
    int64_t cap = t.psum_par_size_in_bytes * t.psum_num_banks;
    ASSERT_EQ(cap, 16384);
    EXPECT_PASSES(sema::assert_free_dim({64, cap / 4}, DType::float32, Memory::PSUM, t, kThrow));
    auto d = diag_of([&] { sema::assert_free_dim({64, cap / 4 + 1}, DType::float32, Memory::PSUM, t, kThrow); });
    ASSERT_TRUE(d);
    EXPECT_EQ(d->code, "err_stack_overflow_psum");
    EXPECT_NE(d->message.find(std::to_string(cap + 4)), std::string::npos) << d->message;
    // A multi-bank tensor is legal in sema (the one-bank rule belongs to the allocator).
    EXPECT_PASSES(sema::assert_free_dim({64, 513}, DType::float32, Memory::PSUM, t, kThrow));
    // SBUF and PSUM budgets are distinct.
    EXPECT_PASSES(sema::assert_free_dim({64, cap / 4 + 1}, DType::float32, Memory::SBUF, t, kThrow));
  }
  Target t = sema::default_target();
  t.psum_num_banks = 2;
  EXPECT_PASSES(sema::assert_free_dim({128, 1024}, DType::float32, Memory::PSUM, t, kThrow));
  EXPECT_CODE(sema::assert_free_dim({128, 1025}, DType::float32, Memory::PSUM, t, kThrow), "err_stack_overflow_psum");
  t.psum_par_size_in_bytes = 4096;
  EXPECT_PASSES(sema::assert_free_dim({128, 2048}, DType::float32, Memory::PSUM, t, kThrow));
  EXPECT_CODE(sema::assert_free_dim({128, 2049}, DType::float32, Memory::PSUM, t, kThrow), "err_stack_overflow_psum");
}

TEST(SemaFreeDim, SbufBudgetIsReadOffTheTarget) {
  Target t = sema::default_target();
  t.statebuf_par_size_in_bytes = 100;
  EXPECT_PASSES(sema::assert_free_dim({128, 25}, DType::float32, Memory::SBUF, t, kThrow));
  EXPECT_CODE(sema::assert_free_dim({128, 26}, DType::float32, Memory::SBUF, t, kThrow), "err_stack_overflow_sbuf");
}

TEST(SemaFreeDim, HbmIsExempt) {
  for (const Target& t : sema::all_targets())
    EXPECT_PASSES(sema::assert_free_dim({128, int64_t(1) << 30}, DType::float32, Memory::SharedHBM, t, kThrow));
}

// ------------------------------------------------------------------ dtype and rank

TEST(SemaDtype, PsumHoldsFloat32AndInt32Only) {
  for (int i = 0; i < ir::kNumDTypes; ++i) {
    DType dt = static_cast<DType>(i);
    SCOPED_TRACE(std::string(ir::name(dt)));
    if (dt == DType::float32 || dt == DType::int32) {
      EXPECT_PASSES(sema::assert_dtype_psum(dt, kThrow));
    } else {
      auto d = diag_of([&] { sema::assert_dtype_psum(dt, kThrow); });
      ASSERT_TRUE(d);
      EXPECT_EQ(d->code, "err_supported_operand_dtype");
      EXPECT_NE(d->message.find(std::string(ir::name(dt))), std::string::npos) << d->message;
    }
  }
}

TEST(SemaShape, MinRank) {
  EXPECT_PASSES(sema::assert_min_rank({128, 1}, 2, "tile", kThrow));
  EXPECT_PASSES(sema::assert_min_rank({4, 128, 1}, 2, "tile", kThrow));
  auto d = diag_of([&] { sema::assert_min_rank({128}, 2, "tile", kThrow); });
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "err_insufficient_rank");
  EXPECT_EQ(d->message.rfind("Insufficient rank", 0), 0u) << d->message;
  EXPECT_CODE(sema::assert_min_rank({}, 2, "tile", kThrow), "err_insufficient_rank");
  EXPECT_PASSES(sema::assert_min_rank({128}, 1, "tile", kThrow));
}

// ------------------------------------------------------------------ op table

TEST(SemaOpTable, LoadSourceMustBeHbm) {
  auto sbuf = decl("tmp", {4, 4}, DType::float32, Memory::SBUF);
  auto d = diag_of([&] { sema::check_operand("nl.load", "src", sbuf, {4, 4}, kThrow); });
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "err_unsupported_memory");
  EXPECT_EQ(d->message, "Expected operand 'src' of 'load' to be in address space 'hbm', but got a tile in 'sbuf' instead.");
  auto psum = decl("acc", {4, 4}, DType::float32, Memory::PSUM);
  EXPECT_CODE(sema::check_operand("nl.load", "src", psum, {4, 4}, kThrow), "err_unsupported_memory");
  for (Memory m : {Memory::SharedHBM, Memory::PrivateHBM}) {
    auto hbm = decl("x", {4, 4}, DType::float32, m);
    EXPECT_PASSES(sema::check_operand("nl.load", "src", hbm, {4, 4}, kThrow));
  }
}

TEST(SemaOpTable, StoreDestinationHbmValueOnChip) {
  auto hbm = decl("out", {128, 512}, DType::float32, Memory::SharedHBM);
  auto sbuf = decl("t", {128, 512}, DType::float32, Memory::SBUF);
  auto psum = decl("p", {128, 512}, DType::float32, Memory::PSUM);
  EXPECT_PASSES(sema::check_operand("nl.store", "dst", hbm, {128, 512}, kThrow));
  EXPECT_PASSES(sema::check_operand("nl.store", "value", sbuf, {128, 512}, kThrow));
  EXPECT_PASSES(sema::check_operand("nl.store", "value", psum, {128, 512}, kThrow));
  auto d = diag_of([&] { sema::check_operand("nl.store", "dst", sbuf, {128, 512}, kThrow); });
  EXPECT_EQ(message_of(d), "Expected operand 'dst' of 'store' to be in address space 'hbm', but got a tile in 'sbuf' instead.");
  EXPECT_CODE(sema::check_operand("nl.store", "value", hbm, {128, 512}, kThrow), "err_unsupported_memory");
}

TEST(SemaOpTable, NcMatmulOperands) {
  for (DType dt : {DType::float8_e4m3, DType::float8_e5m2, DType::bfloat16, DType::float16, DType::tfloat32,
                   DType::float32}) {
    auto s = decl("stationary", {128, 128}, dt, Memory::SBUF);
    EXPECT_PASSES(sema::check_operand("nisa.nc_matmul", "stationary", s, {128, 128}, kThrow));
    EXPECT_PASSES(sema::check_operand("nisa.nc_matmul", "moving", s, {128, 128}, kThrow));
  }
  for (DType dt : {DType::int8, DType::int32, DType::uint8, DType::int16, DType::uint32, DType::bool_}) {
    auto s = decl("stationary", {128, 128}, dt, Memory::SBUF);
    auto d = diag_of([&] { sema::check_operand("nisa.nc_matmul", "stationary", s, {128, 128}, kThrow); });
    ASSERT_TRUE(d);
    EXPECT_EQ(d->code, "err_supported_operand_dtype");
    EXPECT_NE(d->message.find(std::string(ir::name(dt))), std::string::npos) << d->message;
  }
  auto psum = decl("stationary", {128, 128}, DType::float32, Memory::PSUM);
  auto d = diag_of([&] { sema::check_operand("nisa.nc_matmul", "stationary", psum, {128, 128}, kThrow); });
  EXPECT_EQ(message_of(d),
            "Expected operand 'stationary' of 'nc_matmul' to be in address space 'sbuf', but got a tile in 'psum' instead.");
  auto hbm = decl("moving", {128, 512}, DType::float32, Memory::SharedHBM);
  EXPECT_CODE(sema::check_operand("nisa.nc_matmul", "moving", hbm, {128, 512}, kThrow), "err_unsupported_memory");
  auto s3 = decl("stationary", {128, 2, 64}, DType::bfloat16, Memory::SBUF);
  EXPECT_CODE(sema::check_operand("nisa.nc_matmul", "stationary", s3, {128, 2, 64}, kThrow),
              "err_exceed_max_supported_dimension");
  auto s1 = decl("stationary", {128}, DType::bfloat16, Memory::SBUF);
  EXPECT_CODE(sema::check_operand("nisa.nc_matmul", "stationary", s1, {128}, kThrow), "err_insufficient_rank");
}

TEST(SemaOpTable, TransposeRankLimit) {
  auto x = decl("x", {64, 32, 2}, DType::float32, Memory::SBUF);
  auto d = diag_of([&] { sema::check_operand("nl.transpose", "x", x, {64, 32, 2}, kThrow); });
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "err_exceed_max_supported_dimension");
  expect_message_period_optional(d->message,
                                 "parameter 'x[64, 32, 2]' of 'transpose' exceed max supported number of dimensions of 2");
  auto x2 = decl("x", {64, 64}, DType::float32, Memory::SBUF);
  EXPECT_PASSES(sema::check_operand("nl.transpose", "x", x2, {64, 64}, kThrow));
}

TEST(SemaOpTable, DefaultComputeSpecIsAnyOnChipOperand) {
  const sema::OpSpec& spec = sema::op_spec("nl.exp");
  EXPECT_TRUE(spec.operands.empty());
  EXPECT_EQ(&spec, &sema::op_spec("nl.add"));
  auto hbm = decl("tmp", {4, 4}, DType::float32, Memory::PrivateHBM);
  auto d = diag_of([&] { sema::check_operand("nl.exp", "x", hbm, {4, 4}, kThrow); });
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "err_unsupported_memory");
  EXPECT_EQ(d->message, "Expected operand 'x' of 'exp' to be in address space 'psum|sbuf', but got a tile in 'hbm' instead.");
  for (Memory m : {Memory::SBUF, Memory::PSUM}) {
    for (int i = 0; i < ir::kNumDTypes; ++i) {
      auto t = decl("t", {128, 512}, static_cast<DType>(i), m);
      if (ir::is_packed(t.dtype)) {  // packed mx tiles only move or feed the mx ops
        auto p = diag_of([&] { sema::check_operand("nl.exp", "x", t, {128, 512}, kThrow); });
        ASSERT_TRUE(p);
        EXPECT_EQ(p->code, "err_supported_operand_dtype");
        EXPECT_PASSES(sema::check_operand("nl.copy", "x", t, {128, 512}, kThrow));
        continue;
      }
      EXPECT_PASSES(sema::check_operand("nl.exp", "x", t, {128, 512}, kThrow));
    }
  }
  EXPECT_EQ(sema::op_spec("nl.load").api, "nl.load");
  EXPECT_EQ(sema::op_spec("nisa.nc_matmul").operands.size(), 2u);
}

// An instruction's own nisa call reads its rules off the instruction's row: its
// operands, its first NeuronCore generation and how its tile operands relate.
TEST(SemaOpTable, InstructionCallsTakeTheirRulesFromTheInstructionTable) {
  for (int i = 0; i < ir::kNumOpcodes; ++i) {
    const ir::OpcodeInfo& row = ir::info(static_cast<ir::Opcode>(i));
    const std::string api = "nisa." + std::string(row.name);
    const sema::OpSpec& spec = sema::op_spec(api);
    EXPECT_EQ(spec.api, api);
    EXPECT_EQ(spec.min_nc_version, row.min_nc_version) << api;
    EXPECT_EQ(spec.shapes, row.shapes) << api;
    ASSERT_EQ(spec.operands.size(), row.operands.size()) << api;
    for (size_t k = 0; k < row.operands.size(); ++k) EXPECT_EQ(spec.operands[k].name, row.operands[k].name);
  }
  EXPECT_EQ(sema::op_spec("nisa.exponential").min_nc_version, 4);
  EXPECT_EQ(sema::op_spec("nisa.tensor_tensor").shapes, ir::Shapes::equal);
  EXPECT_EQ(sema::op_spec("nisa.tensor_scalar").shapes, ir::Shapes::bcast);
  // The convenience API of the same instruction keeps its own rules: nl.matmul's y is 2-D
  // where nc_matmul's moving operand may have four dims.
  auto y3 = decl("y", {128, 2, 64}, DType::bfloat16, Memory::SBUF);
  EXPECT_PASSES(sema::check_operand("nisa.nc_matmul", "moving", y3, {128, 2, 64}, kThrow));
  EXPECT_CODE(sema::check_operand("nl.matmul", "y", y3, {128, 2, 64}, kThrow), "err_exceed_max_supported_dimension");
  // The rules are the row's: a dtype the row's set leaves out is refused with that set.
  auto idx = decl("idx", {128, 8}, DType::float32, Memory::SBUF);
  auto d = diag_of([&] { sema::check_operand("nisa.topk", "idx_dst", idx, {128, 8}, kThrow); });
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "err_supported_operand_dtype");
  EXPECT_EQ(d->message,
            "operand 'idx_dst' of 'nisa.topk' has dtype 'float32', which is not supported; expected one of {uint32}");
}

// ------------------------------------------------------------------ bounds

// x[tile.p, i * 512 + tile.x] over a [128, 512] tile, i in [0, 7], x of shape [128, 4000].
struct OobCase {
  ir::Instruction in;
  ir::TensorDecl x = decl("x", {128, 4000}, DType::float32, Memory::PrivateHBM);
  ir::Var loop{ir::VarKind::Loop, 0};
  sema::VarRange range = [](ir::Var v) -> std::pair<int64_t, int64_t> {
    return v.kind == ir::VarKind::Loop ? std::pair<int64_t, int64_t>{0, 7} : std::pair<int64_t, int64_t>{0, 0};
  };
  OobCase() {
    in.opcode = ir::Opcode::Store;
    in.shape = {128, 512};
    in.dst.tensor = 0;
    in.dst.index = {ir::AffineExpr::grid(0), ir::AffineExpr::grid(1) + ir::AffineExpr::var(loop, 512)};
  }
  ir::AffineExpr column() const { return in.dst.index[1]; }
};

TEST(SemaBounds, OutOfBoundAccessIsReported) {
  OobCase c;
  auto d = diag_of([&] { sema::assert_access_in_bounds(c.in, c.in.dst, c.x, c.range, kThrow); });
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "err_tensor_access_out_of_bound");
  EXPECT_EQ(d->message,
            "Out-of-bound access for tensor `x` on dimension 1: index range [0, 4095] exceed dimension size of 4000");
  EXPECT_EQ(d->kind, sema::ErrorKind::Index);
}

TEST(SemaBounds, MaskNarrowingMakesTheAccessLegal) {
  OobCase c;
  // mask = i * 512 + tile.x < 4000, i.e. 3999 - (i * 512 + tile.x) >= 0.
  c.in.predicate.push_back({ir::AffineExpr(3999) - c.column(), ir::CmpKind::Ge});
  EXPECT_PASSES(sema::assert_access_in_bounds(c.in, c.in.dst, c.x, c.range, kThrow));
  // One past the end is still out of bound.
  OobCase c2;
  c2.in.predicate.push_back({ir::AffineExpr(4000) - c2.column(), ir::CmpKind::Ge});
  auto d = diag_of([&] { sema::assert_access_in_bounds(c2.in, c2.in.dst, c2.x, c2.range, kThrow); });
  EXPECT_EQ(message_of(d),
            "Out-of-bound access for tensor `x` on dimension 1: index range [0, 4000] exceed dimension size of 4000");
}

TEST(SemaBounds, GridMaskNarrowsThePartitionRange) {
  // A [128, 512] tile over a [100, 512] tensor, masked to i0 <= 99.
  ir::Instruction in;
  in.opcode = ir::Opcode::Load;
  in.shape = {128, 512};
  in.dst.tensor = 0;
  in.dst.index = {ir::AffineExpr::grid(0), ir::AffineExpr::grid(1)};
  auto t = decl("a", {100, 512}, DType::float32, Memory::SharedHBM);
  sema::VarRange none = [](ir::Var) { return std::pair<int64_t, int64_t>{0, 0}; };
  auto d = diag_of([&] { sema::assert_access_in_bounds(in, in.dst, t, none, kThrow); });
  EXPECT_EQ(message_of(d),
            "Out-of-bound access for tensor `a` on dimension 0: index range [0, 127] exceed dimension size of 100");
  in.predicate.push_back({ir::AffineExpr(99) - ir::AffineExpr::grid(0), ir::CmpKind::Ge});
  EXPECT_PASSES(sema::assert_access_in_bounds(in, in.dst, t, none, kThrow));
  // A negative start is out of bound too, unless masked away.
  ir::Instruction shifted = in;
  shifted.predicate.clear();
  shifted.shape = {100, 512};
  shifted.dst.index[0] = ir::AffineExpr::grid(0) - 1;
  d = diag_of([&] { sema::assert_access_in_bounds(shifted, shifted.dst, t, none, kThrow); });
  EXPECT_EQ(message_of(d),
            "Out-of-bound access for tensor `a` on dimension 0: index range [-1, 98] exceed dimension size of 100");
  shifted.predicate.push_back({ir::AffineExpr::grid(0) - 1, ir::CmpKind::Ge});
  EXPECT_PASSES(sema::assert_access_in_bounds(shifted, shifted.dst, t, none, kThrow));
}

// ------------------------------------------------------------------ the single sink

TEST(SemaSink, NkiAssertBuildsTheMessageOnlyOnFailure) {
  int built = 0;
  auto build = [&] {
    ++built;
    return sema::err_num_partition_exceed_arch_limit(256, 128);
  };
  EXPECT_PASSES(sema::nki_assert(true, build));
  EXPECT_EQ(built, 0);
  auto d = diag_of([&] { sema::nki_assert(false, build); });
  EXPECT_EQ(built, 1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "err_num_partition_exceed_arch_limit");
  auto d2 = diag_of([&] { sema::fail(sema::err_unsupported_memory("src", "nl.load", "hbm", "sbuf")); });
  ASSERT_TRUE(d2);
  EXPECT_EQ(d2->code, "err_unsupported_memory");
}

// ------------------------------------------------------------------ error catalog

TEST(SemaCatalog, DocumentedTexts) {
  auto d = sema::err_num_partition_exceed_arch_limit(256, 128);
  EXPECT_EQ(d.code, "err_num_partition_exceed_arch_limit");
  EXPECT_EQ(d.message, "number of partitions 256 exceed architecture limitation of 128.");
  EXPECT_EQ(d.kind, sema::ErrorKind::Syntax);

  d = sema::err_unsupported_memory("src", "nl.load", "hbm", "sbuf");
  EXPECT_EQ(d.message, "Expected operand 'src' of 'load' to be in address space 'hbm', but got a tile in 'sbuf' instead.");
  d = sema::err_unsupported_memory("x", "nl.exp", "psum|sbuf", "hbm");
  EXPECT_EQ(d.message, "Expected operand 'x' of 'exp' to be in address space 'psum|sbuf', but got a tile in 'hbm' instead.");

  d = sema::err_tensor_access_out_of_bound("x", 1, 0, 4095, 4000);
  EXPECT_EQ(d.code, "err_tensor_access_out_of_bound");
  EXPECT_EQ(d.message, "Out-of-bound access for tensor `x` on dimension 1: index range [0, 4095] exceed dimension size of 4000");

  d = sema::err_exceed_max_supported_dimension("x[64, 32, 2]", "nl.transpose", 2);
  EXPECT_EQ(d.code, "err_exceed_max_supported_dimension");
  expect_message_period_optional(d.message,
                                 "parameter 'x[64, 32, 2]' of 'transpose' exceed max supported number of dimensions of 2");

  d = sema::err_size_of_dimension_exceed_arch_limit(1, "x[128, 512]", "nl.transpose", 128);
  EXPECT_EQ(d.code, "err_size_of_dimension_exceed_arch_limit");
  expect_message_period_optional(d.message,
                                 "size of dimension 1 in 'x[128, 512]' of 'transpose' exceed architecture limitation of 128");

  d = sema::err_failed_to_infer_tile_from_local_tensor("a");
  EXPECT_EQ(d.code, "err_failed_to_infer_tile_from_local_tensor");
  expect_message_period_optional(d.message, "Failed to infer tile from tensor 'a'");

  d = sema::err_hbm_tensor_with_init_value_not_supported();
  EXPECT_EQ(d.code, "err_hbm_tensor_with_init_value_not_supported");

  d = sema::err_unsupported_mixing_basic_advanced_tensor_indexing("a");
  EXPECT_EQ(d.code, "err_unsupported_mixing_basic_advanced_tensor_indexing");
}

TEST(SemaCatalog, NumPartitionMismatchNamesTheBareApi) {
  // NKI_API.md §7.1: "... mismatch in parameters (data1[128, 512], data2[1, 512]) of 'tensor_tensor'".
  // Like every builder given an API, it names the bare API ('tensor_tensor', not 'nisa.tensor_tensor').
  auto d = sema::err_num_partition_mismatch("data1[128, 512]", "data2[1, 512]", "nisa.tensor_tensor");
  EXPECT_EQ(d.code, "err_num_partition_mismatch");
  EXPECT_EQ(d.message,
            "number of partitions (dimension 0 size of a tile) mismatch in parameters (data1[128, 512], data2[1, 512]) "
            "of 'tensor_tensor'");
}

TEST(SemaCatalog, CodesOfTheOtherBuilders) {
  EXPECT_EQ(sema::err_stack_overflow(false, 10, 5, "trn2").code, "err_stack_overflow_sbuf");
  EXPECT_EQ(sema::err_stack_overflow(true, 10, 5, "trn2").code, "err_stack_overflow_psum");
  EXPECT_EQ(sema::err_supported_operand_dtype("m").code, "err_supported_operand_dtype");
  EXPECT_EQ(sema::err_insufficient_rank("tile", {128}, 2).code, "err_insufficient_rank");
  EXPECT_EQ(sema::err_unsupported_reduce_axis("m").code, "err_unsupported_reduce_axis");
  EXPECT_EQ(sema::err_instruction_unsupported_op("divide").code, "err_instruction_unsupported_op");
  EXPECT_NE(sema::err_instruction_unsupported_op("divide").message.find("divide"), std::string::npos);
  auto t = sema::err_incorrect_target_type("trn9");
  EXPECT_EQ(t.code, "err_incorrect_target_type");
  EXPECT_NE(t.message.find("'trn9'"), std::string::npos);
  EXPECT_EQ(t.kind, sema::ErrorKind::Value);
  EXPECT_EQ(sema::err_num_partition_mismatch("a[1, 1]", "b[2, 1]", "nisa.tensor_tensor").code, "err_num_partition_mismatch");
  EXPECT_EQ(sema::err_store_dst_shape_smaller_than_other_shape({128, 1}, {128, 512}).code,
            "err_store_dst_shape_smaller_than_other_shape");
}

}  // namespace
