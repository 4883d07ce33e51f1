// The cost model (DESIGN.md perf/): predicts how long a NeuronCore of `target`
// (each physical core of a kernel[n] launch on its own engines and queues)
// takes to run a traced kernel, without unrolling loops whose iterations cost
// the same. Deterministic: the same IR and target give the same Profile.
#pragma once
#include "ir/IR.h"
#include "perf/Profile.h"
#include "perf/Schedule.h"
#include "sema/Target.h"

namespace nkic::perf {

// Raises err_no_cost_figures (ir::NkiError) for a target without published figures.
Profile predict(const ir::Kernel& k, const sema::Target& target, const Options& opts = {});

}  // namespace nkic::perf
