// The err_* builders of the current nki API's 0.3+ rules and its accepted
// Python subset (docs/current_api.md); the legacy catalog is ErrorCatalog.cpp.
#include "sema/CatalogMake.h"
#include "sema/ErrorCatalog.h"

namespace nkic::sema {

using catalog::make;
using catalog::s;

Diagnostic err_hwdge_dtype_mismatch(std::string_view src, std::string_view dst) {
  return make("err_hwdge_dtype_mismatch",
              "'dma_copy' with dge_mode.hwdge copies bytes and cannot cast: src is '" + s(src) + "', dst is '" +
                  s(dst) + "'", ErrorKind::Type);
}

Diagnostic err_memset_value_dtype(std::string_view value, std::string_view dtype, std::string_view why) {
  return make("err_memset_value_dtype",
              "'memset' value " + s(value) + " does not fit dst dtype '" + s(dtype) + "': " + s(why), ErrorKind::Type);
}

Diagnostic err_output_not_in_shared_hbm(std::string_view tensor, std::string_view memory) {
  return make("err_output_not_in_shared_hbm",
              "kernel output '" + s(tensor) + "' is in '" + s(memory) + "'; outputs must be in shared HBM",
              ErrorKind::Syntax, "allocate it with nl.ndarray(shape, dtype, buffer=nl.shared_hbm)");
}

Diagnostic err_activation_bias_vector(const std::vector<int64_t>& shape, int64_t partitions) {
  return make("err_activation_bias_vector",
              "the bias of activation is a (" + std::to_string(partitions) +
                  ", 1) vector, one value per partition of data; got a tile of shape " + shape_str(shape),
              ErrorKind::Value, "");
}

Diagnostic err_lnc_not_supported(std::string_view launch, int64_t lnc, std::string_view target, int max_cores) {
  std::string n = std::to_string(lnc);
  return make("err_multi_cores_spmd_not_supported",
              s(launch) + " launches the kernel over " + n + " cores, which target '" + s(target) +
                  "' does not have: a logical NeuronCore there spans 1 to " + std::to_string(max_cores) +
                  " physical core(s)",
              ErrorKind::Value, "launch kernel[1] (or kernel[2] on trn2 / trn3)");
}

Diagnostic err_lnc_config_mismatch(int64_t lnc, std::string_view runtime) {
  return make("err_lnc_config_mismatch",
              "kernel[" + std::to_string(lnc) + "] does not match NEURON_LOGICAL_NC_CONFIG=" + s(runtime) +
                  ": the runtime launches every kernel over the logical NeuronCore size it is configured with",
              ErrorKind::Value);
}

Diagnostic err_core_sync_mismatch(std::string_view how) {
  return make("err_core_sync_mismatch",
              "the cores synchronise (core_barrier, sendrecv) in this loop but " + s(how) +
                  ": every core must pass the same synchronisation points, or one waits for the other forever",
              ErrorKind::Runtime, "bound the loop by a value every core computes alike");
}

Diagnostic err_multi_rank_arguments(std::string_view argument, int64_t rank, std::string_view first,
                                    std::string_view theirs) {
  return make("err_multi_rank_arguments",
              "nki.multi_rank_simulate: argument '" + s(argument) + "' of rank " + std::to_string(rank) + " is " +
                  s(theirs) + ", rank 0's is " + s(first) +
                  ": the ranks share one specialization, so tensors have one shape and dtype and every other "
                  "argument is equal on every rank",
              ErrorKind::Value);
}

Diagnostic err_no_neuron_device(std::string_view api, std::string_view instead) {
  return make("err_no_neuron_device",
              s(api) + " runs the kernel on a NeuronDevice, and there is none here: nkic runs kernels on its CPU "
                       "simulator",
              ErrorKind::Runtime, "use " + s(instead));
}

Diagnostic err_unsupported_python_construct(std::string_view what, std::string_view hint) {
  return make("err_unsupported_python_construct", s(what) + " is not supported in an NKI kernel", ErrorKind::Syntax,
              s(hint));
}

Diagnostic err_address_out_of_range(std::string_view tensor, std::string_view why) {
  return make("err_address_out_of_range", "address= of '" + s(tensor) + "' does not fit: " + s(why), ErrorKind::Syntax);
}

Diagnostic err_address_overlap(std::string_view tensor, std::string_view other, std::string_view where) {
  return make("err_address_overlap",
              "address= of '" + s(tensor) + "' overlaps '" + s(other) + "' (" + s(where) +
                  ") while both are in use: one would overwrite the other", ErrorKind::Syntax);
}

Diagnostic err_psum_address_not_bank_aligned(std::string_view tensor, int64_t offset, int64_t bank_bytes) {
  return make("err_psum_address_not_bank_aligned",
              "address= of PSUM tensor '" + s(tensor) + "' starts at free byte offset " + std::to_string(offset) +
                  ", not on a PSUM bank boundary (a multiple of " + std::to_string(bank_bytes) + " bytes)",
              ErrorKind::Syntax, "use address=(partition, bank * " + std::to_string(bank_bytes) + ")");
}

Diagnostic warn_matmul_dst_crosses_psum_bank(std::string_view tensor, int64_t first_byte, int64_t last_byte,
                                             int64_t bank_bytes) {
  return make("warn_matmul_dst_crosses_psum_bank",
              "nc_matmul writes PSUM tensor '" + s(tensor) + "' at free bytes " + std::to_string(first_byte) + "-" +
                  std::to_string(last_byte) + " of each partition, across a " + std::to_string(bank_bytes) +
                  "-byte PSUM bank boundary: before NeuronCore-v4 a matmul's output fits one bank, so the "
                  "hardware's result is wrong there",
              ErrorKind::Syntax,
              "start each matmul's dst at a multiple of " + std::to_string(bank_bytes) +
                  " bytes and keep it within one bank");
}

Diagnostic warn_matmul_accumulate_uninitialized(std::string_view tensor) {
  return make("warn_matmul_accumulate_uninitialized",
              "nc_matmul(accumulate=True) adds onto PSUM tensor '" + s(tensor) +
                  "', which nothing wrote before: the hardware's result is undefined", ErrorKind::Syntax);
}

Diagnostic warn_local_gather_num_valid_indices(int64_t future_default) {
  return make("warn_local_gather_num_valid_indices",
              "nisa.local_gather without num_valid_indices: NKI 0.8 leaves the result undefined and will default "
              "it to dst_free_size / num_elem_per_idx = " + std::to_string(future_default) +
                  "; nkic gathers every index of the core's partitions",
              ErrorKind::Syntax, "pass num_valid_indices explicitly");
}

Diagnostic warn_bitvec_op_engine(std::string_view api, std::string_view op, std::string_view engine) {
  return make("warn_bitvec_op_engine",
              "'" + s(api) + "' with the bitvec operator '" + s(op) + "' on the " + s(engine) +
                  " engine: NKI 0.8 announces that this will be rejected (bitvec operators belong to the Vector "
                  "Engine)",
              ErrorKind::Syntax, "pass engine=nisa.engine.vector or leave engine out");
}

Diagnostic warn_dependency_against_program_order(std::string_view consumer, std::string_view producer,
                                                 const ir::SourceLoc& producer_loc) {
  return make("warn_dependency_against_program_order",
              "'" + s(consumer) + "' is made to wait for '" + s(producer) + "' (line " +
                  std::to_string(producer_loc.line) +
                  "), which is traced after it: nkic runs and costs the instructions in program order, so the edge "
                  "is ignored", ErrorKind::Syntax);
}


Diagnostic err_unsupported_nki_version(std::string_view value, std::string_view accepted) {
  return make("err_unsupported_nki_version",
              "NKIC_NKI_VERSION='" + s(value) + "' names no NKI version nkic serves: one of " + s(accepted) +
                  " (with or without a patch number, e.g. 0.6.0)",
              ErrorKind::Value, "unset NKIC_NKI_VERSION to serve the newest");
}

Diagnostic err_removed_in_nki_version(std::string_view form, std::string_view removed, std::string_view served,
                                      std::string_view instead, std::string_view last) {
  return make("err_removed_in_nki_version",
              s(form) + " was removed in nki " + s(removed) + " (nkic serves nki " + s(served) + ")",
              ErrorKind::Syntax,
              "use " + s(instead) + " (`nkic migrate` writes the newest API); NKIC_NKI_VERSION=" + s(last) +
                  " runs the kernel as nki " + s(last) + " did");
}

Diagnostic err_not_in_nki_version(std::string_view form, std::string_view introduced, std::string_view served,
                                  std::string_view instead) {
  return make("err_not_in_nki_version",
              s(form) + " is not in nki " + s(served) + " (NKIC_NKI_VERSION=" + s(served) + "): it came in nki " +
                  s(introduced),
              ErrorKind::Syntax,
              "NKIC_NKI_VERSION=" + s(introduced) + " or newer serves it; nki " + s(served) + " writes " + s(instead));
}

Diagnostic warn_deprecated_in_nki_version(std::string_view form, std::string_view since, std::string_view instead) {
  return make("warn_deprecated_in_nki_version",
              s(form) + " is deprecated since nki " + s(since) + ": use " + s(instead), ErrorKind::Syntax);
}

}  // namespace nkic::sema
