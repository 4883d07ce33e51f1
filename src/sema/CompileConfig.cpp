#include "sema/CompileConfig.h"

#include <algorithm>
#include <cstdlib>

#include "sema/ErrorCatalog.h"

namespace nkic::sema {

namespace {

enum EnumId { kAllocation, kAllocationMode, kSchedulingHeuristic, kOptLevel, kAddressRotation };

// What a field needs before it may be given (the reference page's "Needs" column).
enum class Needs { Nothing, NkiAllocation, NkiScheduling };

struct Field {
  std::string name;
  int enum_id;       // -1: a bool
  Needs needs;
  bool nullable;     // an enum field that accepts None
  int default_value; // member index or 0/1; -1: none
};

// Which options need NKI allocation follows the reference page; for the elimination passes
// the page is silent and the tuning guide lists them under NKI allocation.
const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {"allocation", kAllocation, Needs::Nothing, true, 0},
      {"scheduling", -1, Needs::Nothing, false, 0},
      {"opt_level", kOptLevel, Needs::NkiAllocation, true, 1},
      {"experimental_allocation_mode", kAllocationMode, Needs::NkiAllocation, true, -1},
      {"experimental_scheduling_heuristic", kSchedulingHeuristic, Needs::NkiScheduling, true, 0},
      {"prefetch_auto", -1, Needs::NkiAllocation, false, 0},
      {"split_reused_buffers", -1, Needs::NkiAllocation, false, 0},
      {"tensor_copy_elim", -1, Needs::NkiAllocation, false, 0},
      {"dma_copy_elim", -1, Needs::NkiAllocation, false, 0},
      {"element_widening", -1, Needs::NkiAllocation, false, 0},
      {"engine_balancing", -1, Needs::Nothing, false, 0},
      {"register_load_reuse", -1, Needs::NkiAllocation, false, 0},
      {"remove_unused_instructions", -1, Needs::NkiAllocation, false, 0},
      {"remove_overwritten_writes", -1, Needs::NkiAllocation, false, 0},
      {"sbuf_allocation_fallback", -1, Needs::Nothing, false, 0},
      {"address_rotation", kAddressRotation, Needs::Nothing, false, 0},
      {"non_ssa_legalization", -1, Needs::Nothing, false, 0},
      {"dead_code_elim", -1, Needs::Nothing, false, 0},
      {"barrier_check", -1, Needs::Nothing, false, 0},
      {"nki_alloc_fallback", -1, Needs::Nothing, false, 1},
  };
  return f;
}

const Field* find_field(const std::string& name) {
  for (const Field& f : fields())
    if (f.name == name) return &f;
  return nullptr;
}

std::string member_text(int enum_id, int member) {
  const ConfigEnum& e = compile_config_enums()[enum_id];
  return e.name + "." + e.members[member];
}

std::string value_text(const Field& f, int value) {
  if (value < 0) return "None";
  if (f.enum_id < 0) return value ? "True" : "False";
  return member_text(f.enum_id, value);
}

// The member index (or 0/1) `v` gives field `f`, -1 for None; raises the TypeError text.
int parse(const Field& f, const FieldValue& v) {
  using K = FieldValue::Kind;
  if (f.enum_id < 0) {
    if (v.kind == K::Bool) return v.flag ? 1 : 0;
    if (v.kind == K::None) return -1;
    fail(err_compile_config_type(f.name, "a bool"));
  }
  const ConfigEnum& e = compile_config_enums()[f.enum_id];
  if (v.kind == K::None && f.nullable) return -1;
  if (v.kind == K::Member && v.enum_name == e.name) {
    const auto it = std::find(e.members.begin(), e.members.end(), v.member);
    if (it != e.members.end()) return static_cast<int>(it - e.members.begin());
  }
  fail(err_compile_config_type(f.name, "an nki.compiler." + e.name + (f.nullable ? " or None" : "")));
}

// The value given for field `name`, else its default.
int value_or(const std::map<std::string, int>& given, const std::string& name) {
  const auto it = given.find(name);
  return it == given.end() ? find_field(name)->default_value : it->second;
}

}  // namespace

const std::vector<ConfigEnum>& compile_config_enums() {
  static const std::vector<ConfigEnum> e = {
      {"Allocation", {"COLORING", "LINEAR"}},
      {"AllocationMode", {"RING", "FAST", "MAX_REUSE"}},
      {"SchedulingHeuristic", {"ASAP", "CRITICAL_PATH", "DMA_PREFETCH", "TRIVIAL"}},
      {"OptLevel", {"O0", "O1", "O2"}},
      {"AddressRotation", {"AUTO", "ENABLE", "DISABLE"}},
  };
  return e;
}

const std::vector<std::string>& compile_config_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Field& f : fields()) n.push_back(f.name);
    return n;
  }();
  return names;
}

CompileConfig CompileConfig::make(const std::vector<std::pair<std::string, FieldValue>>& given) {
  CompileConfig c;
  for (const auto& [name, value] : given) {
    const Field* f = find_field(name);
    if (!f) fail(err_unsupported_args("nki.compiler.CompileConfig", "unexpected keyword argument '" + name + "'"));
    const int v = parse(*f, value);
    if (v >= 0) c.given_[name] = v;
  }
  const auto at = [&c](const std::string& name) {
    const auto it = c.given_.find(name);
    return it == c.given_.end() ? -1 : it->second;
  };
  const int allocation = at("allocation");
  if (at("scheduling") == 1 && allocation != static_cast<int>(Allocation::Linear))
    fail(err_scheduling_needs_linear_allocation(allocation < 0 ? "" : member_text(kAllocation, allocation)));
  for (const Field& f : fields()) {
    if (at(f.name) < 0) continue;
    if (f.needs == Needs::NkiAllocation && allocation == static_cast<int>(Allocation::Coloring))
      fail(err_option_needs_nki_allocation(f.name));
    if (f.needs == Needs::NkiScheduling && at("scheduling") != 1) fail(err_option_needs_nki_scheduling(f.name));
  }
  return c;
}

FieldValue CompileConfig::given(const std::string& field) const {
  FieldValue v;
  const Field* f = find_field(field);
  const auto it = given_.find(field);
  if (!f || it == given_.end()) return v;
  if (f->enum_id < 0) {
    v.kind = FieldValue::Kind::Bool;
    v.flag = it->second != 0;
  } else {
    v.kind = FieldValue::Kind::Member;
    v.enum_name = compile_config_enums()[f->enum_id].name;
    v.member = compile_config_enums()[f->enum_id].members[it->second];
  }
  return v;
}

std::string CompileConfig::repr() const {
  std::string out;
  for (const Field& f : fields()) {
    const auto it = given_.find(f.name);
    if (it == given_.end()) continue;
    out += (out.empty() ? "" : ", ") + f.name + "=" + value_text(f, it->second);
  }
  return "CompileConfig(" + out + ")";
}

std::string CompileConfig::difference(const CompileConfig& other) const {
  std::string out;
  for (const Field& f : fields()) {
    const int a = value_or(given_, f.name), b = value_or(other.given_, f.name);
    if (a == b) continue;
    out += (out.empty() ? "" : ", ") + f.name + "=" + value_text(f, b) + " where the outer kernel has " + f.name + "=" +
           value_text(f, a);
  }
  return out;
}

Allocation CompileConfig::allocation() const { return static_cast<Allocation>(value_or(given_, "allocation")); }
bool CompileConfig::alloc_fallback() const { return value_or(given_, "nki_alloc_fallback") != 0; }
bool CompileConfig::prefetch_auto() const { return value_or(given_, "prefetch_auto") != 0; }
bool CompileConfig::scheduling() const { return value_or(given_, "scheduling") != 0; }
std::optional<AllocationMode> CompileConfig::allocation_mode() const {
  const int v = value_or(given_, "experimental_allocation_mode");
  return v < 0 ? std::nullopt : std::optional<AllocationMode>(static_cast<AllocationMode>(v));
}
SchedulingHeuristic CompileConfig::scheduling_heuristic() const {
  return static_cast<SchedulingHeuristic>(value_or(given_, "experimental_scheduling_heuristic"));
}
OptLevel CompileConfig::opt_level() const { return static_cast<OptLevel>(value_or(given_, "opt_level")); }

SpecializationConfig SpecializationConfig::make(const FieldValue& allow_nested_config_override) {
  SpecializationConfig s;
  if (allow_nested_config_override.kind == FieldValue::Kind::Bool)
    s.allow_nested_config_override = allow_nested_config_override.flag;
  else if (allow_nested_config_override.kind != FieldValue::Kind::None)
    fail(err_compile_config_type("allow_nested_config_override", "a bool"));
  return s;
}

int64_t prefetch_ring_bytes(const CompileConfig& c, const std::string& ring_env, int64_t auto_ring_bytes) {
  if (ring_env.empty()) return c.prefetch_auto() ? auto_ring_bytes : 0;
  if (c.prefetch_auto()) fail(err_prefetch_ring_conflict(ring_env));
  char* end = nullptr;
  const long long bytes = std::strtoll(ring_env.c_str(), &end, 10);
  if (*end != '\0' || bytes < 0)
    fail(err_invalid_environment_value("NKI_PREFETCH_RING_SIZE", ring_env, "a number of SBUF bytes per partition"));
  return bytes;
}

std::string allocation_name(const CompileConfig& c) {
  if (!c.nki_allocates()) return "COLORING";
  const std::optional<AllocationMode> mode = c.allocation_mode();
  return mode ? "LINEAR (" + compile_config_enums()[kAllocationMode].members[static_cast<int>(*mode)] + ")" : "LINEAR";
}

std::string scheduling_name(const CompileConfig& c) {
  if (!c.scheduling()) return "the compiler's list schedule";
  return compile_config_enums()[kSchedulingHeuristic].members[static_cast<int>(c.scheduling_heuristic())];
}

}  // namespace nkic::sema
