// Why a traced value cannot be a Python bool or int, as a diagnostic (JAX-style:
// where the value comes from, and what to use instead).
#include "values.h"

#include "errors.h"
#include "ir/IRPrinter.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "types/MaskAlgebra.h"

namespace nkic::py_bind {

using types::Value;

namespace {

// Where a symbolic value comes from, for the diagnostic: its variables' kinds.
std::string origin_of(bool loop, bool pid) {
  return loop && pid ? "a loop variable and a program id (nl.program_id)"
         : loop      ? "a loop variable (nl.affine_range / nl.sequential_range / range)"
                     : "a program id (nl.program_id)";
}

}  // namespace

[[noreturn]] void truth_error(py::handle h) {
  no_api_in_flight();
  Value v = to_value(h);
  if (auto* t = std::get_if<types::TensorVal>(&v)) {
    int64_t n = 1;
    for (int64_t d : t->shape) n *= d;
    if (n > 1) sema::fail(sema::err_ambiguous_tensor_truth_value("a tensor of shape " + sema::shape_str(t->shape)));
    sema::fail(sema::err_dynamic_control_flow_not_supported("a tensor element, whose value is computed on the device"));
  }
  if (auto* i = std::get_if<types::IndexVal>(&v)) {
    if (i->from_arange || !i->is_scalar()) sema::fail(sema::err_control_flow_condition_depending_on_arange());
    sema::fail(sema::err_dynamic_control_flow_not_supported(
        "the symbolic index `" + i->expr.str() + "` of " +
        origin_of(i->expr.uses(ir::VarKind::Loop), i->expr.uses(ir::VarKind::ProgramId))));
  }
  const auto& m = std::get<types::MaskVal>(v);
  if (m.is_tile()) sema::fail(sema::err_control_flow_condition_depending_on_arange());
  bool loop = false, pid = false;
  std::string text;
  for (const types::Conjunction& c : m.dnf)
    for (const types::Atom& a : c) {
      loop = loop || a.expr.uses(ir::VarKind::Loop);
      pid = pid || a.expr.uses(ir::VarKind::ProgramId);
      ir::Constraint shown{a.expr, a.rel == types::Atom::Eq ? ir::CmpKind::Eq : ir::CmpKind::Ge};
      text += (text.empty() ? "" : " & ") + ir::print_constraint(shown) + (a.rel == types::Atom::Ne ? " (negated)" : "");
    }
  sema::fail(sema::err_dynamic_control_flow_not_supported(std::string("a ") + types::form_name(m.form) + " `" + text +
                                                          "` of " + origin_of(loop, pid)));
}


// A traced value where Python needs a number. Inside an NKI API call that is a
// constant slot (a shape, an axis, a bound: seed 004's assert_constant_value);
// in the user's own Python (a list index, range()) it is a symbolic value.

[[noreturn]] void symbolic_int_error(py::handle h) {
  Value v = to_value(h);
  if (auto* t = std::get_if<types::TensorVal>(&v))
    sema::fail(sema::err_expected_constant_value(
        "a tile of shape " + sema::shape_str(t->shape),
        "tile values are computed on the device (a one-element tile can bound nl.sequential_range or a "
        "while loop)"));
  const types::IndexVal& i = std::get<types::IndexVal>(v);
  trace::TraceContext* ctx = trace::TraceContext::current();
  // Named APIs (nl.*, nisa.*, tensor methods) have constant slots; subscripts and
  // operators in flight do not.
  if (!ctx || ctx->builder().scoped_api().find('.') == std::string::npos)
    sema::fail(sema::err_symbolic_value_used_as_python_int());
  std::string why = !i.is_scalar() ? "an index tile (nl.arange, nl.mgrid) stands for many values"
                                   : "its value comes from " + origin_of(i.expr.uses(ir::VarKind::Loop),
                                                                         i.expr.uses(ir::VarKind::ProgramId));
  sema::fail(sema::err_expected_constant_value("the index expression `" + i.expr.str() + "`", why));
}

}  // namespace nkic::py_bind
