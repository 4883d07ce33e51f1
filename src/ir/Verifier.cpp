#include "ir/Verifier.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>
#include <utility>

#include "ir/IRVisitor.h"

namespace nkic::ir {

namespace {

// What a problem is about ("tensor_tensor at k.py:3 src"), rendered only for a
// problem: the verifier runs before every simulation, over every instruction.
struct Where {
  const Instruction* in = nullptr;  // else the loop
  const Loop* loop = nullptr;
  const char* part = "";
  int indirect = 0;  // nested indirect indices
  std::string str() const {
    std::string s = in ? std::string(name(in->opcode)) + " at " + in->loc.str() : "loop " + loop->name;
    if (*part) s += std::string(" ") + part;
    for (int i = 0; i < indirect; ++i) s += " indirect index";
    return s;
  }
};

class Verifier : public IRVisitor {
 public:
  explicit Verifier(const Kernel& k) : k_(k) {}

  std::vector<std::string> run() {
    const std::vector<bool> repeated = repeated_names();
    for (size_t i = 0; i < k_.tensors.size(); ++i) {
      const TensorDecl& t = k_.tensors[i];
      if (t.id != static_cast<int>(i)) err("tensor " + t.name + " has id " + std::to_string(t.id));
      for (int64_t d : t.shape)
        if (d <= 0) err("tensor " + t.name + " has a non-positive dimension");
      if (repeated[i]) err("tensor name " + t.name + " is not unique");
      if (t.alias_of >= static_cast<int>(i)) err("tensor " + t.name + " aliases a later tensor");
      if (t.alias_of >= 0 && t.alias_of < static_cast<int>(i)) {
        const TensorDecl& base = k_.tensors[t.alias_of];
        if (t.num_elements() * size_of(t.dtype) != base.num_elements() * size_of(base.dtype))
          err("tensor " + t.name + " aliases " + base.name + " with a different byte size");
      }
      if (!t.init.empty() && static_cast<int64_t>(t.init.size()) != t.num_elements())
        err("tensor " + t.name + " has " + std::to_string(t.init.size()) + " initial values");
    }
    for (int id : k_.inputs) check_tensor_id(id, "input");
    for (int id : k_.outputs) {
      check_tensor_id(id, "output");
      if (valid(id) && !is_hbm(k_.tensor(id).memory))
        err("output " + k_.tensor(id).name + " is not an HBM tensor");
    }
    visit_block(k_.body);
    return errors_;
  }

  void visit(const Loop& l) override {
    if (l.axis < 0 || l.axis >= k_.num_axes) err("loop " + l.name + " has axis out of range");
    if (l.stride == 0) err("loop " + l.name + " has stride 0");
    if (!seen_axes_.insert(l.axis).second) err("loop axis " + std::to_string(l.axis) + " reused");
    if (l.dynamic_ub) {
      Instruction scalar;  // the bound is read outside any tile: no Grid coordinates
      check_access(scalar, *l.dynamic_ub, Where{nullptr, &l, "bound"});
    }
    if (l.while_cond) {
      Instruction scalar;
      check_access(scalar, *l.while_cond, Where{nullptr, &l, "condition"});
    }
    for (const Access& a : l.peers) {
      Instruction scalar;
      check_access(scalar, a, Where{nullptr, &l, "another core's bound"});
    }
    open_.insert(l.axis);
    visit_block(l.body);
    open_.erase(open_.find(l.axis));
  }

  void visit(const Instruction& in) override {
    const Where at{&in};
    for (int64_t d : in.shape)
      if (d <= 0) err(at.str() + ": iteration space has a non-positive dimension");
    const OpcodeInfo& op = info(in.opcode);
    if (in.srcs.size() < op.min_srcs || in.srcs.size() > op.max_srcs)
      err(at.str() + ": wrong number of source operands");
    // A pick or a gate reads an immediate in place of its last tile operand when that is absent.
    const bool tile_or_imm = op.form == Form::pick || op.form == Form::gate;
    const size_t imms = op.min_imms + (tile_or_imm && in.srcs.size() < op.max_srcs);
    // The one-op form of a one-source pipeline takes a two-operand op's operand as its immediate.
    const bool one_op_imm = op.exec == Exec::Elementwise && op.form == Form::pipe && in.steps.empty() &&
                            op.min_srcs < 2 && ir::info(in.alu).arity == 2;
    if (in.imms.size() < imms || (one_op_imm && in.imms.empty())) err(at.str() + ": missing immediate");
    for (const AluStep& s : in.steps)
      if (s.src >= static_cast<int>(in.srcs.size())) err(at.str() + ": pipeline step reads a missing operand");
    if (walks_own_width(op.exec) && in.widths.size() != 1 + in.extra_dsts.size() + in.srcs.size())
      err(at.str() + ": row or collective instruction without a width per access");
    if (op.exec == Exec::Shuffle && in.widths.size() != 2)
      err(at.str() + ": shuffle without the partitions of dst and src");
    if (in.acc_cmd != AccCmd::none &&
        ((op.exec != Exec::Elementwise && in.opcode != Opcode::TensorScalarCumulative) || in.extra_dsts.empty() ||
         in.extra_dsts.size() > 2))
      err(at.str() + ": a reduce accumulator stage needs an elementwise instruction (or tensor_scalar_cumulative) "
                     "writing the register (and reduce_res)");
    if (in.has_dst()) check_access(in, in.dst, Where{&in, nullptr, "dst"});
    for (const Access& a : in.extra_dsts) check_access(in, a, Where{&in, nullptr, "dst"});
    for (const Access& a : in.srcs) check_access(in, a, Where{&in, nullptr, "src"});
    for (const Constraint& c : in.predicate) check_expr(in, c.expr, Where{&in, nullptr, "mask"});
    for (const Constraint& c : in.cond) check_expr(in, c.expr, Where{&in, nullptr, "condition"});
    check_expr(in, in.value, Where{&in, nullptr, "value"});
    if (op.form == Form::product && in.shape.size() != 3) err(at.str() + ": matmul iterates over [K, M, N]");
    if (is_mx(in.opcode)) check_mx(in, at);
    if (in.has_dst() && valid(in.dst.tensor)) {
      Memory m = k_.tensor(in.dst.tensor).memory;
      if (in.opcode == Opcode::Store && !is_hbm(m)) err(at.str() + ": store destination not in HBM");
      if (in.opcode == Opcode::Load && is_hbm(m)) err(at.str() + ": load destination in HBM");
    }
  }

 private:
  // Per tensor: an earlier tensor has its name. An open-addressing table of
  // tensor ids, sized once (no node per name): the verifier runs before every
  // simulation of kernels of 100k tensors.
  std::vector<bool> repeated_names() const {
    const size_t n = k_.tensors.size();
    std::vector<bool> repeated(n, false);
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    std::vector<int> slots(cap, -1);
    const std::hash<std::string_view> hash;
    for (size_t i = 0; i < n; ++i) {
      const std::string_view name = k_.tensors[i].name;
      for (size_t s = hash(name) & (cap - 1);; s = (s + 1) & (cap - 1)) {
        if (slots[s] < 0) {
          slots[s] = static_cast<int>(i);
          break;
        }
        if (k_.tensors[static_cast<size_t>(slots[s])].name == name) {
          repeated[i] = true;
          break;
        }
      }
    }
    return repeated;
  }
  bool valid(int id) const { return id >= 0 && id < static_cast<int>(k_.tensors.size()); }
  static bool is_mx(Opcode op) { return info(op).exec == Exec::Mx; }
  void check_mx(const Instruction& in, const Where& where) {
    const size_t rank = in.opcode == Opcode::MatmulMx ? 6 : 5;
    if (in.shape.size() != rank || in.shape[1] != 4 || in.shape[2] != 8 || in.shape[3] != 4)
      return err(where.str() + ": mx ops iterate over [Q, 4, 8, 4, ...]");
    auto packed = [&](const Access& a) { return valid(a.tensor) && is_packed(k_.tensor(a.tensor).dtype); };
    bool ok = in.opcode == Opcode::MxScale    ? !packed(in.dst)
              : in.opcode == Opcode::MxQuantize ? packed(in.dst)
                                                : in.srcs.size() == 4 && packed(in.srcs[0]) && packed(in.srcs[1]);
    if (!ok) err(where.str() + ": packed operands in the wrong places");
  }
  void check_tensor_id(int id, const std::string& what) {
    if (!valid(id)) err(what + " refers to unknown tensor " + std::to_string(id));
  }
  void check_access(const Instruction& in, const Access& a, const Where& where) {
    if (!valid(a.tensor)) return err(where.str() + ": unknown tensor");
    if (a.index.size() != k_.tensor(a.tensor).shape.size())
      err(where.str() + ": access rank differs from tensor rank");
    for (const AffineExpr& e : a.index) check_expr(in, e, where);
    for (const IndirectIndex& ind : a.indirect) {
      if (ind.dim < 0 || ind.dim >= static_cast<int>(a.index.size()))
        err(where.str() + ": indirect dimension out of range");
      Where nested = where;
      ++nested.indirect;
      check_access(in, ind.index, nested);
      if (valid(ind.index.tensor) && !is_integer(k_.tensor(ind.index.tensor).dtype))
        err(where.str() + ": indirect index tensor is not an integer tensor");
    }
  }
  void check_expr(const Instruction& in, const AffineExpr& e, const Where& where) {
    for (const DivTerm& d : e.divs())
      if (d.den <= 0) err(where.str() + ": floor division by a non-positive constant");
    if (e.divs().empty()) {  // the linear terms hold each var once: no list to build
      for (const Term& t : e.terms()) check_var(in, t.var, where);
      return;
    }
    for (Var v : e.vars()) check_var(in, v, where);
  }
  void check_var(const Instruction& in, Var v, const Where& where) {
    switch (v.kind) {
      case VarKind::Grid:
        if (v.id < 0 || v.id >= static_cast<int>(in.shape.size()))
          err(where.str() + ": grid coordinate outside the iteration space");
        break;
      case VarKind::Loop:
        if (!open_.count(v.id)) err(where.str() + ": loop variable used outside its loop");
        break;
      case VarKind::ProgramId:
        if (v.id < 0 || v.id >= static_cast<int>(k_.grid.size()))
          err(where.str() + ": program id axis outside the launch grid");
        break;
    }
  }
  void err(const std::string& s) { errors_.push_back(s); }

  const Kernel& k_;
  std::vector<std::string> errors_;
  std::set<int> seen_axes_;
  std::multiset<int> open_;
};

}  // namespace

std::vector<std::string> verify(const Kernel& k) { return Verifier(k).run(); }

}  // namespace nkic::ir
