// The diagnostic a call raises, for the C++ tests of error paths.
#pragma once
#include <gtest/gtest.h>

#include "sema/Diagnostic.h"

namespace nkic::test_util {

// The diagnostic `f` raises; a test failure (and an empty diagnostic) when it raises none.
template <class F>
sema::Diagnostic diagnostic_of(F&& f) {
  try {
    f();
  } catch (const sema::NkiError& e) {
    return e.diag();
  }
  ADD_FAILURE() << "no diagnostic raised";
  return {};
}

}  // namespace nkic::test_util
