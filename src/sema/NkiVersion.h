// The version of NKI nkic serves: NKIC_NKI_VERSION (0.2 ... 0.8), the newest when unset.
// A kernel of any published version runs as that version's compiler took it: the forms
// of the API that only some versions accept are listed once here (versioned_forms), and a
// form the served version rejects is an error with the migration hint.
#pragma once
#include <compare>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sema/Diagnostic.h"

namespace nkic::sema {

struct NkiVersion {
  int major = 0, minor = 8;
  bool at_least(int maj, int min) const { return *this >= NkiVersion{maj, min}; }
  std::string str() const;  // "0.8": as the docs name a version
  friend auto operator<=>(const NkiVersion&, const NkiVersion&) = default;
};

inline constexpr NkiVersion kOldestNkiVersion{0, 2};
inline constexpr NkiVersion kNewestNkiVersion{0, 8};

// "0.6" or "0.6.0" (any patch number: patches did not change the API); nullopt for
// anything else or a version nkic does not serve.
std::optional<NkiVersion> parse_nki_version(std::string_view text);
// The version NKIC_NKI_VERSION names, the newest when it is unset or empty; any other
// value fails with err_unsupported_nki_version.
NkiVersion served_nki_version();

// A form of the API that a range of NKI versions accepts.
struct VersionedForm {
  std::string_view form;                // as diagnostics name it: "nl.dynamic_range"
  NkiVersion introduced = kOldestNkiVersion;
  std::optional<NkiVersion> deprecated;  // the first version that warns
  std::optional<NkiVersion> removed;     // the first version that rejects it
  std::string_view instead;             // what replaces it: the migration hint
  // What a version before `introduced` writes, when that differs from `instead` (a form
  // both introduced and deprecated: its successor is not its predecessor).
  std::string_view earlier = {};
};
const std::vector<VersionedForm>& versioned_forms();

// Whether `served` accepts `form` (deprecated or not): for a rule whose own diagnostic says
// why, such as the Python subset's.
bool accepts(std::string_view form, NkiVersion served);

// Whether `served` accepts `form` (a name of versioned_forms()): not yet introduced or
// already removed fails through `raise`; deprecated warns through `warn`.
void check_versioned_form(std::string_view form, NkiVersion served, const std::function<void(Diagnostic)>& raise,
                          const std::function<void(Diagnostic)>& warn);

}  // namespace nkic::sema
