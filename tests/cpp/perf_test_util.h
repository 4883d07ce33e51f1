// Hand-built kernels for the cost-model tests (test_perf*.cpp): tensors, tiles and
// instructions whose timing follows from the Target's figures by hand.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sema/Target.h"

namespace nkic::perf_test {

using ir::AffineExpr;
using ir::DType;
using ir::Memory;
using ir::Opcode;

inline const sema::Target& trn1() { return *sema::find_target("trn1"); }

inline int add_tensor(ir::Kernel& k, std::string name, std::vector<int64_t> shape, Memory m, ir::Role role = ir::Role::Local,
               DType dt = DType::float32) {
  ir::TensorDecl t;
  t.id = static_cast<int>(k.tensors.size());
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.memory = m;
  t.role = role;
  t.dtype = dt;
  k.tensors.push_back(t);
  return t.id;
}

// tensor[grid0 + rows * row_var, grid1] (row_var < 0: no loop term).
inline ir::Access tile(int tensor, int64_t rows = 0, int row_var = -1) {
  ir::Access a;
  a.tensor = tensor;
  AffineExpr p = AffineExpr::grid(0);
  if (row_var >= 0) p = p + AffineExpr::var({ir::VarKind::Loop, row_var}, rows);
  a.index = {p, AffineExpr::grid(1)};
  return a;
}

inline std::unique_ptr<ir::Instruction> inst(Opcode op, ir::Access dst, std::vector<ir::Access> srcs,
                                      std::vector<int64_t> shape = {128, 512}) {
  auto in = std::make_unique<ir::Instruction>();
  in->opcode = op;
  in->dst = std::move(dst);
  in->srcs = std::move(srcs);
  in->shape = std::move(shape);
  if (op == Opcode::TensorScalar || op == Opcode::Activation) in->imms = {1.0, 0.0, 0.0};
  in->alu = ir::AluOp::add;
  // Named, as engine=nisa.vector_engine names it: the compiler's own choice of engine for an
  // unnamed tensor_scalar is tested on its own (test_perf_reordering.cpp).
  if (op == Opcode::TensorScalar) in->engine = ir::Engine::dve;
  return in;
}

// The Vector/Scalar-Engine formula of the docs, for a [128, 512] fp32 tile.
inline double stream_latency(const sema::EngineFigures& e, int inputs) {
  return (512.0 * inputs / e.elems_per_cycle + e.fixed_cycles) / e.clock_ghz;
}

}  // namespace nkic::perf_test
