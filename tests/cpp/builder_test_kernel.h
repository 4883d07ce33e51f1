// A kernel built with the C++ op builders and simulated, for the builder tests
// (test_builders*.cpp): inputs a [128, 64] and b [128, 1], output out [128, W].
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "codegen/Indexing.h"
#include "codegen/KernelBuilder.h"
#include "codegen/Ops.h"
#include "ir/IRPrinter.h"
#include "ir/Verifier.h"
#include "sema/Diagnostic.h"
#include "sema/Target.h"
#include "sim/Simulator.h"
#include "types/IndexAlgebra.h"

namespace nkic::builder_test {

using codegen::Dst;
using codegen::KernelBuilder;
using ir::AluOp;
using ir::DType;
using ir::Memory;
using types::TensorVal;
using types::Value;

inline Value number(double v) { return types::Other{v}; }

// Input values in -2..2: every sum and product of them the tests take is exact in fp32
// (and in bf16, as the Tensor Engine reads them).
inline float small(int p, int j) { return static_cast<float>((p * 3 + j) % 5 - 2); }

inline const sema::Target& trn3() { return *sema::find_target("trn3"); }

struct Built {
  KernelBuilder b;
  TensorVal a, bias, out;
  explicit Built(int64_t out_width = 64, DType out_dtype = DType::float32,
                 const sema::Target& target = sema::default_target())
      : b("k", target) {
    a = b.full_view(b.add_tensor("a", {128, 64}, DType::float32, Memory::SharedHBM, ir::Role::Input));
    bias = b.full_view(b.add_tensor("b", {128, 1}, DType::float32, Memory::SharedHBM, ir::Role::Input));
    out = b.full_view(b.add_tensor("out", {128, out_width}, out_dtype, Memory::SharedHBM, ir::Role::Output));
    b.kernel().inputs = {a.tensor, bias.tensor};
    b.kernel().outputs = {out.tensor};
  }
  TensorVal load(const TensorVal& t) {
    b.requested_api = "nl.load";
    return codegen::load(b, t, {});
  }
  // v into out: the whole of it, or a 2-D v into out[p0:, f0:] (its shape).
  void store(const TensorVal& v, int64_t p0 = 0, int64_t f0 = 0) {
    b.requested_api = "nl.store";
    const bool whole = v.shape == b.tensor(out.tensor).shape;
    codegen::store(b, whole ? out : view(out, {p0, p0 + v.shape.at(0)}, {f0, f0 + v.shape.at(1)}), v, {});
  }
  // t[p0:p1, f0:f1].
  TensorVal view(const TensorVal& t, std::pair<int64_t, int64_t> p, std::pair<int64_t, int64_t> f) {
    std::vector<codegen::IndexItem> key(2);
    for (auto [item, r] : {std::pair{&key[0], p}, std::pair{&key[1], f}}) {
      item->kind = codegen::IndexItem::Kind::Slice;
      item->start = types::index_constant(r.first);
      item->stop = types::index_constant(r.second);
    }
    return codegen::subscript(b, t, key);
  }
  TensorVal cols(const TensorVal& t, int64_t f0, int64_t f1) { return view(t, {0, t.shape[0]}, {f0, f1}); }
  TensorVal sbuf(const char* name, std::vector<int64_t> shape, DType dtype = DType::float32,
                 Memory memory = Memory::SBUF) {
    return codegen::alloc_tensor(b, name, std::move(shape), dtype, memory);
  }
  // A tile holding `value` everywhere (nisa.memset).
  TensorVal filled(const char* name, std::vector<int64_t> shape, double value, DType dtype = DType::float32) {
    b.requested_api = "nisa.memset";
    return codegen::full(b, name, std::move(shape), dtype, Memory::SBUF, value);
  }
  // The printed instructions ("dst[...] = name[engine](...) iter=[...]", "+=" when a
  // matmul accumulates), without locations.
  std::vector<std::string> lines() {
    std::vector<std::string> out_lines;
    std::string text = ir::print(b.kernel(), {.show_locations = false});
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      std::string l = text.substr(at, end - at);
      if ((l.find(" = ") != std::string::npos || l.find(" += ") != std::string::npos) && l.rfind("  tensor ", 0) != 0)
        out_lines.push_back(l.substr(2));
      at = end + 1;
    }
    return out_lines;
  }
  // The tensor a printed instruction writes ("d.1[i0, i1] = ..." -> d.1), followed
  // through its aliases (reshapes) to the tensor whose bytes they are.
  std::string root_written(const std::string& line) const {
    const std::string name = line.substr(0, line.find('['));
    for (const ir::TensorDecl& t : b.kernel().tensors)
      if (t.name == name) {
        int id = t.id;
        while (b.tensor(id).alias_of >= 0) id = b.tensor(id).alias_of;
        return b.tensor(id).name;
      }
    return "";
  }
  // Simulates with a[p, f] = f(p, f), b[p] = p / 8; out starts as -99.
  template <class F>
  std::vector<float> run(F f) {
    std::vector<float> va(128 * 64), vb(128), vo(b.tensor(out.tensor).num_elements(), -99.0f);
    for (int p = 0; p < 128; ++p) {
      vb[p] = static_cast<float>(p) / 8.0f;
      for (int j = 0; j < 64; ++j) va[p * 64 + j] = f(p, j);
    }
    EXPECT_EQ(ir::verify(b.kernel()), std::vector<std::string>{});
    std::vector<void*> bind(b.kernel().tensors.size(), nullptr);
    bind[a.tensor] = va.data();
    bind[bias.tensor] = vb.data();
    bind[out.tensor] = vo.data();
    sim::simulate(b.kernel(), bind, {.check_uninitialized = true});
    return vo;
  }
};

// A printed instruction from " = " on: what it computes, not the name it writes.
inline std::string rhs(const std::string& line) { return line.substr(line.find(" = ")); }

// The diagnostic code `build` raises ("" when it raises none).
template <class F>
std::string diag_code(F build) {
  try {
    build();
  } catch (const sema::NkiError& e) {
    return e.diag().code;
  }
  return "";
}

}  // namespace nkic::builder_test
