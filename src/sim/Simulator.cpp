#include "sim/Simulator.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "ir/IRVisitor.h"
#include "ir/Verifier.h"
#include "sim/Convert.h"
#include "sim/Numerics.h"
#include "sim/TileExec.h"

namespace nkic::sim {

SimError::SimError(std::string code_, std::string msg, ir::SourceLoc loc_)
    : std::runtime_error(std::move(msg)), code(std::move(code_)), loc(loc_) {}

namespace {

// Fills fresh simulator-owned memory with values a correct kernel never reads:
// NaN in float formats, 0x5A bytes in integer ones.
void fill_fresh(const ir::TensorDecl& t, std::byte* data) {
  const int64_t n = t.num_elements();
  if (ir::is_integer(t.dtype)) {
    std::memset(data, 0x5A, n * ir::size_of(t.dtype));
    return;
  }
  std::byte nan[4];
  store_element(t.dtype, nan, 0, NAN);
  fill_elements(ir::size_of(t.dtype), nan, data, 0, 1, n);
}

// Runs the kernel body once per program instance; loops and instructions are
// the visitor's two node kinds.
class Executor final : public ir::IRVisitor {
 public:
  Executor(const ir::Kernel& k, const std::vector<void*>& bindings, const SimOptions& opts)
      : k_(k),
        mem_(k.tensors.size()),
        tiles_(mem_, opts),
        loop_(k.num_axes, 0),
        pid_(k.grid.size(), 0) {
    if (bindings.size() > k.tensors.size())
      throw std::invalid_argument("simulate: more bindings than tensors");
    owned_.resize(k.tensors.size());
    for (size_t id = 0; id < k.tensors.size(); ++id) {
      const ir::TensorDecl& t = k.tensors[id];
      TensorMem& m = mem_[id];
      m.decl = &t;
      m.strides.assign(t.shape.size(), 1);
      for (size_t d = t.shape.size(); d-- > 1;) m.strides[d - 1] = m.strides[d] * t.shape[d];
      void* bound = id < bindings.size() ? bindings[id] : nullptr;
      if (bound) {
        m.data = static_cast<std::byte*>(bound);
        continue;
      }
      owned_[id] =
          std::make_unique_for_overwrite<std::byte[]>(t.num_elements() * ir::size_of(t.dtype));
      m.data = owned_[id].get();
      if (t.memory == ir::Memory::SharedHBM) {
        fill_fresh(t, m.data);
      } else {
        per_instance_.push_back(static_cast<int>(id));
        m.tracked = opts.check_uninitialized;
      }
    }
  }

  void run() {
    const int64_t programs = k_.num_programs();
    for (int64_t p = 0; p < programs; ++p) {
      // Row-major: the last launch-grid axis varies fastest.
      for (size_t a = k_.grid.size(), rest = p; a-- > 0;) {
        pid_[a] = static_cast<int64_t>(rest % k_.grid[a]);
        rest /= k_.grid[a];
      }
      for (int id : per_instance_) {
        TensorMem& m = mem_[id];
        fill_fresh(*m.decl, m.data);
        if (m.tracked) m.written.assign(m.decl->num_elements(), 0);
      }
      visit_block(k_.body);
    }
  }

  void visit(const ir::Loop& l) override {
    int64_t& v = loop_[l.axis];
    for (v = l.lb; l.stride > 0 ? v < l.ub : v > l.ub; v += l.stride) visit_block(l.body);
  }

  void visit(const ir::Instruction& in) override { tiles_.run(in, Env{loop_.data(), pid_.data()}); }

 private:
  const ir::Kernel& k_;
  std::vector<TensorMem> mem_;
  std::vector<std::unique_ptr<std::byte[]>> owned_;
  std::vector<int> per_instance_;  // simulator-owned tensors that start fresh in each instance
  TileExecutor tiles_;
  std::vector<int64_t> loop_, pid_;
};

}  // namespace

void simulate(const ir::Kernel& k, const std::vector<void*>& bindings, const SimOptions& opts) {
  std::vector<std::string> problems = ir::verify(k);
  if (!problems.empty()) {
    std::string msg = "simulate: malformed kernel " + k.name + ":";
    for (const std::string& p : problems) msg += "\n  " + p;
    throw std::invalid_argument(msg);
  }
  Executor(k, bindings, opts).run();
}

}  // namespace nkic::sim
