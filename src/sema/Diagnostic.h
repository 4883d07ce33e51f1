// sema raises the one diagnostic type of ir/ (ir/Diagnostic.h) under its own names.
#pragma once
#include "ir/Diagnostic.h"

namespace nkic::sema {

using ir::Diagnostic;
using ir::ErrorKind;
using ir::fail;
using ir::NkiError;
using ir::nki_assert;
using ir::Note;
using ir::render;
using ir::source_line;

}  // namespace nkic::sema
