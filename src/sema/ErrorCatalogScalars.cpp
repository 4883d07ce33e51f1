#include "sema/ErrorCatalogScalars.h"

#include "sema/CatalogMake.h"
#include "sema/ErrorCatalog.h"

namespace nkic::sema {

using catalog::make;
using catalog::s;

Diagnostic err_scalar_dtype(std::string_view api, std::string_view what, std::string_view dtype,
                            std::string_view hint) {
  return make("err_scalar_dtype",
              "'" + s(api) + "' " + s(what) + " is '" + s(dtype) + "': a scalar is nl.int32 or nl.int64",
              ErrorKind::Type, s(hint));
}

Diagnostic err_scalar_shape(std::string_view api, std::string_view what, const std::vector<int64_t>& shape) {
  return make("err_scalar_shape",
              "'" + s(api) + "' " + s(what) + " holds one scalar: a (1, 1) tensor, got shape " + shape_str(shape),
              ErrorKind::Value);
}

Diagnostic err_scalar_width_mismatch(std::string_view api, std::string_view why) {
  return make("err_scalar_width_mismatch", "'" + s(api) + "' " + s(why) + ": a scalar's width is fixed when it is made",
              ErrorKind::Type,
              "make both scalars the same width: load them from tensors of the same dtype (nl.int32 or nl.int64)");
}

Diagnostic err_scalar_int64_unsupported(std::string_view api, std::string_view what, std::string_view hint) {
  return make("err_scalar_int64_unsupported", "'" + s(api) + "' " + s(what) + " takes 32-bit scalars only, got an int64 one",
              ErrorKind::Type, s(hint));
}

Diagnostic err_wide_dtype_compute(std::string_view instruction, std::string_view tensor, std::string_view dtype) {
  return make("err_wide_dtype_compute",
              "'" + s(instruction) + "' cannot read or write '" + s(tensor) + "' of dtype '" + s(dtype) +
                  "': no compute engine handles 64-bit integers",
              ErrorKind::Type,
              "64-bit integers are scalars and HBM offsets: load one with nisa.scalar_load, compute with NkiScalar "
              "arithmetic, and move tensors of them with nisa.dma_copy between tensors of the same dtype");
}

Diagnostic err_scalar_condition() {
  return make("err_dynamic_control_flow_not_supported",
              "dynamic control-flow depending on tensor value is not supported: the condition is an NkiScalar, "
              "which holds a value only when the kernel runs on the device",
              ErrorKind::Syntax,
              "tracing runs the kernel's Python once, where a scalar is symbolic: branch on the device with "
              "nl.if_else(cond, then_fn, else_fn), loop with nl.while_loop(init, body_fun), or pass a Python value "
              "to decide when traced");
}

Diagnostic err_scalar_python_operator(std::string_view op) {
  const bool conversion = op == "int()";
  return make("err_instruction_unsupported_op", "unsupported operator '" + s(op) + "' on an NkiScalar", ErrorKind::Value,
              conversion ? "a scalar holds a value only when the kernel runs: compute with it, or use it as a loop "
                           "bound, an nl.if_else condition or an .ap(scalar_offset=)"
                         : "Python's // floors and % takes the divisor's sign, the scalar ALU truncates: call "
                           "nisa.scalar_alu(a, b, op=nl.divide) (toward zero) or op=nl.fmod (a's sign)");
}

}  // namespace nkic::sema
