#include "sema/NkiVersion.h"

#include <charconv>
#include <cstdlib>

#include "sema/ErrorCatalog.h"

namespace nkic::sema {

namespace {

// Reads one decimal number off the front of `text`.
std::optional<int> number(std::string_view& text) {
  auto digit = [&text](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  if (!digit(0) || (text.front() == '0' && digit(1))) return std::nullopt;  // no sign, no leading zero
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc()) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return v;
}

bool dot(std::string_view& text) {
  if (text.empty() || text.front() != '.') return false;
  text.remove_prefix(1);
  return true;
}

}  // namespace

std::string NkiVersion::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::optional<NkiVersion> parse_nki_version(std::string_view text) {
  std::optional<int> major = number(text);
  if (!major || !dot(text)) return std::nullopt;
  std::optional<int> minor = number(text);
  if (!minor || (dot(text) && !number(text)) || !text.empty()) return std::nullopt;
  NkiVersion v{*major, *minor};
  if (v < kOldestNkiVersion || v > kNewestNkiVersion) return std::nullopt;
  return v;
}

NkiVersion served_nki_version() {
  const char* env = std::getenv("NKIC_NKI_VERSION");
  if (env == nullptr || *env == '\0') return kNewestNkiVersion;
  std::optional<NkiVersion> v = parse_nki_version(env);
  if (!v) {
    std::string accepted;
    for (NkiVersion a = kOldestNkiVersion; a <= kNewestNkiVersion; ++a.minor)
      accepted += (accepted.empty() ? "" : ", ") + a.str();
    fail(err_unsupported_nki_version(env, accepted));
  }
  return *v;
}

namespace {
constexpr std::string_view kScalarsInstead = "nisa.scalar_load, nisa.scalar_store and NkiScalar arithmetic";
}  // namespace

// The migration tables of the NKI docs (NKI_CURRENT_API.md §9.1, §11; NKI_07_08_API.md §10),
// for the forms whose acceptance is all that changed.
const std::vector<VersionedForm>& versioned_forms() {
  static const std::vector<VersionedForm> forms = {
      {"nki.jit(platform_target=)", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3},
       "@nki.jit, and the target in the environment variable NEURON_PLATFORM_TARGET_OVERRIDE (trn1, trn2, trn3)"},
      {"nki.jit(mode=)", kOldestNkiVersion, NkiVersion{0, 3}, std::nullopt, "@nki.jit (the compiler ignores mode=)"},
      {"nisa.tensor_copy(dtype=)", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3},
       "nisa.tensor_copy(dst, src): the copy converts to dst's dtype, so allocate dst with the dtype wanted"},
      {"the builtin buffer's .view(dtype=, shape=)", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3},
       "nl.ndarray(shape, dtype, buffer=nl.sbuf) (nl.psum, nl.shared_hbm)"},
      {"kernel[grid] (an SPMD launch grid)", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3},
       "a plain call, kernel(...), looping over the tiles inside the kernel (kernel[n] takes one integer, the "
       "logical NeuronCore size)"},
      {"a list argument to a kernel", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3}, "a tuple: tuple(...)"},
      {"a write to a loop variable inside its loop", kOldestNkiVersion, std::nullopt, NkiVersion{0, 4},
       "another name"},
      // Forms a later version's rule forbids (§9.1 "0.3.0 tightening", §9.2); the rule's own
      // diagnostic rejects them, asking accepts().
      {"nisa.dma_copy from PSUM", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3},
       "nisa.tensor_copy into SBUF, then nisa.dma_copy"},
      {"nisa.memset of a fractional value into an integer tensor", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3},
       "an integer value"},
      {"nisa.range_select(on_false_value=) other than FP32_MIN", kOldestNkiVersion, std::nullopt, NkiVersion{0, 3},
       "on_false_value=nl.fp32.min, then nisa.tensor_scalar on the selected tile"},
      {"nl.rsqrt of a PSUM tile", kOldestNkiVersion, std::nullopt, NkiVersion{0, 5},
       "nl.rsqrt of an SBUF tile (nisa.tensor_copy the PSUM tile first)"},
      {"nl.dynamic_range", kOldestNkiVersion, NkiVersion{0, 6}, NkiVersion{0, 7}, "nl.fori_loop(lower, upper, body)"},
      {"`while reg:`", kOldestNkiVersion, NkiVersion{0, 6}, NkiVersion{0, 7}, "nl.while_loop(reg, body)"},
      {"nl.fori_loop", NkiVersion{0, 6}, std::nullopt, std::nullopt, "`for i in nl.dynamic_range(...)`"},
      {"nl.while_loop", NkiVersion{0, 6}, std::nullopt, std::nullopt, "`while reg:`"},
      {"nisa.exponential", NkiVersion{0, 3}, std::nullopt, std::nullopt,
       "nisa.activation(dst, op=nl.exp, data, bias=...)"},
      {"nisa.activate2", NkiVersion{0, 4}, std::nullopt, std::nullopt,
       "nisa.tensor_scalar(...) then nisa.activation(...)"},
      // The 0.4.0 release notes: the abs_max / abs_min ALU ops and the prelu activation.
      {"nl.abs_max", NkiVersion{0, 4}, std::nullopt, std::nullopt, "nl.abs of each operand, then nl.maximum"},
      {"nl.abs_min", NkiVersion{0, 4}, std::nullopt, std::nullopt, "nl.abs of each operand, then nl.minimum"},
      {"nl.prelu", NkiVersion{0, 4}, std::nullopt, std::nullopt,
       "nl.maximum(x, 0) plus relu_param times nl.minimum(x, 0)"},
      // The 0.5.0 release notes: the MX block scale's dtype.
      {"nl.float8_e8m0fnu", NkiVersion{0, 5}, std::nullopt, std::nullopt, "nl.uint8 scale tiles"},
      {"the NkiTensor view methods (slice, select, permute, ...)", NkiVersion{0, 5}, std::nullopt, std::nullopt,
       "slices, nl.ds(start, size) and .ap(pattern=...)"},
      {"nisa.tensor_scalar_reduce(reduce_res=None)", NkiVersion{0, 6}, std::nullopt, std::nullopt,
       "a (P, 1) reduce_res tile"},
      {"nisa.topk", NkiVersion{0, 6}, std::nullopt, std::nullopt, "nisa.max8 and nisa.nc_find_index8"},
      // NKI 0.7 (NKI_07_08_API.md §0, §1, §4, §6, §8) and 0.8 (§5, §7).
      {"the tracer frontend's Python (any class, `is`, non-string dict keys)", NkiVersion{0, 7}, std::nullopt,
       std::nullopt, "classes deriving from nl.NKIObject, `==` for `is`, string dict keys"},
      {"the tile grids (nl.tiles, nl.blocks, nl.alloc_tiles, nl.alloc_blocks)", NkiVersion{0, 7}, std::nullopt,
       std::nullopt, "nl.ndarray tiles and .ap(...) views of HBM"},
      {"nki.jit(compile_config=, specialization_config=)", NkiVersion{0, 7}, std::nullopt, std::nullopt,
       "@nki.jit (the compiler's own allocation and scheduling)"},
      {"nisa.tensor_partition_reduce(op=nl.mean)", NkiVersion{0, 7}, std::nullopt, std::nullopt, "op=nl.average"},
      {"nisa.tensor_partition_reduce(op=nl.bitwise_xor)", NkiVersion{0, 7}, std::nullopt, std::nullopt,
       "nisa.nc_transpose, then nisa.tensor_reduce(op=nl.bitwise_xor) over the free dim"},
      {"nisa.sendrecv_compute", NkiVersion{0, 7}, NkiVersion{0, 8}, std::nullopt, "nki.lnc.sendrecv_compute",
       "nisa.sendrecv, then nisa.tensor_tensor on the received tile"},
      {"nki.lnc", NkiVersion{0, 8}, std::nullopt, std::nullopt,
       "nisa.sendrecv, nisa.sendrecv_compute and nisa.core_barrier"},
      {"nisa.sendrecv", kOldestNkiVersion, NkiVersion{0, 8}, std::nullopt, "nki.lnc.sendrecv (pipe_id is ignored)"},
      {"nisa.core_barrier", kOldestNkiVersion, NkiVersion{0, 8}, std::nullopt, "nki.lnc.core_barrier"},
      {"ncc.self_index_in_replica_group", NkiVersion{0, 8}, std::nullopt, std::nullopt,
       "ncc.rank_id() and the replica group's lists"},
      {"nki.multi_rank_simulate", NkiVersion{0, 8}, std::nullopt, std::nullopt,
       "nki.simulate of each rank's kernel (collectives are not simulated before nki 0.8)"},
      // Device scalars replace registers (NKI_07_08_API.md §2, §3, §5.2).
      {"nisa.NkiScalar", NkiVersion{0, 7}, std::nullopt, std::nullopt, "nisa.VirtualRegister"},
      {"nisa.scalar_load", NkiVersion{0, 7}, std::nullopt, std::nullopt,
       "nisa.register_alloc() and nisa.register_load(reg, src)"},
      {"nisa.scalar_store", NkiVersion{0, 7}, std::nullopt, std::nullopt, "nisa.register_store(dst, reg)"},
      {"nl.int64", NkiVersion{0, 7}, std::nullopt, std::nullopt, "nl.int32"},
      {"nl.uint64", NkiVersion{0, 7}, std::nullopt, std::nullopt, "nl.uint32"},
      // The 0.7 NkiScalar page traces a comparison but says its result "cannot be used";
      // 0.8's scalar_alu and if_else make it an int32 0/1 scalar (NKI_07_08_API.md §2.2, §12.1 #3).
      {"the result of an NkiScalar comparison", NkiVersion{0, 8}, std::nullopt, std::nullopt,
       "the 0/1 tile of nisa.tensor_scalar(..., op0=nl.less) read with nisa.scalar_load"},
      // 0.8 takes an NkiScalar condition, as registers became deprecated (§3.4).
      {"an NkiScalar nl.while_loop condition", NkiVersion{0, 8}, std::nullopt, std::nullopt,
       "a VirtualRegister condition (nisa.register_alloc and nisa.register_load)"},
      {"nisa.scalar_alu", NkiVersion{0, 8}, std::nullopt, std::nullopt, "the NkiScalar operators (s + t, s * 2)"},
      {"nl.if_else", NkiVersion{0, 8}, std::nullopt, std::nullopt, "a Python if on a value known when traced"},
      {"nl.fori_loop(unroll=True)", NkiVersion{0, 8}, std::nullopt, std::nullopt,
       "a Python for loop over range(...), unrolled when traced"},
      {"nisa.VirtualRegister", kOldestNkiVersion, NkiVersion{0, 8}, std::nullopt, kScalarsInstead},
      {"nisa.register_alloc", kOldestNkiVersion, NkiVersion{0, 8}, std::nullopt, kScalarsInstead},
      {"nisa.register_move", kOldestNkiVersion, NkiVersion{0, 8}, std::nullopt, kScalarsInstead},
      {"nisa.register_load", kOldestNkiVersion, NkiVersion{0, 8}, std::nullopt, kScalarsInstead},
      {"nisa.register_store", kOldestNkiVersion, NkiVersion{0, 8}, std::nullopt, kScalarsInstead},
  };
  return forms;
}

namespace {

const VersionedForm& find_form(std::string_view form) {
  for (const VersionedForm& f : versioned_forms())
    if (f.form == form) return f;
  fail(err_internal("no versioned form '" + std::string(form) + "'"));
}

}  // namespace

bool accepts(std::string_view form, NkiVersion served) {
  const VersionedForm& f = find_form(form);
  return served >= f.introduced && !(f.removed && served >= *f.removed);
}

void check_versioned_form(std::string_view form, NkiVersion served, const std::function<void(Diagnostic)>& raise,
                          const std::function<void(Diagnostic)>& warn) {
  const VersionedForm& f = find_form(form);
  if (served < f.introduced)
    raise(err_not_in_nki_version(form, f.introduced.str(), served.str(), f.earlier.empty() ? f.instead : f.earlier));
  if (f.removed && served >= *f.removed)
    raise(err_removed_in_nki_version(form, f.removed->str(), served.str(), f.instead,
                                     NkiVersion{f.removed->major, f.removed->minor - 1}.str()));
  if (f.deprecated && served >= *f.deprecated) warn(warn_deprecated_in_nki_version(form, f.deprecated->str(), f.instead));
}

}  // namespace nkic::sema
