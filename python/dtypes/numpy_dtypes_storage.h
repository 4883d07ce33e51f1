// The storage side of the NKI dtypes' numpy registration, shared by the
// translation units that register them: the scalar layout, the array functions
// that only move bytes, and the descriptor and name registration.
#pragma once
#include "numpy_dtypes_impl.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace nkic::py_bind::npdt {

// The instance layout numpy assumes for a user scalar: the value right after
// the object header, at the dtype's alignment (PyArray_Scalar writes it there).
template <class F>
struct PyScalar {
  PyObject_HEAD
  typename F::Bits value;
};
static_assert(offsetof(PyScalar<BFloat16>, value) == sizeof(PyObject));
static_assert(offsetof(PyScalar<Float8E4M3>, value) == sizeof(PyObject));
static_assert(offsetof(PyScalar<Float8E4M3FNx4>, value) == sizeof(PyObject));

// The numpy scalar type of format F: a generic-scalar subclass made from `slots`.
// tp_name keeps pointing at F::kQualifiedName, a string literal.
template <class F>
PyTypeObject* scalar_type_from_slots(PyType_Slot* slots) {
  PyType_Spec spec = {F::kQualifiedName, static_cast<int>(sizeof(PyScalar<F>)), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
  PyObject* bases = PyTuple_Pack(1, reinterpret_cast<PyObject*>(&PyGenericArrType_Type));
  if (!bases) return nullptr;
  PyObject* type = PyType_FromSpecWithBases(&spec, bases);
  Py_DECREF(bases);
  return reinterpret_cast<PyTypeObject*>(type);
}

// numpy keeps pointers to these for the life of the process.
template <class F>
struct Registration {
  static inline PyArray_ArrFuncs funcs;
  static inline PyArray_Descr descr;
};

template <class T>
T load(const void* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

template <class T>
void store(void* p, T x) {
  std::memcpy(p, &x, sizeof x);
}

template <class F>
bool is_scalar(PyObject* o) {
  return PyObject_TypeCheck(o, F::type);
}

template <class F>
typename F::Bits bits_of(PyObject* o) {
  return reinterpret_cast<PyScalar<F>*>(o)->value;
}

template <class F>
PyObject* make_scalar(typename F::Bits b, PyTypeObject* type = F::type) {
  PyObject* o = type->tp_alloc(type, 0);
  if (o) reinterpret_cast<PyScalar<F>*>(o)->value = b;
  return o;
}

template <class F>
void swap_bytes(char* p) {
  std::reverse(p, p + sizeof(typename F::Bits));
}

template <class F>
void arr_copyswapn(void* dst, npy_intp dstride, void* src, npy_intp sstride, npy_intp n, int swap, void*) {
  constexpr npy_intp size = sizeof(typename F::Bits);
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (s && dstride == size && sstride == size) {
    std::memcpy(d, s, n * size);
  } else if (s) {
    for (npy_intp i = 0; i < n; ++i) std::memcpy(d + i * dstride, s + i * sstride, size);
  }
  if (swap)
    for (npy_intp i = 0; i < n; ++i) swap_bytes<F>(d + i * dstride);
}

template <class F>
void arr_copyswap(void* dst, void* src, int swap, void*) {
  if (src) std::memcpy(dst, src, sizeof(typename F::Bits));
  if (swap) swap_bytes<F>(static_cast<char*>(dst));
}

// Registers F's descriptor (its scalar type and array functions already made).
template <class F>
bool register_descr() {
  PyArray_Descr* d = &Registration<F>::descr;
  Py_SET_TYPE(d, &PyArrayDescr_Type);  // numpy replaces it with the new DType class
  Py_SET_REFCNT(d, 1);                 // owned by this module forever
  d->typeobj = F::type;
  // kind 'V' as ml_dtypes does: numpy must not treat these as its own floats.
  d->kind = 'V';
  d->type = F::kTypeChar;
  d->byteorder = '=';
  d->flags = NPY_USE_SETITEM;
  d->elsize = sizeof(typename F::Bits);
  d->alignment = alignof(typename F::Bits);
  d->f = &Registration<F>::funcs;
  d->hash = -1;
  F::typenum = PyArray_RegisterDataType(d);
  return F::typenum >= 0;
}

// np.dtype("bfloat16") finds names in numpy's sctypeDict.
template <class F>
bool register_name(PyObject* numpy) {
  PyObject* names = PyObject_GetAttrString(numpy, "sctypeDict");
  if (!names) return false;
  PyObject* key = PyUnicode_FromString(F::kName);
  PyObject* r = key ? PyDict_SetDefault(names, key, reinterpret_cast<PyObject*>(F::type)) : nullptr;
  Py_XDECREF(key);
  Py_DECREF(names);
  return r != nullptr;
}

}  // namespace nkic::py_bind::npdt
