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

Diagnostic warn_dependency_against_program_order(std::string_view consumer, std::string_view producer,
                                                 const ir::SourceLoc& producer_loc) {
  return make("warn_dependency_against_program_order",
              "'" + s(consumer) + "' is made to wait for '" + s(producer) + "' (line " +
                  std::to_string(producer_loc.line) +
                  "), which is traced after it: nkic runs and costs the instructions in program order, so the edge "
                  "is ignored", ErrorKind::Syntax);
}

}  // namespace nkic::sema
