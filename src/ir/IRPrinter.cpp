#include "ir/IRPrinter.h"

#include <cctype>
#include <sstream>
#include <unordered_set>

#include "ir/IRVisitor.h"

namespace nkic::ir {

namespace {

std::string var_name(Var v, const std::vector<std::string>* loop_names) {
  if (v.kind == VarKind::Loop && loop_names && v.id < static_cast<int>(loop_names->size()) &&
      !(*loop_names)[v.id].empty())
    return (*loop_names)[v.id];
  return default_var_name(v);
}

template <typename T>
std::string join(const std::vector<T>& xs, const std::string& sep = ", ") {
  std::ostringstream os;
  for (size_t i = 0; i < xs.size(); ++i) os << (i ? sep : "") << xs[i];
  return os.str();
}

std::string fmt_imm(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

class Printer : public IRVisitor {
 public:
  Printer(const Kernel& k, const PrintOptions& o) : k_(k), opts_(o) {
    loop_names_.resize(k.num_axes);
    collect_loop_names(k.body);
    collect_producers(k.body);
  }

  std::string run() {
    os_ << "kernel " << k_.name;
    if (!k_.grid.empty()) os_ << " grid=[" << join(k_.grid) << "]";
    os_ << "\n";
    for (const TensorDecl& t : k_.tensors) {
      os_ << "  tensor " << t.name << ": " << ir::name(t.dtype) << "[" << join(t.shape) << "] "
          << ir::name(t.memory) << " " << ir::name(t.role) << (t.is_mutable ? " mutable" : "");
      loc(t.loc);
      os_ << "\n";
    }
    indent_ = 1;
    visit_block(k_.body);
    return os_.str();
  }

  void visit(const Loop& l) override {
    pad();
    if (l.while_cond) {
      os_ << "do " << l.name << " while " << access(*l.while_cond);
      loc(l.loc);
      os_ << "\n";
      ++indent_;
      visit_block(l.body);
      --indent_;
      return;
    }
    os_ << "for " << l.name << " in " << (l.type == AxisType::Affine ? "affine" : "sequential") << "_range("
        << l.lb << ", " << (l.dynamic_ub ? access(*l.dynamic_ub) : std::to_string(l.ub)) << ", " << l.stride << ")";
    if (l.dynamic_ub) os_ << " DynamicAxis";
    for (const auto& [key, value] : l.attrs) os_ << " " << key << "=" << value;
    loc(l.loc);
    os_ << "\n";
    ++indent_;
    visit_block(l.body);
    --indent_;
  }

  void visit(const Instruction& in) override {
    pad();
    if (producers_.count(in.id)) os_ << "#" << in.id << ": ";
    if (in.has_dst()) {
      os_ << access(in.dst);
      for (const Access& a : in.extra_dsts) os_ << ", " << access(a);
      os_ << (in.accumulate ? " += " : " = ");
    }
    os_ << ir::name(in.opcode) << "[" << ir::name(engine_of(in)) << "](" << operands(in) << ")";
    if (in.negate) os_ << " negate";
    if (in.oob_skip) os_ << " oob=skip";
    if (!in.cond.empty()) {
      std::vector<std::string> cs;
      for (const Constraint& c : in.cond) cs.push_back(constraint(c));
      os_ << " if (" << join(cs, " & ") << ")";
    }
    os_ << " iter=[" << join(in.shape) << "]";
    if (!in.widths.empty()) os_ << " widths=[" << join(in.widths) << "]";
    if (in.tile_rows < 128 || in.tile_cols < 128)
      os_ << " pe_tile=(" << expr(in.tile_row) << ", " << expr(in.tile_col) << ")+(" << in.tile_rows << ", "
          << in.tile_cols << ")";
    if (!in.predicate.empty()) {
      std::vector<std::string> cs;
      for (const Constraint& c : in.predicate) cs.push_back(constraint(c));
      os_ << " mask=(" << join(cs, " & ") << ")";
    }
    if (!in.after.empty()) {
      std::vector<std::string> ids;
      for (int64_t id : in.after) ids.push_back("#" + std::to_string(id));
      os_ << " after=[" << join(ids) << "]";
    }
    loc(in.loc);
    os_ << "\n";
  }

  std::string constraint(const Constraint& c) const {
    // Stored as `e >= 0` / `e == 0`; shown as `terms <op> constant`, leading term positive.
    AffineExpr lhs = c.expr - AffineExpr(c.expr.constant());
    int64_t rhs = -c.expr.constant();
    const char* op = c.kind == CmpKind::Eq ? "==" : ">=";
    if (!lhs.terms().empty() && lhs.terms().front().coeff < 0) {
      lhs = -lhs;
      rhs = -rhs;
      if (c.kind == CmpKind::Ge) op = "<=";
    }
    return expr(lhs) + " " + op + " " + std::to_string(rhs);
  }

 private:
  // Elementwise: the data, then each pipeline step ("; multiply 0.5", "; reverse
  // subtract 1", "; exp"). Others: the sources and immediates, then "; op" and the steps.
  std::string operands(const Instruction& in) const {
    std::vector<std::string> ops;
    const Form form = info(in.opcode).form;
    if (!in.text.empty()) ops.push_back('"' + in.text + '"');
    const bool elementwise = info(in.opcode).exec == Exec::Elementwise;
    const std::vector<AluStep> steps = pipeline(in);
    const bool piped = elementwise && !steps.empty();
    for (size_t i = 0; i < in.srcs.size(); ++i)
      if (!piped || i == 0) ops.push_back(access(in.srcs[i]));
    // range_select: its data, on_false value and position; its steps compare the position.
    if (!piped || form == Form::range)
      for (double v : in.imms) ops.push_back(fmt_imm(v));
    if (form == Form::index || form == Form::range) ops.push_back(expr(in.value));
    std::string out = join(ops);
    if (!elementwise && in.alu != AluOp::bypass) {
      out += "; ";
      // A scalar_alu with one source: its constant, "; reverse subtract 0" for 0 - s.
      const bool constant = info(in.opcode).exec == Exec::Scalar && in.srcs.size() == 1;
      if (constant && in.reverse) out += "reverse ";
      out += ir::name(in.alu);
      if (constant) out += " " + std::to_string(in.value.constant());
    }
    for (const AluStep& s : steps) {
      out += "; ";
      if (s.reverse) out += "reverse ";
      out += ir::name(s.op);
      // Elsewhere the sources are listed already; an immediate operand is shown at its step.
      if (ir::info(s.op).arity == 2 && (elementwise || s.src < 0))
        out += " " + (s.src < 0 ? fmt_imm(s.imm) : access(in.srcs.at(s.src)));
    }
    if (form == Form::pick && in.reverse) out += "; reverse_pred";
    // The accumulator stage last, as the engine applies it: "; reset_reduce add".
    if (in.acc_cmd == AccCmd::reset) out += "; reset";
    else if (in.acc_cmd != AccCmd::none) out += "; " + std::string(ir::name(in.acc_cmd)) + " " + std::string(ir::name(in.acc_op));
    if (in.acc_cmd == AccCmd::load_reduce) {
      const Access* start = load_reduce_source(in);
      out += " from " + (start ? access(*start) : fmt_imm(in.acc_init));
    }
    return out;
  }
  std::string expr(const AffineExpr& e) const {
    return e.str([this](Var v) { return var_name(v, &loop_names_); });
  }
  std::string access(const Access& a) const {
    std::vector<std::string> idx;
    for (const AffineExpr& e : a.index) idx.push_back(expr(e));
    for (const IndirectIndex& ind : a.indirect) {
      std::string& s = idx.at(ind.dim);
      const std::string value = ind.step == 1 ? access(ind.index) : std::to_string(ind.step) + "*" + access(ind.index);
      s = value + (s == "0" ? "" : " + " + s);
    }
    return k_.tensor(a.tensor).name + "[" + join(idx) + "]";
  }
  void collect_loop_names(const Block& b) {
    for (const StmtPtr& s : b) {
      if (s->kind != StmtKind::Loop) continue;
      const Loop& l = static_cast<const Loop&>(*s);
      if (l.axis >= static_cast<int>(loop_names_.size())) loop_names_.resize(l.axis + 1);
      if (l.axis >= 0) loop_names_[l.axis] = l.name;
      collect_loop_names(l.body);
    }
  }
  // The instructions some edge waits for: they are labelled #id.
  void collect_producers(const Block& b) {
    for (const StmtPtr& s : b) {
      if (s->kind == StmtKind::Loop) collect_producers(static_cast<const Loop&>(*s).body);
      else if (s->kind == StmtKind::Instruction)
        for (int64_t id : static_cast<const Instruction&>(*s).after) producers_.insert(id);
    }
  }
  void pad() { os_ << std::string(2 * indent_, ' '); }
  void loc(const SourceLoc& l) {
    if (opts_.show_locations && l.known()) os_ << "  @ " << l.str();
  }

  const Kernel& k_;
  PrintOptions opts_;
  std::ostringstream os_;
  int indent_ = 0;
  std::vector<std::string> loop_names_;
  std::unordered_set<int64_t> producers_;
};

}  // namespace

std::string print(const Kernel& k, const PrintOptions& opts) { return Printer(k, opts).run(); }

std::string print_constraint(const Constraint& c, const Kernel* k) {
  static const Kernel empty;
  return Printer(k ? *k : empty, {}).constraint(c);
}

}  // namespace nkic::ir
