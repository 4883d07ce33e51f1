// Affine index expressions: constant + sum(coeff * var). Every index an NKI
// program can write (nl.arange grids, loop variables, nl.program_id, their
// integer affine combinations) is one of these; masks are constraints on them.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

class AffineExpr {
 public:
  AffineExpr() = default;
  AffineExpr(int64_t c) : constant_(c) {}  // NOLINT: constants convert implicitly
  static AffineExpr var(Var v, int64_t coeff = 1);
  static AffineExpr grid(int id) { return var({VarKind::Grid, id}); }

  int64_t constant() const { return constant_; }
  const std::vector<Term>& terms() const { return terms_; }  // sorted by var, no zeros
  bool is_constant() const { return terms_.empty(); }
  int64_t coeff(Var v) const;
  bool uses(VarKind k) const;
  // The single grid coordinate this expression uses, or -1 if none / several.
  int single_grid_var() const;

  AffineExpr operator+(const AffineExpr& o) const;
  AffineExpr operator-(const AffineExpr& o) const;
  AffineExpr operator-() const { return *this * -1; }
  AffineExpr operator*(int64_t k) const;
  friend bool operator==(const AffineExpr& a, const AffineExpr& b) {
    return a.constant_ == b.constant_ && a.terms_ == b.terms_;
  }

  // Replace every Grid var k by subst[k] (view composition).
  AffineExpr substitute_grid(const std::vector<AffineExpr>& subst) const;
  // Renumber Grid vars: k -> k + offset (numpy right-aligned broadcasting).
  AffineExpr shift_grid(int offset) const;
  // Drop Grid vars whose coordinate is broadcast (size 1) in `shape`.
  AffineExpr drop_broadcast_grid(const std::vector<int64_t>& shape) const;

  // Value for a binding of every variable.
  int64_t eval(const std::function<int64_t(Var)>& value_of) const;

  // "3*i0 + 128*L0 + 5" with Grid vars i<k>, loops by `loop_name`, pids pid<k>.
  std::string str(const std::function<std::string(Var)>& var_name = {}) const;

 private:
  void add_term(Var v, int64_t coeff);
  int64_t constant_ = 0;
  std::vector<Term> terms_;
};

std::string default_var_name(Var v);

}  // namespace nkic::ir
