// The scalar types, array functions, casts and registration of the narrow
// float dtypes, through numpy's legacy user-dtype API (numpy 1.x). The ufunc
// loops live in numpy_dtype_ufuncs.cpp.
#include "numpy_dtypes.h"

#define NKIC_NUMPY_API_OWNER
#include "numpy_dtypes_impl.h"
#include "numpy_dtypes_storage.h"
#include <numpy/arrayscalars.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>

namespace nkic::py_bind {

namespace {

using namespace npdt;  // the formats and the storage helpers

template <class F>
float value_of(PyObject* o) {
  return F::to_float(bits_of<F>(o));
}

// The value of `o` if it is a scalar of any of the float formats.
bool narrow_scalar_value(PyObject* o, float* out) {
  if (is_scalar<BFloat16>(o)) *out = value_of<BFloat16>(o);
  else if (is_scalar<Float8E4M3>(o)) *out = value_of<Float8E4M3>(o);
  else if (is_scalar<Float8E5M2>(o)) *out = value_of<Float8E5M2>(o);
  else if (is_scalar<Float8E4M3FN>(o)) *out = value_of<Float8E4M3FN>(o);
  else if (is_scalar<Float8E8M0FNU>(o)) *out = value_of<Float8E8M0FNU>(o);
  else return false;
  return true;
}

// Any number-like Python object (or numeric string) rounded to F, via
// float32 like every other conversion here. False with a Python error set.
template <class F>
bool to_bits(PyObject* o, typename F::Bits* out) {
  if (is_scalar<F>(o)) {
    *out = bits_of<F>(o);
    return true;
  }
  float f;
  if (narrow_scalar_value(o, &f)) {
    *out = F::from_float(f);
    return true;
  }
  double d;
  if (PyUnicode_Check(o) || PyBytes_Check(o)) {
    PyObject* num = PyFloat_FromString(o);
    if (!num) return false;
    d = PyFloat_AsDouble(num);
    Py_DECREF(num);
  } else {
    d = PyFloat_AsDouble(o);  // floats, ints, numpy scalars, 0-d arrays
    if (d == -1.0 && PyErr_Occurred()) return false;
  }
  *out = F::from_float(static_cast<float>(d));
  return true;
}

// ------------------------------------------------------------ scalar type

template <class F>
PyObject* scalar_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  if ((kwds && PyDict_Size(kwds)) || PyTuple_Size(args) != 1) {
    PyErr_Format(PyExc_TypeError, "%s() takes exactly one positional argument", F::kName);
    return nullptr;
  }
  PyObject* arg = PyTuple_GET_ITEM(args, 0);
  if (PyArray_Check(arg) && PyArray_NDIM(reinterpret_cast<PyArrayObject*>(arg)) > 0) {
    // Like np.float32(array): an array converts element-wise.
    PyArray_Descr* d = &Registration<F>::descr;
    Py_INCREF(d);  // stolen by PyArray_CastToType
    return PyArray_CastToType(reinterpret_cast<PyArrayObject*>(arg), d, 0);
  }
  typename F::Bits b;
  if (!to_bits<F>(arg, &b)) return nullptr;
  return make_scalar<F>(b, type);
}

// The fewest significant digits that read back as the same value of the
// format, so bfloat16(1.5) prints as 1.5 and not as its float32 expansion.
template <class F>
int shortest_digits(typename F::Bits b, double v) {
  for (int digits = 1; digits < 9; ++digits) {
    char* s = PyOS_double_to_string(v, 'g', digits, 0, nullptr);
    if (!s) return 9;
    const double back = PyOS_string_to_double(s, nullptr, nullptr);
    PyMem_Free(s);
    if (F::from_float(static_cast<float>(back)) == b) return digits;
  }
  return 9;
}

// Printed like Python floats (positional below 1e16, exponent below 1e-4)
// but without a trailing ".0", as ml_dtypes does: 1.5, 2000, 1e-05, inf.
template <class F>
PyObject* scalar_str(PyObject* self) {
  const typename F::Bits b = bits_of<F>(self);
  const double v = F::to_float(b);
  if (std::isnan(v)) return PyUnicode_FromString("nan");
  int digits = shortest_digits<F>(b, v);
  if (std::isfinite(v) && std::fabs(v) >= 1.0 && std::fabs(v) < 1e16)
    digits = std::max(digits, static_cast<int>(std::floor(std::log10(std::fabs(v)))) + 1);
  char* s = PyOS_double_to_string(v, 'g', digits, 0, nullptr);
  if (!s) return nullptr;
  PyObject* r = PyUnicode_FromString(s);
  PyMem_Free(s);
  return r;
}

// Equal values hash equally across types, as hash(1.5) == hash(np.float32(1.5)).
template <class F>
Py_hash_t scalar_hash(PyObject* self) {
  PyObject* f = PyFloat_FromDouble(value_of<F>(self));
  if (!f) return -1;
  const Py_hash_t h = PyObject_Hash(f);
  Py_DECREF(f);
  return h;
}

PyObject* numpy_bool(bool b) { PyArrayScalar_RETURN_BOOL_FROM_LONG(b); }

bool compare_floats(float x, float y, int op) {
  switch (op) {
    case Py_LT: return std::isless(x, y);
    case Py_LE: return std::islessequal(x, y);
    case Py_EQ: return x == y;
    case Py_NE: return x != y;
    case Py_GT: return std::isgreater(x, y);
    default: return std::isgreaterequal(x, y);
  }
}

template <class F>
PyObject* scalar_richcompare(PyObject* self, PyObject* other, int op) {
  const float x = value_of<F>(self);
  float y;
  if (narrow_scalar_value(other, &y)) return numpy_bool(compare_floats(x, y, op));
  if (PyFloat_Check(other) || PyLong_Check(other)) {
    // Python's own float comparison is exact against ints of any size.
    PyObject* f = PyFloat_FromDouble(x);
    if (!f) return nullptr;
    const int r = PyObject_RichCompareBool(f, other, op);
    Py_DECREF(f);
    return r < 0 ? nullptr : numpy_bool(r);
  }
  return PyGenericArrType_Type.tp_richcompare(self, other, op);
}

// Two scalars of the same format stay in it; anything else goes through
// numpy's array arithmetic and its promotion rules.
template <class F, float (*op)(float, float), binaryfunc numpy_slot>
PyObject* scalar_binary(PyObject* a, PyObject* b) {
  if (is_scalar<F>(a) && is_scalar<F>(b))
    return make_scalar<F>(F::from_float(op(value_of<F>(a), value_of<F>(b))));
  return numpy_slot(a, b);
}

float add(float a, float b) { return a + b; }
float subtract(float a, float b) { return a - b; }
float multiply(float a, float b) { return a * b; }
float divide(float a, float b) { return a / b; }

PyObject* array_add(PyObject* a, PyObject* b) { return PyArray_Type.tp_as_number->nb_add(a, b); }
PyObject* array_subtract(PyObject* a, PyObject* b) { return PyArray_Type.tp_as_number->nb_subtract(a, b); }
PyObject* array_multiply(PyObject* a, PyObject* b) { return PyArray_Type.tp_as_number->nb_multiply(a, b); }
PyObject* array_divide(PyObject* a, PyObject* b) { return PyArray_Type.tp_as_number->nb_true_divide(a, b); }

template <class F>
PyObject* scalar_negative(PyObject* self) { return make_scalar<F>(F::from_float(-value_of<F>(self))); }

template <class F>
PyObject* scalar_positive(PyObject* self) {
  Py_INCREF(self);
  return self;
}

template <class F>
PyObject* scalar_absolute(PyObject* self) {
  return make_scalar<F>(F::from_float(std::fabs(value_of<F>(self))));
}

template <class F>
PyObject* scalar_float(PyObject* self) { return PyFloat_FromDouble(value_of<F>(self)); }

template <class F>
PyObject* scalar_int(PyObject* self) { return PyLong_FromDouble(value_of<F>(self)); }  // truncates

template <class F>
int scalar_bool(PyObject* self) { return value_of<F>(self) != 0.0f; }

template <class F>
PyObject* scalar_format(PyObject* self, PyObject* spec) {
  PyObject* f = PyFloat_FromDouble(value_of<F>(self));
  if (!f) return nullptr;
  PyObject* r = PyObject_Format(f, spec);
  Py_DECREF(f);
  return r;
}

template <class F>
struct ScalarMethods {
  static inline PyMethodDef defs[] = {
      {"__format__", reinterpret_cast<PyCFunction>(scalar_format<F>), METH_O,
       "Formats the value as a Python float."},
      {nullptr, nullptr, 0, nullptr},
  };
};

template <class F>
PyTypeObject* make_scalar_type() {
  PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(scalar_new<F>)},
      {Py_tp_repr, reinterpret_cast<void*>(scalar_str<F>)},
      {Py_tp_str, reinterpret_cast<void*>(scalar_str<F>)},
      {Py_tp_hash, reinterpret_cast<void*>(scalar_hash<F>)},
      {Py_tp_richcompare, reinterpret_cast<void*>(scalar_richcompare<F>)},
      {Py_tp_methods, reinterpret_cast<void*>(ScalarMethods<F>::defs)},
      {Py_tp_doc, const_cast<char*>("A narrow floating-point scalar of the NKI type of the same name.")},
      {Py_nb_add, reinterpret_cast<void*>(scalar_binary<F, add, array_add>)},
      {Py_nb_subtract, reinterpret_cast<void*>(scalar_binary<F, subtract, array_subtract>)},
      {Py_nb_multiply, reinterpret_cast<void*>(scalar_binary<F, multiply, array_multiply>)},
      {Py_nb_true_divide, reinterpret_cast<void*>(scalar_binary<F, divide, array_divide>)},
      {Py_nb_negative, reinterpret_cast<void*>(scalar_negative<F>)},
      {Py_nb_positive, reinterpret_cast<void*>(scalar_positive<F>)},
      {Py_nb_absolute, reinterpret_cast<void*>(scalar_absolute<F>)},
      {Py_nb_float, reinterpret_cast<void*>(scalar_float<F>)},
      {Py_nb_int, reinterpret_cast<void*>(scalar_int<F>)},
      {Py_nb_bool, reinterpret_cast<void*>(scalar_bool<F>)},
      {0, nullptr},
  };
  return scalar_type_from_slots<F>(slots);
}

// --------------------------------------------------------- array functions

template <class F>
PyObject* arr_getitem(void* data, void*) {
  return PyFloat_FromDouble(F::to_float(load<typename F::Bits>(data)));
}

template <class F>
int arr_setitem(PyObject* item, void* data, void*) {
  typename F::Bits b;
  if (!to_bits<F>(item, &b)) return -1;
  store(data, b);
  return 0;
}

template <class F>
npy_bool arr_nonzero(void* data, void*) {
  return F::to_float(load<typename F::Bits>(data)) != 0.0f;
}

// Sort order: numbers ascending, NaNs last (numpy's order for floats).
template <class F>
int arr_compare(const void* a, const void* b, void*) {
  const float x = F::to_float(load<typename F::Bits>(a));
  const float y = F::to_float(load<typename F::Bits>(b));
  if (std::isless(x, y) || (!std::isnan(x) && std::isnan(y))) return -1;
  if (std::isless(y, x) || (std::isnan(x) && !std::isnan(y))) return 1;
  return 0;
}

// argmax/argmin: the first extreme element, or the first NaN, as numpy does.
template <class F, bool kMax>
int arr_argextreme(void* data, npy_intp n, npy_intp* index, void*) {
  const char* p = static_cast<const char*>(data);
  constexpr npy_intp size = sizeof(typename F::Bits);
  *index = 0;
  float best = F::to_float(load<typename F::Bits>(p));
  for (npy_intp i = 1; i < n && !std::isnan(best); ++i) {
    const float v = F::to_float(load<typename F::Bits>(p + i * size));
    if (std::isnan(v) || (kMax ? v > best : v < best)) {
      best = v;
      *index = i;
    }
  }
  return 0;
}

// np.arange's fill: continue the progression set by the first two elements.
template <class F>
int arr_fill(void* buffer, npy_intp length, void*) {
  char* p = static_cast<char*>(buffer);
  constexpr npy_intp size = sizeof(typename F::Bits);
  const float start = F::to_float(load<typename F::Bits>(p));
  const float delta = F::to_float(load<typename F::Bits>(p + size)) - start;
  for (npy_intp i = 2; i < length; ++i)
    store(p + i * size, F::from_float(start + static_cast<float>(i) * delta));
  return 0;
}

template <class F>
void arr_dot(void* a, npy_intp astride, void* b, npy_intp bstride, void* out, npy_intp n, void*) {
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  float acc = 0.0f;  // fp32 accumulation, one rounding at the end
  for (npy_intp i = 0; i < n; ++i, pa += astride, pb += bstride)
    acc += F::to_float(load<typename F::Bits>(pa)) * F::to_float(load<typename F::Bits>(pb));
  store(out, F::from_float(acc));
}

template <class F>
void init_arrfuncs(PyArray_ArrFuncs* f) {
  PyArray_InitArrFuncs(f);
  f->getitem = arr_getitem<F>;
  f->setitem = arr_setitem<F>;
  f->copyswapn = arr_copyswapn<F>;
  f->copyswap = arr_copyswap<F>;
  f->nonzero = arr_nonzero<F>;
  f->compare = arr_compare<F>;
  f->argmax = arr_argextreme<F, true>;
  f->argmin = arr_argextreme<F, false>;
  f->fill = arr_fill<F>;
  f->dotfunc = arr_dot<F>;
}

// ------------------------------------------------------------------ casts

// numpy's own element types, seen through the same to/from float32 interface
// as the formats. Float-to-integer casts truncate like numpy's, but saturate
// and send NaN to 0 instead of leaving out-of-range results undefined.
template <class T>
struct Native {
  using Bits = T;
  static float to_float(T v) { return static_cast<float>(v); }
  static T from_float(float f) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(f);
    } else {
      if (std::isnan(f)) return 0;
      const double d = std::trunc(static_cast<double>(f));
      constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
      constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
      if (d <= lo) return std::numeric_limits<T>::min();
      if (d >= hi) return std::numeric_limits<T>::max();
      return static_cast<T>(d);
    }
  }
};

struct NativeBool {
  using Bits = npy_bool;
  static float to_float(npy_bool v) { return v ? 1.0f : 0.0f; }
  static npy_bool from_float(float f) { return f != 0.0f; }
};

struct NativeHalf {
  using Bits = npy_half;
  static float to_float(npy_half v) { return sim::fp16_to_float(v); }
  static npy_half from_float(float f) { return sim::float_to_fp16(f); }
};

template <class From, class To>
void cast_loop(void* from, void* to, npy_intp n, void*, void*) {
  const char* src = static_cast<const char*>(from);
  char* dst = static_cast<char*>(to);
  for (npy_intp i = 0; i < n; ++i) {
    const auto x = load<typename From::Bits>(src + i * sizeof(typename From::Bits));
    store(dst + i * sizeof(typename To::Bits), To::from_float(From::to_float(x)));
  }
}

template <class F, class N>
bool register_native_casts(int npy_type) {
  PyArray_Descr* native = PyArray_DescrFromType(npy_type);
  if (!native) return false;
  const bool ok = PyArray_RegisterCastFunc(native, F::typenum, cast_loop<N, F>) == 0 &&
                  PyArray_RegisterCastFunc(&Registration<F>::descr, npy_type, cast_loop<F, N>) == 0;
  Py_DECREF(native);
  return ok;
}

template <class F, class G>
bool register_narrow_cast() {
  return PyArray_RegisterCastFunc(&Registration<F>::descr, G::typenum, cast_loop<F, G>) == 0;
}

template <class F>
bool register_casts() {
  return register_native_casts<F, NativeBool>(NPY_BOOL) &&
         register_native_casts<F, Native<npy_byte>>(NPY_BYTE) &&
         register_native_casts<F, Native<npy_ubyte>>(NPY_UBYTE) &&
         register_native_casts<F, Native<npy_short>>(NPY_SHORT) &&
         register_native_casts<F, Native<npy_ushort>>(NPY_USHORT) &&
         register_native_casts<F, Native<npy_int>>(NPY_INT) &&
         register_native_casts<F, Native<npy_uint>>(NPY_UINT) &&
         register_native_casts<F, Native<npy_long>>(NPY_LONG) &&
         register_native_casts<F, Native<npy_ulong>>(NPY_ULONG) &&
         register_native_casts<F, Native<npy_longlong>>(NPY_LONGLONG) &&
         register_native_casts<F, Native<npy_ulonglong>>(NPY_ULONGLONG) &&
         register_native_casts<F, NativeHalf>(NPY_HALF) &&
         register_native_casts<F, Native<npy_float>>(NPY_FLOAT) &&
         register_native_casts<F, Native<npy_double>>(NPY_DOUBLE) &&
         register_native_casts<F, Native<npy_longdouble>>(NPY_LONGDOUBLE);
}

bool can_cast(PyArray_Descr* from, int to) { return PyArray_RegisterCanCast(from, to, NPY_NOSCALAR) == 0; }

bool can_cast(int from, int to) {
  PyArray_Descr* d = PyArray_DescrFromType(from);
  if (!d) return false;
  const bool ok = can_cast(d, to);
  Py_DECREF(d);
  return ok;
}

// Safe (value-preserving) casts: what numpy promotion may use implicitly, so
// bfloat16 with float32 gives float32 and fp8 with bfloat16 gives bfloat16
// (NKI_API.md §1.6). e8m0's powers of two from 2^-127 fit bfloat16, not float16.
bool register_safe_casts() {
  PyArray_Descr* bf16 = &Registration<BFloat16>::descr;
  PyArray_Descr* e4m3 = &Registration<Float8E4M3>::descr;
  PyArray_Descr* e5m2 = &Registration<Float8E5M2>::descr;
  PyArray_Descr* e4m3fn = &Registration<Float8E4M3FN>::descr;
  PyArray_Descr* e8m0 = &Registration<Float8E8M0FNU>::descr;
  for (PyArray_Descr* d : {bf16, e4m3, e5m2, e4m3fn, e8m0})
    for (int to : {NPY_FLOAT, NPY_DOUBLE, NPY_LONGDOUBLE})
      if (!can_cast(d, to)) return false;
  for (PyArray_Descr* d : {e4m3, e5m2, e4m3fn})
    if (!can_cast(d, NPY_HALF) || !can_cast(d, BFloat16::typenum)) return false;
  if (!can_cast(e8m0, BFloat16::typenum)) return false;
  for (int to : {BFloat16::typenum, Float8E4M3::typenum, Float8E5M2::typenum, Float8E4M3FN::typenum})
    if (!can_cast(NPY_BOOL, to)) return false;
  return can_cast(NPY_BYTE, BFloat16::typenum) && can_cast(NPY_UBYTE, BFloat16::typenum);
}

// ------------------------------------------------------------ registration

template <class F>
bool register_dtype() {
  F::type = make_scalar_type<F>();
  if (!F::type) return false;
  init_arrfuncs<F>(&Registration<F>::funcs);
  return register_descr<F>();
}

template <class F, class G>
bool register_narrow_cast_to_other() {
  if constexpr (std::is_same_v<F, G>) return true;
  else return register_narrow_cast<F, G>();
}

// Everything numpy needs of the float formats Fs, each step for all of them
// before the next: every cast is registered before any is used (numpy caches
// them on first use).
template <class... Fs>
struct Formats {
  template <class F>
  static bool casts_from() { return (register_narrow_cast_to_other<F, Fs>() && ...); }
  static bool register_all(PyObject* numpy) {
    return (register_dtype<Fs>() && ...) && (register_casts<Fs>() && ...) && (casts_from<Fs>() && ...) &&
           register_safe_casts() && (npdt::register_ufunc_loops<Fs>(numpy) && ...) && (register_name<Fs>(numpy) && ...);
  }
};

bool register_all() {
  if (_import_array() < 0 || _import_umath() < 0) return false;
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (!numpy) return false;
  const bool ok = Formats<BFloat16, Float8E4M3, Float8E5M2, Float8E4M3FN, Float8E8M0FNU>::register_all(numpy) &&
                  npdt::register_packed_dtypes(numpy);
  Py_DECREF(numpy);
  return ok;
}

}  // namespace

void register_numpy_dtypes(pybind11::module_& m) {
  // numpy's type registry is process-wide: register once, however often the
  // module initialises.
  static bool registered = false;
  if (!registered) {
    if (!register_all()) throw pybind11::error_already_set();
    registered = true;
  }
  m.attr("bfloat16") = pybind11::handle(reinterpret_cast<PyObject*>(BFloat16::type));
  m.attr("float8_e4m3") = pybind11::handle(reinterpret_cast<PyObject*>(Float8E4M3::type));
  m.attr("float8_e5m2") = pybind11::handle(reinterpret_cast<PyObject*>(Float8E5M2::type));
  m.attr("float8_e4m3fn") = pybind11::handle(reinterpret_cast<PyObject*>(Float8E4M3FN::type));
  m.attr("float8_e8m0fnu") = pybind11::handle(reinterpret_cast<PyObject*>(Float8E8M0FNU::type));
  m.attr("float8_e4m3fn_x4") = pybind11::handle(reinterpret_cast<PyObject*>(Float8E4M3FNx4::type));
  m.attr("float8_e5m2_x4") = pybind11::handle(reinterpret_cast<PyObject*>(Float8E5M2x4::type));
  m.attr("float4_e2m1fn_x4") = pybind11::handle(reinterpret_cast<PyObject*>(Float4E2M1FNx4::type));
}

}  // namespace nkic::py_bind
