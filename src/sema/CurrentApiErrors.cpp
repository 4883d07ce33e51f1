#include "sema/CurrentApiErrors.h"

#include <string>

namespace nkic::sema {

namespace {
Diagnostic make(std::string code, std::string msg, ErrorKind kind, std::string hint) {
  Diagnostic d;
  d.code = std::move(code);
  d.message = std::move(msg);
  d.kind = kind;
  d.hint = std::move(hint);
  return d;
}
std::string s(std::string_view v) { return std::string(v); }
}  // namespace

Diagnostic err_hwdge_dtype_mismatch(std::string_view src, std::string_view dst) {
  return make("err_hwdge_dtype_mismatch",
              "'dma_copy' with dge_mode.hwdge copies bytes and cannot cast: src is '" + s(src) + "', dst is '" +
                  s(dst) + "'",
              ErrorKind::Type, "give src and dst one dtype (reinterpret with .view(dtype)), or leave dge_mode unknown");
}

Diagnostic err_memset_value_dtype(std::string_view value, std::string_view dtype, std::string_view why) {
  return make("err_memset_value_dtype",
              "'memset' value " + s(value) + " does not fit dst dtype '" + s(dtype) + "': " + s(why), ErrorKind::Type,
              "pass a value of dst's type (an int literal for integer tensors)");
}

Diagnostic err_output_not_in_shared_hbm(std::string_view tensor, std::string_view memory) {
  return make("err_output_not_in_shared_hbm",
              "kernel output '" + s(tensor) + "' is in '" + s(memory) + "'; outputs must be in shared HBM",
              ErrorKind::Syntax, "allocate it with nl.ndarray(shape, dtype, buffer=nl.shared_hbm)");
}

Diagnostic err_unsupported_python_construct(std::string_view what, std::string_view hint) {
  return make("err_unsupported_python_construct", s(what) + " is not supported in an NKI kernel", ErrorKind::Syntax,
              s(hint));
}

}  // namespace nkic::sema
