// Uninitialized values (SimOptions::check_uninitialized). A tracked element's
// written flag says whether it was never written, written, or written with a
// value computed from an uninitialized one (poisoned). An instruction that reads
// an unwritten or poisoned element poisons what it computes from it. A poisoned
// value is an error (err_read_uninitialized_memory) where it can change a result:
// written to an output (a tensor the simulator does not track: the caller's HBM),
// or read as a loop bound, branch condition or address. Anywhere else it is
// dropped (a ragged tile's rows that a masked load never wrote and a masked store
// skips), and the run ends with one warning at the first such read.
//
// The executors report what the instruction in flight reads and writes through
// the free functions below; a Scope, open while an instruction runs (on the
// simulating thread: the check runs single-threaded), collects its reads.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/IR.h"
#include "sim/TensorMem.h"

namespace nkic::sim::uninit {

enum Flag : uint8_t { kUnwritten = 0, kWritten = 1, kPoisoned = 2 };

// One simulation's record: where each poisoned tensor's uninitialized value was
// first read, and the first such read of the run.
class Tracker {
 public:
  explicit Tracker(const std::vector<TensorMem>& mem) : mem_(mem), origin_of_(mem.size(), -1) {}

  // The origin behind element `at` of `t` (unwritten: read now by `in`; poisoned: t's).
  int origin(const TensorMem& t, int64_t at, const ir::Instruction& in);
  void poisoned(const TensorMem& t, int origin);
  // The diagnostic of a poisoned value `in` writes to element `at` of output `t`.
  [[noreturn]] void reaches_output(const ir::Instruction& in, const TensorMem& t, int64_t at, int origin) const;
  // The diagnostic of element `at` of `t` read as `use` ("an address", "a loop bound").
  [[noreturn]] void used_as(const TensorMem& t, int64_t at, ir::SourceLoc loc, const std::string& use) const;
  // The warning for values read uninitialized and dropped, when there were any.
  std::optional<ir::Diagnostic> dropped() const;

 private:
  struct Origin {
    ir::SourceLoc loc;
    std::string what;  // "element [122, 0] of tensor `a_tile`"
  };
  int id(const TensorMem& t) const { return static_cast<int>(&t - mem_.data()); }
  // The origin `t` (or the tensor it views) was poisoned from, or -1.
  int origin_of(const TensorMem& t) const;

  const std::vector<TensorMem>& mem_;
  std::vector<int> origin_of_;  // per tensor: index into origins_, or -1
  std::vector<Origin> origins_;
  // (file, line, col, tensor) of a reading instruction -> its origin
  std::map<std::tuple<const std::string*, int, int, int>, int> first_read_;
};

// Open while `in` runs under the check; nested scopes are not supported.
class Scope {
 public:
  Scope(Tracker& tracker, const ir::Instruction& in);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

// Whether a scope is open (the check is on).
bool active();
// Element `at` of `t` is read as data by the instruction in flight.
void read(const TensorMem& t, int64_t at);
// The origin of what the instruction in flight has read uninitialized since the
// last row_start, or -1.
int taint();
// What is written next no longer depends on what was read before (a new partition).
void row_start();
// Element `at` (or n elements from `at` by `step`) of `t` is written.
void wrote(TensorMem& t, int64_t at);
void wrote(TensorMem& t, int64_t at, int64_t step, int64_t n);
// Element `at` of `t` was written from the uninitialized value of `origin` (a taint()).
void poison(TensorMem& t, int64_t at, int origin);
// Element `at` of `t` is read as `use` (an address, a loop bound): poisoned is an error.
void use(const TensorMem& t, int64_t at, ir::SourceLoc loc, const char* use);
// Whether element `at` of `t` holds an uninitialized or poisoned value (tracked only).
inline bool unclean(const TensorMem& t, int64_t at) { return t.tracked && t.written[at] != kWritten; }

}  // namespace nkic::sim::uninit
