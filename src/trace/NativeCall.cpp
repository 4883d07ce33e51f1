#include "trace/NativeCall.h"

#include <map>
#include <optional>

namespace nkic::trace {

const NativeForm* native_form(std::string_view marker) {
  static const NativeForm load{NativeForm::Kind::Load}, store{NativeForm::Kind::Store};
  if (marker == "load") return &load;
  if (marker == "store") return &store;
  constexpr std::string_view kElementwise = "elementwise:";
  if (marker.substr(0, kElementwise.size()) != kElementwise) return nullptr;
  std::optional<ir::AluOp> alu = ir::alu_op_from_name(marker.substr(kElementwise.size()));
  if (!alu) return nullptr;
  // One entry per op, made once and kept (node-based: stable addresses).
  static std::map<ir::AluOp, NativeForm> elementwise;
  auto [it, fresh] = elementwise.try_emplace(*alu);
  if (fresh) it->second = {NativeForm::Kind::Elementwise, *alu, static_cast<size_t>(ir::info(*alu).arity)};
  return &it->second;
}

bool bind_native(const NativeForm& form, size_t nargs, const Keyword* keywords, size_t nkw, NativeArgs& out) {
  out = {};
  const bool store = form.kind == NativeForm::Kind::Store;
  for (size_t i = 0; i < nkw; ++i) {
    const int at = static_cast<int>(nargs + i);
    const Keyword& k = keywords[i];
    if (k.name == "mask") out.mask = at;
    else if (store && k.name == "value") out.operands[1] = at;
    else if (store || k.name != "dtype" || !k.is_none) return false;  // a dtype converts: the Python form does it
  }
  switch (form.kind) {
    case NativeForm::Kind::Load:
      if (nargs != 1) return false;
      out.operands[0] = 0;
      return true;
    case NativeForm::Kind::Store:
      if (nargs == 2 && out.operands[1] < 0) out.operands[1] = 1;
      else if (nargs != 1 || out.operands[1] < 0) return false;
      out.operands[0] = 0;
      return true;
    case NativeForm::Kind::Elementwise:
      if (nargs != form.arity || nargs > 2) return false;
      for (size_t i = 0; i < nargs; ++i) out.operands[i] = static_cast<int>(i);
      return true;
  }
  return false;
}

}  // namespace nkic::trace
