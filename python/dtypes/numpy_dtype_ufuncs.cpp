// Element-wise ufunc loops for the narrow float dtypes. Each loop decodes its
// operands to float32, computes there, and rounds the result once to the
// format, the way the engines do (NKI_API.md §1.6).
#include <cmath>
#include <cstring>
#include <vector>

#include "numpy_dtypes_storage.h"

namespace nkic::py_bind::npdt {

namespace {

using BinaryFn = float (*)(float, float);
using UnaryFn = float (*)(float);
using CompareFn = bool (*)(float, float);
using PredicateFn = bool (*)(float);

template <class F, BinaryFn op>
void binary_loop(char** args, const npy_intp* dims, const npy_intp* steps, void*) {
  const char* a = args[0];
  const char* b = args[1];
  char* out = args[2];
  for (npy_intp i = 0; i < dims[0]; ++i, a += steps[0], b += steps[1], out += steps[2]) {
    const float r = op(F::to_float(load<typename F::Bits>(a)), F::to_float(load<typename F::Bits>(b)));
    store(out, F::from_float(r));
  }
}

template <class F, UnaryFn op>
void unary_loop(char** args, const npy_intp* dims, const npy_intp* steps, void*) {
  const char* a = args[0];
  char* out = args[1];
  for (npy_intp i = 0; i < dims[0]; ++i, a += steps[0], out += steps[1])
    store(out, F::from_float(op(F::to_float(load<typename F::Bits>(a)))));
}

template <class F, CompareFn op>
void compare_loop(char** args, const npy_intp* dims, const npy_intp* steps, void*) {
  const char* a = args[0];
  const char* b = args[1];
  char* out = args[2];
  for (npy_intp i = 0; i < dims[0]; ++i, a += steps[0], b += steps[1], out += steps[2]) {
    const bool r = op(F::to_float(load<typename F::Bits>(a)), F::to_float(load<typename F::Bits>(b)));
    store(out, static_cast<npy_bool>(r));
  }
}

template <class F, PredicateFn op>
void predicate_loop(char** args, const npy_intp* dims, const npy_intp* steps, void*) {
  const char* a = args[0];
  char* out = args[1];
  for (npy_intp i = 0; i < dims[0]; ++i, a += steps[0], out += steps[1])
    store(out, static_cast<npy_bool>(op(F::to_float(load<typename F::Bits>(a)))));
}

// The scalar operations, in float32. numpy's semantics: maximum/minimum
// propagate NaN, fmax/fmin ignore it. Ordered comparisons use the quiet
// forms so a NaN operand does not raise FE_INVALID (numpy would warn).
namespace op {
float add(float a, float b) { return a + b; }
float subtract(float a, float b) { return a - b; }
float multiply(float a, float b) { return a * b; }
float divide(float a, float b) { return a / b; }
float power(float a, float b) { return std::pow(a, b); }
float maximum(float a, float b) { return (std::isgreaterequal(a, b) || std::isnan(a)) ? a : b; }
float minimum(float a, float b) { return (std::islessequal(a, b) || std::isnan(a)) ? a : b; }
float fmax(float a, float b) { return std::fmax(a, b); }
float fmin(float a, float b) { return std::fmin(a, b); }

float negative(float a) { return -a; }
float positive(float a) { return a; }
float absolute(float a) { return std::fabs(a); }
float sqrt(float a) { return std::sqrt(a); }
float exp(float a) { return std::exp(a); }
float log(float a) { return std::log(a); }
float tanh(float a) { return std::tanh(a); }
float square(float a) { return a * a; }
float reciprocal(float a) { return 1.0f / a; }
float floor(float a) { return std::floor(a); }
float ceil(float a) { return std::ceil(a); }
float trunc(float a) { return std::trunc(a); }
float rint(float a) { return std::nearbyint(a); }
// sign keeps zeros and NaN as they are.
float sign(float a) { return std::isgreater(a, 0.0f) ? 1.0f : std::isless(a, 0.0f) ? -1.0f : a; }

bool equal(float a, float b) { return a == b; }
bool not_equal(float a, float b) { return a != b; }
bool less(float a, float b) { return std::isless(a, b); }
bool less_equal(float a, float b) { return std::islessequal(a, b); }
bool greater(float a, float b) { return std::isgreater(a, b); }
bool greater_equal(float a, float b) { return std::isgreaterequal(a, b); }

bool isnan(float a) { return std::isnan(a); }
bool isinf(float a) { return std::isinf(a); }
bool isfinite(float a) { return std::isfinite(a); }
bool signbit(float a) { return std::signbit(a); }
}  // namespace op

bool add_loop(PyObject* numpy, const char* name, int typenum, PyUFuncGenericFunction fn,
              std::vector<int> types) {
  PyObject* ufunc = PyObject_GetAttrString(numpy, name);
  if (!ufunc) return false;
  if (!PyObject_TypeCheck(ufunc, &PyUFunc_Type) ||
      reinterpret_cast<PyUFuncObject*>(ufunc)->nargs != static_cast<int>(types.size())) {
    PyErr_Format(PyExc_RuntimeError, "numpy.%s is not the expected ufunc", name);
    Py_DECREF(ufunc);
    return false;
  }
  const int rc = PyUFunc_RegisterLoopForType(reinterpret_cast<PyUFuncObject*>(ufunc), typenum, fn,
                                             types.data(), nullptr);
  Py_DECREF(ufunc);
  return rc == 0;
}

}  // namespace

template <class F>
bool register_ufunc_loops(PyObject* numpy) {
  const int t = F::typenum;
  const std::vector<int> binary{t, t, t}, unary{t, t}, compare{t, t, NPY_BOOL}, predicate{t, NPY_BOOL};
  struct Loop {
    const char* name;
    PyUFuncGenericFunction fn;
    const std::vector<int>& types;
  };
  const Loop loops[] = {
      // np.divide and np.true_divide are one ufunc.
      {"add", binary_loop<F, op::add>, binary},
      {"subtract", binary_loop<F, op::subtract>, binary},
      {"multiply", binary_loop<F, op::multiply>, binary},
      {"divide", binary_loop<F, op::divide>, binary},
      {"power", binary_loop<F, op::power>, binary},
      {"maximum", binary_loop<F, op::maximum>, binary},
      {"minimum", binary_loop<F, op::minimum>, binary},
      {"fmax", binary_loop<F, op::fmax>, binary},
      {"fmin", binary_loop<F, op::fmin>, binary},
      {"negative", unary_loop<F, op::negative>, unary},
      {"positive", unary_loop<F, op::positive>, unary},
      {"absolute", unary_loop<F, op::absolute>, unary},
      {"sqrt", unary_loop<F, op::sqrt>, unary},
      {"exp", unary_loop<F, op::exp>, unary},
      {"log", unary_loop<F, op::log>, unary},
      {"tanh", unary_loop<F, op::tanh>, unary},
      {"square", unary_loop<F, op::square>, unary},
      {"reciprocal", unary_loop<F, op::reciprocal>, unary},
      {"floor", unary_loop<F, op::floor>, unary},
      {"ceil", unary_loop<F, op::ceil>, unary},
      {"trunc", unary_loop<F, op::trunc>, unary},
      {"rint", unary_loop<F, op::rint>, unary},
      {"sign", unary_loop<F, op::sign>, unary},
      {"equal", compare_loop<F, op::equal>, compare},
      {"not_equal", compare_loop<F, op::not_equal>, compare},
      {"less", compare_loop<F, op::less>, compare},
      {"less_equal", compare_loop<F, op::less_equal>, compare},
      {"greater", compare_loop<F, op::greater>, compare},
      {"greater_equal", compare_loop<F, op::greater_equal>, compare},
      {"isnan", predicate_loop<F, op::isnan>, predicate},
      {"isinf", predicate_loop<F, op::isinf>, predicate},
      {"isfinite", predicate_loop<F, op::isfinite>, predicate},
      {"signbit", predicate_loop<F, op::signbit>, predicate},
  };
  for (const Loop& l : loops)
    if (!add_loop(numpy, l.name, t, l.fn, l.types)) return false;
  return true;
}

template bool register_ufunc_loops<BFloat16>(PyObject*);
template bool register_ufunc_loops<Float8E4M3>(PyObject*);
template bool register_ufunc_loops<Float8E5M2>(PyObject*);
template bool register_ufunc_loops<Float8E4M3FN>(PyObject*);
template bool register_ufunc_loops<Float8E8M0FNU>(PyObject*);

}  // namespace nkic::py_bind::npdt
