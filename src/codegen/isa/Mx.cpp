// The microscaling (mx) ops of NeuronCore-v4: nisa.quantize_mx and
// nisa.nc_matmul_mx, with seed 004's mx packing rules
// (check_matmul_mx_low_level_shape and its element-count companions).
#include "codegen/Ops.h"
#include "sema/Asserts.h"
#include "sema/ErrorCatalog.h"

namespace nkic::codegen {

namespace {

constexpr int64_t kQuadrant = 32; // SBUF partitions per quadrant
constexpr int64_t kBlockRows = 8; // an mx block: 8 partitions x 4 values of one packed column
constexpr int64_t kLanes = 4;

using ir::AffineExpr;

// Over the [Q, 4, 8, 4, ...] spaces of the mx opcodes (ir/IR.h): the data
// partition of a point, and the row of its block's scale.
AffineExpr data_row() { return AffineExpr::grid(0) * kQuadrant + AffineExpr::grid(1) * kBlockRows + AffineExpr::grid(2); }
AffineExpr scale_row() { return AffineExpr::grid(0) * kQuadrant + AffineExpr::grid(1); }

// The view `v` read at partition p and flat free position f of the mx space. A
// quantize_mx operand may keep several free dims ([P, a, b, 4] in the kernel
// library); they are read flattened, the last fastest.
ir::Access mx_access(const KernelBuilder& b, const TensorVal& v, AffineExpr p, AffineExpr f) {
  std::vector<AffineExpr> grid = {p};
  int64_t inner = free_elements(v);
  for (size_t d = 1; d < v.shape.size(); ++d) {
    inner /= v.shape[d];
    const AffineExpr outer = inner == 1 ? f : AffineExpr::floordiv(f, inner);
    grid.push_back(d == 1 ? outer : AffineExpr::mod(outer, v.shape[d]));
  }
  ir::Access a = access_for(b, v, v.shape);
  for (AffineExpr& e : a.index) e = e.substitute_grid(grid);
  return a;
}

// A scale tile holds the scales of quadrant q in its rows 32q .. 32q+3: it must
// reach the last quadrant's rows and have one column per packed column.
void check_scale_tile(KernelBuilder& b, const char* name, const TensorVal& scale, int64_t partitions, int64_t columns) {
  const int64_t rows = (partitions / kQuadrant - 1) * kQuadrant + kQuadrant / kBlockRows;
  if (scale.shape[0] < rows)
    b.fail(sema::err_invalid_mx_packing(
        std::string(b.api().substr(b.api().find('.') + 1)) + " " + name +
            " must hold the scales of every 32-partition quadrant.",
        describe(b, scale) + " has " + std::to_string(scale.shape[0]) + " partitions; " + std::to_string(partitions) +
            " data partitions put scales in its rows 32*q .. 32*q+3, up to row " + std::to_string(rows - 1)));
  sema::assert_exact_elements(free_elements(scale), columns, name, b.api(), b.raiser());
}

}  // namespace

void quantize_mx(KernelBuilder& b, const TensorVal& dst, const TensorVal& src, const TensorVal& dst_scale) {
  b.check_operand("src", src);
  b.check_operand("dst", dst);
  b.check_operand("dst_scale", dst_scale);
  const int64_t p = src.shape[0], f = free_elements(src);
  sema::assert_par_dim(p, ir::Memory::SBUF, b.target(), b.raiser());
  if (p % kQuadrant != 0)
    b.fail(sema::err_invalid_mx_packing("quantize_mx src must access a multiple of 32 partitions.",
                                        describe(b, src) + " accesses " + std::to_string(p)));
  if (f % kLanes != 0)
    b.fail(sema::err_invalid_mx_packing("quantize_mx src must have the last free dimension size to be multiple of 4.",
                                        describe(b, src) + " has " + std::to_string(f)));
  if (dst.shape[0] != p) b.fail(sema::err_num_partition_mismatch(describe(b, dst), describe(b, src), b.api()));
  sema::assert_exact_elements(free_elements(dst), f / kLanes, "dst", b.api(), b.raiser());
  check_scale_tile(b, "dst_scale", dst_scale, p, f / kLanes);

  const std::vector<int64_t> space = {p / kQuadrant, kQuadrant / kBlockRows, kBlockRows, kLanes, f / kLanes};
  const AffineExpr src_col = AffineExpr::grid(4) * kLanes + AffineExpr::grid(3);
  auto scale = make_instruction(ir::Opcode::MxScale, space);
  scale->dst = mx_access(b, dst_scale, scale_row(), AffineExpr::grid(4));
  scale->srcs.push_back(mx_access(b, src, data_row(), src_col));
  // Twice the OCP sample scale (one more in the exponent, so the largest value rounds without
  // saturating) from NKI 0.5; the OCP sample algorithm before (NKI_CURRENT_API.md, quantize_mx).
  const bool twice_ocp = !b.current_api || b.nki_version.at_least(0, 5);
  scale->imms = {static_cast<double>(ir::lane_max_exponent(b.tensor(dst.tensor).dtype)), twice_ocp ? 1.0 : 0.0};
  b.emit(std::move(scale));
  auto q = make_instruction(ir::Opcode::MxQuantize, space);
  q->dst = mx_access(b, dst, data_row(), AffineExpr::grid(4));
  q->srcs.push_back(mx_access(b, src, data_row(), src_col));
  q->srcs.push_back(mx_access(b, dst_scale, scale_row(), AffineExpr::grid(4)));
  b.emit(std::move(q));
}

void nc_matmul_mx(KernelBuilder& b, const TensorVal& dst, const TensorVal& stationary_view,
                  const TensorVal& moving_view, const TensorVal& stationary_scale_view,
                  const TensorVal& moving_scale_view,
                  std::optional<bool> accumulate, const PeTile& tile) {
  // An operand's free size is its elements per partition: a sliced view may keep unit or
  // several free dims ([128, 1, 128] in the kernel library), read flattened.
  const TensorVal stationary = rows_of(b, stationary_view), moving = rows_of(b, moving_view);
  const TensorVal stationary_scale = rows_of(b, stationary_scale_view), moving_scale = rows_of(b, moving_scale_view);
  b.check_operand("dst", dst);
  b.check_operand("stationary", stationary);
  b.check_operand("moving", moving);
  b.check_operand("stationary_scale", stationary_scale);
  b.check_operand("moving_scale", moving_scale);
  const int64_t k = stationary.shape[0], m = stationary.shape[1], n = moving.shape[1];
  for (const TensorVal* v : {&stationary, &moving})
    if (v->shape[0] != 32 && v->shape[0] != 64 && v->shape[0] != 128)
      b.fail(sema::err_invalid_mx_packing("nc_matmul_mx stationary/moving must access 32/64/128 partitions.",
                                          describe(b, *v) + " accesses " + std::to_string(v->shape[0])));
  if (moving.shape[0] != k)
    b.fail(sema::err_param_shape_incompatible_with_matmul("Number of partitions mismatch", describe(b, stationary),
                                                          describe(b, moving), b.api()));
  if (m % 2 != 0)
    b.fail(sema::err_invalid_mx_packing(
        "nc_matmul_mx stationary must have an even number of packed (x4) elements per partition.",
        describe(b, stationary) + " has " + std::to_string(m)));
  const sema::Target& t = b.target();
  if (m > t.gemm_stationary_fmax)
    b.fail(sema::err_size_of_dimension_exceed_arch_limit(1, describe(b, stationary), b.api(), t.gemm_stationary_fmax));
  const int64_t limit = !b.current_api                                   ? t.gemm_moving_fmax  // seed 004
                        : b.tensor(dst.tensor).dtype == ir::DType::bfloat16 ? t.matmul_moving_fmax_bf16
                                                                            : t.matmul_moving_fmax_fp32;
  if (n > limit) b.fail(sema::err_size_of_dimension_exceed_arch_limit(1, describe(b, moving), b.api(), limit));
  if (dst.shape[0] != m) b.fail(sema::err_num_partition_mismatch(describe(b, dst), describe(b, stationary), b.api()));
  sema::assert_exact_elements(dst.shape[1], n, "dst", b.api(), b.raiser());
  check_scale_tile(b, "stationary_scale", stationary_scale, k, m);
  check_scale_tile(b, "moving_scale", moving_scale, k, n);
  check_pe_tile(b, stationary, tile, false);
  if (!tile.size.empty() && tile.size[1] < 128)
    b.fail(sema::err_unsupported_args(b.api(), "tile_size (" + std::to_string(tile.size[0]) + ", " +
                                                   std::to_string(tile.size[1]) +
                                                   "): nc_matmul_mx tiles the PE array by rows only (column_size 128)"));

  auto in = make_instruction(ir::Opcode::MatmulMx, {k / kQuadrant, kQuadrant / kBlockRows, kBlockRows, kLanes, m, n});
  in->accumulate = true;
  in->dst = mx_access(b, dst, AffineExpr::grid(4), AffineExpr::grid(5));
  in->srcs.push_back(mx_access(b, stationary, data_row(), AffineExpr::grid(4)));
  in->srcs.push_back(mx_access(b, moving, data_row(), AffineExpr::grid(5)));
  in->srcs.push_back(mx_access(b, stationary_scale, scale_row(), AffineExpr::grid(4)));
  in->srcs.push_back(mx_access(b, moving_scale, scale_row(), AffineExpr::grid(5)));
  const size_t mark = b.insertion_size();
  b.emit(std::move(in));
  place_on_pe_tile(b, mark, tile);
  mark_matmul_accumulation(b, mark, dst, accumulate);
}

}  // namespace nkic::codegen
