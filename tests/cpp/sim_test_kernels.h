// Helpers for the simulator tests: kernels built directly as IR.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/IR.h"

namespace nkic::sim_test {

using ir::AffineExpr;

inline AffineExpr G(int k) { return AffineExpr::grid(k); }
inline AffineExpr L(int axis) { return AffineExpr::var({ir::VarKind::Loop, axis}); }
inline AffineExpr P(int axis) { return AffineExpr::var({ir::VarKind::ProgramId, axis}); }

// Kernel under construction; instructions go into `block` (the body by default).
struct KernelBuilder {
  ir::Kernel k;
  ir::Block* block = &k.body;

  int tensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt,
             ir::Memory mem = ir::Memory::SBUF, ir::Role role = ir::Role::Local) {
    ir::TensorDecl t;
    t.id = static_cast<int>(k.tensors.size());
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dt;
    t.memory = mem;
    t.role = role;
    k.tensors.push_back(t);
    if (role == ir::Role::Input) k.inputs.push_back(t.id);
    if (role == ir::Role::Output) k.outputs.push_back(t.id);
    return t.id;
  }
  int hbm_in(const std::string& n, std::vector<int64_t> s, ir::DType dt) {
    return tensor(n, std::move(s), dt, ir::Memory::SharedHBM, ir::Role::Input);
  }
  int hbm_out(const std::string& n, std::vector<int64_t> s, ir::DType dt) {
    return tensor(n, std::move(s), dt, ir::Memory::SharedHBM, ir::Role::Output);
  }

  ir::Instruction& emit(ir::Opcode oc, std::vector<int64_t> shape, ir::Access dst,
                        std::vector<ir::Access> srcs = {}, ir::AluOp alu = ir::AluOp::bypass,
                        std::vector<double> imms = {}) {
    auto in = std::make_unique<ir::Instruction>();
    in->opcode = oc;
    in->shape = std::move(shape);
    in->dst = std::move(dst);
    in->srcs = std::move(srcs);
    in->alu = alu;
    in->imms = std::move(imms);
    ir::Instruction& ref = *in;
    block->push_back(std::move(in));
    return ref;
  }
  // Opens a loop: later instructions go into its body until the caller restores `block`.
  ir::Loop& loop(int64_t lb, int64_t ub, int64_t stride = 1,
                 ir::AxisType type = ir::AxisType::Affine) {
    auto l = std::make_unique<ir::Loop>();
    l->axis = k.num_axes++;
    l->name = "L" + std::to_string(l->axis);
    l->lb = lb;
    l->ub = ub;
    l->stride = stride;
    l->type = type;
    ir::Loop& ref = *l;
    block->push_back(std::move(l));
    block = &ref.body;
    return ref;
  }
};

inline ir::Access at(int t, std::vector<AffineExpr> idx) {
  ir::Access a;
  a.tensor = t;
  a.index = std::move(idx);
  return a;
}
inline ir::Access at2(int t) { return at(t, {G(0), G(1)}); }
inline ir::Constraint ge(AffineExpr e) { return {std::move(e), ir::CmpKind::Ge}; }
inline ir::Constraint eq(AffineExpr e) { return {std::move(e), ir::CmpKind::Eq}; }

// Bindings for the listed (tensor id, memory) pairs; the rest are simulator-owned.
inline std::vector<void*> bind(const ir::Kernel& k,
                               std::initializer_list<std::pair<int, void*>> b) {
  std::vector<void*> v(k.tensors.size(), nullptr);
  for (auto [id, p] : b) v[id] = p;
  return v;
}

}  // namespace nkic::sim_test
