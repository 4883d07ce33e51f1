// Quasi-affine index expressions (MLIR's affine dialect): constant +
// sum(coeff * var) + sum(coeff * floor(expr / den)) with den > 0. Every index an
// NKI program can write (nl.arange grids, loop variables, nl.program_id, their
// integer affine combinations, `//` and `%` by a positive constant) is one of
// these; masks are constraints on them. `x % c` is `x - c * floor(x / c)`.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/SmallVec.h"

namespace nkic::ir {

enum class VarKind : uint8_t {
  Grid,       // coordinate `id` of the iteration space (tile index dim)
  Loop,       // induction variable of loop axis `id`
  ProgramId,  // SPMD launch-grid axis `id`
};

struct Var {
  VarKind kind;
  int32_t id;
  friend bool operator==(Var a, Var b) { return a.kind == b.kind && a.id == b.id; }
  friend bool operator<(Var a, Var b) {
    return a.kind != b.kind ? a.kind < b.kind : a.id < b.id;
  }
};

struct Term {
  Var var;
  int64_t coeff;
  friend bool operator==(const Term& a, const Term& b) {
    return a.var == b.var && a.coeff == b.coeff;
  }
};

// Most expressions read one or two vars (a tile coordinate, a loop variable).
using Terms = SmallVec<Term, 3>;

struct DivTerm;

class AffineExpr {
 public:
  AffineExpr() = default;
  AffineExpr(int64_t c) : constant_(c) {}  // NOLINT: constants convert implicitly
  AffineExpr(const AffineExpr& o);
  AffineExpr& operator=(const AffineExpr& o);
  AffineExpr(AffineExpr&&) noexcept = default;
  AffineExpr& operator=(AffineExpr&&) noexcept = default;
  ~AffineExpr() = default;
  static AffineExpr var(Var v, int64_t coeff = 1);
  static AffineExpr grid(int id) { return var({VarKind::Grid, id}); }

  int64_t constant() const { return constant_; }
  // The linear part: sorted by var, no zeros. Floor-division terms are apart.
  const Terms& terms() const { return terms_; }
  // Sorted (compare()), merged, no zero coefficients.
  const std::vector<DivTerm>& divs() const;
  bool is_constant() const;
  bool is_affine() const;  // no floor-division
  // Linear coefficient of v (a var inside a floor-division is not counted).
  int64_t coeff(Var v) const;
  // Whether some term, linear or inside a floor-division, uses a var of kind k.
  bool uses(VarKind k) const;
  // Every var the expression reads, linear or inside a floor-division, once each.
  std::vector<Var> vars() const;
  // Whether a floor-division reads a var of kind k.
  bool divs_use(VarKind k) const;

  // floor(num / den) and num mod den (den > 0), simplified: divisible parts
  // leave the division, nested divisions fold, constants evaluate.
  static AffineExpr floordiv(const AffineExpr& num, int64_t den);
  static AffineExpr mod(const AffineExpr& num, int64_t den);
  // The single grid coordinate this expression uses, or -1 if none / several.
  int single_grid_var() const;

  AffineExpr operator+(const AffineExpr& o) const;
  AffineExpr operator-(const AffineExpr& o) const;
  AffineExpr operator-() const { return *this * -1; }
  AffineExpr operator*(int64_t k) const;
  friend bool operator==(const AffineExpr& a, const AffineExpr& b) { return compare(a, b) == 0; }
  friend bool operator!=(const AffineExpr& a, const AffineExpr& b) { return compare(a, b) != 0; }
  // A total order (for canonical sorting of floor-division terms).
  static int compare(const AffineExpr& a, const AffineExpr& b);

  // Replaces every var v by f(v), floor-divisions included.
  AffineExpr map_vars(const std::function<AffineExpr(Var)>& f) const;
  // Replace every Grid var k by subst[k] (view composition).
  AffineExpr substitute_grid(const std::vector<AffineExpr>& subst) const;
  // Renumber Grid vars: k -> k + offset (numpy right-aligned broadcasting).
  AffineExpr shift_grid(int offset) const;
  // Drop Grid vars whose coordinate is broadcast (size 1) in `shape`.
  AffineExpr drop_broadcast_grid(const std::vector<int64_t>& shape) const;

  // Value for a binding of every variable.
  int64_t eval(const std::function<int64_t(Var)>& value_of) const;
  // Least and greatest value when each var lies in [lo, hi] (range_of); exact
  // for the linear part, floor-divisions by their bounds' quotients.
  std::pair<int64_t, int64_t> bounds(const std::function<std::pair<int64_t, int64_t>(Var)>& range_of) const;
  // Replaces each floor-division that is constant over the ranges by its value;
  // a var without a range (nullopt) keeps the divisions reading it.
  using OptRange = std::optional<std::pair<int64_t, int64_t>>;
  AffineExpr fold_constant_divs(const std::function<OptRange(Var)>& range_of) const;

  // "3*i0 + 128*L0 + 5" with Grid vars i<k>, loops by `loop_name`, pids pid<k>.
  std::string str(const std::function<std::string(Var)>& var_name = {}) const;

 private:
  void add_term(Var v, int64_t coeff);
  void add_div(const AffineExpr& num, int64_t den, int64_t coeff);
  void add_scaled(const AffineExpr& o, int64_t k);  // *this += k * o
  int64_t constant_ = 0;
  Terms terms_;
  // Floor-divisions are rare: a linear expression (nearly every index) holds no
  // list of them, so it copies and dies without touching one. Null or non-empty.
  std::unique_ptr<std::vector<DivTerm>> divs_;
};

// coeff * floor(num / den), den > 0.
struct DivTerm {
  AffineExpr num;
  int64_t den = 1;
  int64_t coeff = 1;
};

// What divs() gives for a linear expression; inline, as it is read for nearly every index
// (constant-initialized, so no guard either).
extern const std::vector<DivTerm> kNoDivs;
inline const std::vector<DivTerm>& AffineExpr::divs() const { return divs_ ? *divs_ : kNoDivs; }

inline AffineExpr::AffineExpr(const AffineExpr& o)
    : constant_(o.constant_), terms_(o.terms_), divs_(o.divs_ ? std::make_unique<std::vector<DivTerm>>(*o.divs_) : nullptr) {}

inline AffineExpr& AffineExpr::operator=(const AffineExpr& o) {
  if (this != &o) {
    constant_ = o.constant_;
    terms_ = o.terms_;
    divs_ = o.divs_ ? std::make_unique<std::vector<DivTerm>>(*o.divs_) : nullptr;  // copied before the old list dies
  }
  return *this;
}

inline bool AffineExpr::is_constant() const { return terms_.empty() && !divs_; }
inline bool AffineExpr::is_affine() const { return !divs_; }

int64_t floor_div(int64_t a, int64_t b);

std::string default_var_name(Var v);

}  // namespace nkic::ir
