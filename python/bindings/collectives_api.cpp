// nki.collectives and nki.lnc of the current API (python/nki): conversions to the builders of
// codegen/Collectives.h and codegen/Cores.h.
#include <pybind11/stl.h>

#include "codegen/Collectives.h"
#include "codegen/Cores.h"
#include "errors.h"
#include "schedule_api.h"
#include "sema/ErrorCatalog.h"
#include "trace/TraceContext.h"
#include "values.h"

namespace nkic::py_bind {

namespace {

codegen::KernelBuilder& builder(const std::string& api) { return trace::TraceContext::nki_ctx(api.c_str()).builder(); }

std::vector<types::TensorVal> tensors_arg(py::handle list, const char* what) {
  std::vector<types::TensorVal> ts;
  for (py::handle h : list) ts.push_back(tensor_arg(h, what));
  return ts;
}

// One list of tensors per channel.
std::vector<std::vector<types::TensorVal>> channels_arg(py::handle lists, const char* what) {
  std::vector<std::vector<types::TensorVal>> by_channel;
  for (py::handle list : lists) by_channel.push_back(tensors_arg(list, what));
  return by_channel;
}

const std::map<std::string, codegen::Collective>& kinds() {
  static const std::map<std::string, codegen::Collective> k = {
      {"all_reduce", codegen::Collective::all_reduce},         {"all_gather", codegen::Collective::all_gather},
      {"reduce_scatter", codegen::Collective::reduce_scatter}, {"all_to_all", codegen::Collective::all_to_all},
      {"collective_permute", codegen::Collective::permute},  {"all_to_all_v", codegen::Collective::all_to_all_v},
      {"all_gather_v", codegen::Collective::all_gather_v}};
  return k;
}

}  // namespace

void bind_collectives_api(py::module_& m) {
  // ncc.<kind>(srcs, dsts, ...): `groups` the replica group's lists (collective_permute: its pairs).
  // all_to_all_v / all_gather_v take `metadata` and its flags; `prepare`: their *_prepare form.
  m.def("collective", [](const std::string& kind, py::sequence srcs, py::sequence dsts,
                         std::vector<std::vector<int64_t>> groups, std::optional<std::string> op, int64_t dim,
                         std::optional<int64_t> priority, bool lnc1_shared_hbm, py::handle metadata,
                         bool recv_counts_known, bool has_rdispls, bool prepare) {
    codegen::KernelBuilder& b = builder("ncc." + kind + (prepare ? "_prepare" : ""));
    codegen::CollectiveCall c;
    c.kind = kinds().at(kind);
    c.srcs = tensors_arg(srcs, "srcs");
    c.dsts = tensors_arg(dsts, "dsts");
    c.groups = std::move(groups);
    if (op) c.op = alu_of(*op);
    c.collective_dim = dim;
    c.priority = priority;
    c.lnc1_shared_hbm = lnc1_shared_hbm;
    if (!metadata.is_none()) c.metadata = tensor_arg(metadata, "metadata_tensor");
    c.recv_counts_known = recv_counts_known;
    c.has_rdispls = has_rdispls;
    if (prepare) codegen::collective_prepare(b, c);
    else codegen::collective(b, c);
  });
  m.def("collective_trigger", [](const std::string& kind, py::handle prepare_instr) {
    trace::TraceContext& ctx = trace::TraceContext::nki_ctx(("ncc." + kind + "_trigger").c_str());
    codegen::collective_trigger(ctx.builder(), kinds().at(kind), instruction_first(ctx, prepare_instr, "prepare_instr"));
  });
  m.def("check_prepares_triggered",
        [] { codegen::check_prepares_triggered(trace::TraceContext::nki_ctx("nki.jit").builder()); });
  // ncc.collective_permute_implicit(_reduce): lists of tensor lists, one per channel (srcs1 with op only).
  m.def("collective_permute_implicit", [](py::sequence srcs, py::object srcs1, py::sequence dsts,
                                          std::vector<std::vector<int64_t>> groups, std::optional<std::string> op,
                                          std::vector<int64_t> channel_ids, std::optional<int64_t> priority) {
    codegen::RingPermuteCall c;
    c.srcs = channels_arg(srcs, op ? "srcs0_by_channel" : "srcs_by_channel");
    if (op) c.srcs1 = channels_arg(srcs1, "srcs1_by_channel");
    c.dsts = channels_arg(dsts, "dsts_by_channel");
    c.groups = std::move(groups);
    if (op) c.op = alu_of(*op);
    c.channel_ids = std::move(channel_ids);
    c.priority = priority;
    codegen::collective_permute_implicit(
        builder(op ? "ncc.collective_permute_implicit_reduce" : "ncc.collective_permute_implicit"), c);
  });
  m.def("current_processing_rank_id", [](py::handle reg, int64_t iteration,
                                         const std::vector<std::vector<int64_t>>& groups, int64_t channel_id) {
    codegen::current_processing_rank_id(builder("ncc.collective_permute_implicit_current_processing_rank_id"),
                                        tensor_arg(reg, "register"), iteration, groups, channel_id);
  });
  m.def("rank_id", [](py::handle reg) { codegen::rank_id(builder("ncc.rank_id"), tensor_arg(reg, "register")); });
  m.def("self_index_in_replica_group", [](py::handle reg, const std::vector<std::vector<int64_t>>& groups) {
    codegen::self_index_in_replica_group(builder("ncc.self_index_in_replica_group"), tensor_arg(reg, "scalar"), groups);
  });
  m.def("replica_groups_from_partition_op", &codegen::replica_groups_from_partition_op);
  m.def("check_uniform_arguments", &codegen::check_uniform_arguments);
  m.def("raise_no_neuron_device", [](const std::string& api, const std::string& instead) {
    sema::fail(sema::err_no_neuron_device(api, instead));
  });
  // nki.lnc (NKI 0.8): the calls of nisa.sendrecv / sendrecv_compute / core_barrier, without their
  // deprecation and with their 0.8 rules (codegen/Cores.h).
  m.def("lnc_sendrecv", [](py::handle src, py::handle dst, int64_t send_to, int64_t recv_from,
                           std::optional<std::string> reduce_op, bool gpsimd_dma, std::optional<int64_t> priority) {
    codegen::LncForm form{true, gpsimd_dma, priority};
    std::optional<ir::AluOp> op;
    if (reduce_op) op = alu_of(*reduce_op);
    codegen::sendrecv(builder(op ? "nki.lnc.sendrecv_compute" : "nki.lnc.sendrecv"), tensor_arg(src, "src"),
                      tensor_arg(dst, "dst"), send_to, recv_from, op, form);
  });
  m.def("lnc_core_barrier", [](py::handle data, const std::vector<int64_t>& cores) {
    codegen::core_barrier(builder("nki.lnc.core_barrier"), tensor_arg(data, "data"), cores, {true, false, {}});
  });
}

}  // namespace nkic::py_bind
