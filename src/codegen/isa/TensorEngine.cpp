// The Tensor Engine's instructions (the instruction table's `pe` rows): nc_matmul in its
// forms (free dims flattened, the fp8 double row, nl.matmul's transposed stationary) and the
// Tensor-Engine transpose; nc_transpose on the Vector Engine is vector_transpose's.
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"
#include "types/IndexAlgebra.h"

namespace nkic::codegen {

using ir::Memory;

namespace {

void check_matmul(KernelBuilder& b, int64_t k_s, int64_t m, int64_t k_m, int64_t n, const std::string& s_name,
                  const std::string& m_name) {
  const sema::Target& t = b.target();
  if (k_s != k_m)
    b.fail(sema::err_param_shape_incompatible_with_matmul("Number of partitions mismatch", s_name, m_name, b.api()));
  sema::assert_par_dim(k_s, Memory::SBUF, t, b.raiser());
  if (m > t.gemm_stationary_fmax)
    b.fail(sema::err_size_of_dimension_exceed_arch_limit(1, s_name, b.api(), t.gemm_stationary_fmax));
  // The legacy surface keeps its tile size (seed 004); a current dst may be bf16 on v4 and take
  // the widest moving tile (an fp32 dst wider than 4096 does not fit the PSUM: err_stack_overflow_psum).
  const int64_t limit = b.current_api ? t.matmul_moving_fmax_bf16 : t.gemm_moving_fmax;
  if (n > limit) b.fail(sema::err_size_of_dimension_exceed_arch_limit(1, m_name, b.api(), limit));
}

using ir::AffineExpr;
// moving [K, N] on the [K, M, N] space: its grid (0, 1) -> (0, 2).
const std::vector<AffineExpr> kMovingGrid = {AffineExpr::grid(0), AffineExpr::grid(2)};

// The [M, N] PSUM result of a matmul: a fresh fp32 tile (the current API names its dst's
// dtype: a bf16 dst on NeuronCore-v4 takes twice the fp32 columns per bank), or the dst view.
TensorVal matmul_result(KernelBuilder& b, const Dst& to, std::vector<int64_t> shape, const OpArgs& args) {
  return to.resolve(b, "matmul", std::move(shape), args.dtype.value_or(ir::DType::float32), Memory::PSUM);
}

// `s_grid` / `m_grid` map the operand views' grids onto [K, M, N] (x.T for nl.matmul swaps
// stationary's); the product writes `dst` ([M, N]), accumulating into it with `accumulate`.
void emit_matmul(KernelBuilder& b, const TensorVal& dst, bool accumulate, const TensorVal& s,
                 const std::vector<AffineExpr>& s_grid, int64_t k, int64_t m, const TensorVal& mv,
                 const std::vector<AffineExpr>& m_grid, int64_t n, const OpArgs& args, bool transpose = false) {
  // The two e4m3 formats differ in their top exponent: one product cannot take both (NKI 0.4+).
  const ir::DType sd = b.tensor(s.tensor).dtype, md = b.tensor(mv.tensor).dtype;
  if ((sd == ir::DType::float8_e4m3 && md == ir::DType::float8_e4m3fn) ||
      (sd == ir::DType::float8_e4m3fn && md == ir::DType::float8_e4m3))
    b.fail(sema::err_supported_operand_dtype("the stationary (" + std::string(ir::name(sd)) + ") and moving (" +
                                             std::string(ir::name(md)) + ") operands of '" + std::string(b.api()) +
                                             "' mix the legacy float8_e4m3 with the OCP float8_e4m3fn"));
  // The reference's "fp32/tf32 only with fp32/tf32" is not enforced: the kernel library multiplies
  // a bf16 ones vector by fp32 gamma (rmsnorm_quant), a kernel that builds and runs.
  auto in = make_instruction(ir::Opcode::Matmul, {k, m, n});
  in->accumulate = accumulate;
  in->transpose = transpose;
  in->dst = access_for(b, dst, dst.shape);  // the dst view's grid (0, 1) is (1, 2) of [K, M, N]
  for (ir::AffineExpr& e : in->dst.index) e = e.substitute_grid({AffineExpr::grid(1), AffineExpr::grid(2)});
  ir::Access sa = access_for(b, s, s.shape);
  for (ir::AffineExpr& e : sa.index) e = e.substitute_grid(s_grid);
  in->srcs.push_back(std::move(sa));
  ir::Access ma = access_for(b, mv, mv.shape);
  for (ir::AffineExpr& e : ma.index) e = e.substitute_grid(m_grid);
  in->srcs.push_back(std::move(ma));
  // mask= names the result's [M, N] grid, which is (1, 2) of the [K, M, N] space.
  in->predicate = predicate_for(b, args, 2);
  for (ir::Constraint& c : in->predicate) c.expr = c.expr.substitute_grid({AffineExpr::grid(1), AffineExpr::grid(2)});
  // Operand masks restrict K and M (stationary) or K and N (moving) of the [K, M, N] space.
  auto add_operand_mask = [&](const TensorVal& v, const std::vector<ir::AffineExpr>& to_iter) {
    for (const types::Atom& a : v.operand_mask)
      in->predicate.push_back({a.expr.substitute_grid(to_iter), a.rel == types::Atom::Eq ? ir::CmpKind::Eq : ir::CmpKind::Ge});
  };
  add_operand_mask(s, s_grid);
  add_operand_mask(mv, m_grid);
  b.emit(std::move(in));
}

// The [P, F] view of `v` ([P, d1, ..., F]) at `outer` (a position of d1, ...).
TensorVal free_row(const TensorVal& v, const std::vector<int64_t>& outer) {
  std::vector<AffineExpr> subst = {AffineExpr::grid(0)};
  for (int64_t i : outer) subst.push_back(AffineExpr(i));
  subst.push_back(AffineExpr::grid(1));
  TensorVal r = v;
  r.shape = {v.shape.front(), v.shape.back()};
  for (AffineExpr& e : r.index) e = e.substitute_grid(subst);
  for (types::Atom& a : r.operand_mask) a.expr = a.expr.substitute_grid(subst);
  return r;
}

// A moving operand with several free dims ([K, d1, ..., N]) streams them
// flattened (public conv kernels rely on it): the result is [M, d1, ..., N], one
// matmul per row of the outer free dims.
TensorVal nc_matmul_free_dims(KernelBuilder& b, const Dst& to, const TensorVal& stationary, const TensorVal& moving,
                              const OpArgs& args, bool is_transpose) {
  int64_t k = stationary.shape[0], m = stationary.shape[1], n = 1;
  for (size_t d = 1; d < moving.shape.size(); ++d) n *= moving.shape[d];
  check_matmul(b, k, m, moving.shape[0], n, describe(b, stationary), describe(b, moving));
  if (args.mask || !moving.indirect.empty())
    b.fail(sema::err_param_shape_incompatible_with_matmul(
        "a moving operand with several free dims takes no mask= and no indirect index", describe(b, stationary),
        describe(b, moving), b.api()));
  std::vector<int64_t> shape = moving.shape;
  shape[0] = m;
  TensorVal dst = matmul_result(b, to, shape, args);
  std::vector<int64_t> outer(moving.shape.size() - 2, 0);
  for (bool more = true; more;) {
    emit_matmul(b, free_row(dst, outer), false, stationary, {AffineExpr::grid(0), AffineExpr::grid(1)}, k, m,
                free_row(moving, outer), kMovingGrid, moving.shape.back(), args, is_transpose);
    more = false;  // the next position of the outer dims, last dim fastest
    for (size_t d = outer.size(); d-- > 0 && !more;) {
      more = ++outer[d] < moving.shape[d + 1];
      if (!more) outer[d] = 0;
    }
  }
  return dst;
}

}  // namespace

TensorVal nc_matmul(KernelBuilder& b, const Dst& to, const TensorVal& stationary, const TensorVal& moving,
                    const OpArgs& args, bool is_transpose) {
  b.check_operand("stationary", stationary);
  b.check_operand("moving", moving);
  if (moving.shape.size() > 2) return nc_matmul_free_dims(b, to, stationary, moving, args, is_transpose);
  int64_t k = stationary.shape[0], m = stationary.shape[1], n = moving.shape[1];
  check_matmul(b, k, m, moving.shape[0], n, describe(b, stationary), describe(b, moving));
  // stationary [K, M] on the [K, M, N] space reads grid (0, 1) as it is.
  TensorVal dst = matmul_result(b, to, {m, n}, args);
  emit_matmul(b, dst, false, stationary, {AffineExpr::grid(0), AffineExpr::grid(1)}, k, m, moving, kMovingGrid, n, args,
              is_transpose);
  return dst;
}

void check_pe_tile(KernelBuilder& b, const TensorVal& stationary, const PeTile& tile, bool double_row) {
  if (tile.position.empty() && tile.size.empty()) return;
  auto fail = [&](const std::string& why) { b.fail(sema::err_unsupported_args(b.api(), why)); };
  if (tile.position.empty() || tile.size.empty())
    fail("tile_position and tile_size are set together (tiling mode), or neither (the whole 128x128 PE array)");
  if (tile.position.size() != 2 || tile.size.size() != 2)
    fail("tile_position is (start_row, start_column) and tile_size (row_size, column_size): two values each");
  const std::string size = "(" + std::to_string(tile.size[0]) + ", " + std::to_string(tile.size[1]) + ")";
  for (int64_t n : tile.size)
    if (n != 32 && n != 64 && n != 128)
      fail("tile_size " + size + ": a row or column tile is 32, 64 or 128 PEs of the 128x128 array");
  if (tile.size[0] == 32 || tile.size[1] == 32)
    sema::assert_nc_version(b.target(), 3, b.api() + "(tile_size=" + size + ")", b.raiser());
  const int64_t rows = stationary.shape.front(), cols = stationary.shape.back();
  if (rows > tile.size[0] || cols > tile.size[1])
    fail("the stationary tile " + describe(b, stationary) + " (" + std::to_string(rows) + " rows, " + std::to_string(cols) +
         " columns of the PE array) does not fit in tile_size " + size);
  static const char* kAxis[][2] = {{"start_row", "row"}, {"start_column", "column"}};
  for (int d = 0; d < 2; ++d) {
    const ir::AffineExpr& e = tile.position[d];
    if (!e.is_constant()) {
      // A loop expression: its values over the loops (their grid alignment is known per iteration only).
      std::optional<std::pair<int64_t, int64_t>> span;
      if (e.is_affine()) span = std::pair{e.constant(), e.constant()};
      for (const ir::Term& t : e.terms()) {
        const auto r = b.var_range(t.var);
        if (!r) span.reset();
        if (!span) break;
        span->first += std::min(t.coeff * r->first, t.coeff * r->second);
        span->second += std::max(t.coeff * r->first, t.coeff * r->second);
      }
      if (span && (span->first < 0 || span->second + tile.size[d] > 128))
        fail(std::string("tile_position ") + kAxis[d][0] + " takes " + std::to_string(span->first) + " to " +
             std::to_string(span->second) + " over its loops; a " + kAxis[d][1] + " tile of size " +
             std::to_string(tile.size[d]) + " starts within 0 to " + std::to_string(128 - tile.size[d]));
      continue;
    }
    const int64_t at = e.constant();
    if (at >= 0 && at % tile.size[d] == 0 && at + tile.size[d] <= 128) continue;
    std::string starts;
    for (int64_t s = 0; s + tile.size[d] <= 128; s += tile.size[d]) starts += (s ? ", " : "") + std::to_string(s);
    fail(std::string("tile_position ") + kAxis[d][0] + " " + std::to_string(at) + " is not one of " + starts +
         " (the " + kAxis[d][1] + " tiles of size " + std::to_string(tile.size[d]) + " in the 128x128 PE array)");
  }
  if (double_row && tile.size[1] < 128)
    fail("perf_mode double_row cannot be combined with column tiling (tile_size " + size + ")");
}

void place_on_pe_tile(KernelBuilder& b, size_t mark, const PeTile& tile) {
  if (tile.size.empty()) return;
  ir::Block& block = b.insertion_block();
  for (size_t i = mark; i < block.size(); ++i) {
    if (block[i]->kind != ir::StmtKind::Instruction) continue;
    auto& in = static_cast<ir::Instruction&>(*block[i]);
    if (in.opcode != ir::Opcode::Matmul && in.opcode != ir::Opcode::MatmulMx) continue;
    in.tile_row = tile.position[0], in.tile_col = tile.position[1];
    in.tile_rows = static_cast<int16_t>(tile.size[0]), in.tile_cols = static_cast<int16_t>(tile.size[1]);
  }
}

TensorVal nisa_nc_matmul(KernelBuilder& b, const Dst& dst, const TensorVal& stationary, const TensorVal& moving,
                         const OpArgs& args, bool double_row, bool is_transpose, const PeTile& tile,
                         std::optional<bool> accumulate) {
  check_pe_tile(b, stationary, tile, double_row);
  const size_t mark = b.insertion_size();
  auto place = [&] { place_on_pe_tile(b, mark, tile); };
  if (!dst.given()) {
    TensorVal out = double_row ? nc_matmul_double_row(b, dst, stationary, moving, args)
                               : nc_matmul(b, dst, stationary, moving, args, is_transpose);
    place();
    return out;
  }
  const MatmulInto into(b, dst.view());
  TensorVal out = double_row ? nc_matmul_double_row(b, dst, stationary, moving, args)
                             : nc_matmul(b, dst, stationary, moving, args, is_transpose);
  place();
  into.end(b, dst.view(), accumulate);
  return out;
}

TensorVal nc_matmul_double_row(KernelBuilder& b, const Dst& to, const TensorVal& stationary, const TensorVal& moving,
                               const OpArgs& args) {
  sema::assert_nc_version(b.target(), 3, "nisa.nc_matmul(perf_mode='double_row_gen3')", b.raiser());
  static const std::vector<ir::DType> kFp8 = {ir::DType::float8_e4m3, ir::DType::float8_e5m2, ir::DType::float8_e4m3fn};
  for (const auto& [name, v] : {std::pair{"stationary", &stationary}, std::pair{"moving", &moving}}) {
    const ir::TensorDecl& t = b.tensor(v->tensor);
    if (t.memory != Memory::SBUF) b.fail(sema::err_unsupported_memory(name, b.api(), "sbuf", ir::name(t.memory)));
    if (std::find(kFp8.begin(), kFp8.end(), t.dtype) == kFp8.end())
      b.fail(sema::err_supported_operand_dtype("operand '" + std::string(name) + "' of double_row_gen3 'nisa.nc_matmul' has dtype '" +
                                               std::string(ir::name(t.dtype)) + "'; expected one of {float8_e4m3, float8_e5m2, float8_e4m3fn}"));
    if (v->shape.size() != 3 || v->shape[1] != 2)
      b.fail(sema::err_param_shape_incompatible_with_matmul("double_row_gen3 operands are [K, 2, F]", describe(b, stationary),
                                                             describe(b, moving), b.api()));
  }
  int64_t k = stationary.shape[0], m = stationary.shape[2], n = moving.shape[2];
  check_matmul(b, k, m, moving.shape[0], n, describe(b, stationary), describe(b, moving));
  // The contraction runs over the partitions and the pair dim: one product per pair row, accumulated.
  TensorVal dst = matmul_result(b, to, {m, n}, args);
  for (int64_t row = 0; row < 2; ++row) {
    std::vector<AffineExpr> s_grid = {AffineExpr::grid(0), AffineExpr(row), AffineExpr::grid(1)};
    std::vector<AffineExpr> m_grid = {AffineExpr::grid(0), AffineExpr(row), AffineExpr::grid(2)};
    emit_matmul(b, dst, row > 0, stationary, s_grid, k, m, moving, m_grid, n, args);
  }
  return dst;
}

TensorVal matmul(KernelBuilder& b, const TensorVal& x, const TensorVal& y, bool transpose_x, const OpArgs& args) {
  b.check_operand("x", x);
  b.check_operand("y", y);
  if (transpose_x) return nc_matmul(b, Dst::fresh(), x, y, args);
  // Without transpose_x the hardware transposes x on the Tensor Engine into a
  // hidden temporary, which a direct-allocation kernel has no place for.
  if (b.direct_allocation) b.fail(sema::err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel(b.api()));
  // x [M, K] @ y [K, N]: the stationary operand is x.T, read as x[i1, i0].
  int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  check_matmul(b, k, m, y.shape[0], n, describe(b, x), describe(b, y));
  TensorVal dst = matmul_result(b, Dst::fresh(), {m, n}, args);
  emit_matmul(b, dst, false, x, {AffineExpr::grid(1), AffineExpr::grid(0)}, k, m, y, kMovingGrid, n, args);
  return dst;
}

TensorVal transpose(KernelBuilder& b, const Dst& to, const TensorVal& x, const OpArgs& args) {
  b.check_operand("x", x);
  if (b.direct_allocation) b.fail(sema::err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel(b.api()));
  int64_t p = x.shape[0], f = x.shape[1];
  if (f > b.target().statebuf_num_partitions)
    b.fail(sema::err_size_of_dimension_exceed_arch_limit(1, describe(b, x), b.api(), b.target().statebuf_num_partitions));
  TensorVal dst = to.resolve(b, "transpose", {f, p}, args.dtype.value_or(b.tensor(x.tensor).dtype), Memory::SBUF);
  auto in = make_instruction(ir::Opcode::Transpose, {p, f});
  in->dst = write_access(b, dst, {ir::AffineExpr::grid(1), ir::AffineExpr::grid(0)});
  in->srcs.push_back(access_for(b, x, x.shape));
  in->predicate = predicate_for(b, args, 2);
  b.emit(std::move(in));
  return dst;
}

TensorVal nc_transpose(KernelBuilder& b, const Dst& dst, const TensorVal& data, ir::Engine engine, const OpArgs& args) {
  const TensorVal flat = rows_of(b, data);
  return engine == ir::Engine::dve ? vector_transpose(b, dst, flat, args) : transpose(b, dst, flat, args);
}

}  // namespace nkic::codegen
