#include "sim/Budget.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "sema/ErrorCatalog.h"

namespace nkic::sim {

namespace {

// Work of one block executed `times` times; loops multiply by their trip count (a
// runtime-bounded or do-while loop counts one iteration: its count is unknown).
void add_work(const ir::Block& block, double times, SimCost& cost, double& heaviest) {
  for (const auto& stmt : block) {
    if (stmt->kind == ir::StmtKind::Loop) {
      const auto& l = static_cast<const ir::Loop&>(*stmt);
      const bool runtime = l.runtime();
      add_work(l.body, times * static_cast<double>(runtime ? 1 : l.tripcount()), cost, heaviest);
      continue;
    }
    const auto& in = static_cast<const ir::Instruction&>(*stmt);
    double points = 1;
    for (int64_t d : in.shape) points *= static_cast<double>(d);
    if (ir::info(in.opcode).form == ir::Form::product) points *= kMatmulPointCost;
    const double w = (points + kInstructionOverhead) * times;
    cost.work += w;
    if (w > heaviest) heaviest = w, cost.heaviest = &in;
  }
}

std::string seconds_str(double s) {
  char buf[48];
  if (s < 120) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%.0f minutes", s / 60);
  else if (s < 48 * 3600) std::snprintf(buf, sizeof buf, "%.0f hours", s / 3600);
  else std::snprintf(buf, sizeof buf, "%.0f days", s / 86400);
  return buf;
}

}  // namespace

SimCost estimate_cost(const ir::Kernel& k, const SimOptions& opts) {
  SimCost cost;
  for (const ir::TensorDecl& t : k.tensors) {
    if (t.alias_of >= 0) continue;  // a view shares its root's bytes
    double b = static_cast<double>(ir::size_of(t.dtype));
    for (int64_t d : t.shape) b *= static_cast<double>(d);
    // Checked reads keep a written flag per on-chip / private element.
    const double tracking = opts.check_uninitialized && t.memory != ir::Memory::SharedHBM ? b / ir::size_of(t.dtype) : 0;
    cost.bytes += b + tracking;
    if (!cost.largest || b > cost.largest_bytes) cost.largest_bytes = b, cost.largest = &t;
  }
  double heaviest = -1;
  add_work(k.body, static_cast<double>(k.num_programs()), cost, heaviest);
  return cost;
}

double available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

namespace {

[[noreturn]] void out_of_memory(const ir::Kernel& k, const SimCost& cost, const std::string& why) {
  sim_error("err_simulation_out_of_memory",
            "simulating this kernel needs " + sema::bytes_str(cost.bytes) + " of host memory for its tensors ('" +
                cost.largest->name + "' alone " + sema::bytes_str(cost.largest_bytes) + "), " + why,
            cost.largest->loc.known() ? cost.largest->loc : k.loc,
            "simulate a smaller problem: fewer or smaller tensors (the line shown creates the largest)");
}

}  // namespace

void fail_out_of_memory(const ir::Kernel& k, const SimOptions& opts) {
  out_of_memory(k, estimate_cost(k, opts),
                "and the host could not allocate it (" + sema::bytes_str(available_host_memory()) + " available now)");
}

void check_budget(const ir::Kernel& k, const SimOptions& opts) {
  const SimCost cost = estimate_cost(k, opts);
  const double memory = opts.memory_limit_bytes > 0 ? opts.memory_limit_bytes : available_host_memory();
  if (memory > 0 && cost.bytes > memory) out_of_memory(k, cost, "more than the " + sema::bytes_str(memory) + " available");
  const double seconds = cost.work / kWorkPerSecond;
  if (opts.time_limit_seconds > 0 && seconds > opts.time_limit_seconds) {
    char work[32];
    std::snprintf(work, sizeof work, "%.2g", cost.work);
    sim_error("err_simulation_time_limit_exceeded",
                   "simulating this kernel would take about " + seconds_str(seconds) + " (" + work +
                       " element operations over " + std::to_string(k.num_programs()) +
                       " program instance(s)), more than the limit of " + seconds_str(opts.time_limit_seconds),
                   cost.heaviest ? cost.heaviest->loc : k.loc,
                   "the line shown does the most work; simulate a smaller problem or grid, or raise the limit: "
                   "nki.simulate_kernel(..., time_limit=<seconds>) or NKIC_SIM_TIME_LIMIT=<seconds> (0: no limit)");
  }
}

}  // namespace nkic::sim
