// The simulator's worker threads: one pool per process, sized to the machine
// (NKIC_THREADS overrides; 1 runs everything on the caller). A job is a count of
// tasks run as f(task) for task in [0, n), spread over the pool and the caller.
#pragma once
#include <cstdint>
#include <functional>

namespace nkic::sim {

// Threads a job may use, the caller included (at least 1).
int sim_threads();

// Runs f(0) .. f(n-1), in parallel when the pool is idle, else all on the
// caller (a job started from inside a job, or from a second simulation).
// Returns after every task has finished; then rethrows the exception of the
// lowest-numbered task that threw, if any (what a loop over the tasks in order
// would have thrown).
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);

}  // namespace nkic::sim
