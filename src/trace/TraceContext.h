// TraceContext (seed 000): the state of one kernel trace. One context is
// installed per thread by new_ctx at trace start and cleared at teardown;
// every nl.* API reaches the kernel under construction through current().
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/KernelBuilder.h"
#include "sema/CompileConfig.h"
#include "sema/Target.h"
#include "trace/Dispatch.h"
#include "types/TypeSystem.h"

namespace nkic::trace {

struct TraceOptions {
  std::string kernel_name = "kernel";
  std::string target = "trn2";
  std::vector<int64_t> grid;
  std::vector<int> grid_physical_cores;  // per grid dim: NeuronCores it spans (nl.nc), 1 otherwise
  bool trace_time_unroll_builtin_range = false;
  // Legacy kernels (@nki.trace called directly) write their outputs into
  // parameters in place: every input is mutable and no return is required.
  bool legacy_outputs = false;
  ir::SourceLoc def_loc;  // the kernel's `def` line
};

enum class ScopeKind { Kernel, Function, Stmt, Loop };
const char* name(ScopeKind k);

struct Scope {
  ScopeKind kind;
  std::string name;
  ir::SourceLoc call_loc;  // Function scopes: where the helper was called
};

class TraceContext final : public types::TensorOpSink {
 public:
  explicit TraceContext(TraceOptions opts);

  // The thread's installed context, or null outside a trace.
  static TraceContext* current();
  // Like current(), but raises err_nki_api_outside_of_nki_kernel naming `api`.
  static TraceContext& nki_ctx(const std::string& api);
  // A tensor in a Python condition (`if t:`, `t and ...`): in a current-API kernel it
  // stands for a given argument, as the compiler reads it (the NKI library tests
  // optional tensors so); the legacy API rejects it as device data.
  static bool tensor_is_true();
  // Installs a fresh context as this thread's global context.
  static TraceContext& new_ctx(TraceOptions opts);
  // Tears the thread's context down (global_ctx = None).
  static void clear();

  const TraceOptions& opts() const { return opts_; }
  const sema::Target& target() const { return *target_; }
  codegen::KernelBuilder& builder() { return builder_; }
  types::NkiTypeSystem& type_system() { return type_system_; }

  // nki_api_scope: diagnostics raised while `api` runs name it.
  class ApiScope {
   public:
    ApiScope(TraceContext& ctx, std::string_view api);
    ~ApiScope();
    ApiScope(const ApiScope&) = delete;
    ApiScope& operator=(const ApiScope&) = delete;

   private:
    TraceContext& ctx_;
  };
  const std::string& cur_api() const { return builder_.api(); }

  // The call sites of the helpers and nested kernels being inlined, innermost
  // last: pushed by the front end's dispatcher for as long as the callee runs.
  class CallSite {
   public:
    CallSite(TraceContext& ctx, ir::SourceLoc loc) : ctx_(ctx) { ctx_.call_sites_.push_back(loc); }
    ~CallSite() {
      if (current() == &ctx_) ctx_.call_sites_.pop_back();
    }
    CallSite(const CallSite&) = delete;
    CallSite& operator=(const CallSite&) = delete;

   private:
    TraceContext& ctx_;
  };
  const std::vector<ir::SourceLoc>& call_sites() const { return call_sites_; }

  // The dispatcher's decisions for the callees met in this trace (a marker set
  // on a callee between two traces is seen by the second).
  DispatchCache& dispatch_cache() { return dispatch_cache_; }

  // The current API's scheduling labels: the instruction ids [first, end) of each nisa call
  // made with name= (kernel.with_schedule's edges name them), in call order.
  using InstructionIds = std::pair<int64_t, int64_t>;
  using InstructionLabels = std::vector<std::pair<std::string, std::vector<InstructionIds>>>;
  InstructionLabels& instruction_labels() { return instruction_labels_; }
  // This trace's identity, distinct from every other trace of the process (the handles of
  // its instructions carry it, so that a handle of another trace is refused).
  uint64_t serial() const { return serial_; }

  // NKI_PRECISE_FP=0 (the current API): on-chip tensors of the narrow float formats are
  // stored in fp32, as the official simulator stores them.
  bool narrow_floats_as_fp32 = false;
  // The kernel's nki.compiler configs (defaults unless a current-API kernel gives them) and
  // the SBUF bytes per partition its prefetch ring takes: set as the trace begins (KernelConfig.h).
  sema::CompileConfig compile_config;
  sema::SpecializationConfig specialization_config;
  int64_t prefetch_ring = 0;
  // The dtype a new tensor of `dtype` in `memory` is stored in.
  ir::DType storage_dtype(ir::DType dtype, ir::Memory memory) const;

  // The scope chain. Function, Stmt and Loop scopes open an allocation region.
  void push_scope(ScopeKind kind, std::string name = "", ir::SourceLoc call_loc = {});
  void pop_scope();
  const std::vector<Scope>& scopes() const { return scopes_; }
  // Seed: the current function scope is the kernel (if/loop scopes do not count).
  bool at_kernel_level() const;

  // `if` on a predicate over loop variables (seed 000 if_scope, routed through
  // predicates): the branch body is traced once, every instruction in it
  // predicated on `cond` (or on its negation, for the else branch). The body is
  // a StmtScope: tensors made inside do not outlive it.
  void push_predicated_scope(const types::MaskVal& cond, bool negate);
  void pop_predicated_scope();

  // `name = fresh` in traced code where `name` held the tensor `old` (seed 000):
  // the message of the warning when that shadows a live tensor with an object of
  // another scope, dtype or shape instead of updating it in place; nullopt when fine.
  std::optional<std::string> shadowing_warning(const std::string& name, const types::TensorVal& old,
                                               const types::TensorVal& fresh) const;

  // A tensor handed back from a helper lives on in the caller's region.
  types::TensorVal hoist(types::TensorVal v) const;

  // SPMD launch grid (nl.program_id / nl.num_programs / nl.program_ndim).
  types::IndexVal program_id(int64_t axis);
  int64_t num_programs(std::optional<int64_t> axis) const;

  // A deferred loop (seed 003 affine_range / sequential_range): opens one axis
  // under a LoopScope and returns its induction variable.
  // `runtime_ub`, when given, is a one-element tile holding the upper bound: the
  // axis is then a DynamicAxis (seed 003 has_runtime_value), independent of `type`.
  types::IndexVal affine_range(const std::string& name, const codegen::RangeArgs& r, ir::AxisType type,
                               const std::vector<codegen::LoopDirective>& directives,
                               const types::TensorVal* runtime_ub = nullptr);
  void close_loop();
  // `while cond:` on a runtime condition (2.25): a do-while loop. `cond` must be
  // a one-element tile known to be nonzero on entry (scalar(True)); the loop
  // repeats while `end_cond`, the condition's binding after the body, is nonzero.
  void open_while_loop(const types::TensorVal& cond);
  void close_while_loop(const types::TensorVal& end_cond);

  // Kernel parameters and outputs.
  types::TensorVal add_input(const std::string& name, std::vector<int64_t> shape, ir::DType dtype, bool is_mutable);
  // The return contract: shared_hbm tensors only, each written (or a mutable input).
  void check_outputs(const std::vector<types::TensorVal>& returned) const;
  // The current API's: a kernel's returned tensors live in shared HBM.
  void check_shared_hbm_outputs(const std::vector<types::TensorVal>& returned) const;
  // Registers the returned tensors as kernel outputs and finishes the IR.
  // The kernel's outputs for the tensors it returns: HBM tensors as they are, an
  // on-chip tile through a new HBM output it is stored into. Checks them.
  std::vector<types::TensorVal> kernel_outputs(std::vector<types::TensorVal> returned);
  std::unique_ptr<ir::Kernel> finalize(const std::vector<types::TensorVal>& returned);

  // A current-API loop traced once on speculation (KernelBuilder::Checkpoint): the
  // scopes and call sites open when it began come back with the builder's state.
  struct Speculation {
    codegen::KernelBuilder::Checkpoint builder;
    size_t scopes = 0, call_sites = 0;
    bool has_collectives = false;
  };
  Speculation begin_speculation();
  void commit(const Speculation& s);
  void rollback(const Speculation& s);

  bool has_collectives = false;
  bool in_exception_block = false;
  bool multi_physical_cores = false;

  types::Value elementwise_int8(ir::AluOp op, const types::Value& a, const types::Value& b) override;

 private:
  TraceOptions opts_;
  const sema::Target* target_;
  codegen::KernelBuilder builder_;
  types::NkiTypeSystem type_system_;
  std::vector<Scope> scopes_;
  std::vector<ir::SourceLoc> call_sites_;
  DispatchCache dispatch_cache_;
  InstructionLabels instruction_labels_;
  uint64_t serial_;
};

}  // namespace nkic::trace
