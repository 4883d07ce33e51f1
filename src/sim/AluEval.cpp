#include "sim/AluEval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/Folds.h"
#include "sim/VecExp.h"
#include "sim/VectorClones.h"

namespace nkic::sim {

using ir::AluOp;

namespace {

// Blocks of 8 with a fixed-count inner loop: GCC vectorises those even at -O2,
// whose cost model refuses loops that would need a scalar epilogue.
constexpr int64_t kBlock = 8;

template <class T, class F>
inline void map1(const T* __restrict a, T* __restrict out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = f(a[i + j]);
  for (; i < n; ++i) out[i] = f(a[i]);
}

template <class T, class F>
inline void map2(const T* a, const T* b, T* __restrict out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = f(a[i + j], b[i + j]);
  for (; i < n; ++i) out[i] = f(a[i], b[i]);
}

[[noreturn]] void unsupported(AluOp op, const char* path) {
  throw std::invalid_argument("AluOp " + std::string(ir::name(op)) + " has no " + path + " form");
}

// ---- fp32 ----

// NaN-propagating, like numpy's maximum/minimum.
inline float max_nan(float a, float b) { return (a != a || a > b) ? a : b; }
inline float min_nan(float a, float b) { return (a != a || a < b) ? a : b; }
inline float truth(bool v) { return v ? 1.0f : 0.0f; }
// sigmoid(x) from e = exp(-x).
inline float logistic(float e) { return 1.0f / (1.0f + e); }

// out[i] = f(a[i], exp(-arg(a[i]))), the exps vectorised (sim/VecExp.h) a block at a time.
template <class Arg, class F>
inline void map_exp_neg(const float* a, float* out, int64_t n, Arg arg, F f) {
  constexpr int64_t kExpBlock = 256;
  float t[kExpBlock], e[kExpBlock];
  for (int64_t i = 0; i < n; i += kExpBlock) {
    const int64_t m = std::min(kExpBlock, n - i);
    for (int64_t j = 0; j < m; ++j) t[j] = -arg(a[i + j]);
    exp_floats(t, e, m);
    for (int64_t j = 0; j < m; ++j) out[i + j] = f(a[i + j], e[j]);
  }
}
inline float same(float x) { return x; }
// log(1 + e^x) without overflow for large x or cancellation for very negative x.
inline float softplus(float x) { return std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }

constexpr float kSqrt1_2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;   // 1/sqrt(2*pi)
constexpr float kSqrt2OverPi = 0.79788456080286536f;  // sqrt(2/pi)
constexpr float k2OverSqrtPi = 1.12837916709551257f;  // 2/sqrt(pi)

// Python's float %: the result takes the divisor's sign.
inline float py_mod(float a, float b) {
  float r = std::fmod(a, b);
  if (r != 0.0f) {
    if ((r < 0.0f) != (b < 0.0f)) r += b;
  } else {
    r = std::copysign(0.0f, b);
  }
  return r;
}

// ---- int64 ----

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? kMax : kMin) : r;
}
inline int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? kMax : kMin) : r;
}
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? kMin : kMax) : r;
}
inline uint64_t uabs(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : v; }

// a / b rounded to nearest-even: the exact quotient rounded once, as a store of
// the real quotient into an integer tensor would. x/0 saturates like ±inf; 0/0 is 0 like NaN.
inline int64_t div_rne(int64_t a, int64_t b) {
  if (b == 0) return a > 0 ? kMax : a < 0 ? kMin : 0;
  if (b == -1) return a == kMin ? kMax : -a;
  int64_t q = a / b, r = a % b;
  if (r == 0) return q;
  uint64_t ur = uabs(r), ub = uabs(b);
  if (ur > ub - ur || (ur == ub - ur && (q & 1))) q += ((a < 0) != (b < 0)) ? -1 : 1;
  return q;
}

inline int64_t py_mod_int(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
inline int64_t c_mod_int(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }

inline int64_t pow_int(int64_t a, int64_t b) {
  if (b < 0) {
    // |a| >= 2 gives |result| <= 1/2, which rounds to 0 (ties to even).
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return a == 0 ? kMax : 0;
  }
  int64_t r = 1, base = a;
  bool overflow = false;
  for (int64_t e = b; e > 0; e >>= 1) {
    if (e & 1) overflow |= __builtin_mul_overflow(r, base, &r);
    if (e > 1) overflow |= __builtin_mul_overflow(base, base, &base);
    if (overflow) return (a < 0 && (b & 1)) ? kMin : kMax;
  }
  return r;
}

inline int64_t wrap(uint64_t v, IntFormat f) {
  if (f.bits >= 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t{1} << f.bits) - 1;
  v &= mask;
  if (f.is_signed && (v >> (f.bits - 1)) & 1) v |= ~mask;
  return static_cast<int64_t>(v);
}
inline bool shift_in_range(int64_t s, IntFormat f) { return s >= 0 && s < f.bits; }

}  // namespace

NKIC_VECTOR_BODY void eval_unary_body(AluOp op, const float* a, float* out, int64_t n) {
  switch (op) {
    case AluOp::bypass: map1(a, out, n, [](float x) { return x; }); return;
    case AluOp::logical_not: map1(a, out, n, [](float x) { return truth(x == 0.0f); }); return;
    case AluOp::abs: map1(a, out, n, [](float x) { return std::fabs(x); }); return;
    case AluOp::negative: map1(a, out, n, [](float x) { return -x; }); return;
    case AluOp::sign:
      map1(a, out, n, [](float x) {
        return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x;
      });
      return;
    case AluOp::trunc: map1(a, out, n, [](float x) { return std::trunc(x); }); return;
    case AluOp::floor: map1(a, out, n, [](float x) { return std::floor(x); }); return;
    case AluOp::ceil: map1(a, out, n, [](float x) { return std::ceil(x); }); return;
    case AluOp::exp: exp_floats(a, out, n); return;
    case AluOp::log: map1(a, out, n, [](float x) { return std::log(x); }); return;
    case AluOp::sin: map1(a, out, n, [](float x) { return std::sin(x); }); return;
    case AluOp::cos: map1(a, out, n, [](float x) { return std::cos(x); }); return;
    case AluOp::tan: map1(a, out, n, [](float x) { return std::tan(x); }); return;
    case AluOp::tanh: map1(a, out, n, [](float x) { return std::tanh(x); }); return;
    case AluOp::arctan: map1(a, out, n, [](float x) { return std::atan(x); }); return;
    case AluOp::sqrt: map1(a, out, n, [](float x) { return std::sqrt(x); }); return;
    case AluOp::rsqrt: map1(a, out, n, [](float x) { return 1.0f / std::sqrt(x); }); return;
    case AluOp::reciprocal: map1(a, out, n, [](float x) { return 1.0f / x; }); return;
    case AluOp::square: map1(a, out, n, [](float x) { return x * x; }); return;
    case AluOp::sigmoid: map_exp_neg(a, out, n, same, [](float, float e) { return logistic(e); }); return;
    case AluOp::relu: map1(a, out, n, [](float x) { return max_nan(x, 0.0f); }); return;
    case AluOp::gelu:
      map1(a, out, n, [](float x) { return 0.5f * x * (1.0f + std::erf(x * kSqrt1_2)); });
      return;
    case AluOp::gelu_dx:
      // d/dx x*Phi(x) = Phi(x) + x*phi(x)
      map1(a, out, n, [](float x) {
        return 0.5f * (1.0f + std::erf(x * kSqrt1_2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
      });
      return;
    case AluOp::gelu_apprx_tanh:
      map1(a, out, n, [](float x) {
        return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
      });
      return;
    case AluOp::gelu_apprx_sigmoid:
      map_exp_neg(a, out, n, [](float x) { return 1.702f * x; }, [](float x, float e) { return x * logistic(e); });
      return;
    case AluOp::gelu_apprx_sigmoid_dx:
      // d/dx x*s(1.702x) = s + 1.702*x*s*(1 - s)
      map_exp_neg(a, out, n, [](float x) { return 1.702f * x; }, [](float x, float e) {
        const float s = logistic(e);
        return s + 1.702f * x * s * (1.0f - s);
      });
      return;
    case AluOp::silu: map_exp_neg(a, out, n, same, [](float x, float e) { return x * logistic(e); }); return;
    case AluOp::silu_dx:
      map_exp_neg(a, out, n, same, [](float x, float e) {
        const float s = logistic(e);
        return s * (1.0f + x * (1.0f - s));
      });
      return;
    case AluOp::erf: map1(a, out, n, [](float x) { return std::erf(x); }); return;
    case AluOp::erf_dx:
      map1(a, out, n, [](float x) { return k2OverSqrtPi * std::exp(-x * x); });
      return;
    case AluOp::softplus: map1(a, out, n, [](float x) { return softplus(x); }); return;
    case AluOp::mish: map1(a, out, n, [](float x) { return x * std::tanh(softplus(x)); }); return;
    default: unsupported(op, "unary fp32");
  }
}
NKIC_VECTOR_BUILDS(eval_unary_body, void, eval_unary,
                   (AluOp op, const float* a, float* out, int64_t n),
                   (op, a, out, n))

NKIC_VECTOR_BODY void eval_binary_body(AluOp op, const float* a, const float* b, float* out, int64_t n) {
  switch (op) {
    case AluOp::add: map2(a, b, out, n, [](float x, float y) { return x + y; }); return;
    case AluOp::subtract: map2(a, b, out, n, [](float x, float y) { return x - y; }); return;
    case AluOp::multiply: map2(a, b, out, n, [](float x, float y) { return x * y; }); return;
    case AluOp::divide: map2(a, b, out, n, [](float x, float y) { return x / y; }); return;
    case AluOp::maximum: map2(a, b, out, n, [](float x, float y) { return max_nan(x, y); }); return;
    case AluOp::minimum: map2(a, b, out, n, [](float x, float y) { return min_nan(x, y); }); return;
    case AluOp::abs_max: map2(a, b, out, n, [](float x, float y) { return abs_larger(x, y); }); return;
    case AluOp::abs_min: map2(a, b, out, n, [](float x, float y) { return abs_smaller(x, y); }); return;
    case AluOp::prelu: map2(a, b, out, n, [](float x, float y) { return x < 0.0f ? x * y : x; }); return;
    case AluOp::power: map2(a, b, out, n, [](float x, float y) { return std::pow(x, y); }); return;
    case AluOp::mod: map2(a, b, out, n, [](float x, float y) { return py_mod(x, y); }); return;
    case AluOp::fmod: map2(a, b, out, n, [](float x, float y) { return std::fmod(x, y); }); return;
    case AluOp::equal: map2(a, b, out, n, [](float x, float y) { return truth(x == y); }); return;
    case AluOp::not_equal:
      map2(a, b, out, n, [](float x, float y) { return truth(x != y); });
      return;
    case AluOp::greater: map2(a, b, out, n, [](float x, float y) { return truth(x > y); }); return;
    case AluOp::greater_equal:
      map2(a, b, out, n, [](float x, float y) { return truth(x >= y); });
      return;
    case AluOp::less: map2(a, b, out, n, [](float x, float y) { return truth(x < y); }); return;
    case AluOp::less_equal:
      map2(a, b, out, n, [](float x, float y) { return truth(x <= y); });
      return;
    case AluOp::logical_and:
      map2(a, b, out, n, [](float x, float y) { return truth(x != 0.0f && y != 0.0f); });
      return;
    case AluOp::logical_or:
      map2(a, b, out, n, [](float x, float y) { return truth(x != 0.0f || y != 0.0f); });
      return;
    case AluOp::logical_xor:
      map2(a, b, out, n, [](float x, float y) { return truth((x != 0.0f) != (y != 0.0f)); });
      return;
    default: unsupported(op, "binary fp32");
  }
}
NKIC_VECTOR_BUILDS(eval_binary_body, void, eval_binary,
                   (AluOp op, const float* a, const float* b, float* out, int64_t n),
                   (op, a, b, out, n))

void eval_unary_int(AluOp op, const int64_t* a, int64_t* out, int64_t n, IntFormat f) {
  switch (op) {
    case AluOp::bypass: map1(a, out, n, [](int64_t x) { return x; }); return;
    case AluOp::logical_not: map1(a, out, n, [](int64_t x) { return int64_t{x == 0}; }); return;
    case AluOp::invert:
      map1(a, out, n, [f](int64_t x) { return wrap(~static_cast<uint64_t>(x), f); });
      return;
    default: unsupported(op, "unary integer");
  }
}

void eval_binary_int(AluOp op, const int64_t* a, const int64_t* b, int64_t* out, int64_t n,
                     IntFormat f) {
  using I = int64_t;
  switch (op) {
    case AluOp::add: map2(a, b, out, n, [](I x, I y) { return sat_add(x, y); }); return;
    case AluOp::subtract: map2(a, b, out, n, [](I x, I y) { return sat_sub(x, y); }); return;
    case AluOp::multiply: map2(a, b, out, n, [](I x, I y) { return sat_mul(x, y); }); return;
    case AluOp::divide: map2(a, b, out, n, [](I x, I y) { return div_rne(x, y); }); return;
    case AluOp::maximum: map2(a, b, out, n, [](I x, I y) { return x > y ? x : y; }); return;
    case AluOp::minimum: map2(a, b, out, n, [](I x, I y) { return x < y ? x : y; }); return;
    case AluOp::abs_max: map2(a, b, out, n, [](I x, I y) { return abs_larger(x, y); }); return;
    case AluOp::abs_min: map2(a, b, out, n, [](I x, I y) { return abs_smaller(x, y); }); return;
    case AluOp::power: map2(a, b, out, n, [](I x, I y) { return pow_int(x, y); }); return;
    case AluOp::mod: map2(a, b, out, n, [](I x, I y) { return py_mod_int(x, y); }); return;
    case AluOp::fmod: map2(a, b, out, n, [](I x, I y) { return c_mod_int(x, y); }); return;
    case AluOp::equal: map2(a, b, out, n, [](I x, I y) { return I{x == y}; }); return;
    case AluOp::not_equal: map2(a, b, out, n, [](I x, I y) { return I{x != y}; }); return;
    case AluOp::greater: map2(a, b, out, n, [](I x, I y) { return I{x > y}; }); return;
    case AluOp::greater_equal: map2(a, b, out, n, [](I x, I y) { return I{x >= y}; }); return;
    case AluOp::less: map2(a, b, out, n, [](I x, I y) { return I{x < y}; }); return;
    case AluOp::less_equal: map2(a, b, out, n, [](I x, I y) { return I{x <= y}; }); return;
    case AluOp::logical_and:
      map2(a, b, out, n, [](I x, I y) { return I{x != 0 && y != 0}; });
      return;
    case AluOp::logical_or:
      map2(a, b, out, n, [](I x, I y) { return I{x != 0 || y != 0}; });
      return;
    case AluOp::logical_xor:
      map2(a, b, out, n, [](I x, I y) { return I{(x != 0) != (y != 0)}; });
      return;
    case AluOp::bitwise_and:
      map2(a, b, out, n, [f](I x, I y) { return wrap(static_cast<uint64_t>(x & y), f); });
      return;
    case AluOp::bitwise_or:
      map2(a, b, out, n, [f](I x, I y) { return wrap(static_cast<uint64_t>(x | y), f); });
      return;
    case AluOp::bitwise_xor:
      map2(a, b, out, n, [f](I x, I y) { return wrap(static_cast<uint64_t>(x ^ y), f); });
      return;
    case AluOp::left_shift:
      map2(a, b, out, n, [f](I x, I y) {
        return shift_in_range(y, f) ? wrap(static_cast<uint64_t>(x) << y, f) : I{0};
      });
      return;
    case AluOp::right_shift:
      // Logical: the operand's bits in format f, shifted in zeros from the top.
      map2(a, b, out, n, [f](I x, I y) {
        if (!shift_in_range(y, f)) return I{0};
        uint64_t bits = static_cast<uint64_t>(x);
        if (f.bits < 64) bits &= (uint64_t{1} << f.bits) - 1;
        return wrap(bits >> y, f);
      });
      return;
    default: unsupported(op, "binary integer");
  }
}

NKIC_VECTOR_BODY void accumulate_body(const float* acc, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = acc[i + j] + out[i + j];
  for (; i < n; ++i) out[i] = acc[i] + out[i];
}
NKIC_VECTOR_BUILDS(accumulate_body, void, accumulate, (const float* acc, float* out, int64_t n), (acc, out, n))

void accumulate_int(const int64_t* acc, int64_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = sat_add(acc[i], out[i]);
}

}  // namespace nkic::sim
