#include "trace/NativeCall.h"

#include <initializer_list>
#include <map>
#include <optional>

namespace nkic::trace {

const NativeForm* native_form(std::string_view marker) {
  static const NativeForm load{NativeForm::Kind::Load}, store{NativeForm::Kind::Store},
      dma_copy{NativeForm::Kind::DmaCopy}, tensor_tensor{NativeForm::Kind::TensorTensor},
      ndarray{NativeForm::Kind::NdArray};
  if (marker == "load") return &load;
  if (marker == "store") return &store;
  if (marker == "dma_copy") return &dma_copy;
  if (marker == "tensor_tensor") return &tensor_tensor;
  if (marker == "ndarray") return &ndarray;
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

namespace {

// A form of `params` in order, by position or by name, the first `required` of them given;
// with `label`, name= (the call's label, which the dispatcher reads) may come too.
bool bind_params(std::initializer_list<std::string_view> params, size_t required, bool label, size_t nargs,
                 const Keyword* keywords, size_t nkw, NativeArgs& out) {
  if (nargs > params.size()) return false;
  for (size_t i = 0; i < nargs; ++i) out.operands[i] = static_cast<int>(i);
  for (size_t i = 0; i < nkw; ++i) {
    if (label && keywords[i].name == "name") continue;
    size_t slot = 0;
    for (std::string_view p : params) {
      if (p == keywords[i].name) break;
      ++slot;
    }
    if (slot == params.size() || out.operands[slot] >= 0) return false;
    out.operands[slot] = static_cast<int>(nargs + i);
  }
  for (size_t i = 0; i < required; ++i)
    if (out.operands[i] < 0) return false;
  return true;
}

}  // namespace

bool bind_native(const NativeForm& form, size_t nargs, const Keyword* keywords, size_t nkw, NativeArgs& out) {
  out = {};
  if (form.kind == NativeForm::Kind::DmaCopy) return bind_params({"dst", "src"}, 2, true, nargs, keywords, nkw, out);
  if (form.kind == NativeForm::Kind::TensorTensor)
    return bind_params({"dst", "data1", "data2", "op"}, 4, true, nargs, keywords, nkw, out);
  if (form.kind == NativeForm::Kind::NdArray)
    return bind_params({"shape", "dtype", "buffer"}, 2, false, nargs, keywords, nkw, out);
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
    case NativeForm::Kind::DmaCopy:
    case NativeForm::Kind::TensorTensor:
    case NativeForm::Kind::NdArray: break;  // bound above
  }
  return false;
}

}  // namespace nkic::trace
