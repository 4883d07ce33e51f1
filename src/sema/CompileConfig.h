// nki.compiler (NKI 0.7/0.8): the CompileConfig and SpecializationConfig a kernel gives
// @nki.jit, the documented rules on their fields (the ValueError / TypeError texts of the
// compiler), and what nkic reads of them: the allocation check, the prefetch ring, the cost
// model's allocation and scheduling assumptions, and nested kernels' agreement.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nkic::sema {

// The nki.compiler enums; their members are opaque (no values are published).
enum class Allocation { Coloring, Linear };
enum class AllocationMode { Ring, Fast, MaxReuse };
enum class SchedulingHeuristic { Asap, CriticalPath, DmaPrefetch, Trivial };
enum class OptLevel { O0, O1, O2 };
enum class AddressRotation { Auto, Enable, Disable };

// One enum as Python names it: its class and its members, in declaration order.
struct ConfigEnum {
  std::string name;
  std::vector<std::string> members;
};
const std::vector<ConfigEnum>& compile_config_enums();

// A field's value as the front end passes it: None, a bool, a member of an nki.compiler enum
// (`enum_name`.`member`), or anything else.
struct FieldValue {
  enum class Kind { None, Bool, Member, Other } kind = Kind::None;
  bool flag = false;
  std::string enum_name, member;
};

// The CompileConfig fields, 0.7's and 0.8's, in the reference page's order.
const std::vector<std::string>& compile_config_fields();

class CompileConfig {
 public:
  // The fields given (any not given is left to its default); raises the compiler's
  // TypeError / ValueError texts (err_compile_config_type, err_scheduling_needs_linear_allocation,
  // err_option_needs_nki_allocation, err_option_needs_nki_scheduling).
  static CompileConfig make(const std::vector<std::pair<std::string, FieldValue>>& given);

  // The value given for `field` (Kind::None when left to its default).
  FieldValue given(const std::string& field) const;
  // "CompileConfig(allocation=Allocation.LINEAR, prefetch_auto=True)": the fields given.
  std::string repr() const;
  // How a nested kernel's `other` differs from this (outer) config once defaults are filled in:
  // "allocation=Allocation.LINEAR where the outer kernel has allocation=Allocation.COLORING", one
  // clause per field; empty when they agree.
  std::string difference(const CompileConfig& other) const;

  Allocation allocation() const;  // COLORING unless LINEAR is given
  bool nki_allocates() const { return allocation() == Allocation::Linear; }
  bool alloc_fallback() const;    // nki_alloc_fallback, True by default
  bool prefetch_auto() const;
  bool scheduling() const;
  std::optional<AllocationMode> allocation_mode() const;
  SchedulingHeuristic scheduling_heuristic() const;  // ASAP unless given
  OptLevel opt_level() const;                       // O1 unless given

 private:
  // By field: the member index of an enum field, 0/1 of a bool field.
  std::map<std::string, int> given_;
};

struct SpecializationConfig {
  bool allow_nested_config_override = false;
  // allow_nested_config_override must be a bool (err_compile_config_type).
  static SpecializationConfig make(const FieldValue& allow_nested_config_override);
};

// The SBUF bytes per partition a prefetch ring takes: NKI_PREFETCH_RING_SIZE's (`ring_env`,
// its text; empty when unset), else with prefetch_auto the target's assumed ring
// (`auto_ring_bytes`: the compiler's size is unpublished), else 0. prefetch_auto with the
// variable set is err_prefetch_ring_conflict; a text that is no byte count is
// err_invalid_prefetch_ring_size.
int64_t prefetch_ring_bytes(const CompileConfig& c, const std::string& ring_env, int64_t auto_ring_bytes);

// "COLORING" / "LINEAR" (with its experimental mode) and the schedule the cost model assumes:
// what nkic.profile's report names.
std::string allocation_name(const CompileConfig& c);
std::string scheduling_name(const CompileConfig& c);

}  // namespace nkic::sema
