// nki.compiler as Python sees it (sema/CompileConfig.h, trace/KernelConfig.h): CompileConfig,
// whose Python class derives from this one, built from its keyword arguments; the enums' names;
// the checks a current-API trace makes of its configs, its LNC degree and its nested kernels.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/Cores.h"
#include "errors.h"
#include "sema/CompileConfig.h"
#include "sema/ErrorCatalog.h"
#include "trace/KernelConfig.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

// A Python value as a config field: None, a bool, a member of an nki.compiler enum, or other.
sema::FieldValue field_value(py::handle v) {
  sema::FieldValue f;
  using K = sema::FieldValue::Kind;
  const py::handle type = py::type::handle_of(v);
  if (v.is_none()) {
    f.kind = K::None;
  } else if (PyBool_Check(v.ptr())) {
    f.kind = K::Bool;
    f.flag = v.ptr() == Py_True;
  } else if (py::isinstance(v, py::module_::import("enum").attr("Enum")) &&
             type.attr("__module__").cast<std::string>() == "nki.compiler") {
    f.kind = K::Member;
    f.enum_name = type.attr("__name__").cast<std::string>();
    f.member = v.attr("name").cast<std::string>();
  } else {
    f.kind = K::Other;
  }
  return f;
}

py::object python_value(const sema::FieldValue& f) {
  using K = sema::FieldValue::Kind;
  if (f.kind == K::Bool) return py::bool_(f.flag);
  if (f.kind == K::Member) return py::make_tuple(f.enum_name, f.member);
  return py::none();
}

// The config a kernel gave: nullopt for None; a value of another type is err_compile_config_type.
std::optional<sema::CompileConfig> config_arg(py::handle v) {
  if (v.is_none()) return std::nullopt;
  if (!py::isinstance<sema::CompileConfig>(v))
    sema::fail(sema::err_compile_config_type("compile_config", "an nki.compiler.CompileConfig or None"));
  return v.cast<sema::CompileConfig>();
}

trace::TraceContext& jit_ctx() { return trace::TraceContext::nki_ctx("nki.jit"); }

}  // namespace

void bind_compiler_api(py::module_& m) {
  py::class_<sema::CompileConfig>(m, "CompileConfig")
      .def(py::init([](const py::dict& fields) {
        std::vector<std::pair<std::string, sema::FieldValue>> given;
        for (auto [k, v] : fields) given.emplace_back(py::str(k).cast<std::string>(), field_value(v));
        return sema::CompileConfig::make(given);
      }))
      // What was given for a field: None, a bool, or (enum class name, member name).
      .def("given", [](const sema::CompileConfig& c, const std::string& field) { return python_value(c.given(field)); })
      .def("repr", &sema::CompileConfig::repr);
  m.def("compile_config_fields", &sema::compile_config_fields);
  m.def("compile_config_enums", [] {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (const sema::ConfigEnum& e : sema::compile_config_enums()) out.emplace_back(e.name, e.members);
    return out;
  });
  // SpecializationConfig(allow_nested_config_override=...): the bool it holds.
  m.def("specialization_config", [](py::handle allow_nested_config_override) {
    return sema::SpecializationConfig::make(field_value(allow_nested_config_override)).allow_nested_config_override;
  });
  // nki.jit(compile_config=, specialization_config=): the types it takes, at the decoration.
  m.def("check_jit_configs", [](py::handle compile_config, py::handle specialization_config, py::handle spec_type) {
    config_arg(compile_config);
    if (!specialization_config.is_none() && !py::isinstance(specialization_config, spec_type))
      sema::fail(
          sema::err_compile_config_type("specialization_config", "an nki.compiler.SpecializationConfig or None"));
  });
  m.def("configure_kernel", [](py::handle compile_config, bool allow_nested_config_override,
                               const std::string& compiler_frontend, const std::string& prefetch_ring_size) {
    sema::SpecializationConfig spec;
    spec.allow_nested_config_override = allow_nested_config_override;
    trace::configure_kernel(jit_ctx(), config_arg(compile_config).value_or(sema::CompileConfig{}), spec,
                            {compiler_frontend, prefetch_ring_size});
  });
  m.def("check_nested_config", [](const std::string& kernel, py::handle compile_config) {
    trace::check_nested_config(jit_ctx(), kernel, config_arg(compile_config));
  });
  // The kernel's LNC degree (codegen/Cores.h), as the NKI version served resolves it.
  m.def("resolve_lnc", [](const std::string& kernel, py::handle bracket, const std::string& runtime,
                          const std::string& cc_flags) {
    codegen::KernelBuilder& b = jit_ctx().builder();
    const std::optional<int64_t> lnc =
        bracket.is_none() ? std::nullopt : std::optional<int64_t>(int_arg(bracket, "kernel[lnc]", kernel));
    return codegen::resolve_lnc(b, kernel, lnc, runtime, cc_flags, b.nki_version.at_least(0, 7));
  });
}

}  // namespace nkic::py_bind
