// nki.compiler's CompileConfig rules (sema/CompileConfig.h), the allocation check's options
// (sema/Allocation.h) and the LNC degree of a kernel (codegen/Cores.h), through the library API.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "codegen/Cores.h"
#include "codegen/KernelBuilder.h"
#include "perf_test_util.h"
#include "sema/Allocation.h"
#include "sema/CompileConfig.h"

namespace nkic {
namespace {

using sema::CompileConfig;
using sema::FieldValue;
using Fields = std::vector<std::pair<std::string, FieldValue>>;

FieldValue flag(bool v) {
  FieldValue f;
  f.kind = FieldValue::Kind::Bool;
  f.flag = v;
  return f;
}

FieldValue member(std::string e, std::string m) {
  FieldValue f;
  f.kind = FieldValue::Kind::Member;
  f.enum_name = std::move(e);
  f.member = std::move(m);
  return f;
}

// A value of another Python type (a string, a number).
FieldValue other() {
  FieldValue f;
  f.kind = FieldValue::Kind::Other;
  return f;
}

FieldValue none() { return {}; }

const FieldValue kLinear = member("Allocation", "LINEAR");
const FieldValue kColoring = member("Allocation", "COLORING");

// The diagnostic CompileConfig::make raises for `fields`: (code, message).
std::pair<std::string, std::string> rejected(const Fields& fields) {
  try {
    CompileConfig::make(fields);
  } catch (const sema::NkiError& e) {
    return {e.diag().code, e.diag().message};
  }
  return {"", "accepted"};
}

TEST(CompileConfig, SchedulingNeedsLinearAllocation) {
  EXPECT_EQ(rejected({{"scheduling", flag(true)}}),
            std::make_pair(std::string("err_scheduling_needs_linear_allocation"),
                           std::string("scheduling=True needs an allocation; set allocation=Allocation.LINEAR as well.")));
  EXPECT_EQ(rejected({{"scheduling", flag(true)}, {"allocation", kColoring}}).second,
            "scheduling=True needs allocation=Allocation.LINEAR, got allocation=Allocation.COLORING");
  const CompileConfig c = CompileConfig::make({{"scheduling", flag(true)}, {"allocation", kLinear}});
  EXPECT_TRUE(c.scheduling() && c.nki_allocates());
  EXPECT_EQ(c.scheduling_heuristic(), sema::SchedulingHeuristic::Asap);
}

TEST(CompileConfig, OptionsOfNkiAllocationRefuseExplicitColoring) {
  for (const char* option : {"prefetch_auto", "split_reused_buffers", "tensor_copy_elim", "dma_copy_elim",
                             "element_widening", "register_load_reuse", "remove_unused_instructions",
                             "remove_overwritten_writes"}) {
    EXPECT_EQ(rejected({{"allocation", kColoring}, {option, flag(true)}}),
              std::make_pair(std::string("err_option_needs_nki_allocation"),
                             std::string(option) +
                                 " acts only when NKI allocates; it cannot be set with allocation=Allocation.COLORING."))
        << option;
    EXPECT_NO_THROW(CompileConfig::make({{"allocation", kLinear}, {option, flag(true)}}));
    EXPECT_NO_THROW(CompileConfig::make({{option, flag(true)}}));  // allocation left to its default
  }
  EXPECT_EQ(rejected({{"allocation", kColoring}, {"opt_level", member("OptLevel", "O2")}}).first,
            "err_option_needs_nki_allocation");
  // None is "not given": nothing to refuse; options of no allocation pass.
  EXPECT_NO_THROW(CompileConfig::make({{"allocation", kColoring}, {"prefetch_auto", none()}}));
  EXPECT_NO_THROW(CompileConfig::make({{"allocation", kColoring}, {"engine_balancing", flag(true)},
                                       {"dead_code_elim", flag(true)}, {"barrier_check", flag(true)}}));
}

TEST(CompileConfig, TheHeuristicNeedsScheduling) {
  const FieldValue trivial = member("SchedulingHeuristic", "TRIVIAL");
  EXPECT_EQ(rejected({{"experimental_scheduling_heuristic", trivial}}),
            std::make_pair(std::string("err_option_needs_nki_scheduling"),
                           std::string("experimental_scheduling_heuristic acts only when NKI schedules; set "
                                       "scheduling=True as well.")));
  const CompileConfig c = CompileConfig::make(
      {{"allocation", kLinear}, {"scheduling", flag(true)}, {"experimental_scheduling_heuristic", trivial}});
  EXPECT_EQ(c.scheduling_heuristic(), sema::SchedulingHeuristic::Trivial);
  EXPECT_EQ(sema::scheduling_name(c), "TRIVIAL");
}

TEST(CompileConfig, EnumFieldsTakeTheirEnumOnly) {
  EXPECT_EQ(rejected({{"experimental_allocation_mode", other()}}),
            std::make_pair(std::string("err_compile_config_type"),
                           std::string("experimental_allocation_mode must be an nki.compiler.AllocationMode or None")));
  EXPECT_EQ(rejected({{"allocation", member("AllocationMode", "RING")}}).second,
            "allocation must be an nki.compiler.Allocation or None");
  EXPECT_EQ(rejected({{"opt_level", other()}}).second, "opt_level must be an nki.compiler.OptLevel or None");
  EXPECT_EQ(rejected({{"experimental_scheduling_heuristic", other()}}).second,
            "experimental_scheduling_heuristic must be an nki.compiler.SchedulingHeuristic or None");
  EXPECT_EQ(rejected({{"address_rotation", none()}}).second, "address_rotation must be an nki.compiler.AddressRotation");
  EXPECT_EQ(rejected({{"nki_alloc_fallback", other()}}).second, "nki_alloc_fallback must be a bool");
  EXPECT_EQ(rejected({{"allocaton", flag(true)}}).first, "err_unsupported_args");
}

TEST(CompileConfig, GivenFieldsReadBackAndPrint) {
  const CompileConfig c = CompileConfig::make({{"allocation", kLinear},
                                               {"experimental_allocation_mode", member("AllocationMode", "RING")},
                                               {"nki_alloc_fallback", flag(false)},
                                               {"prefetch_auto", none()}});
  EXPECT_EQ(c.repr(),
            "CompileConfig(allocation=Allocation.LINEAR, experimental_allocation_mode=AllocationMode.RING, "
            "nki_alloc_fallback=False)");
  EXPECT_EQ(c.given("allocation").member, "LINEAR");
  EXPECT_EQ(c.given("prefetch_auto").kind, FieldValue::Kind::None);
  EXPECT_FALSE(c.alloc_fallback());
  EXPECT_EQ(sema::allocation_name(c), "LINEAR (RING)");
  EXPECT_EQ(sema::allocation_name(CompileConfig{}), "COLORING");
  EXPECT_EQ(sema::scheduling_name(CompileConfig{}), "the compiler's list schedule");
  EXPECT_TRUE(CompileConfig{}.alloc_fallback());
  EXPECT_EQ(CompileConfig{}.opt_level(), sema::OptLevel::O1);
}

TEST(CompileConfig, DifferencesFillInDefaults) {
  const CompileConfig outer;
  EXPECT_EQ(outer.difference(CompileConfig::make({{"allocation", kColoring}, {"nki_alloc_fallback", flag(true)}})), "");
  EXPECT_EQ(outer.difference(CompileConfig::make({{"allocation", kLinear}, {"barrier_check", flag(true)}})),
            "allocation=Allocation.LINEAR where the outer kernel has allocation=Allocation.COLORING, "
            "barrier_check=True where the outer kernel has barrier_check=False");
}

TEST(CompileConfig, ThePrefetchRing) {
  const CompileConfig plain, prefetch = CompileConfig::make({{"prefetch_auto", flag(true)}});
  EXPECT_EQ(sema::prefetch_ring_bytes(plain, "", 16384), 0);
  EXPECT_EQ(sema::prefetch_ring_bytes(prefetch, "", 16384), 16384);
  EXPECT_EQ(sema::prefetch_ring_bytes(plain, "4096", 16384), 4096);
  try {
    sema::prefetch_ring_bytes(prefetch, "4096", 16384);
    ADD_FAILURE() << "prefetch_auto with NKI_PREFETCH_RING_SIZE accepted";
  } catch (const sema::NkiError& e) {
    EXPECT_EQ(e.diag().code, "err_prefetch_ring_conflict");
  }
  EXPECT_THROW(sema::prefetch_ring_bytes(plain, "-1", 16384), sema::NkiError);
}

TEST(CompileConfig, SpecializationConfigTakesABool) {
  EXPECT_TRUE(sema::SpecializationConfig::make(flag(true)).allow_nested_config_override);
  EXPECT_FALSE(sema::SpecializationConfig::make(none()).allow_nested_config_override);
  EXPECT_THROW(sema::SpecializationConfig::make(other()), sema::NkiError);
}

using namespace perf_test;

// Two SBUF tiles of `a` and `b` fp32 per partition, live together.
ir::Kernel two_tiles(int64_t a, int64_t b) {
  ir::Kernel k;
  const int x = add_tensor(k, "x", {128, 8}, Memory::SharedHBM, ir::Role::Input);
  const int t = add_tensor(k, "t", {128, a}, Memory::SBUF);
  const int u = add_tensor(k, "u", {128, b}, Memory::SBUF);
  k.body.push_back(inst(Opcode::Load, tile(t), {tile(x)}, {128, 8}));
  k.body.push_back(inst(Opcode::TensorTensor, tile(u), {tile(t), tile(u)}, {128, 8}));
  return k;
}

std::string same(const std::string& name) { return name; }

TEST(CompileConfig, NkiAllocationWithoutFallbackCannotSpill) {
  const sema::Target& trn2 = *sema::find_target("trn2");
  const ir::Kernel k = two_tiles(40000, 30000);
  const sema::AllocationVerdict spill = sema::check_allocation(k, trn2, same);
  ASSERT_EQ(spill.warnings.size(), 1u);
  EXPECT_FALSE(spill.error);
  const sema::AllocationVerdict v = sema::check_allocation(k, trn2, same, {true, 0});
  ASSERT_TRUE(v.error);
  EXPECT_TRUE(v.warnings.empty());
  EXPECT_EQ(v.error->code, "err_sbuf_over_capacity");
  EXPECT_EQ(v.error->message,
            "NKI allocation (allocation=Allocation.LINEAR, nki_alloc_fallback=False) needs 280000 bytes per partition "
            "of SBUF live here, more than the 212984 target 'trn2' has; live, largest first: 't' (160000 bytes), "
            "'u' (120000 bytes)");
}

TEST(CompileConfig, APrefetchRingTakesSbuf) {
  const sema::Target& trn2 = *sema::find_target("trn2");
  const ir::Kernel k = two_tiles(26000, 26000);  // 208000 bytes per partition
  EXPECT_TRUE(sema::check_allocation(k, trn2, same, {false, 4096}).warnings.empty());
  const sema::AllocationVerdict v = sema::check_allocation(k, trn2, same, {false, trn2.prefetch_ring_par_size_in_bytes});
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_EQ(v.warnings[0].message.substr(0, 144),
            "SBUF holds 208000 bytes per partition live here, more than the 196600 target 'trn2' leaves after its "
            "16384-byte prefetch ring: the compiler spil");
}

// The LNC degree a kernel resolves to, or the code of the diagnostic it raises.
std::string lnc(std::optional<int64_t> bracket, const std::string& runtime, const std::string& flags, bool tracer) {
  codegen::KernelBuilder b("k", *sema::find_target("trn2"));
  try {
    return std::to_string(codegen::resolve_lnc(b, "k", bracket, runtime, flags, tracer));
  } catch (const sema::NkiError& e) {
    return e.diag().code;
  }
}

TEST(KernelLnc, TheTracerTakesTheBracketThenTheRuntimeThen1) {
  EXPECT_EQ(lnc(std::nullopt, "", "", true), "1");
  EXPECT_EQ(lnc(std::nullopt, "2", "", true), "2");
  EXPECT_EQ(lnc(2, "", "", true), "2");
  EXPECT_EQ(lnc(1, "2", "", true), "err_lnc_config_mismatch");  // the runtime still launches its own degree
  EXPECT_EQ(lnc(std::nullopt, "two", "", true), "err_invalid_environment_value");
  EXPECT_EQ(lnc(std::nullopt, "4", "", true), "err_multi_cores_spmd_not_supported");
}

TEST(KernelLnc, TheParserFrontendTakesTheBracketOr1) {
  EXPECT_EQ(lnc(std::nullopt, "2", "", false), "err_lnc_config_mismatch");
  EXPECT_EQ(lnc(2, "2", "", false), "2");
  EXPECT_EQ(lnc(std::nullopt, "", "--lnc=2", false), "1");  // no graph check before 0.7
}

TEST(KernelLnc, TheCompilersLncMustMatch) {
  EXPECT_EQ(lnc(std::nullopt, "", "--lnc=2", true), "err_lnc_compiler_mismatch");
  EXPECT_EQ(lnc(2, "", "-O1 --lnc 1", true), "err_lnc_compiler_mismatch");
  EXPECT_EQ(lnc(std::nullopt, "2", "--lnc=2", true), "2");
  EXPECT_EQ(lnc(std::nullopt, "", "--lnc", true), "err_invalid_environment_value");
  codegen::KernelBuilder b("k", *sema::find_target("trn2"));
  try {
    codegen::resolve_lnc(b, "attn", std::nullopt, "", "--lnc=2", true);
    ADD_FAILURE();
  } catch (const sema::NkiError& e) {
    EXPECT_EQ(e.diag().message, "NKI kernel 'attn' is configured with LNC=1, but neuronx-cc is using LNC=2.");
  }
}

}  // namespace
}  // namespace nkic
