// Every diagnostic nkic reports is one of these (DESIGN.md "Rules"): an err_*
// code, a message, the user's source location, notes at other locations (the
// call sites of inlined helpers), a hint, and the NKI API that was in flight.
// It lives below the tracer, sema, the verifier and the simulator, which all
// raise it (sema/Diagnostic.h gives sema its names).
#pragma once
#include <exception>
#include <string>
#include <vector>

#include "ir/SourceLoc.h"

namespace nkic::ir {

// The Python exception class a diagnostic surfaces as (seed 004: NKISyntaxError
// by default; some builders raise ValueError/TypeError/IndexError/...).
enum class ErrorKind { Syntax, Value, Type, Index, Runtime, Assertion };

struct Note {
  SourceLoc loc;
  std::string message;
};

struct Diagnostic {
  std::string code;  // "err_..."; empty for plain assertion texts of the seed
  std::string message;
  ErrorKind kind = ErrorKind::Syntax;
  SourceLoc loc = {};
  std::vector<Note> notes = {};
  std::string hint = {};
  std::string api = {};  // cur_api when raised, e.g. "nl.load"
};

// "file:line:col: error: [code] message" + source excerpt with a caret + notes.
std::string render(const Diagnostic& d);
// The source line `line` of `file`, or "" (files are cached).
std::string source_line(const std::string& file, int line);

class NkiError : public std::exception {
 public:
  explicit NkiError(Diagnostic d) : diag_(std::move(d)) {}
  const Diagnostic& diag() const { return diag_; }
  Diagnostic& diag() { return diag_; }
  const char* what() const noexcept override;

 private:
  Diagnostic diag_;
  mutable std::string rendered_;
};

// The single raise (seed 004 `nki_assert`): every legality failure funnels here.
// The message is built by the caller's err_* builder only when cond is false.
[[noreturn]] void fail(Diagnostic d);
template <typename BuildDiag>
inline void nki_assert(bool cond, BuildDiag&& build) {
  if (!cond) fail(build());
}

}  // namespace nkic::ir
