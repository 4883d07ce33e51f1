// The emission state of one kernel under construction: its IR, the insertion
// point (block stack), the loop axes, the open allocation region, the API in
// flight and where the user's source currently is. Op builders (Ops*.cpp)
// emit through it; the tracer drives it.
#pragma once
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/Cores.h"
#include "codegen/Range.h"
#include "ir/IR.h"
#include "sema/Bounds.h"
#include "sema/Partitions.h"
#include "sema/Diagnostic.h"
#include "sema/NkiVersion.h"
#include "sema/Target.h"
#include "types/Values.h"

namespace nkic::sema {
struct OpSpec;
}

namespace nkic::codegen {

// Thrown by a speculatively traced loop body that needs its loop unrolled (the
// front end rolls the body back and unrolls); never reaches the user.
struct LoopNotSymbolic : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KernelBuilder {
 public:
  KernelBuilder(std::string kernel_name, const sema::Target& target);

  ir::Kernel& kernel() { return *kernel_; }
  const ir::Kernel& kernel() const { return *kernel_; }
  void elide_copies();  // folds the front ends' temporaries into their producers (CopyElision.h)
  std::unique_ptr<ir::Kernel> finish();  // hands the IR over; the builder is spent
  const sema::Target& target() const { return target_; }

  // Where diagnostics and instructions point: the user's current line. The
  // front end pushes it (the call site of the API in flight, set_location);
  // without a pushed location `location_provider` answers (an operator
  // written in the kernel, a loop hook).
  std::function<ir::SourceLoc()> location_provider;
  ir::SourceLoc location() const {
    if (location_.known()) return location_;
    return location_provider ? location_provider() : ir::SourceLoc{};
  }
  // Replaces the pushed location (an unknown one defers to the provider); returns the previous one.
  ir::SourceLoc set_location(ir::SourceLoc loc) { return std::exchange(location_, loc); }
  const ir::SourceLoc& pushed_location() const { return location_; }
  // The API a builder named when it asked for the context: what is in flight
  // when the call did not come through the dispatcher (no ApiScope).
  std::string requested_api;
  // The API in flight ("nl.load"): the innermost ApiScope's, else requested_api.
  const std::string& api() const { return scoped_api().empty() ? requested_api : scoped_api(); }
  // The innermost ApiScope's API, or "".
  const std::string& scoped_api() const { return api_depth_ ? api_stack_[api_depth_ - 1] : no_api_; }
  // ApiScope's stack. Its strings are kept for the next call at the same depth,
  // so that naming the API of each of a trace's calls allocates nothing.
  void push_api(std::string_view a) {
    if (api_depth_ == api_stack_.size()) api_stack_.emplace_back();
    api_stack_[api_depth_++].assign(a);
  }
  void pop_api() { --api_depth_; }
  // The op table's spec of api(), looked up again only when the API in flight changes.
  const sema::OpSpec& op_spec() const;
  std::string name_hint;  // the variable the current call is assigned to ("x = nl.load(...)")
  // A kernel of the current nki API: helpers are plain Python functions that may
  // create, rebind and return tensors (shared HBM too) with Python semantics.
  bool current_api = false;
  // The NKI version a current-API kernel is traced as (NKIC_NKI_VERSION, read when its trace
  // begins); builders gate version-dependent rules on it (nki_version.at_least(0, 7)).
  sema::NkiVersion nki_version = sema::kNewestNkiVersion;
  // Whether nki_version accepts `form` (sema::versioned_forms()): an error at the current
  // location if not, a deprecation warning if it deprecates it.
  void check_versioned_form(std::string_view form) const;
  // Whether nki_version accepts `form`, for a rule that gives its own diagnostic.
  bool accepts(std::string_view form) const { return sema::accepts(form, nki_version); }
  // Tensors placed by address= (the current API): partition and free byte offset.
  struct Placement {
    int tensor;
    int64_t partition, offset;
    int core;  // kernel[n]: the core whose SBUF/PSUM holds it (each core has its own)
  };
  std::vector<Placement> placements;
  // kernel[n] traced once per core (the current API's LNC specialisation); empty otherwise.
  std::optional<CoreSegments> cores;
  bool direct_allocation = false;  // some tensor was placed with ncc.sbuf/psum.alloc or mod_alloc
  // The name for a new tensor: the explicit name, else the assigned variable, else `fallback`.
  // A fallback name marks the next tensor's name as generated (see adopt_name).
  std::string tensor_name(const std::string& explicit_name, const std::string& fallback) {
    if (!explicit_name.empty()) return explicit_name;
    if (!name_hint.empty()) return name_hint;
    next_name_generated_ = true;
    return fallback;
  }

  // A diagnostic at the current location, attributed to the API in flight.
  [[noreturn]] void fail(sema::Diagnostic d) const;
  // A warning at the current location (the binding turns it into a Python warning).
  void warn(sema::Diagnostic d) const;
  std::function<void(const sema::Diagnostic&)> warning_handler;
  // The same, as the callback sema's assert families raise through.
  std::function<void(sema::Diagnostic)> raiser() const {
    return [this](sema::Diagnostic d) { fail(std::move(d)); };
  }

  // `x = a + b`: the tensor an operator just created takes the variable's name,
  // if its name was generated (not given by name= or the assignment already).
  void adopt_name(int tensor, const std::string& name);
  int add_tensor(std::string name, std::vector<int64_t> shape, ir::DType dtype, ir::Memory memory,
                 ir::Role role);
  types::TensorVal full_view(int tensor) const;
  const ir::TensorDecl& tensor(int id) const { return kernel_->tensor(id); }
  ir::TensorDecl& tensor_mut(int id) { return kernel_->tensors.at(id); }
  // The buffer a tensor reports (`t.buffer`): the memory it lives in, except that a current-API
  // kernel's input is nl.hbm (private HBM) on one core and shared HBM under kernel[n], as NKI
  // wraps the arguments it is called with.
  ir::Memory buffer(int id) const;
  bool written(int tensor) const { return writes_.at(tensor).written; }
  const ir::SourceLoc& first_write(int tensor) const { return writes_.at(tensor).first_write; }
  // The instruction that last wrote `tensor` (null if none yet).
  const ir::Instruction* last_writer(int tensor) const { return writes_.at(tensor).last_writer; }
  // That write's own mask: its predicate without the predicates of the `if`
  // regions it was emitted in (those guard the write, not the tile's contents).
  const ir::Predicate& last_write_mask(int tensor) const { return writes_.at(tensor).last_write_mask; }

  // Appends at the insertion point; records the write and checks immutability.
  ir::Instruction& emit(std::unique_ptr<ir::Instruction> inst);
  // How many statements the insertion point holds: a mark for the instructions a call emits.
  size_t insertion_size() const { return blocks_.back()->size(); }
  ir::Block& insertion_block() { return *blocks_.back(); }
  // Of a PSUM tensor, the element boxes destination-passing matmuls wrote (nc_matmul's
  // accumulate=None: the first write of a location overwrites, later ones accumulate),
  // to add to.
  std::vector<std::vector<std::pair<int64_t, int64_t>>>& matmul_writes(int tensor) {
    return change(tensor).matmul_boxes;
  }

  // Explicit scheduling edges (NkiInstruction.depends_on, kernel.with_schedule): instructions
  // get ids in emission order; next_instruction_id() marks the ones a call emits.
  int64_t next_instruction_id() const { return static_cast<int64_t>(emitted_.size()); }
  // `consumer` starts after `producer` ends. The producer sits in the consumer's runtime loops
  // or outside them (never inside a runtime loop the consumer is not in); one traced after its
  // consumer cannot be waited for in program order: a warning, and no edge.
  void add_dependency(int64_t consumer, int64_t producer);
  // nl.no_reorder(): every instruction emitted until the matching end waits for the one before.
  void begin_no_reorder() { no_reorder_.push_back({loop_stack_.size(), -1}); }
  void end_no_reorder() { no_reorder_.pop_back(); }

  // Opens a loop axis at the insertion point; its body becomes the insertion point.
  ir::Loop& create_affine_axis_block(const AxisBlockArgs& args);
  void close_loop();
  // Makes the innermost loop a do-while loop repeating while `cond` reads nonzero.
  void set_while_condition(ir::Access cond);
  const ir::Loop* innermost_loop() const { return loop_stack_.empty() ? nullptr : loop_stack_.back(); }
  // The open loop of axis `axis`, or null when that loop is not being traced.
  const ir::Loop* open_loop(int axis) const {
    for (const ir::Loop* l : loop_stack_)
      if (l->axis == axis) return l;
    return nullptr;
  }
  // The [min, max] of a program id or of the variable of an open loop; nullopt for a
  // loop bounded at run time or not being traced.
  std::optional<std::pair<int64_t, int64_t>> var_range(ir::Var v) const;
  int64_t num_instructions() const { return num_instructions_; }
  // Tracing stops with err_trace_limit_exceeded beyond this many instructions (or
  // static_range iterations, or tensors): an unbounded unroll must not take minutes and
  // gigabytes.
  static constexpr int64_t kDefaultMaxInstructions = int64_t{1} << 18;
  int64_t max_instructions = kDefaultMaxInstructions;
  bool in_loop() const { return !loop_stack_.empty(); }
  bool in_dynamic_loop() const {
    return std::any_of(loop_stack_.begin(), loop_stack_.end(), [](const ir::Loop* l) { return l->runtime(); });
  }

  // Allocation regions (seed 003 allocation_scope): tensors made while a region
  // is innermost belong to it and die with it.
  void push_region();
  void pop_region();
  const std::shared_ptr<types::Region>& region() const { return regions_.back(); }
  bool at_top_region() const { return regions_.size() == 1; }
  // The engines' reduce accumulator (reduce_cmd): one fp32 register per
  // partition that lives across instructions, as a kernel-lifetime [P, 1] tile.
  types::TensorVal engine_accumulator();

  // Predicated regions (an `if` on a loop-variable predicate): every instruction
  // emitted inside carries these constraints in addition to its own mask.
  void push_region_predicate(ir::Predicate p) { region_predicates_.push_back(std::move(p)); }
  void pop_region_predicate() { region_predicates_.pop_back(); }

  // A current-API loop traced once with a symbolic variable on speculation (its body may
  // not depend on the iteration): everything emission changes, so that rollback() can
  // discard what the body emitted (instructions, tensors, names, axes, write records)
  // and the loop be unrolled instead.
  struct Checkpoint {
    size_t tensors = 0, outputs = 0, block_depth = 0, block_size = 0, loops = 0, loop_names = 0,
           region_predicates = 0, regions = 0, placements = 0, names = 0, core_spans = 0;
    int num_axes = 0, next_region = 0, accumulator = -1, last_generated_name = -1;
    int64_t num_instructions = 0, next_instruction_id = 0;
    size_t undo = 0;
    bool next_name_generated = false, direct_allocation = false;
    std::unordered_map<std::string, int> next_suffix;
    std::vector<int64_t> no_reorder_last;
  };
  // Starts a speculative trace (nested ones stack) and returns its checkpoint.
  Checkpoint begin_speculation();
  // Ends the innermost speculative trace: keep what it emitted, or restore `cp`.
  void end_speculation();
  void rollback(const Checkpoint& cp);
  bool speculating() const { return !speculation_floors_.empty(); }
  // The loop being traced on speculation must be unrolled instead: LoopNotSymbolic when
  // speculating (a register, an address= placement, a synchronisation), nothing otherwise.
  void require_unrolled(const std::string& why) const;
  // A runtime loop (nl.fori_loop, even over constant bounds; nl.while_loop) starts here: it
  // cannot run inside nl.no_reorder (NKI_CURRENT_API.md §5.5).
  void check_runtime_loop_allowed() const;
  // nc_matmul(accumulate=None) writing `dst` (this access of an instruction): whether the first
  // write overwrites could differ between iterations of a speculative loop.
  bool matmul_first_write_varies(const ir::Access& dst) const;

  // A tensor's name as the user wrote it (IR names add ".1", ".2" to repeats).
  static std::string display_name(const std::string& name);

  // The region check every operand passes (err_local_variable_used_out_of_scope).
  void check_live(const types::TensorVal& v) const;
  // `v` was made by this trace (a tensor kept from another names none of its tensors).
  void check_same_trace(const types::TensorVal& v) const;
  void check_alu_generation(const ir::Instruction& in) const;
  void check_dtype_generation(const ir::Instruction& in) const;
  // Liveness plus the op table's memory/dtype/rank checks for `operand` of the API in flight.
  void check_operand(const char* operand, const types::TensorVal& v) const;

 private:
  std::string unique_name(std::string base);
  // var_range for accesses and predicates: a loop variable outside its loop is an error.
  sema::VarRange checked_var_range() const;
  // The values each open loop variable and program id takes (first, step, count).
  sema::VarLattice var_steps() const;
  // err_invalid_partition_access for an engine's access at a start partition the engines refuse.
  void check_partition_start(const ir::Instruction& inst, const ir::Access& a, const sema::VarLattice& steps) const;
  // The write and read checks of an instruction (immutability, PSUM formats, bounds); records its write.
  void check_accesses(const ir::Instruction& inst);

  const sema::Target& target_;
  std::unique_ptr<ir::Kernel> kernel_;
  ir::SourceLoc location_;
  std::vector<ir::Block*> blocks_;
  std::vector<ir::Loop*> loop_stack_;
  std::vector<std::string> loop_names_;  // by axis
  std::vector<ir::Predicate> region_predicates_;
  std::vector<std::shared_ptr<types::Region>> regions_;
  std::shared_ptr<const std::string> trace_;  // every region's `kernel`
  int accumulator_ = -1;
  // What the builder knows of each tensor's writes, by tensor id.
  struct TensorWrites {
    bool written = false;
    ir::SourceLoc first_write;
    const ir::Instruction* last_writer = nullptr;
    ir::Predicate last_write_mask;
    std::vector<std::vector<std::pair<int64_t, int64_t>>> matmul_boxes;
    int64_t saved_in = -1;  // the speculation whose undo log holds this entry's earlier state
  };
  std::vector<TensorWrites> writes_;
  // While speculating: the entries of writes_ a speculative trace changed, as they were
  // before, oldest first, for rollback() to put back. A checkpoint copies nothing per
  // tensor, so a speculation costs what its body traces, not the size of the kernel.
  std::vector<std::pair<int, TensorWrites>> undo_;
  int64_t speculations_ = 0;
  // writes_[tensor], to change: logs its state first when a speculation may undo the change.
  TensorWrites& change(int tensor);
  // The names handed out (never released): an open-addressing table of hashes
  // and positions in one array of names, with no node per name, so that naming
  // stays cheap in unrolls of 100k tensors.
  class NameSet {
   public:
    bool insert(const std::string& name);  // false when the name is taken
    size_t size() const { return names_.size(); }
    void truncate(size_t n);  // forgets the names handed out after the first n
   private:
    void grow();
    void rehash();  // puts every name back into the (cleared) slots
    std::vector<std::string> names_;
    std::vector<uint64_t> slots_;  // (hash's high half << 32) | (position + 1); 0 = empty
  };
  NameSet used_names_;
  std::unordered_map<std::string, int> next_suffix_;
  int next_region_ = 0;
  int64_t num_instructions_ = 0;
  int last_generated_name_ = -1;  // the newest tensor whose name came from its op
  bool next_name_generated_ = false;
  struct SpeculationFloor {
    int tensors, axes;  // the first tensor id and loop axis the speculative body made
    int64_t serial;     // which speculation this is (TensorWrites::saved_in)
  };
  std::vector<SpeculationFloor> speculation_floors_;
  struct Emitted {
    ir::Instruction* in;             // null once a rollback discarded it
    std::vector<int> runtime_loops;  // the axes of the runtime loops around it, outermost first
  };
  std::vector<Emitted> emitted_;     // by instruction id
  struct NoReorder {
    size_t loops;   // the loop depth the block opened at
    int64_t last;   // the instruction the next one waits for (-1: none yet)
  };
  std::vector<NoReorder> no_reorder_;
  mutable std::string spec_api_;
  std::vector<std::string> api_stack_;
  size_t api_depth_ = 0;
  inline static const std::string no_api_;
  mutable const sema::OpSpec* spec_ = nullptr;
};

}  // namespace nkic::codegen
