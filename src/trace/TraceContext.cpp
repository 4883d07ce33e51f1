#include "trace/TraceContext.h"

#include <algorithm>
#include <atomic>

#include "codegen/Ops.h"
#include "codegen/Scalars.h"
#include "ir/DType.h"
#include "sema/Allocation.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"
#include "types/MaskAlgebra.h"

namespace nkic::trace {

namespace {
thread_local std::unique_ptr<TraceContext> global_ctx;

const sema::Target& resolve_target(const std::string& name) {
  if (const sema::Target* t = sema::find_target(name)) return *t;
  sema::fail(sema::err_incorrect_target_type(name));
}
}  // namespace

const char* name(ScopeKind k) {
  switch (k) {
    case ScopeKind::Kernel: return "KernelScope";
    case ScopeKind::Function: return "FunctionScope";
    case ScopeKind::Stmt: return "StmtScope";
    case ScopeKind::Loop: return "LoopScope";
  }
  return "?";
}

namespace {
uint64_t next_serial() {
  static std::atomic<uint64_t> serial{0};
  return ++serial;
}
}  // namespace

ir::DType TraceContext::storage_dtype(ir::DType dtype, ir::Memory memory) const {
  using D = ir::DType;
  const bool narrow = dtype == D::bfloat16 || dtype == D::float16 || dtype == D::float8_e4m3 ||
                      dtype == D::float8_e5m2 || dtype == D::float8_e4m3fn;
  return narrow_floats_as_fp32 && narrow && !ir::is_hbm(memory) ? D::float32 : dtype;
}

TraceContext::TraceContext(TraceOptions opts)
    : opts_(std::move(opts)),
      target_(&resolve_target(opts_.target)),
      builder_(opts_.kernel_name, *target_),
      type_system_(*this),
      serial_(next_serial()) {
  scopes_.push_back({ScopeKind::Kernel, opts_.kernel_name, {}});
  builder_.kernel().grid = opts_.grid;
  for (int cores : opts_.grid_physical_cores) multi_physical_cores = multi_physical_cores || cores > 1;
}

TraceContext* TraceContext::current() { return global_ctx.get(); }

bool TraceContext::tensor_is_true() {
  TraceContext* c = current();
  return c != nullptr && c->builder().current_api;
}

TraceContext& TraceContext::nki_ctx(const std::string& api) {
  if (!global_ctx) sema::fail(sema::err_nki_api_outside_of_nki_kernel(api));
  global_ctx->builder_.requested_api = api;
  return *global_ctx;
}

TraceContext& TraceContext::new_ctx(TraceOptions opts) {
  global_ctx = std::make_unique<TraceContext>(std::move(opts));
  return *global_ctx;
}

void TraceContext::clear() { global_ctx.reset(); }

TraceContext::ApiScope::ApiScope(TraceContext& ctx, std::string_view api) : ctx_(ctx) { ctx_.builder_.push_api(api); }

TraceContext::ApiScope::~ApiScope() { ctx_.builder_.pop_api(); }

std::optional<std::string> TraceContext::shadowing_warning(const std::string& name, const types::TensorVal& old,
                                                          const types::TensorVal& fresh) const {
  if (old.region && !old.region->open) return std::nullopt;  // a dead tensor is not shadowed
  if (builder_.current_api) return std::nullopt;  // rebinding a name is plain Python in the current API
  const ir::TensorDecl& o = builder_.tensor(old.tensor);
  bool outer = old.region && old.region != builder_.region();
  if (!outer && o.dtype == builder_.tensor(fresh.tensor).dtype && old.shape == fresh.shape) return std::nullopt;
  return "shadowing local tensor '" + std::string(ir::name(o.dtype)) + " " + name + sema::shape_str(old.shape) +
         "' with a new object, use '" + name + "[...] =' if you want to update the existing object";
}

void TraceContext::push_scope(ScopeKind kind, std::string name, ir::SourceLoc call_loc) {
  scopes_.push_back({kind, std::move(name), call_loc});
  builder_.push_region();
}

void TraceContext::pop_scope() {
  if (scopes_.size() <= 1) return;
  scopes_.pop_back();
  builder_.pop_region();
}

namespace {
// `e != 0` over loop variables becomes `e >= 1` when e's least value is 0 and
// `e <= -1` when its greatest is (else branches of `if i == 0:` and of
// `if i % 2 == 0:`); an e that is never 0 makes the atom always true. A single
// loop variable also skips the values its stride never reaches.
void narrow_not_equal(types::MaskVal& m, const codegen::KernelBuilder& b) {
  auto loop_range = [&b](ir::Var v) -> ir::AffineExpr::OptRange {
    const ir::Loop* loop = v.kind == ir::VarKind::Loop ? b.open_loop(v.id) : nullptr;
    if (!loop || loop->dynamic_ub) return std::nullopt;
    int64_t last = loop->lb + (loop->tripcount() - 1) * loop->stride;
    return std::pair<int64_t, int64_t>{std::min(loop->lb, last), std::max(loop->lb, last)};
  };
  for (types::Conjunction& c : m.dnf) {
    types::Conjunction kept;
    for (types::Atom& a : c) {
      std::vector<ir::Var> vars = a.expr.vars();
      bool ranged = a.rel == types::Atom::Ne && !vars.empty();
      for (ir::Var v : vars) ranged = ranged && loop_range(v).has_value();
      if (!ranged) {
        kept.push_back(a);
        continue;
      }
      const auto& t = a.expr.terms();
      if (a.expr.is_affine() && t.size() == 1) {
        const ir::Loop* loop = b.open_loop(t[0].var.id);
        int64_t off = a.expr.constant() - loop->lb * t[0].coeff;  // e at L = lb + k*stride
        if (off % (t[0].coeff * loop->stride) != 0) continue;     // L never takes that value
      }
      auto [lo, hi] = a.expr.bounds([&](ir::Var v) { return *loop_range(v); });
      if (lo > 0 || hi < 0) continue;
      if (lo == 0) kept.push_back({a.expr - 1, types::Atom::Ge});
      else if (hi == 0) kept.push_back({ir::AffineExpr(-1) - a.expr, types::Atom::Ge});
      else kept.push_back(a);
    }
    c = std::move(kept);
  }
}
}  // namespace

void TraceContext::push_predicated_scope(const types::MaskVal& cond, bool negate) {
  // The current API runs an `if` per iteration: on a loop variable, its loop unrolls.
  builder_.require_unrolled("an if on a loop variable");
  types::MaskVal m = negate ? types::mask_not(cond) : cond;
  narrow_not_equal(m, builder_);
  if (m.dnf.size() > 1)
    builder_.fail(sema::err_unsupported_expression_in_mask(
        "the else branch of a compound loop-variable condition is a disjunction; split the condition "
        "into nested ifs"));
  ir::Predicate p = types::lower_mask(m, 0);
  push_scope(ScopeKind::Stmt, "if");
  builder_.push_region_predicate(std::move(p));
}

void TraceContext::pop_predicated_scope() {
  builder_.pop_region_predicate();
  pop_scope();
}

types::TensorVal TraceContext::hoist(types::TensorVal v) const {
  v.region = builder_.region();
  return v;
}

types::IndexVal TraceContext::program_id(int64_t axis) {
  int64_t ndim = static_cast<int64_t>(opts_.grid.size());
  if (axis < 0 || axis >= std::max<int64_t>(ndim, 1)) builder_.fail(sema::err_program_id_axis_out_of_bounds(axis, ndim));
  // A kernel launched without a grid is one instance: program_id(0) is 0.
  if (ndim == 0) return types::index_constant(0);
  types::IndexVal v;
  v.expr = ir::AffineExpr::var({ir::VarKind::ProgramId, static_cast<int32_t>(axis)});
  return v;
}

int64_t TraceContext::num_programs(std::optional<int64_t> axis) const {
  if (!axis) return builder_.kernel().num_programs();
  int64_t ndim = static_cast<int64_t>(opts_.grid.size());
  if (ndim == 0 && *axis == 0) return 1;
  if (*axis < 0 || *axis >= ndim) builder_.fail(sema::err_program_id_axis_out_of_bounds(*axis, ndim));
  return opts_.grid[*axis];
}

types::IndexVal TraceContext::affine_range(const std::string& name, const codegen::RangeArgs& r, ir::AxisType type,
                                           const std::vector<codegen::LoopDirective>& directives,
                                           const types::TensorVal* runtime_ub) {
  codegen::AxisBlockArgs a;
  a.loop_name_id = name;
  a.lb = r.lb;
  a.ub = r.ub;
  a.stride = r.stride;
  a.parent = builder_.innermost_loop();
  a.axis_type = type;
  a.attrs = codegen::extract_loop_directives(directives);
  if (runtime_ub) {
    builder_.check_live(*runtime_ub);
    int64_t n = 1;
    for (int64_t d : runtime_ub->shape) n *= d;
    if (n != 1 || !ir::is_integer(builder_.tensor(runtime_ub->tensor).dtype))
      builder_.fail(sema::err_invalid_range_args("a runtime loop bound must be a one-element integer tile, got " +
                                                     std::string(ir::name(builder_.tensor(runtime_ub->tensor).dtype)) +
                                                     sema::shape_str(runtime_ub->shape),
                                                 sema::ErrorKind::Type));
    a.dynamic_ub = codegen::access_for(builder_, *runtime_ub, std::vector<int64_t>(runtime_ub->shape.size(), 1));
  }
  push_scope(ScopeKind::Loop, name);
  const ir::Loop& loop = builder_.create_affine_axis_block(a);
  types::IndexVal v;
  v.expr = ir::AffineExpr::var({ir::VarKind::Loop, loop.axis});
  return v;
}

namespace {
bool single_element(const types::TensorVal& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return n == 1;
}
}  // namespace

void TraceContext::open_while_loop(const types::TensorVal& cond) {
  builder_.check_live(cond);
  // Entry is unconditional only when the condition is a constant nonzero value
  // (scalar(True)): its one writer so far filled it with that constant.
  const ir::Instruction* w = builder_.last_writer(cond.tensor);
  bool constant_true = single_element(cond) && w && w->opcode == ir::Opcode::Memset && w->predicate.empty() &&
                       w->imms.at(0) != 0;
  if (!constant_true) builder_.fail(sema::err_while_loop_requires_unconditional_entry());
  codegen::AxisBlockArgs a;
  a.loop_name_id = "w";
  a.ub = 1;
  a.parent = builder_.innermost_loop();
  a.axis_type = ir::AxisType::Sequential;
  push_scope(ScopeKind::Loop, "while");
  builder_.create_affine_axis_block(a);
  // Marked as a while loop from the start (the body's collectives check it); the
  // condition read after each iteration is set when the body has been traced.
  builder_.set_while_condition(codegen::access_for(builder_, cond, std::vector<int64_t>(cond.shape.size(), 1)));
}

void TraceContext::close_while_loop(const types::TensorVal& end_cond) {
  builder_.check_live(end_cond);
  if (!single_element(end_cond))
    builder_.fail(sema::err_ambiguous_tensor_truth_value("a tensor of shape " + sema::shape_str(end_cond.shape) +
                                                         " (a do-while condition is one element)"));
  builder_.set_while_condition(codegen::access_for(builder_, end_cond, std::vector<int64_t>(end_cond.shape.size(), 1)));
  close_loop();
}

TraceContext::Speculation TraceContext::begin_speculation() {
  return {builder_.begin_speculation(), scopes_.size(), call_sites_.size(), has_collectives};
}

void TraceContext::commit(const Speculation&) { builder_.end_speculation(); }

void TraceContext::rollback(const Speculation& s) {
  while (scopes_.size() > s.scopes) pop_scope();
  call_sites_.resize(std::min(call_sites_.size(), s.call_sites));
  has_collectives = s.has_collectives;
  builder_.rollback(s.builder);
  builder_.end_speculation();
}

void TraceContext::close_loop() {
  builder_.close_loop();
  pop_scope();
}

types::TensorVal TraceContext::add_input(const std::string& name, std::vector<int64_t> shape, ir::DType dtype,
                                         bool is_mutable) {
  // An empty array has no element a kernel could address: reject it at the call, not in the simulator.
  for (int64_t d : shape)
    if (d <= 0)
      sema::fail(sema::err_invalid_shape("the kernel argument '" + name + "' has shape " + sema::shape_str(shape) +
                                         ", with an empty dimension"));
  if (!codegen::has_dtype(builder_, dtype))
    sema::fail(sema::err_unsupported_dtype("'" + std::string(ir::name(dtype)) + "' of the kernel argument '" + name + "'"));
  int id = builder_.add_tensor(name, std::move(shape), dtype, ir::Memory::SharedHBM, ir::Role::Input);
  builder_.tensor_mut(id).is_mutable = is_mutable;
  builder_.kernel().inputs.push_back(id);
  return builder_.full_view(id);
}

bool TraceContext::at_kernel_level() const {
  return std::none_of(scopes_.begin(), scopes_.end(), [](const Scope& s) { return s.kind == ScopeKind::Function; });
}

void TraceContext::check_outputs(const std::vector<types::TensorVal>& returned) const {
  for (const types::TensorVal& v : returned) {
    const ir::TensorDecl& t = builder_.tensor(v.tensor);
    // Outputs live in HBM; the official examples also return nl.hbm (private) tensors.
    if (!ir::is_hbm(t.memory)) builder_.fail(sema::err_return_from_top_level());
    // A returned reshape/view is written when the tensor it views is.
    bool written = builder_.written(v.tensor) || (t.alias_of >= 0 && builder_.written(t.alias_of));
    if (t.role != ir::Role::Input && !written) {
      // Point at the output's creation: by now the kernel body has finished.
      sema::Diagnostic d = sema::err_tensor_output_not_written_to(t.name);
      d.loc = t.loc;
      builder_.fail(d);
    }
  }
}

void TraceContext::check_shared_hbm_outputs(const std::vector<types::TensorVal>& returned) const {
  for (const types::TensorVal& o : returned) {
    const ir::TensorDecl& t = builder_.tensor(o.tensor);
    if (t.memory == ir::Memory::SharedHBM || t.role == ir::Role::Input) continue;
    // Reported where the output was allocated: that is the line to change.
    sema::Diagnostic d = sema::err_output_not_in_shared_hbm(codegen::KernelBuilder::display_name(t.name), ir::name(t.memory));
    d.loc = t.loc;
    builder_.fail(std::move(d));
  }
}

std::vector<types::TensorVal> TraceContext::kernel_outputs(std::vector<types::TensorVal> returned) {
  // A returned on-chip tile (an official range_select example of the legacy API returns one;
  // its simulator hands it back) leaves through an HBM output stored at the return. The
  // current API's outputs are shared HBM tensors (NKI 0.3).
  for (types::TensorVal& v : returned) {
    const ir::TensorDecl& t = builder_.tensor(v.tensor);
    if (ir::is_hbm(t.memory)) continue;
    if (builder_.current_api) check_shared_hbm_outputs({v});
    std::string name = t.name + "_returned";
    ir::DType dtype = t.dtype;
    types::TensorVal out = builder_.full_view(
        builder_.add_tensor(std::move(name), v.shape, dtype, ir::Memory::SharedHBM, ir::Role::Local));
    ApiScope scope(*this, "nl.store");
    codegen::store(builder_, out, v, {});
    v = out;
  }
  check_outputs(returned);
  return returned;
}

std::unique_ptr<ir::Kernel> TraceContext::finalize(const std::vector<types::TensorVal>& given) {
  std::vector<types::TensorVal> returned = kernel_outputs(given);
  ir::Kernel& k = builder_.kernel();
  for (const types::TensorVal& v : returned) {
    ir::TensorDecl& t = builder_.tensor_mut(v.tensor);
    if (t.role == ir::Role::Local) t.role = ir::Role::Output;
    k.outputs.push_back(v.tensor);
  }
  bool wrote_input = false;
  for (int id : k.inputs) {
    const ir::TensorDecl& t = builder_.tensor(id);
    bool returned = std::find(k.outputs.begin(), k.outputs.end(), id) != k.outputs.end();
    wrote_input = wrote_input || builder_.written(id);
    if (t.is_mutable && builder_.written(id) && !returned && !opts_.legacy_outputs) {
      sema::Diagnostic d = sema::err_mutable_parameter_not_returned(t.name);
      d.loc = builder_.first_write(id);  // the kernel has returned: point at the write
      builder_.fail(d);
    }
  }
  if (k.outputs.empty() && !(opts_.legacy_outputs && wrote_input)) {
    sema::Diagnostic d = sema::err_kernel_has_no_output();
    d.loc = opts_.def_loc;
    builder_.fail(d);
  }
  // Allocation as the compiler does it: what is live at once must fit (sema/Allocation.h),
  // counted once each temporary the compiler writes in place is gone.
  builder_.elide_copies();
  sema::AllocationVerdict alloc =
      sema::check_allocation(k, builder_.target(), codegen::KernelBuilder::display_name,
                             {compile_config.nki_allocates() && !compile_config.alloc_fallback(), prefetch_ring});
  for (sema::Diagnostic& w : alloc.warnings) builder_.warn(std::move(w));
  if (alloc.error) builder_.fail(std::move(*alloc.error));
  return builder_.finish();
}

types::Value TraceContext::elementwise_int8(ir::AluOp op, const types::Value& a, const types::Value& b) {
  codegen::OpArgs args;
  args.dtype = ir::DType::int8;
  return codegen::elementwise(builder_, codegen::Dst::fresh(), op, {a, b}, args);
}

}  // namespace nkic::trace
