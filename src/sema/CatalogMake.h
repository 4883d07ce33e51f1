// What every err_* builder of the catalog (ErrorCatalog*.cpp) assembles a
// Diagnostic with; not for use outside the catalog.
#pragma once
#include <string>
#include <string_view>

#include "sema/Diagnostic.h"

namespace nkic::sema::catalog {

inline Diagnostic make(std::string code, std::string msg, ErrorKind kind = ErrorKind::Syntax, std::string hint = "") {
  Diagnostic d;
  d.code = std::move(code);
  d.message = std::move(msg);
  d.kind = kind;
  d.hint = std::move(hint);
  return d;
}

inline std::string s(std::string_view v) { return std::string(v); }

}  // namespace nkic::sema::catalog
