// The traced values of an NKI kernel as the type system sees them (seed 001):
// scalars (loop variables, program ids), tile indices (nl.arange grids),
// tensors (views of IR tensors), and the mask/predicate objects comparisons
// build. Plain data; behaviour lives in IndexAlgebra, MaskAlgebra, TypeSystem.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/DType.h"
#include "ir/Expr.h"

namespace nkic::types {

// The allocation region a tensor was created in (kernel, helper, loop or branch
// body). Tensors are usable only while their region is open (seed 000 scopes).
struct Region {
  int id = 0;
  bool open = true;
  // The name of the kernel whose trace made the region; one object per trace, so
  // a tensor kept from another kernel's trace is told apart by the pointer.
  std::shared_ptr<const std::string> kernel;
};

// A Python number / bool / numpy scalar, or an object of no NKI meaning.
struct Other {
  double value = 0;
  bool is_int = false;
  bool is_bool = false;
  // A typed numpy scalar (np.float16(2)) keeps its dtype in promotion (§1.6).
  std::optional<ir::DType> dtype = {};
  bool numeric = true;   // false: an object the type system cannot use
  std::string type_name = {};  // for "Unexpected type" messages
};

// Shape-less (scalar: loop variable, program id) or a broadcastable grid
// (tile index: nl.arange / nl.mgrid derived), with one affine value per point.
// Grid var k of `expr` is coordinate k of `shape` (numpy right-aligned rules).
struct IndexVal {
  std::vector<int64_t> shape;
  ir::AffineExpr expr;
  bool from_arange = false;
  // Set when arithmetic left the affine world (i % 3, i * j): why. The value
  // then cannot index a tensor or form a mask; using it there is the error.
  std::string non_affine;
  bool is_scalar() const { return shape.empty(); }
};

// A view of an IR tensor: `index[d]` gives tensor dimension d as an affine
// function of the view's Grid coordinates (one per entry of `shape`).
// One comparison of an affine value with zero.
struct Atom {
  enum Rel : uint8_t { Ge, Eq, Ne };
  ir::AffineExpr expr;
  Rel rel = Ge;
  friend bool operator==(const Atom& a, const Atom& b) { return a.rel == b.rel && a.expr == b.expr; }
};
using Conjunction = std::vector<Atom>;

struct TensorVal {
  int tensor = -1;
  std::vector<int64_t> shape;
  std::vector<ir::AffineExpr> index;
  std::shared_ptr<const Region> region;
  // An operand mask written on the operand (`lhs[i_f < 64]`, matmul only), over
  // the view's grid (left-aligned like every mask).
  std::vector<Atom> operand_mask;
  // Indirect indexing: tensor dim `dim` adds `step` times the values of the `index` view.
  struct Indirect {
    int dim;
    std::shared_ptr<const TensorVal> index;
    int64_t step = 1;
  };
  std::vector<Indirect> indirect;
};

// Masks (over tile-index grids) and scalar predicates, in disjunctive normal
// form: {} is AlwaysFalse, {{}} is AlwaysTrue. `form` is the seed's class name.
struct MaskVal {
  enum class Form : uint8_t {
    EQTileMask, TileMaskIntersection, TileMaskUnion,
    EQScalarPredicate, ScalarPredicateIntersection, ScalarPredicateUnion,
    AlwaysTrue, AlwaysFalse,
  };
  Form form = Form::AlwaysTrue;
  std::vector<int64_t> shape;  // grid shape (tile masks); empty for predicates
  std::vector<Conjunction> dnf;
  std::string non_affine;      // built from a non-affine index value: why (lowering rejects it)
  bool is_tile() const;
  bool always_true() const { return dnf.size() == 1 && dnf[0].empty(); }
  bool always_false() const { return dnf.empty(); }
};

using Value = std::variant<Other, IndexVal, TensorVal, MaskVal>;

}  // namespace nkic::types
