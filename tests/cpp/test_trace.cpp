// trace/ without Python: the dispatcher's four gates and its per-callee cache,
// the native call forms and their argument binding, the TraceContext lifecycle, scope chain, call sites and shadowing rule, and
// source locations pushed by the front end onto what the builder records.
#include <gtest/gtest.h>

#include "diagnostic_test_util.h"

#include <memory>
#include <string>
#include <vector>

#include "codegen/Ops.h"
#include "ir/IR.h"
#include "ir/SourceLoc.h"
#include "sema/Diagnostic.h"
#include "trace/Dispatch.h"
#include "trace/NativeCall.h"
#include "trace/TraceContext.h"

namespace nkic::trace {
namespace {

// ---------------------------------------------------------------- Dispatch

CalleeTraits traits(bool nki_func, bool dont_trace, bool kernel, bool function, std::string module = "") {
  CalleeTraits t;
  t.nki_func = nki_func;
  t.dont_trace = dont_trace;
  t.trace_kernel = kernel;
  t.function_or_builtin = function;
  t.module = std::move(module);
  return t;
}

TEST(Dispatch, GatesApplyInSeedOrder) {
  const auto& ex = default_excluded_modules();
  EXPECT_EQ(dispatch(traits(true, true, true, true, "numpy"), ex), CallAction::Builder);
  EXPECT_EQ(dispatch(traits(false, true, true, true, "numpy"), ex), CallAction::RunConcrete);
  EXPECT_EQ(dispatch(traits(false, false, true, true, "numpy"), ex), CallAction::NestedKernel);
  EXPECT_EQ(dispatch(traits(false, false, false, true, "numpy.linalg"), ex), CallAction::Library);
  EXPECT_EQ(dispatch(traits(false, false, false, true, "user_kernels"), ex), CallAction::Inline);
}

TEST(Dispatch, LibraryGateNeedsAFunctionFromAnExcludedModule) {
  const auto& ex = default_excluded_modules();
  // A callable object from numpy is not a function: it is inlined.
  EXPECT_EQ(dispatch(traits(false, false, false, false, "numpy"), ex), CallAction::Inline);
  // A dotted prefix only matches whole module names.
  EXPECT_FALSE(in_excluded_module("numpyish", ex));
  EXPECT_TRUE(in_excluded_module("nkic.language", ex));
  EXPECT_TRUE(in_excluded_module("math", ex));
}

TEST(Dispatch, ActionNames) {
  EXPECT_STREQ(name(CallAction::Builder), "Builder");
  EXPECT_STREQ(name(CallAction::Inline), "Inline");
}

// ---------------------------------------------------------------- Native call forms

TEST(NativeCall, MarkersNameTheirForm) {
  const NativeForm* load = native_form("load");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->kind, NativeForm::Kind::Load);
  EXPECT_EQ(native_form("store")->kind, NativeForm::Kind::Store);
  const NativeForm* add = native_form("elementwise:add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->kind, NativeForm::Kind::Elementwise);
  EXPECT_EQ(add->op, ir::AluOp::add);
  EXPECT_EQ(add->arity, 2u);
  EXPECT_EQ(native_form("elementwise:exp")->arity, 1u);
  EXPECT_EQ(native_form("elementwise:add"), add);  // one form per op, kept
  EXPECT_EQ(native_form("elementwise:no_such_op"), nullptr);
  EXPECT_EQ(native_form("matmul"), nullptr);
  EXPECT_EQ(native_form(""), nullptr);
}

TEST(NativeCall, LoadTakesOneSourceAMaskAndANoneDtype) {
  const NativeForm& load = *native_form("load");
  NativeArgs at;
  ASSERT_TRUE(bind_native(load, 1, nullptr, 0, at));
  EXPECT_EQ(at.operands[0], 0);
  EXPECT_EQ(at.mask, -1);
  const Keyword mask_none_dtype[] = {{"dtype", true}, {"mask", false}};
  ASSERT_TRUE(bind_native(load, 1, mask_none_dtype, 2, at));
  EXPECT_EQ(at.mask, 2);  // the keyword values follow the positional arguments
  const Keyword dtype[] = {{"dtype", false}};
  EXPECT_FALSE(bind_native(load, 1, dtype, 1, at));  // a dtype is the Python form's to convert
  const Keyword other[] = {{"src", false}};
  EXPECT_FALSE(bind_native(load, 0, other, 1, at));
  EXPECT_FALSE(bind_native(load, 2, nullptr, 0, at));
}

TEST(NativeCall, StoreTakesItsValueByPositionOrByName) {
  const NativeForm& store = *native_form("store");
  NativeArgs at;
  ASSERT_TRUE(bind_native(store, 2, nullptr, 0, at));
  EXPECT_EQ(at.operands[0], 0);
  EXPECT_EQ(at.operands[1], 1);
  const Keyword value[] = {{"value", false}};
  ASSERT_TRUE(bind_native(store, 1, value, 1, at));
  EXPECT_EQ(at.operands[1], 1);
  const Keyword mask_value[] = {{"mask", false}, {"value", false}};
  ASSERT_TRUE(bind_native(store, 1, mask_value, 2, at));
  EXPECT_EQ(at.mask, 1);
  EXPECT_EQ(at.operands[1], 2);
  EXPECT_FALSE(bind_native(store, 2, value, 1, at));  // the value twice
  EXPECT_FALSE(bind_native(store, 1, nullptr, 0, at));  // no value
  const Keyword dtype[] = {{"dtype", true}};
  EXPECT_FALSE(bind_native(store, 2, dtype, 1, at));  // nl.store has no dtype
}

TEST(NativeCall, ElementwiseTakesItsOperandsByPosition) {
  const NativeForm& add = *native_form("elementwise:add");
  NativeArgs at;
  const Keyword none_dtype_mask[] = {{"dtype", true}, {"mask", false}};
  ASSERT_TRUE(bind_native(add, 2, none_dtype_mask, 2, at));
  EXPECT_EQ(at.operands[0], 0);
  EXPECT_EQ(at.operands[1], 1);
  EXPECT_EQ(at.mask, 3);
  EXPECT_FALSE(bind_native(add, 1, nullptr, 0, at));
  const Keyword y[] = {{"y", false}};
  EXPECT_FALSE(bind_native(add, 1, y, 1, at));
  const Keyword value[] = {{"value", false}};
  EXPECT_FALSE(bind_native(add, 2, value, 1, at));
  ASSERT_TRUE(bind_native(*native_form("elementwise:exp"), 1, nullptr, 0, at));
  EXPECT_EQ(at.operands[1], -1);
}

TEST(DispatchCache, RemembersADecisionUntilTheCalleeIsErased) {
  DispatchCache cache;
  int callee_a = 0, callee_b = 0;
  EXPECT_EQ(cache.find(&callee_a), nullptr);
  cache.insert(&callee_a, {CallAction::Builder, "nl.load"});
  cache.insert(&callee_b, {CallAction::Inline, ""});
  ASSERT_NE(cache.find(&callee_a), nullptr);
  EXPECT_EQ(cache.find(&callee_a)->action, CallAction::Builder);
  EXPECT_EQ(cache.find(&callee_a)->api, "nl.load");
  cache.erase(&callee_a);  // the callee died: a new object at its address is decided anew
  EXPECT_EQ(cache.find(&callee_a), nullptr);
  EXPECT_EQ(cache.find(&callee_b)->action, CallAction::Inline);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(DispatchCache, AnEntryKeepsItsGuardUntilErased) {
  DispatchCache cache;
  int callee = 0;
  auto guard = std::make_shared<int>(1);
  cache.insert(&callee, {CallAction::Library, ""}, guard);
  EXPECT_EQ(guard.use_count(), 2);
  cache.erase(&callee);
  EXPECT_EQ(guard.use_count(), 1);
}

// ---------------------------------------------------------------- TraceContext

struct Trace {
  TraceContext& ctx;
  Trace() : ctx(TraceContext::new_ctx(TraceOptions{})) {}
  ~Trace() { TraceContext::clear(); }
};

using test_util::diagnostic_of;

TEST(TraceContext, OneContextPerThreadBetweenNewAndClear) {
  EXPECT_EQ(TraceContext::current(), nullptr);
  EXPECT_EQ(diagnostic_of([] { TraceContext::nki_ctx("nl.load"); }).code, "err_nki_api_outside_of_nki_kernel");
  {
    Trace t;
    EXPECT_EQ(TraceContext::current(), &t.ctx);
    EXPECT_EQ(&TraceContext::nki_ctx("nl.load"), &t.ctx);
    EXPECT_EQ(t.ctx.target().name, "trn2");
  }
  EXPECT_EQ(TraceContext::current(), nullptr);
}

TEST(TraceContext, ScopeChainAndKernelLevel) {
  Trace t;
  ASSERT_EQ(t.ctx.scopes().size(), 1u);
  EXPECT_EQ(t.ctx.scopes()[0].kind, ScopeKind::Kernel);
  EXPECT_TRUE(t.ctx.at_kernel_level());
  t.ctx.push_scope(ScopeKind::Stmt, "if");
  EXPECT_TRUE(t.ctx.at_kernel_level());  // if/loop scopes do not leave the kernel
  t.ctx.push_scope(ScopeKind::Function, "helper");
  EXPECT_FALSE(t.ctx.at_kernel_level());
  t.ctx.pop_scope();
  t.ctx.pop_scope();
  t.ctx.pop_scope();  // the kernel scope stays
  EXPECT_EQ(t.ctx.scopes().size(), 1u);
}

TEST(TraceContext, ApiScopeNamesTheApiInFlightAndRestores) {
  Trace t;
  {
    TraceContext::ApiScope outer(t.ctx, "nl.load");
    EXPECT_EQ(t.ctx.cur_api(), "nl.load");
    {
      TraceContext::ApiScope inner(t.ctx, "nl.add");
      EXPECT_EQ(t.ctx.cur_api(), "nl.add");
    }
    EXPECT_EQ(t.ctx.cur_api(), "nl.load");
  }
  EXPECT_EQ(t.ctx.builder().scoped_api(), "");
}

TEST(TraceContext, CallSitesNestInnermostLast) {
  Trace t;
  const std::string* f = ir::intern_file("k.py");
  {
    TraceContext::CallSite a(t.ctx, {f, 3, 5});
    {
      TraceContext::CallSite b(t.ctx, {f, 9, 12});
      ASSERT_EQ(t.ctx.call_sites().size(), 2u);
      EXPECT_EQ(t.ctx.call_sites().back().line, 9);
    }
    ASSERT_EQ(t.ctx.call_sites().size(), 1u);
    EXPECT_EQ(t.ctx.call_sites().back().col, 5);
  }
  EXPECT_TRUE(t.ctx.call_sites().empty());
}

TEST(TraceContext, ShadowingWarnsOnlyForAnotherDtypeShapeOrScope) {
  Trace t;
  types::TensorVal a = t.ctx.add_input("a", {128, 64}, ir::DType::float32, false);
  types::TensorVal b = t.ctx.add_input("b", {128, 64}, ir::DType::float32, false);
  types::TensorVal c = t.ctx.add_input("c", {128, 64}, ir::DType::bfloat16, false);
  types::TensorVal d = t.ctx.add_input("d", {128, 32}, ir::DType::float32, false);
  EXPECT_FALSE(t.ctx.shadowing_warning("x", a, b).has_value());
  auto dtype = t.ctx.shadowing_warning("x", a, c);
  ASSERT_TRUE(dtype.has_value());
  EXPECT_EQ(*dtype, "shadowing local tensor 'float32 x[128, 64]' with a new object, use 'x[...] =' if you want to "
                    "update the existing object");
  EXPECT_TRUE(t.ctx.shadowing_warning("x", a, d).has_value());
  // A tensor of an enclosing scope replaced inside a helper warns even when alike.
  t.ctx.push_scope(ScopeKind::Function, "helper");
  types::TensorVal inner = t.ctx.hoist(b);
  EXPECT_TRUE(t.ctx.shadowing_warning("x", a, inner).has_value());
  // A tensor whose scope has closed is dead: nothing is shadowed.
  types::TensorVal dead = inner;
  t.ctx.pop_scope();
  EXPECT_FALSE(t.ctx.shadowing_warning("x", dead, a).has_value());
}

// ---------------------------------------------------------------- pushed locations

TEST(Locations, RegisteredOnceAndNamedById) {
  const std::string* f = ir::intern_file("kernels/add.py");
  int id = ir::register_location({f, 14, 9});
  int other = ir::register_location({f, 15, 5});
  EXPECT_NE(id, other);
  EXPECT_EQ(ir::registered_location(id).str(), "kernels/add.py:14:9");
  EXPECT_FALSE(ir::registered_location(ir::kNoLocation).known());
}

TEST(Locations, APushedLocationIsWhereTensorsAndInstructionsPoint) {
  Trace t;
  codegen::KernelBuilder& b = t.ctx.builder();
  int provider_calls = 0;
  const std::string* f = ir::intern_file("kernels/add.py");
  b.location_provider = [&] {
    ++provider_calls;
    return ir::SourceLoc{f, 99, 1};
  };
  types::TensorVal a = t.ctx.add_input("a", {128, 64}, ir::DType::float32, false);
  EXPECT_EQ(b.tensor(a.tensor).loc.line, 99);  // nothing pushed: the provider answers
  ir::SourceLoc saved = b.set_location(ir::registered_location(ir::register_location({f, 7, 13})));
  EXPECT_FALSE(saved.known());
  provider_calls = 0;
  TraceContext::ApiScope api(t.ctx, "nl.load");
  types::TensorVal x = codegen::load(b, a, {});
  EXPECT_EQ(provider_calls, 0);
  EXPECT_EQ(b.tensor(x.tensor).loc.str(), "kernels/add.py:7:13");
  const auto& inst = static_cast<const ir::Instruction&>(*b.kernel().body.back());
  EXPECT_EQ(inst.loc.str(), "kernels/add.py:7:13");
  // A diagnostic raised meanwhile points there too.
  sema::Diagnostic bad;
  bad.code = "err_x";
  sema::Diagnostic d = diagnostic_of([&] { b.fail(bad); });
  EXPECT_EQ(d.loc.str(), "kernels/add.py:7:13");
  b.set_location(saved);
  EXPECT_EQ(b.location().line, 99);
}

}  // namespace
}  // namespace nkic::trace
