// Matmul over the iteration space [K, M, N]: dst(m, n) = sum over k of
// stationary(k, m) * moving(k, n), in fp32 like the PE array: each product
// rounds to fp32 and the sum adds them in increasing k, starting from +0. The
// dst (PSUM) takes the sum, or adds it under `accumulate`, rounding once.
//
// The operands are decoded once into panels (MR columns of stationary, NR of
// moving, each panel contiguous over k) and a register-blocked kernel computes
// one MR x NR block of the product per pass over k. Under multi-var masks the
// product is summed point by point instead, skipping masked-out points.
//
// When every product is exact in fp32 (operands of at most 12 significant
// bits, bf16/fp16/fp8 values, in a range where no product overflows or leaves
// the normal range), a fused multiply-add rounds exactly as a product followed
// by an add: such blocks run on an FMA kernel when the CPU has one. On a CPU
// with AVX-512 the panels are wider, for its 16-lane kernels (the same products
// and the same order of sums).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "sim/AluEval.h"
#include "sim/Convert.h"
#include "sim/InstPlan.h"
#include "sim/SimdLevel.h"
#include "sim/TileExec.h"
#include "sim/VectorClones.h"

namespace nkic::sim {

namespace {

constexpr int64_t kMR = 6;   // stationary columns (dst rows) per block
constexpr int64_t kNR = 16;  // moving columns (dst columns) per block

int64_t round_up(int64_t v, int64_t r) { return (v + r - 1) / r * r; }

// fp32 vectors of 8 lanes (one AVX register, or two SSE ones in the baseline
// build) and of 16 (one AVX-512 register).
typedef float f32x8 __attribute__((vector_size(32)));
typedef float f32x16 __attribute__((vector_size(64)));

// The AVX-512 FMA kernel's panels: 8 x 32 blocks, 16 sums of 16 lanes in registers.
constexpr int64_t kWideMR = 8, kWideNR = 32;

// c[Mp x Np] = products of the panels (MR stationary, NR moving columns each):
// the block's MR x NR sums stay in registers over the whole k loop. Inlined into
// each kernel below, built for its target: on a target with FMA the compiler
// fuses each product into its add, which only exact products allow, unless
// kRoundEach keeps every product rounded.
template <class V, int64_t MR, int64_t NR, bool kRoundEach>
__attribute__((always_inline)) inline void gemm_blocks(const float* sp, const float* vp, float* c, int64_t K,
                                                      int64_t mpanels, int64_t npanels) {
  typedef V VU __attribute__((aligned(4), may_alias));
  constexpr int64_t lanes = sizeof(V) / sizeof(float), vecs = NR / lanes;
  const int64_t ldc = npanels * NR;
  for (int64_t nb = 0; nb < npanels; ++nb) {
    for (int64_t mb = 0; mb < mpanels; ++mb) {
      const float* s = sp + mb * K * MR;
      const float* v = vp + nb * K * NR;
      V acc[MR][vecs] = {};
      for (int64_t k = 0; k < K; ++k, s += MR, v += NR) {
        V row[vecs];
        for (int64_t j = 0; j < vecs; ++j) row[j] = *reinterpret_cast<const VU*>(v + lanes * j);
        for (int64_t i = 0; i < MR; ++i) {
          const V si = s[i] - V{};  // a broadcast: x - +0 is x (V{} + x is not, for x = -0)
          for (int64_t j = 0; j < vecs; ++j) {
            V prod = si * row[j];
            // The empty asm keeps the compiler from fusing the product into the add.
            if constexpr (kRoundEach) asm("" : "+v"(prod));
            acc[i][j] += prod;
          }
        }
      }
      float* out = c + mb * MR * ldc + nb * NR;
      for (int64_t i = 0; i < MR; ++i)
        for (int64_t j = 0; j < vecs; ++j) *reinterpret_cast<VU*>(out + i * ldc + lanes * j) = acc[i][j];
    }
  }
}

// Any operands, on the narrow panels; the AVX2 build only widens the vectors
// (neither target has FMA).
NKIC_VECTOR_BODY void gemm_panels_body(const float* sp, const float* vp, float* c, int64_t K, int64_t mpanels,
                                         int64_t npanels) {
  gemm_blocks<f32x8, kMR, kNR, false>(sp, vp, c, K, mpanels, npanels);
}
NKIC_VECTOR_BUILDS(gemm_panels_body, void, gemm_panels,
                   (const float* sp, const float* vp, float* c, int64_t K, int64_t mpanels, int64_t npanels),
                   (sp, vp, c, K, mpanels, npanels))

// Exact products only, on the narrow panels.
__attribute__((target("avx2,fma"))) void gemm_panels_fma(const float* sp, const float* vp, float* c,
                                                          int64_t K, int64_t mpanels, int64_t npanels) {
  gemm_blocks<f32x8, kMR, kNR, false>(sp, vp, c, K, mpanels, npanels);
}

// Any operands, on the wide panels.
__attribute__((target("avx512f"))) void gemm_wide(const float* sp, const float* vp, float* c, int64_t K,
                                                   int64_t mpanels, int64_t npanels) {
  gemm_blocks<f32x16, kWideMR, kWideNR, true>(sp, vp, c, K, mpanels, npanels);
}

// Exact products only, on the wide panels.
__attribute__((target("avx512f"))) void gemm_wide_fma(const float* sp, const float* vp, float* c, int64_t K,
                                                       int64_t mpanels, int64_t npanels) {
  gemm_blocks<f32x16, kWideMR, kWideNR, false>(sp, vp, c, K, mpanels, npanels);
}

// Over x's finite nonzero values: the least and greatest magnitude (as bits,
// which order positive floats), and whether any is subnormal or has more than
// 12 significant bits. Branch-free, so it vectorises.
struct Span {
  uint32_t lo = 0xFFFFFFFF, hi = 0;
  bool long_or_subnormal = false;
};
NKIC_VECTOR_BODY Span span_of_body(const float* x, int64_t n) {
  uint32_t lo = 0xFFFFFFFF, hi = 0, bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, x + i, 4);
    const uint32_t mag = b & 0x7FFFFFFF;
    // All ones for a finite nonzero value (inf, NaN and zeros multiply exactly).
    const uint32_t counted = 0u - static_cast<uint32_t>(mag - 1u < 0x7F7FFFFFu);
    bad |= counted & ((0u - static_cast<uint32_t>(mag < 0x00800000u)) | (b & 0xFFFu));
    lo = std::min(lo, mag | ~counted);
    hi = std::max(hi, mag & counted);
  }
  return {lo, hi, bad != 0};
}
NKIC_VECTOR_BUILDS(span_of_body, Span, span_of, (const float* x, int64_t n), (x, n))

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Every product of an s value and a v value is exact in fp32: 12 + 12
// significant bits, and the magnitudes stay normal and finite.
bool exact_products(const std::vector<float>& s, const std::vector<float>& v) {
  const Span a = span_of(s.data(), static_cast<int64_t>(s.size()));
  if (a.long_or_subnormal) return false;
  const Span b = span_of(v.data(), static_cast<int64_t>(v.size()));
  if (b.long_or_subnormal) return false;
  if (a.hi == 0 || b.hi == 0) return true;
  return double(from_bits(a.hi)) * from_bits(b.hi) < 0x1p127 &&
         double(from_bits(a.lo)) * from_bits(b.lo) >= 0x1p-126;
}

// Copies row[0, len) to one panel every `P` values, `stride` apart; a fixed
// width compiles to a few vector moves where a call to memcpy would dominate.
template <int64_t P>
void split_row(const float* row, int64_t len, float* out, int64_t stride) {
  for (int64_t c = 0; c < len; c += P, out += stride)
    for (int64_t j = 0; j < P; ++j) out[j] = row[c + j];
}

void split_row(const float* row, int64_t len, int64_t panel, float* out, int64_t stride) {
  switch (panel) {
    case kMR: return split_row<kMR>(row, len, out, stride);
    case kNR: return split_row<kNR>(row, len, out, stride);
    case kWideMR: return split_row<kWideMR>(row, len, out, stride);
    default: return split_row<kWideNR>(row, len, out, stride);
  }
}

}  // namespace

// Decodes access `e` over the box's k range and its `coord` range into panels of
// `panel` columns: element (k, i) at [(i / panel) * K + k] * panel + i % panel,
// zero-padded to whole panels. Each row of k decodes in one pass, then splits.
void TileExecutor::pack_operand(const InstPlan& p, int e, int coord, int64_t panel,
                                std::vector<float>& out) {
  const InstPlan::Access& a = p.accesses[e];
  const int64_t K = hi_[0] - lo_[0], count = hi_[coord] - lo_[coord];
  const int64_t gk = a.flat.grid[0], gi = a.flat.grid[coord];
  const int64_t padded = round_up(count, panel);
  out.resize(K * padded);
  float* row = fbuf_[0].data();
  const int64_t step = kChunk / panel * panel;  // whole panels per decoded piece
  // A contiguous fp32 row needs no decoding: its whole panels split straight from memory.
  const bool direct = a.dtype == ir::DType::float32 && gi == 1;
  for (int64_t k = 0; k < K; ++k) {
    const int64_t off = bases_[e] + gk * (lo_[0] + k) + gi * lo_[coord];
    for (int64_t c0 = 0; c0 < padded; c0 += step) {
      const int64_t len = std::min(step, padded - c0), live = std::clamp<int64_t>(count - c0, 0, len);
      const float* src = row;
      if (direct && live == len) {
        src = reinterpret_cast<const float*>(data_[e]) + off + c0;
      } else {
        gather_float(a.dtype, data_[e], off + gi * c0, gi, live, row);
        std::fill(row + live, row + len, 0.0f);
      }
      split_row(src, len, panel, out.data() + ((c0 / panel) * K + k) * panel, K * panel);
    }
  }
}

void TileExecutor::run_matmul(const InstPlan& p) {
  bind_direct(p);
  const int64_t K = hi_[0] - lo_[0], M = hi_[1] - lo_[1], N = hi_[2] - lo_[2];
  // Masked products are summed point by point, over the narrow panels.
  const bool wide = multi_.empty() && simd_level() == SimdLevel::avx512;
  const int64_t mr = wide ? kWideMR : kMR, nr = wide ? kWideNR : kNR;
  const int64_t Mp = round_up(M, mr), Np = round_up(N, nr);
  pack_operand(p, 1, 1, mr, mm_s_);
  pack_operand(p, 2, 2, nr, mm_v_);
  mm_c_.resize(Mp * Np);
  if (!multi_.empty()) return masked_product(p, Np);
  const bool fused = simd_level() >= SimdLevel::avx2 && exact_products(mm_s_, mm_v_);
  const auto kernel = wide ? (fused ? gemm_wide_fma : gemm_wide) : (fused ? gemm_panels_fma : gemm_panels);
  kernel(mm_s_.data(), mm_v_.data(), mm_c_.data(), K, Mp / mr, Np / nr);
  for (int64_t m = 0; m < M; ++m) store_matmul_row(p, m, 0, N, mm_c_.data() + m * Np);
}

// Walks the executed points in row-major order over (k, m, n), so each (m, n)
// still sums its products in increasing k; stores the (m, n) that got any.
void TileExecutor::masked_product(const InstPlan& p, int64_t ldc) {
  const int64_t K = hi_[0] - lo_[0], M = hi_[1] - lo_[1], N = hi_[2] - lo_[2];
  std::fill(mm_c_.begin(), mm_c_.end(), 0.0f);
  mm_hit_.assign(mm_c_.size(), 0);
  coord_space_.reset(lo_, hi_);
  static const int64_t unit[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (const auto& u : unit) coord_space_.add_form(0, u);
  for (const MultiCond& c : multi_)
    coord_space_.add_cond(c.base, p.constraints[c.index].grid.data(), c.kind);
  coord_space_.finish();
  const int64_t sk = coord_space_.row_step(0), sm = coord_space_.row_step(1),
                sn = coord_space_.row_step(2);
  const float* s = mm_s_.data();
  const float* v = mm_v_.data();
  coord_space_.for_each_row([&](const int64_t* start, int64_t a, int64_t b) {
    for (int64_t j = a; j < b; ++j) {
      const int64_t k = start[0] + j * sk - lo_[0], m = start[1] + j * sm - lo_[1],
                    n = start[2] + j * sn - lo_[2];
      const float sv = s[((m / kMR) * K + k) * kMR + m % kMR];
      const float vv = v[((n / kNR) * K + k) * kNR + n % kNR];
      mm_c_[m * ldc + n] += sv * vv;
      mm_hit_[m * ldc + n] = 1;
    }
  });
  for (int64_t m = 0; m < M; ++m) {
    const uint8_t* hit = mm_hit_.data() + m * ldc;
    for (int64_t n = 0; n < N;) {
      if (!hit[n]) {
        ++n;
        continue;
      }
      int64_t end = n;
      while (end < N && hit[end]) ++end;
      store_matmul_row(p, m, n, end - n, mm_c_.data() + m * ldc + n);
      n = end;
    }
  }
}

// Stores c[0..count) at dst (box row m, box columns n..), adding it to the
// dst's values under `accumulate`.
void TileExecutor::store_matmul_row(const InstPlan& p, int64_t m, int64_t n, int64_t count,
                                    float* c) {
  const InstPlan::Access& d = p.accesses[0];
  const int64_t gm = d.flat.grid[1], gn = d.flat.grid[2];
  const int64_t off = bases_[0] + gm * (lo_[1] + m) + gn * (lo_[2] + n);
  // An fp32 row of PSUM adds in place: no staging copy.
  if (d.dtype == ir::DType::float32 && gn == 1) {
    float* dst = reinterpret_cast<float*>(data_[0]) + off;
    if (p.accumulate)
      accumulate(c, dst, count);
    else
      std::memcpy(dst, c, count * sizeof(float));
    return;
  }
  for (int64_t j = 0; j < count; j += kChunk) {
    const int64_t len = std::min(kChunk, count - j);
    if (p.accumulate) {
      gather_float(d.dtype, data_[0], off + j * gn, gn, len, fbuf_[3].data());
      accumulate(fbuf_[3].data(), c + j, len);
    }
    scatter_float(d.dtype, data_[0], off + j * gn, gn, len, c + j);
  }
}

}  // namespace nkic::sim
