// Shared by the translation units that use numpy's C API. Exactly one of them
// (numpy_dtypes.cpp) defines NKIC_NUMPY_API_OWNER before including this: it
// owns the API tables and imports them; the others only reference them.
#pragma once
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL nkic_numpy_array_api
#define PY_UFUNC_UNIQUE_SYMBOL nkic_numpy_ufunc_api
#ifndef NKIC_NUMPY_API_OWNER
#define NO_IMPORT_ARRAY
#define NO_IMPORT_UFUNC
#endif
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include <cstdint>

#include "sim/Numerics.h"

#if NPY_ABI_VERSION >= 0x02000000
#error "numpy_dtypes uses the numpy 1.x legacy user-dtype API"
#endif

namespace nkic::py_bind::npdt {

// One narrow float format: its storage, its conversions (all arithmetic goes
// through float32 and rounds once via sim::), and the numpy registration
// results, filled in by register_numpy_dtypes.
struct BFloat16 {
  using Bits = uint16_t;
  static constexpr const char* kName = "bfloat16";
  static constexpr const char* kQualifiedName = "nkic.language.bfloat16";
  static constexpr char kTypeChar = 'E';
  static float to_float(Bits b) { return sim::bf16_to_float(b); }
  static Bits from_float(float f) { return sim::float_to_bf16(f); }
  static inline int typenum = NPY_NOTYPE;
  static inline PyTypeObject* type = nullptr;
};

struct Float8E4M3 {
  using Bits = uint8_t;
  static constexpr const char* kName = "float8_e4m3";
  static constexpr const char* kQualifiedName = "nkic.language.float8_e4m3";
  static constexpr char kTypeChar = '4';
  static float to_float(Bits b) { return sim::fp8_e4m3_to_float(b); }
  static Bits from_float(float f) { return sim::float_to_fp8_e4m3(f); }
  static inline int typenum = NPY_NOTYPE;
  static inline PyTypeObject* type = nullptr;
};

struct Float8E5M2 {
  using Bits = uint8_t;
  static constexpr const char* kName = "float8_e5m2";
  static constexpr const char* kQualifiedName = "nkic.language.float8_e5m2";
  static constexpr char kTypeChar = '5';
  static float to_float(Bits b) { return sim::fp8_e5m2_to_float(b); }
  static Bits from_float(float f) { return sim::float_to_fp8_e5m2(f); }
  static inline int typenum = NPY_NOTYPE;
  static inline PyTypeObject* type = nullptr;
};

// Adds the element-wise ufunc loops of format F to numpy's ufuncs.
// Returns false with a Python error set on failure.
template <class F>
bool register_ufunc_loops(PyObject* numpy);

}  // namespace nkic::py_bind::npdt
