#include "ir/Expr.h"

#include <algorithm>

namespace nkic::ir {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

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

namespace {
int compare_div(const DivTerm& a, const DivTerm& b) {
  if (a.den != b.den) return a.den < b.den ? -1 : 1;
  return AffineExpr::compare(a.num, b.num);
}
}  // namespace

constinit const std::vector<DivTerm> kNoDivs;

void AffineExpr::add_div(const AffineExpr& num, int64_t den, int64_t coeff) {
  if (coeff == 0) return;
  DivTerm d{num, den, coeff};
  if (!divs_) divs_ = std::make_unique<std::vector<DivTerm>>();
  std::vector<DivTerm>& divs = *divs_;
  auto it = std::lower_bound(divs.begin(), divs.end(), d,
                             [](const DivTerm& x, const DivTerm& y) { return compare_div(x, y) < 0; });
  if (it != divs.end() && compare_div(*it, d) == 0) {
    it->coeff += coeff;
    if (it->coeff == 0) divs.erase(it);
  } else {
    divs.insert(it, std::move(d));
  }
  if (divs.empty()) divs_.reset();
}

int AffineExpr::compare(const AffineExpr& a, const AffineExpr& b) {
  if (a.constant_ != b.constant_) return a.constant_ < b.constant_ ? -1 : 1;
  if (a.terms_.size() != b.terms_.size()) return a.terms_.size() < b.terms_.size() ? -1 : 1;
  for (size_t i = 0; i < a.terms_.size(); ++i) {
    const Term& x = a.terms_[i];
    const Term& y = b.terms_[i];
    if (!(x.var == y.var)) return x.var < y.var ? -1 : 1;
    if (x.coeff != y.coeff) return x.coeff < y.coeff ? -1 : 1;
  }
  const std::vector<DivTerm>&ad = a.divs(), &bd = b.divs();
  if (ad.size() != bd.size()) return ad.size() < bd.size() ? -1 : 1;
  for (size_t i = 0; i < ad.size(); ++i) {
    if (int c = compare_div(ad[i], bd[i])) return c;
    if (ad[i].coeff != bd[i].coeff) return ad[i].coeff < bd[i].coeff ? -1 : 1;
  }
  return 0;
}

int64_t AffineExpr::coeff(Var v) const {
  for (const Term& t : terms_)
    if (t.var == v) return t.coeff;
  return 0;
}

bool AffineExpr::uses(VarKind k) const {
  return std::any_of(terms_.begin(), terms_.end(), [k](const Term& t) { return t.var.kind == k; }) ||
         divs_use(k);
}

bool AffineExpr::divs_use(VarKind k) const {
  return divs_ && std::any_of(divs_->begin(), divs_->end(), [k](const DivTerm& d) { return d.num.uses(k); });
}

std::vector<Var> AffineExpr::vars() const {
  std::vector<Var> out;
  for (const Term& t : terms_) out.push_back(t.var);
  for (const DivTerm& d : divs())
    for (Var v : d.num.vars()) out.push_back(v);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int AffineExpr::single_grid_var() const {
  int found = -1;
  for (Var v : vars()) {
    if (v.kind != VarKind::Grid) continue;
    if (found >= 0) return -1;
    found = v.id;
  }
  return found;
}

AffineExpr AffineExpr::floordiv(const AffineExpr& num, int64_t den) {
  if (den == 1) return num;
  // floor((den*A + B) / den) = A + floor(B / den): every coefficient's multiple
  // of den leaves the division; B keeps the remainders in [0, den).
  AffineExpr whole(floor_div(num.constant_, den));
  AffineExpr rest(num.constant_ - whole.constant_ * den);
  for (const Term& t : num.terms_) {
    int64_t q = floor_div(t.coeff, den);
    whole.add_term(t.var, q);
    rest.add_term(t.var, t.coeff - q * den);
  }
  for (const DivTerm& d : num.divs()) {
    int64_t q = floor_div(d.coeff, den);
    whole.add_div(d.num, d.den, q);
    rest.add_div(d.num, d.den, d.coeff - q * den);
  }
  if (rest.is_constant()) return whole + floor_div(rest.constant_, den);
  // floor(floor(x / a) / b) = floor(x / (a * b))
  if (rest.constant_ == 0 && rest.terms_.empty() && rest.divs().size() == 1 && rest.divs()[0].coeff == 1)
    return whole + floordiv(rest.divs()[0].num, rest.divs()[0].den * den);
  whole.add_div(rest, den, 1);
  return whole;
}

AffineExpr AffineExpr::mod(const AffineExpr& num, int64_t den) {
  return num - floordiv(num, den) * den;
}

AffineExpr AffineExpr::operator+(const AffineExpr& o) const {
  AffineExpr r = *this;
  r.constant_ += o.constant_;
  for (const Term& t : o.terms_) r.add_term(t.var, t.coeff);
  for (const DivTerm& d : o.divs()) r.add_div(d.num, d.den, d.coeff);
  return r;
}

AffineExpr AffineExpr::operator-(const AffineExpr& o) const { return *this + o * -1; }

AffineExpr AffineExpr::operator*(int64_t k) const {
  AffineExpr r;
  if (k == 0) return r;
  r.constant_ = constant_ * k;
  r.terms_ = terms_;
  for (Term& t : r.terms_) t.coeff *= k;
  if (divs_) {
    r.divs_ = std::make_unique<std::vector<DivTerm>>(*divs_);
    for (DivTerm& d : *r.divs_) d.coeff *= k;
  }
  return r;
}

void AffineExpr::add_scaled(const AffineExpr& o, int64_t k) {
  if (k == 0) return;
  constant_ += o.constant_ * k;
  for (const Term& t : o.terms_) add_term(t.var, t.coeff * k);
  for (const DivTerm& d : o.divs()) add_div(d.num, d.den, d.coeff * k);
}

AffineExpr AffineExpr::map_vars(const std::function<AffineExpr(Var)>& f) const {
  AffineExpr r(constant_);
  for (const Term& t : terms_) r.add_scaled(f(t.var), t.coeff);
  for (const DivTerm& d : divs()) r.add_scaled(floordiv(d.num.map_vars(f), d.den), d.coeff);
  return r;
}

AffineExpr AffineExpr::substitute_grid(const std::vector<AffineExpr>& subst) const {
  if (!divs_) {  // every view composition of the tracer: no callback per term
    AffineExpr r(constant_);
    for (const Term& t : terms_) {
      if (t.var.kind == VarKind::Grid && t.var.id >= 0 && t.var.id < static_cast<int>(subst.size()))
        r.add_scaled(subst[t.var.id], t.coeff);
      else
        r.add_term(t.var, t.coeff);
    }
    return r;
  }
  return map_vars([&](Var v) {
    if (v.kind == VarKind::Grid && v.id >= 0 && v.id < static_cast<int>(subst.size())) return subst[v.id];
    return var(v);
  });
}

AffineExpr AffineExpr::shift_grid(int offset) const {
  if (offset == 0) return *this;
  if (!divs_) {  // a uniform shift keeps the terms sorted: renumber in place
    AffineExpr r = *this;
    for (Term& t : r.terms_)
      if (t.var.kind == VarKind::Grid) t.var.id += offset;
    return r;
  }
  return map_vars([&](Var v) {
    if (v.kind == VarKind::Grid) v.id += offset;
    return var(v);
  });
}

AffineExpr AffineExpr::drop_broadcast_grid(const std::vector<int64_t>& shape) const {
  auto broadcast = [&](Var v) {
    return v.kind == VarKind::Grid && v.id >= 0 && v.id < static_cast<int>(shape.size()) && shape[v.id] == 1;
  };
  if (!divs_) {  // dropping terms keeps the rest sorted
    AffineExpr r;
    r.constant_ = constant_;
    for (const Term& t : terms_)
      if (!broadcast(t.var)) r.terms_.push_back(t);
    return r;
  }
  return map_vars([&](Var v) { return broadcast(v) ? AffineExpr(0) : var(v); });
}

int64_t AffineExpr::eval(const std::function<int64_t(Var)>& value_of) const {
  int64_t v = constant_;
  for (const Term& t : terms_) v += t.coeff * value_of(t.var);
  for (const DivTerm& d : divs()) v += d.coeff * floor_div(d.num.eval(value_of), d.den);
  return v;
}

std::pair<int64_t, int64_t> AffineExpr::bounds(
    const std::function<std::pair<int64_t, int64_t>(Var)>& range_of) const {
  int64_t lo = constant_, hi = constant_;
  auto add = [&](int64_t c, std::pair<int64_t, int64_t> r) {
    lo += c * (c > 0 ? r.first : r.second);
    hi += c * (c > 0 ? r.second : r.first);
  };
  for (const Term& t : terms_) add(t.coeff, range_of(t.var));
  for (const DivTerm& d : divs()) {
    auto [nlo, nhi] = d.num.bounds(range_of);
    add(d.coeff, {floor_div(nlo, d.den), floor_div(nhi, d.den)});
  }
  // c*floor(x/den) beside m*x is m*(x mod den) + (c + m*den)*floor(x/den) with
  // x mod den in [0, den-1]: bounding that form too, for each m that cancels a
  // var of x, and intersecting keeps `%` (and mixes like 2*(x % d) + x // d) tight.
  if (divs().size() > 4) return {lo, hi};
  for (const DivTerm& d : divs()) {
    std::vector<int64_t> ms;
    for (const Term& t : d.num.terms_)
      if (int64_t c = coeff(t.var); c != 0 && c % t.coeff == 0) ms.push_back(c / t.coeff);
    auto [nlo, nhi] = d.num.bounds(range_of);
    int64_t q = floor_div(nlo, d.den);
    std::pair<int64_t, int64_t> rem =
        q == floor_div(nhi, d.den) ? std::pair<int64_t, int64_t>{nlo - q * d.den, nhi - q * d.den}
                                   : std::pair<int64_t, int64_t>{0, d.den - 1};
    for (int64_t m : ms) {
      AffineExpr rest = *this - d.num * m;
      rest.add_div(d.num, d.den, m * d.den);
      auto [rlo, rhi] = rest.bounds(range_of);
      rlo += m * (m > 0 ? rem.first : rem.second);
      rhi += m * (m > 0 ? rem.second : rem.first);
      lo = std::max(lo, rlo);
      hi = std::min(hi, rhi);
    }
  }
  return {lo, hi};
}

AffineExpr AffineExpr::fold_constant_divs(const std::function<OptRange(Var)>& range_of) const {
  AffineExpr r(constant_);
  for (const Term& t : terms_) r.add_term(t.var, t.coeff);
  for (const DivTerm& d : divs()) {
    AffineExpr num = d.num.fold_constant_divs(range_of);
    bool ranged = true;
    for (Var v : num.vars()) ranged = ranged && range_of(v).has_value();
    if (ranged) {
      auto [lo, hi] = num.bounds([&](Var v) { return *range_of(v); });
      int64_t q = floor_div(lo, d.den);
      if (q == floor_div(hi, d.den)) {
        r.constant_ += d.coeff * q;
        continue;
      }
    }
    r = r + floordiv(num, d.den) * d.coeff;
  }
  return r;
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
  auto add = [&s](int64_t c, const std::string& name) {
    if (s.empty()) {
      if (c == -1) s += "-";
      else if (c != 1) s += std::to_string(c) + "*";
    } else {
      s += c < 0 ? " - " : " + ";
      int64_t a = c < 0 ? -c : c;
      if (a != 1) s += std::to_string(a) + "*";
    }
    s += name;
  };
  for (const Term& t : terms_) add(t.coeff, var_name ? var_name(t.var) : default_var_name(t.var));
  for (const DivTerm& d : divs()) add(d.coeff, "((" + d.num.str(var_name) + ") // " + std::to_string(d.den) + ")");
  if (s.empty()) return std::to_string(constant_);
  if (constant_ > 0) s += " + " + std::to_string(constant_);
  if (constant_ < 0) s += " - " + std::to_string(-constant_);
  return s;
}

}  // namespace nkic::ir
