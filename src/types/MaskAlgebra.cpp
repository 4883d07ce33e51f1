#include "types/MaskAlgebra.h"

#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"

namespace nkic::types {

using Form = MaskVal::Form;

bool MaskVal::is_tile() const {
  return form == Form::EQTileMask || form == Form::TileMaskIntersection ||
         form == Form::TileMaskUnion;
}

const char* name(CmpOp op) {
  static const char* kNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return kNames[static_cast<int>(op)];
}

const char* form_name(Form f) {
  switch (f) {
    case Form::EQTileMask: return "EQTileMask";
    case Form::TileMaskIntersection: return "TileMaskIntersection";
    case Form::TileMaskUnion: return "TileMaskUnion";
    case Form::EQScalarPredicate: return "EQScalarPredicate";
    case Form::ScalarPredicateIntersection: return "ScalarPredicateIntersection";
    case Form::ScalarPredicateUnion: return "ScalarPredicateUnion";
    case Form::AlwaysTrue: return "AlwaysTruePredicate";
    case Form::AlwaysFalse: return "AlwaysFalsePredicate";
  }
  return "?";
}

namespace {

// A constant atom folds to true/false; returns -1 when it depends on a variable.
int fold(const Atom& a) {
  if (!a.expr.is_constant()) return -1;
  int64_t v = a.expr.constant();
  switch (a.rel) {
    case Atom::Ge: return v >= 0;
    case Atom::Eq: return v == 0;
    case Atom::Ne: return v != 0;
  }
  return -1;
}

MaskVal make(bool tile, std::vector<int64_t> shape, std::vector<Conjunction> dnf, bool union_form) {
  MaskVal m;
  m.shape = std::move(shape);
  m.dnf.reserve(dnf.size());
  for (Conjunction& c : dnf) {
    Conjunction kept;
    bool dead = false;
    for (Atom& a : c) {
      int f = fold(a);
      if (f == 0) dead = true;
      if (f < 0) kept.push_back(std::move(a));
    }
    if (dead) continue;
    if (kept.empty()) {  // an always-true disjunct absorbs the rest
      m.dnf = {{}};
      break;
    }
    m.dnf.push_back(std::move(kept));
  }
  if (m.always_true()) m.form = Form::AlwaysTrue;
  else if (m.always_false()) m.form = Form::AlwaysFalse;
  else if (tile) m.form = union_form ? Form::TileMaskUnion : Form::TileMaskIntersection;
  else m.form = union_form ? Form::ScalarPredicateUnion : Form::ScalarPredicateIntersection;
  return m;
}

std::vector<Conjunction> aligned(const MaskVal& m, size_t rank) {
  std::vector<Conjunction> out = m.dnf;
  for (Conjunction& c : out)
    for (Atom& a : c) a.expr = align_grid(a.expr, m.shape.size(), rank);
  return out;
}

bool any_tile(const MaskVal& a, const MaskVal& b) { return a.is_tile() || b.is_tile(); }

}  // namespace

MaskVal compare_index(CmpOp op, const IndexVal& a, const IndexVal& b) {
  IndexVal d = index_binop(IndexOp::sub, a, b);  // a - b, broadcast
  if (!d.non_affine.empty()) {
    MaskVal m;
    m.form = d.shape.empty() ? Form::ScalarPredicateIntersection : Form::TileMaskIntersection;
    m.shape = d.shape;
    m.dnf = {{}};
    m.non_affine = d.non_affine;
    return m;
  }
  Atom atom;
  switch (op) {
    case CmpOp::eq: atom = {d.expr, Atom::Eq}; break;
    case CmpOp::ne: atom = {d.expr, Atom::Ne}; break;
    case CmpOp::lt: atom = {-d.expr - 1, Atom::Ge}; break;
    case CmpOp::le: atom = {-d.expr, Atom::Ge}; break;
    case CmpOp::gt: atom = {d.expr - 1, Atom::Ge}; break;
    case CmpOp::ge: atom = {d.expr, Atom::Ge}; break;
  }
  bool tile = !d.shape.empty();
  MaskVal m = make(tile, d.shape, {{atom}}, false);
  if (m.form != Form::AlwaysTrue && m.form != Form::AlwaysFalse &&
      (op == CmpOp::eq || op == CmpOp::ne))
    m.form = tile ? Form::EQTileMask : Form::EQScalarPredicate;
  return m;
}

MaskVal always(bool v) {
  MaskVal m;
  m.form = v ? Form::AlwaysTrue : Form::AlwaysFalse;
  if (v) m.dnf = {{}};
  return m;
}

// A combination keeps the first non-affine reason of its operands.
static MaskVal keep_reason(MaskVal m, const MaskVal& a, const MaskVal& b) {
  m.non_affine = !a.non_affine.empty() ? a.non_affine : b.non_affine;
  return m;
}

MaskVal mask_and(const MaskVal& a, const MaskVal& b) {
  if (!a.non_affine.empty() || !b.non_affine.empty()) return keep_reason(a, a, b);
  std::vector<int64_t> shape = broadcast_shapes(a.shape, b.shape);
  std::vector<Conjunction> da = aligned(a, shape.size()), db = aligned(b, shape.size()), out;
  for (const Conjunction& x : da)
    for (const Conjunction& y : db) {
      Conjunction c = x;
      c.insert(c.end(), y.begin(), y.end());
      out.push_back(std::move(c));
    }
  bool is_union = out.size() > 1;
  return make(any_tile(a, b), shape, std::move(out), is_union);
}

MaskVal mask_or(const MaskVal& a, const MaskVal& b) {
  if (!a.non_affine.empty() || !b.non_affine.empty()) return keep_reason(a, a, b);
  std::vector<int64_t> shape = broadcast_shapes(a.shape, b.shape);
  std::vector<Conjunction> out = aligned(a, shape.size()), db = aligned(b, shape.size());
  out.insert(out.end(), db.begin(), db.end());
  return make(any_tile(a, b), shape, std::move(out), true);
}

MaskVal mask_not(const MaskVal& a) {
  if (!a.non_affine.empty()) return a;
  // ~(c1 | c2 | ...) = ~c1 & ~c2 & ...; each ~ci is a disjunction of negated atoms.
  MaskVal result = always(true);
  result.shape = a.shape;
  for (const Conjunction& c : a.dnf) {
    std::vector<Conjunction> negated;
    for (const Atom& atom : c) {
      switch (atom.rel) {
        case Atom::Ge: negated.push_back({{-atom.expr - 1, Atom::Ge}}); break;  // e < 0
        case Atom::Eq: negated.push_back({{atom.expr, Atom::Ne}}); break;
        case Atom::Ne: negated.push_back({{atom.expr, Atom::Eq}}); break;
      }
    }
    MaskVal term = make(a.is_tile(), a.shape, std::move(negated), true);
    result = mask_and(result, term);
  }
  return result;
}

ir::Predicate lower_mask(const MaskVal& m, size_t rank) {
  if (!m.non_affine.empty()) sema::fail(sema::err_unsupported_expression_in_mask(m.non_affine + " is not affine"));
  if (m.always_true()) return {};
  // An affine mask that no iteration satisfies (`j + 1 < n` with n == 1) is
  // legal: the instruction touches nothing.
  if (m.always_false()) return {{ir::AffineExpr(-1), ir::CmpKind::Ge}};
  if (m.dnf.size() != 1) sema::fail(sema::err_unsupported_expression_in_mask("'logical or' (|) is not supported in masks"));
  if (m.shape.size() > rank)
    sema::fail(sema::err_unsupported_expression_in_mask(
        "the mask's index grid has " + std::to_string(m.shape.size()) +
        " dimensions but the instruction iterates over " + std::to_string(rank)));
  ir::Predicate p;
  for (const Atom& a : m.dnf[0]) {
    if (a.rel == Atom::Ne)
      sema::fail(sema::err_unsupported_expression_in_mask("'not equal' mask is not supported"));
    p.push_back({a.expr, a.rel == Atom::Eq ? ir::CmpKind::Eq : ir::CmpKind::Ge});
  }
  return p;
}

}  // namespace nkic::types
