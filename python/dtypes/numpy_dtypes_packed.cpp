// The packed mx dtypes as numpy dtypes of opaque words (four fp8 or fp4 values
// with no single value): integer scalars, no arithmetic, bit-for-bit casts with
// the unsigned integer of their size only.
#include <limits>

#include "numpy_dtypes_storage.h"

namespace nkic::py_bind::npdt {

namespace {

// A packed word from its scalar or any integer that fits. False with a Python error set.
template <class P>
bool packed_bits(PyObject* o, typename P::Bits* out) {
  if (is_scalar<P>(o)) {
    *out = bits_of<P>(o);
    return true;
  }
  PyObject* i = PyNumber_Index(o);
  if (!i) return false;
  const unsigned long long v = PyLong_AsUnsignedLongLong(i);
  Py_DECREF(i);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
  if (v > std::numeric_limits<typename P::Bits>::max()) {
    PyErr_Format(PyExc_OverflowError, "%llu does not fit a %s word", v, P::kName);
    return false;
  }
  *out = static_cast<typename P::Bits>(v);
  return true;
}

template <class P>
PyObject* packed_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  if ((kwds && PyDict_Size(kwds)) || PyTuple_Size(args) != 1) {
    PyErr_Format(PyExc_TypeError, "%s() takes exactly one positional argument", P::kName);
    return nullptr;
  }
  PyObject* arg = PyTuple_GET_ITEM(args, 0);
  typename P::Bits b;
  if (!packed_bits<P>(arg, &b)) return nullptr;
  return make_scalar<P>(b, type);
}

template <class P>
PyObject* packed_int(PyObject* self) { return PyLong_FromUnsignedLongLong(bits_of<P>(self)); }

template <class P>
PyObject* packed_repr(PyObject* self) {
  return PyUnicode_FromFormat("%s(0x%llx)", P::kName, static_cast<unsigned long long>(bits_of<P>(self)));
}

template <class P>
Py_hash_t packed_hash(PyObject* self) { return static_cast<Py_hash_t>(bits_of<P>(self)); }

template <class P>
PyObject* packed_richcompare(PyObject* self, PyObject* other, int op) {
  PyObject* x = packed_int<P>(self);
  PyObject* y = is_scalar<P>(other) ? packed_int<P>(other) : (Py_INCREF(other), other);
  PyObject* r = x && y ? PyObject_RichCompare(x, y, op) : nullptr;
  Py_XDECREF(x);
  Py_XDECREF(y);
  return r;
}

template <class P>
PyTypeObject* make_packed_type() {
  PyType_Slot slots[] = {
      {Py_tp_new, reinterpret_cast<void*>(packed_new<P>)},
      {Py_tp_repr, reinterpret_cast<void*>(packed_repr<P>)},
      {Py_tp_str, reinterpret_cast<void*>(packed_repr<P>)},
      {Py_tp_hash, reinterpret_cast<void*>(packed_hash<P>)},
      {Py_tp_richcompare, reinterpret_cast<void*>(packed_richcompare<P>)},
      {Py_tp_doc, const_cast<char*>("A packed mx word of the NKI type of the same name (four values, no arithmetic).")},
      {Py_nb_int, reinterpret_cast<void*>(packed_int<P>)},
      {Py_nb_index, reinterpret_cast<void*>(packed_int<P>)},
      {0, nullptr},
  };
  return scalar_type_from_slots<P>(slots);
}

template <class P>
PyObject* packed_getitem(void* data, void*) { return PyLong_FromUnsignedLongLong(load<typename P::Bits>(data)); }

template <class P>
int packed_setitem(PyObject* item, void* data, void*) {
  typename P::Bits b;
  if (!packed_bits<P>(item, &b)) return -1;
  store(data, b);
  return 0;
}

template <class P>
npy_bool packed_nonzero(void* data, void*) { return load<typename P::Bits>(data) != 0; }

template <class P>
int packed_compare(const void* a, const void* b, void*) {
  const auto x = load<typename P::Bits>(a), y = load<typename P::Bits>(b);
  return x < y ? -1 : y < x ? 1 : 0;
}

template <class T>
struct UnsignedWord {
  using Bits = T;
};

// Bit for bit between a packed type and the unsigned integer of its size.
template <class From, class To>
void bits_loop(void* from, void* to, npy_intp n, void*, void*) {
  static_assert(sizeof(typename From::Bits) == sizeof(typename To::Bits));
  std::memcpy(to, from, n * sizeof(typename From::Bits));
}

template <class P>
bool register_packed(int word_type) {
  P::type = make_packed_type<P>();
  if (!P::type) return false;
  PyArray_ArrFuncs* f = &Registration<P>::funcs;
  PyArray_InitArrFuncs(f);
  f->getitem = packed_getitem<P>;
  f->setitem = packed_setitem<P>;
  f->copyswapn = arr_copyswapn<P>;
  f->copyswap = arr_copyswap<P>;
  f->nonzero = packed_nonzero<P>;
  f->compare = packed_compare<P>;
  if (!register_descr<P>()) return false;
  using Word = UnsignedWord<typename P::Bits>;
  PyArray_Descr* word = PyArray_DescrFromType(word_type);
  if (!word) return false;
  const bool ok = PyArray_RegisterCastFunc(word, P::typenum, bits_loop<Word, P>) == 0 &&
                  PyArray_RegisterCastFunc(&Registration<P>::descr, word_type, bits_loop<P, Word>) == 0;
  Py_DECREF(word);
  return ok;
}

}  // namespace

bool register_packed_dtypes(PyObject* numpy) {
  return register_packed<Float8E4M3FNx4>(NPY_UINT) && register_packed<Float8E5M2x4>(NPY_UINT) &&
         register_packed<Float4E2M1FNx4>(NPY_USHORT) && register_name<Float8E4M3FNx4>(numpy) &&
         register_name<Float8E5M2x4>(numpy) && register_name<Float4E2M1FNx4>(numpy);
}

}  // namespace nkic::py_bind::npdt
