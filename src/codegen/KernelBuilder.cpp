#include "codegen/KernelBuilder.h"

#include <cctype>

#include "codegen/CopyElision.h"
#include "codegen/Scalars.h"
#include "sema/Asserts.h"
#include "sema/Bounds.h"
#include "sema/OpTable.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

sema::Diagnostic with_hint(sema::Diagnostic d, std::string hint) {
  d.hint = std::move(hint);
  return d;
}

}  // namespace

KernelBuilder::KernelBuilder(std::string kernel_name, const sema::Target& target)
    : target_(target), kernel_(std::make_unique<ir::Kernel>()) {
  kernel_->name = std::move(kernel_name);
  trace_ = std::make_shared<const std::string>(kernel_->name);
  blocks_.push_back(&kernel_->body);
  push_region();
}

void KernelBuilder::elide_copies() { codegen::elide_copies(*kernel_); }

std::unique_ptr<ir::Kernel> KernelBuilder::finish() {
  kernel_->direct_allocation = direct_allocation;
  kernel_->current_api = current_api;
  kernel_->int_round_nearest_even = current_api && nki_version.at_least(0, 6);  // the NKI 0.6 release notes
  return std::move(kernel_);
}

void KernelBuilder::fail(sema::Diagnostic d) const {
  if (!d.loc.known()) d.loc = location();
  if (d.api.empty()) d.api = api();
  sema::fail(std::move(d));
}

bool KernelBuilder::NameSet::insert(const std::string& name) {
  if (2 * (names_.size() + 1) > slots_.size()) grow();
  const uint64_t h = std::hash<std::string>{}(name);
  const uint64_t tag = h >> 32 << 32;
  const size_t mask = slots_.size() - 1;
  for (size_t s = h & mask;; s = (s + 1) & mask) {
    const uint64_t slot = slots_[s];
    if (slot == 0) {
      names_.push_back(name);
      slots_[s] = tag | names_.size();
      return true;
    }
    if ((slot >> 32 << 32) == tag && names_[(slot & 0xffffffffu) - 1] == name) return false;
  }
}

void KernelBuilder::NameSet::grow() {
  slots_.assign(std::max<size_t>(64, 2 * slots_.size()), 0);
  rehash();
}

void KernelBuilder::NameSet::truncate(size_t n) {
  // Newest first, in time with what a speculation traced: a name's slot was empty when
  // every older name was placed (rehash() too places them oldest first), so freeing it
  // never cuts an older name's probe sequence.
  const size_t mask = slots_.size() - 1;
  for (; names_.size() > n; names_.pop_back()) {
    size_t s = std::hash<std::string>{}(names_.back()) & mask;
    while ((slots_[s] & 0xffffffffu) != names_.size()) s = (s + 1) & mask;
    slots_[s] = 0;
  }
}

void KernelBuilder::NameSet::rehash() {
  const size_t mask = slots_.size() - 1;
  for (size_t i = 0; i < names_.size(); ++i) {
    const uint64_t h = std::hash<std::string>{}(names_[i]);
    size_t s = h & mask;
    while (slots_[s] != 0) s = (s + 1) & mask;
    slots_[s] = (h >> 32 << 32) | (i + 1);
  }
}

std::string KernelBuilder::unique_name(std::string base) {
  if (base.empty()) base = "t";
  // Resume numbering where the last tensor of this base stopped: names are never
  // released, so this keeps tracing linear in the number of tensors. A base
  // that has been numbered is itself taken: numbering goes on at once.
  int& n = next_suffix_[base];
  std::string name = n == 0 ? base : base + "." + std::to_string(++n);
  while (!used_names_.insert(name)) name = base + "." + std::to_string(++n);
  return name;
}

void KernelBuilder::adopt_name(int id, const std::string& name) {
  if (id != last_generated_name_ || name.empty()) return;
  kernel_->tensors.at(id).name = unique_name(name);
  last_generated_name_ = -1;
}

int KernelBuilder::add_tensor(std::string name, std::vector<int64_t> shape, ir::DType dtype,
                              ir::Memory memory, ir::Role role) {
  if (ir::is_hbm(memory)) {  // in double: a shape's product may not fit in 64 bits
    double bytes = static_cast<double>(ir::size_of(dtype));
    for (int64_t d : shape) bytes *= static_cast<double>(d);
    if (bytes > static_cast<double>(target().hbm_capacity_bytes))
      fail(sema::err_tensor_exceeds_hbm_capacity(display_name(name), shape, bytes, target().name,
                                                 target().hbm_capacity_bytes));
  }
  // Every useful tensor is written by an instruction: declarations are bounded as those are.
  if (static_cast<int64_t>(kernel_->tensors.size()) >= max_instructions)
    fail(sema::err_trace_limit_exceeded("declare " + std::to_string(kernel_->tensors.size() + 1) + " tensors or more",
                                        max_instructions));
  ir::TensorDecl t;
  t.id = static_cast<int>(kernel_->tensors.size());
  t.name = unique_name(std::move(name));
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.memory = memory;
  t.role = role;
  t.loc = location();
  t.alloc_axis = loop_stack_.empty() ? -1 : loop_stack_.back()->axis;
  kernel_->tensors.push_back(std::move(t));
  writes_.emplace_back();
  last_generated_name_ = next_name_generated_ ? kernel_->tensors.back().id : -1;
  next_name_generated_ = false;
  return kernel_->tensors.back().id;
}

types::TensorVal KernelBuilder::engine_accumulator() {
  if (accumulator_ < 0) {
    accumulator_ = add_tensor("reduce_accumulator", {target().statebuf_num_partitions, 1}, ir::DType::float32,
                              ir::Memory::SBUF, ir::Role::Local);
    tensor_mut(accumulator_).alloc_axis = -1;  // not fresh per loop iteration: a register
  }
  types::TensorVal v = full_view(accumulator_);
  v.region = regions_.front();
  return v;
}

ir::Memory KernelBuilder::buffer(int id) const {
  const ir::TensorDecl& t = tensor(kernel_->root(id));
  if (!current_api || t.role != ir::Role::Input || (cores && cores->count() > 1)) return tensor(id).memory;
  return ir::Memory::PrivateHBM;
}

types::TensorVal KernelBuilder::full_view(int id) const {
  types::TensorVal v;
  v.tensor = id;
  v.shape = tensor(id).shape;
  v.index.reserve(v.shape.size());
  for (size_t d = 0; d < v.shape.size(); ++d) v.index.push_back(ir::AffineExpr::grid(static_cast<int>(d)));
  v.region = regions_.back();
  return v;
}

// An ALU operator newer than the target's engines (abs_max on NeuronCore-v4), in
// any stage of the instruction.
void KernelBuilder::check_alu_generation(const ir::Instruction& in) const {
  auto check = [&](ir::AluOp op) {
    if (current_api && (op == ir::AluOp::abs_max || op == ir::AluOp::abs_min || op == ir::AluOp::prelu))
      check_versioned_form("nl." + std::string(ir::name(op)));
    const int v = ir::info(op).min_nc_version;
    if (v > target().nc_version)
      fail(sema::err_min_arch_support_for_inst(std::string(ir::name(op)) + "' in '" + api(), v, target().name,
                                               target().nc_version));
  };
  check(in.alu);
  for (const ir::AluStep& s : in.steps) check(s.op);
  if (in.acc_cmd != ir::AccCmd::none) check(in.acc_op);
}

// A dtype newer than the target's engines (the OCP float8_e4m3fn and float8_e8m0fnu
// of NeuronCore-v4) read or written by an engine; the DMA queues move any dtype.
void KernelBuilder::check_dtype_generation(const ir::Instruction& in) const {
  if (ir::engine_of(in) == ir::Engine::dma) return;
  auto check = [&](const ir::Access& a) {
    const ir::DType dt = tensor(a.tensor).dtype;
    const int v = ir::min_nc_version(dt);
    if (v > target().nc_version)
      fail(sema::err_min_arch_support_for_inst(std::string(ir::name(dt)) + "' in '" + api(), v, target().name,
                                               target().nc_version));
  };
  if (in.has_dst()) check(in.dst);
  for (const ir::Access& a : in.srcs) check(a);
}

ir::Instruction& KernelBuilder::emit(std::unique_ptr<ir::Instruction> inst) {
  // An empty index (nl.arange(5, 3), nl.mgrid[8:2]) leaves nothing to execute: a shape error here,
  // not a malformed kernel in the simulator.
  for (int64_t n : inst->shape)
    if (n <= 0) fail(sema::err_invalid_shape(inst->shape));
  ir::Predicate own_mask = inst->predicate;
  for (const ir::Predicate& p : region_predicates_) inst->predicate.insert(inst->predicate.end(), p.begin(), p.end());
  sema::VarRange range_of = checked_var_range();
  for (const ir::Constraint& c : inst->predicate)
    for (ir::Var v : c.expr.vars())
      if (v.kind == ir::VarKind::Loop) range_of(v);
  sema::assert_packed_operands(*inst, [this](int id) -> const ir::TensorDecl& { return tensor(id); }, api(),
                               raiser());
  check_accesses(*inst);
  check_alu_generation(*inst);
  check_dtype_generation(*inst);
  check_wide_dtypes(*this, *inst);
  if (++num_instructions_ > max_instructions)
    fail(sema::err_trace_limit_exceeded("emit " + std::to_string(num_instructions_) + " instructions or more",
                                        max_instructions));
  inst->loc = location();
  inst->api = api();
  inst->id = next_instruction_id();
  Emitted record{inst.get(), {}};
  for (const ir::Loop* l : loop_stack_)
    if (l->runtime()) record.runtime_loops.push_back(l->axis);
  if (!no_reorder_.empty()) {
    NoReorder& block = no_reorder_.back();
    if (loop_stack_.size() > block.loops) {
      for (size_t i = block.loops; i < loop_stack_.size(); ++i)
        if (loop_stack_[i]->runtime()) check_runtime_loop_allowed();
      require_unrolled("nl.no_reorder orders each iteration after the one before");
    }
    if (block.last >= 0) inst->after.push_back(block.last);
    block.last = inst->id;
  }
  emitted_.push_back(std::move(record));
  blocks_.back()->push_back(std::move(inst));
  auto& emitted = static_cast<ir::Instruction&>(*blocks_.back()->back());
  if (emitted.has_dst()) {
    TensorWrites& w = change(emitted.dst.tensor);
    w.last_writer = &emitted;
    w.last_write_mask = std::move(own_mask);
  }
  return emitted;
}

sema::VarRange KernelBuilder::checked_var_range() const {
  return [this](ir::Var v) {
    // A loop variable outside its loop: the loop has finished, its value is gone.
    if (v.kind == ir::VarKind::Loop && !open_loop(v.id))
      fail(sema::err_local_variable_used_out_of_scope(display_name(loop_names_.at(v.id))));
    return var_range(v);
  };
}

void KernelBuilder::check_accesses(const ir::Instruction& inst) {
  sema::VarRange range_of = checked_var_range();
  const sema::VarLattice steps = var_steps();
  if (inst.has_dst()) {
    const ir::TensorDecl& dst = tensor(inst.dst.tensor);
    if (dst.role == ir::Role::Input && !dst.is_mutable) fail(sema::err_cannot_update_immutable_parameter(dst.name));
    // The PSUM accumulator formats (seed 004): an accumulation into PSUM needs fp32/int32;
    // plain writes (transposes, copies) may hold other formats. nc_matmul_mx's operand
    // rule names its own (fp32 or bf16, NKI_CURRENT_API.md §6.4).
    if (inst.accumulate && dst.memory == ir::Memory::PSUM && inst.opcode != ir::Opcode::MatmulMx)
      sema::assert_dtype_psum(dst.dtype, raiser());
    sema::assert_access_in_bounds(inst, inst.dst, dst, range_of, raiser());
    check_partition_start(inst, inst.dst, steps);
    for (int id : {inst.dst.tensor, dst.alias_of}) {
      if (id < 0 || writes_[id].written) continue;
      TensorWrites& w = change(id);
      w.written = true;
      w.first_write = location();
    }
  }
  for (const ir::Access& a : inst.srcs) {
    sema::assert_access_in_bounds(inst, a, tensor(a.tensor), range_of, raiser());
    check_partition_start(inst, a, steps);
  }
}

void KernelBuilder::check_partition_start(const ir::Instruction& inst, const ir::Access& a,
                                          const sema::VarLattice& steps) const {
  const ir::TensorDecl& t = tensor(a.tensor);
  // A legacy tensor assignment is the compiler's copy, which may take a DMA queue (any partition).
  if (auto v = sema::partition_start_violation(inst, a, t, steps); v && api() != "tensor assignment")
    fail(sema::err_invalid_partition_access(display_name(t.name), v->partitions, v->start, v->alignment));
}

sema::VarLattice KernelBuilder::var_steps() const {
  return [this](ir::Var v) -> std::optional<sema::VarSteps> {
    if (v.kind == ir::VarKind::ProgramId) return sema::VarSteps{0, 1, kernel_->grid.at(v.id)};
    const ir::Loop* l = open_loop(v.id);
    if (!l || l->dynamic_ub) return std::nullopt;
    return sema::VarSteps{l->lb, l->stride, l->tripcount()};
  };
}

std::optional<std::pair<int64_t, int64_t>> KernelBuilder::var_range(ir::Var v) const {
  if (v.kind == ir::VarKind::ProgramId) return std::pair<int64_t, int64_t>{0, kernel_->grid.at(v.id) - 1};
  const ir::Loop* l = open_loop(v.id);
  if (!l || l->dynamic_ub) return std::nullopt;
  int64_t last = l->lb + (l->tripcount() - 1) * l->stride;
  return std::pair<int64_t, int64_t>{std::min(l->lb, last), std::max(l->lb, last)};
}

ir::Loop& KernelBuilder::create_affine_axis_block(const AxisBlockArgs& args) {
  if (args.insert_before != nullptr || args.parent != innermost_loop())
    fail({"", "unexpected case in create affine axis block, insert before should be None", sema::ErrorKind::Assertion});
  if (cores)
    if (ir::Loop* joined = cores->join_loop(*this, args.lb, args.ub, args.stride, args.dynamic_ub)) {
      blocks_.push_back(&joined->body);
      loop_stack_.push_back(joined);
      return *joined;
    }
  auto loop = std::make_unique<ir::Loop>();
  loop->axis = kernel_->num_axes++;
  loop->name = unique_name(args.loop_name_id.empty() ? "i" : args.loop_name_id);
  loop->lb = args.lb;
  loop->ub = args.ub;
  loop->stride = args.stride;
  loop->type = args.axis_type;
  loop->dynamic_ub = args.dynamic_ub;
  loop->attrs = args.attrs;
  loop->loc = location();
  ir::Loop* raw = loop.get();
  loop_names_.push_back(raw->name);
  blocks_.back()->push_back(std::move(loop));
  blocks_.push_back(&raw->body);
  loop_stack_.push_back(raw);
  if (cores) cores->opened_loop(*raw);
  return *raw;
}

void KernelBuilder::set_while_condition(ir::Access cond) {
  if (cores && cores->peer_condition(cond)) return;
  loop_stack_.back()->while_cond = std::move(cond);
}

void KernelBuilder::close_loop() {
  if (cores) cores->closed_loop(*this);
  blocks_.pop_back();
  loop_stack_.pop_back();
}

void KernelBuilder::push_region() {
  auto r = std::make_shared<types::Region>();
  r->id = next_region_++;
  r->kernel = trace_;
  regions_.push_back(std::move(r));
}

void KernelBuilder::pop_region() {
  regions_.back()->open = false;
  regions_.pop_back();
}

std::string KernelBuilder::display_name(const std::string& name) {
  // IR names of same-named tensors carry ".1", ".2", ...: the user wrote the base.
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size()) return name;
  for (size_t i = dot + 1; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.substr(0, dot);
}

void KernelBuilder::check_same_trace(const types::TensorVal& v) const {
  // Its tensor index would name one of this kernel's tensors, or none.
  if (v.region && v.region->kernel != trace_) fail(sema::err_tensor_of_another_trace(*v.region->kernel, kernel_->name));
}

void KernelBuilder::check_live(const types::TensorVal& v) const {
  check_same_trace(v);
  // Current kernels have Python scoping: a tensor made in a loop or branch lives on after it.
  if (v.region && !v.region->open && !current_api)
    fail(sema::err_local_variable_used_out_of_scope(display_name(tensor(v.tensor).name)));
}

void KernelBuilder::warn(sema::Diagnostic d) const {
  if (!d.loc.known()) d.loc = location();
  if (d.api.empty()) d.api = api();
  if (warning_handler) warning_handler(d);
}

void KernelBuilder::check_versioned_form(std::string_view form) const {
  sema::check_versioned_form(form, nki_version, raiser(), [this](sema::Diagnostic d) { warn(std::move(d)); });
}

const sema::OpSpec& KernelBuilder::op_spec() const {
  const std::string& a = api();
  if (!spec_ || a != spec_api_) {
    spec_ = &sema::op_spec(a);
    spec_api_ = a;
  }
  return *spec_;
}

void KernelBuilder::check_operand(const char* operand, const types::TensorVal& v) const {
  check_live(v);
  const ir::TensorDecl& t = tensor(v.tensor);
  // A tensor with block dims is a tile only once indexed down to its partition dim.
  if (t.partition_dim > 0 && v.index[t.partition_dim].coeff({ir::VarKind::Grid, 0}) == 0)
    fail(sema::err_failed_to_infer_tile_from_local_tensor(t.name));
  sema::check_operand(op_spec(), api(), operand, t, v.shape, raiser());
  // Runtime offsets into on-chip tensors: in the legacy API only the dynamic copies read
  // or write them; the current API's instructions take them (check_on_chip_offsets_lowered).
  if (!v.indirect.empty() && !ir::is_hbm(t.memory) && !current_api && api() != "nisa.tensor_copy_dynamic_src" &&
      api() != "nisa.tensor_copy_dynamic_dst")
    fail(sema::err_indirect_indices_are_not_supported_with_nki_api(
        api(), "read on-chip tensors at runtime offsets with nisa.tensor_copy_dynamic_src and write them with "
               "nisa.tensor_copy_dynamic_dst"));
}

}  // namespace nkic::codegen

namespace nkic::codegen {

KernelBuilder::Checkpoint KernelBuilder::begin_speculation() {
  Checkpoint cp;
  cp.tensors = kernel_->tensors.size();
  cp.outputs = kernel_->outputs.size();
  cp.core_spans = kernel_->core_spans.size();
  cp.num_axes = kernel_->num_axes;
  cp.block_depth = blocks_.size();
  cp.block_size = blocks_.back()->size();
  cp.loops = loop_stack_.size();
  cp.loop_names = loop_names_.size();
  cp.region_predicates = region_predicates_.size();
  cp.regions = regions_.size();
  cp.placements = placements.size();
  cp.names = used_names_.size();
  cp.next_region = next_region_;
  cp.accumulator = accumulator_;
  cp.last_generated_name = last_generated_name_;
  cp.num_instructions = num_instructions_;
  cp.next_name_generated = next_name_generated_;
  cp.direct_allocation = direct_allocation;
  cp.undo = undo_.size();
  cp.next_suffix = next_suffix_;
  cp.next_instruction_id = next_instruction_id();
  for (const NoReorder& r : no_reorder_) cp.no_reorder_last.push_back(r.last);
  speculation_floors_.push_back({static_cast<int>(cp.tensors), cp.num_axes, speculations_++});
  return cp;
}

void KernelBuilder::end_speculation() {
  speculation_floors_.pop_back();
  if (speculation_floors_.empty()) undo_.clear();  // nothing can be rolled back any more
}

KernelBuilder::TensorWrites& KernelBuilder::change(int tensor) {
  TensorWrites& w = writes_.at(tensor);
  // A tensor the speculation made is dropped whole by a rollback; an older one is logged
  // once per speculation, before its first change there.
  if (speculating() && tensor < speculation_floors_.back().tensors &&
      w.saved_in != speculation_floors_.back().serial) {
    undo_.emplace_back(tensor, w);
    w.saved_in = speculation_floors_.back().serial;
  }
  return w;
}

void KernelBuilder::rollback(const Checkpoint& cp) {
  blocks_.resize(cp.block_depth);
  loop_stack_.resize(cp.loops);
  ir::Block& block = *blocks_.back();
  block.erase(block.begin() + static_cast<std::ptrdiff_t>(cp.block_size), block.end());
  kernel_->tensors.resize(cp.tensors);
  kernel_->outputs.resize(cp.outputs);
  kernel_->core_spans.resize(cp.core_spans);
  kernel_->num_axes = cp.num_axes;
  loop_names_.resize(cp.loop_names);
  region_predicates_.resize(cp.region_predicates);
  placements.resize(cp.placements);
  used_names_.truncate(cp.names);
  next_suffix_ = cp.next_suffix;
  next_region_ = cp.next_region;
  accumulator_ = cp.accumulator;
  last_generated_name_ = cp.last_generated_name;
  num_instructions_ = cp.num_instructions;
  next_name_generated_ = cp.next_name_generated;
  direct_allocation = cp.direct_allocation;
  for (; undo_.size() > cp.undo; undo_.pop_back()) writes_[undo_.back().first] = std::move(undo_.back().second);
  writes_.resize(cp.tensors);
  // Ids stay unique: the discarded instructions keep theirs, without an instruction.
  for (size_t id = cp.next_instruction_id; id < emitted_.size(); ++id) emitted_[id].in = nullptr;
  for (size_t i = 0; i < no_reorder_.size() && i < cp.no_reorder_last.size(); ++i)
    no_reorder_[i].last = cp.no_reorder_last[i];
}

void KernelBuilder::add_dependency(int64_t consumer, int64_t producer) {
  const auto known = [this](int64_t id) {
    return id >= 0 && id < next_instruction_id() && emitted_[id].in != nullptr;
  };
  if (!known(consumer) || !known(producer))
    fail(with_hint(sema::err_unsupported_args("depends_on", "the instruction is not one of this kernel's trace"),
                   "wire instructions of the kernel being traced"));
  // An edge is per traced instruction: a symbolic loop's body stands for every iteration.
  require_unrolled("depends_on joins two traced instructions");
  const std::vector<int>& outer = emitted_[producer].runtime_loops;
  const std::vector<int>& inner = emitted_[consumer].runtime_loops;
  if (outer.size() > inner.size() || !std::equal(outer.begin(), outer.end(), inner.begin()))
    fail(with_hint(sema::err_unsupported_args("depends_on", "the producer runs in a runtime loop (nl.fori_loop, "
                                                            "nl.while_loop, nl.dynamic_range) that its consumer is "
                                                            "outside of: an edge cannot leave a runtime loop"),
                   "make both instructions sit in the same loop, or the producer outside it"));
  if (producer >= consumer) {
    warn(sema::warn_dependency_against_program_order(emitted_[consumer].in->api, emitted_[producer].in->api,
                                                     emitted_[producer].in->loc));
    return;
  }
  std::vector<int64_t>& after = emitted_[consumer].in->after;
  if (std::find(after.begin(), after.end(), producer) == after.end()) after.push_back(producer);
}

void KernelBuilder::check_runtime_loop_allowed() const {
  if (!no_reorder_.empty())
    fail(with_hint(sema::err_unsupported_args("nl.no_reorder", "a runtime loop (nl.fori_loop, nl.while_loop, "
                                                               "nl.dynamic_range) cannot run inside it"),
                   "put the no_reorder block inside the loop's body"));
}

void KernelBuilder::require_unrolled(const std::string& why) const {
  if (speculating()) throw LoopNotSymbolic(why);
}

bool KernelBuilder::matmul_first_write_varies(const ir::Access& dst) const {
  if (!speculating()) return false;
  // A tensor from before the innermost speculative loop: its first iteration overwrites, later ones accumulate.
  if (kernel_->root(dst.tensor) < speculation_floors_.back().tensors) return true;
  // A location moving with a speculative loop's variable: which writes overlap depends on the iteration.
  const int first_axis = speculation_floors_.front().axes;
  auto moves = [first_axis](const ir::AffineExpr& e) {
    for (ir::Var v : e.vars())
      if (v.kind == ir::VarKind::Loop && v.id >= first_axis) return true;
    return false;
  };
  return std::any_of(dst.index.begin(), dst.index.end(), moves);
}

}  // namespace nkic::codegen
