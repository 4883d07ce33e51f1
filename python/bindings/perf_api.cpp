// The cost model as Python sees it: core.profile(kernel, target) returns a
// Profile whose fields convert to plain Python values; the timeline leaves C++
// only as the Perfetto JSON and HTML texts perf/ writes.
#include <pybind11/stl.h>

#include <memory>

#include "errors.h"
#include "kernel_api.h"
#include "perf/CostModel.h"
#include "perf/Report.h"
#include "sema/ErrorCatalog.h"
#include "sema/Target.h"

namespace nkic::py_bind {

namespace {

py::object location(const ir::SourceLoc& loc) {
  if (!loc.known()) return py::none();
  return py::make_tuple(*loc.file, loc.line, loc.col);
}

std::shared_ptr<perf::Profile> profile(const PyKernel& kernel, const std::string& target, int64_t max_slices) {
  const sema::Target* t = sema::find_target(target);
  if (!t) raise_diagnostic(sema::err_incorrect_target_type(target));
  perf::Options o;
  o.max_slices = max_slices;
  o.config = kernel.config;
  o.prefetch_ring = kernel.prefetch_ring;
  try {
    return std::make_shared<perf::Profile>(perf::predict(*kernel.k, *t, o));
  } catch (const ir::NkiError& e) {
    raise_diagnostic(e.diag());
    throw py::error_already_set();
  }
}

}  // namespace

void bind_perf_api(py::module_& m) {
  py::class_<perf::Profile, std::shared_ptr<perf::Profile>>(m, "Profile")
      .def_readonly("kernel", &perf::Profile::kernel)
      .def_readonly("target", &perf::Profile::target)
      .def_readonly("latency_ns", &perf::Profile::latency)
      .def_readonly("hfu", &perf::Profile::hfu)
      .def_readonly("mfu", &perf::Profile::mfu)
      .def_readonly("dma_bytes", &perf::Profile::dma_bytes)
      .def_readonly("dma_queues", &perf::Profile::dma_queues)
      .def_readonly("cores", &perf::Profile::cores)
      .def_readonly("dma_utilisation", &perf::Profile::dma_utilisation)
      .def_readonly("sbuf_peak_bytes", &perf::Profile::sbuf_peak_bytes)
      .def_readonly("psum_peak_bytes", &perf::Profile::psum_peak_bytes)
      .def_readonly("sbuf_capacity_bytes", &perf::Profile::sbuf_capacity_bytes)
      .def_readonly("psum_capacity_bytes", &perf::Profile::psum_capacity_bytes)
      .def_readonly("instructions", &perf::Profile::instructions)
      .def_readonly("instructions_scheduled", &perf::Profile::instructions_scheduled)
      .def_readonly("notes", &perf::Profile::notes)
      .def_readonly("decided_by", &perf::Profile::decided_by)
      .def_readonly("allocation", &perf::Profile::allocation)
      .def_readonly("scheduling", &perf::Profile::scheduling)
      .def_readonly("slices_dropped", &perf::Profile::slices_dropped)
      .def_property_readonly("num_slices", [](const perf::Profile& p) { return p.slices.size(); })
      // (track name, busy ns, instruction count) for pe, act, dve, pool, dma.
      .def_property_readonly("engines", [](const perf::Profile& p) {
        py::list l;
        for (const perf::EngineUse& e : p.engines) l.append(py::make_tuple(perf::name(e.track), e.busy, e.instructions));
        return l;
      })
      // ((file, line, col), busy ns, critical ns, instructions), by busy time.
      .def_property_readonly("lines", [](const perf::Profile& p) {
        py::list l;
        for (const perf::LineCost& c : p.lines) l.append(py::make_tuple(location(c.loc), c.busy, c.critical, c.instructions));
        return l;
      })
      // (api, isa name, track, start ns, end ns, repeat, (file, line, col)), latest first.
      .def_property_readonly("critical_path", [](const perf::Profile& p) {
        py::list l;
        for (const perf::CriticalStep& s : p.critical_path)
          l.append(py::make_tuple(s.api, s.repeat > 1 ? "" : ir::name(s.opcode), perf::track_name(p, s.track), s.start, s.end,
                                  s.repeat, location(s.loc)));
        return l;
      })
      // (time ns, SBUF bytes per partition, PSUM bytes per partition).
      .def_property_readonly("occupancy", [](const perf::Profile& p) {
        py::list l;
        for (const perf::OccupancySample& s : p.occupancy) l.append(py::make_tuple(s.time, s.sbuf_bytes, s.psum_bytes));
        return l;
      })
      .def("trace_json", [](const perf::Profile& p) { return perf::trace_json(p); })
      .def("html", [](const perf::Profile& p) { return perf::html_report(p); });
  m.def("profile", &profile, py::arg("kernel"), py::arg("target"), py::arg("max_slices") = 200000);
}

}  // namespace nkic::py_bind
