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

// The OCP formats of NKI 0.2+ / 0.5+, as ml_dtypes spells them (NKI's simulator
// takes ml_dtypes arrays; these are the same bytes under the same names).
struct Float8E4M3FN {
  using Bits = uint8_t;
  static constexpr const char* kName = "float8_e4m3fn";
  static constexpr const char* kQualifiedName = "nkic.language.float8_e4m3fn";
  static constexpr char kTypeChar = '7';
  static float to_float(Bits b) { return sim::fp8_e4m3fn_to_float(b); }
  static Bits from_float(float f) { return sim::float_to_fp8_e4m3fn(f); }
  static inline int typenum = NPY_NOTYPE;
  static inline PyTypeObject* type = nullptr;
};

struct Float8E8M0FNU {
  using Bits = uint8_t;
  static constexpr const char* kName = "float8_e8m0fnu";
  static constexpr const char* kQualifiedName = "nkic.language.float8_e8m0fnu";
  static constexpr char kTypeChar = '0';
  static float to_float(Bits b) { return sim::e8m0_to_float(b); }
  static Bits from_float(float f) { return sim::float_to_e8m0(f); }
  static inline int typenum = NPY_NOTYPE;
  static inline PyTypeObject* type = nullptr;
};

// The packed mx dtypes: words of four fp8 (fp4) values with no single value,
// so numpy sees them as opaque words (the integer of their bits), converting
// only bit for bit to and from the unsigned integer of their size.
template <class Word, char kChar>
struct Packed {
  using Bits = Word;
  static constexpr char kTypeChar = kChar;
  static inline int typenum = NPY_NOTYPE;
  static inline PyTypeObject* type = nullptr;
};
struct Float8E4M3FNx4 : Packed<uint32_t, 'q'> {
  static constexpr const char* kName = "float8_e4m3fn_x4";
  static constexpr const char* kQualifiedName = "nkic.language.float8_e4m3fn_x4";
};
struct Float8E5M2x4 : Packed<uint32_t, 'r'> {
  static constexpr const char* kName = "float8_e5m2_x4";
  static constexpr const char* kQualifiedName = "nkic.language.float8_e5m2_x4";
};
struct Float4E2M1FNx4 : Packed<uint16_t, 's'> {
  static constexpr const char* kName = "float4_e2m1fn_x4";
  static constexpr const char* kQualifiedName = "nkic.language.float4_e2m1fn_x4";
};

// Registers the three packed dtypes and their names. False with a Python error set.
bool register_packed_dtypes(PyObject* numpy);

// Adds the element-wise ufunc loops of format F to numpy's ufuncs.
// Returns false with a Python error set on failure.
template <class F>
bool register_ufunc_loops(PyObject* numpy);

}  // namespace nkic::py_bind::npdt
