#include "ir/Expr.h"

#include <algorithm>

namespace nkic::ir {

AffineExpr AffineExpr::var(Var v, int64_t coeff) {
  AffineExpr e;
  e.add_term(v, coeff);
  return e;
}

void AffineExpr::add_term(Var v, int64_t coeff) {
  if (coeff == 0) return;
  auto it = std::lower_bound(terms_.begin(), terms_.end(), v,
                             [](const Term& t, Var x) { return t.var < x; });
  if (it != terms_.end() && it->var == v) {
    it->coeff += coeff;
    if (it->coeff == 0) terms_.erase(it);
  } else {
    terms_.insert(it, Term{v, coeff});
  }
}

int64_t AffineExpr::coeff(Var v) const {
  for (const Term& t : terms_)
    if (t.var == v) return t.coeff;
  return 0;
}

bool AffineExpr::uses(VarKind k) const {
  return std::any_of(terms_.begin(), terms_.end(), [k](const Term& t) { return t.var.kind == k; });
}

int AffineExpr::single_grid_var() const {
  int found = -1;
  for (const Term& t : terms_) {
    if (t.var.kind != VarKind::Grid) continue;
    if (found >= 0) return -1;
    found = t.var.id;
  }
  return found;
}

AffineExpr AffineExpr::operator+(const AffineExpr& o) const {
  AffineExpr r = *this;
  r.constant_ += o.constant_;
  for (const Term& t : o.terms_) r.add_term(t.var, t.coeff);
  return r;
}

AffineExpr AffineExpr::operator-(const AffineExpr& o) const { return *this + o * -1; }

AffineExpr AffineExpr::operator*(int64_t k) const {
  AffineExpr r;
  if (k == 0) return r;
  r.constant_ = constant_ * k;
  r.terms_ = terms_;
  for (Term& t : r.terms_) t.coeff *= k;
  return r;
}

AffineExpr AffineExpr::substitute_grid(const std::vector<AffineExpr>& subst) const {
  AffineExpr r(constant_);
  for (const Term& t : terms_) {
    if (t.var.kind == VarKind::Grid && t.var.id >= 0 && t.var.id < static_cast<int>(subst.size()))
      r = r + subst[t.var.id] * t.coeff;
    else
      r.add_term(t.var, t.coeff);
  }
  return r;
}

AffineExpr AffineExpr::shift_grid(int offset) const {
  if (offset == 0) return *this;
  AffineExpr r(constant_);
  for (const Term& t : terms_) {
    Var v = t.var;
    if (v.kind == VarKind::Grid) v.id += offset;
    r.add_term(v, t.coeff);
  }
  return r;
}

AffineExpr AffineExpr::drop_broadcast_grid(const std::vector<int64_t>& shape) const {
  AffineExpr r(constant_);
  for (const Term& t : terms_) {
    bool broadcast = t.var.kind == VarKind::Grid && t.var.id < static_cast<int>(shape.size()) &&
                     shape[t.var.id] == 1;
    if (!broadcast) r.add_term(t.var, t.coeff);
  }
  return r;
}

int64_t AffineExpr::eval(const std::function<int64_t(Var)>& value_of) const {
  int64_t v = constant_;
  for (const Term& t : terms_) v += t.coeff * value_of(t.var);
  return v;
}

std::string default_var_name(Var v) {
  switch (v.kind) {
    case VarKind::Grid: return "i" + std::to_string(v.id);
    case VarKind::Loop: return "L" + std::to_string(v.id);
    case VarKind::ProgramId: return "pid" + std::to_string(v.id);
  }
  return "?";
}

std::string AffineExpr::str(const std::function<std::string(Var)>& var_name) const {
  std::string s;
  for (const Term& t : terms_) {
    std::string name = var_name ? var_name(t.var) : default_var_name(t.var);
    int64_t c = t.coeff;
    if (s.empty()) {
      if (c == -1) s += "-";
      else if (c != 1) s += std::to_string(c) + "*";
    } else {
      s += c < 0 ? " - " : " + ";
      int64_t a = c < 0 ? -c : c;
      if (a != 1) s += std::to_string(a) + "*";
    }
    s += name;
  }
  if (s.empty()) return std::to_string(constant_);
  if (constant_ > 0) s += " + " + std::to_string(constant_);
  if (constant_ < 0) s += " - " + std::to_string(-constant_);
  return s;
}

}  // namespace nkic::ir
