// A diagnostic's hint in the terms of the API its kernel is written in: the legacy
// neuronxcc.nki API (masks, nl.arange, docs/language.md) or the current nki package
// (slices, dst-first nisa calls, docs/current_api.md). A builder that knows the case
// sets a hint naming only what both APIs have; every other hint comes from here.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "sema/Diagnostic.h"

namespace nkic::sema {

enum class Api { Legacy, Current };

// The hint of `code` for a kernel of `api`; empty when the code has none there.
std::string hint_for(std::string_view code, Api api);

// `d` with its hint: the builder's own, else the code's in `api`.
void complete_hint(Diagnostic& d, Api api);

// The codes with a hint of their own here (for tests that read every hint in both APIs).
std::vector<std::string> hinted_codes();

}  // namespace nkic::sema
