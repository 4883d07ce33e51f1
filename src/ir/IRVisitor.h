// Halide-style visitor: back-ends override the node kinds they care about.
#pragma once
#include "ir/IR.h"

namespace nkic::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Instruction& inst) {}
  virtual void visit(const Loop& loop) { visit_block(loop.body); }
  void visit_block(const Block& block) {
    for (const StmtPtr& s : block) s->accept(*this);
  }
};

inline void Instruction::accept(IRVisitor& v) const { v.visit(*this); }
inline void Loop::accept(IRVisitor& v) const { v.visit(*this); }

}  // namespace nkic::ir
