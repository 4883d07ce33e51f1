#include "sim/RanksExec.h"

#include <algorithm>
#include <string>

#include "sim/AluEval.h"
#include "sim/Numerics.h"
#include "sim/PointWalk.h"
#include "sim/Uninit.h"

namespace nkic::sim {

namespace {

// The accesses an instruction writes, in order: dst, then extra_dsts.
const ir::Access& dst_at(const ir::Instruction& in, size_t k) { return k == 0 ? in.dst : in.extra_dsts[k - 1]; }

std::string lists_str(const ir::Instruction& in) {
  const auto size = static_cast<size_t>(in.imms[1]);
  std::string s = "[";
  for (size_t i = 2; i < in.imms.size(); ++i) {
    if ((i - 2) % size == 0) s += (i > 2 ? "], [" : "[");
    else s += ", ";
    s += std::to_string(static_cast<int64_t>(in.imms[i]));
  }
  return s + (in.imms.size() > 2 ? "]]" : "]");
}

// fold(a, b) over the members' contributions at `at`, in fp32, in list order.
std::vector<double> fold(ir::AluOp op, const std::vector<RankData>& all, size_t k, int64_t at, int64_t width) {
  std::vector<float> acc(width), next(width);
  for (int64_t p = 0; p < width; ++p) acc[p] = static_cast<float>(all[0][k][at + p]);
  for (size_t m = 1; m < all.size(); ++m) {
    for (int64_t p = 0; p < width; ++p) next[p] = static_cast<float>(all[m][k][at + p]);
    eval_binary(op, acc.data(), next.data(), acc.data(), width);
  }
  return {acc.begin(), acc.end()};
}

}  // namespace

std::vector<int64_t> RanksExec::members(const ir::Instruction& in) const {
  const int64_t world = ranks_->world_size();
  const auto size = static_cast<size_t>(in.imms[1]);
  for (size_t i = 2; i < in.imms.size(); ++i)
    if (static_cast<int64_t>(in.imms[i]) >= world)
      sim_error("err_replica_group_world",
                in.api + " names rank " + std::to_string(static_cast<int64_t>(in.imms[i])) + ", but the world has " +
                    std::to_string(world) + " rank(s)" +
                    (world == 1 ? " (nki.simulate runs one rank; run the ranks with nki.multi_rank_simulate)" : ""),
                in.loc, "", ir::ErrorKind::Value);
  std::vector<int64_t> list;
  if (in.opcode == ir::Opcode::CcPermute) {
    for (int64_t r = 0; r < world; ++r) list.push_back(r);
    return list;
  }
  for (size_t i = 2; i < in.imms.size(); i += size)
    for (size_t j = i; j < i + size; ++j)
      if (static_cast<int64_t>(in.imms[j]) == rank_) {
        for (size_t m = i; m < i + size; ++m) list.push_back(static_cast<int64_t>(in.imms[m]));
        return list;
      }
  sim_error("err_replica_group_world",
            in.api + ": rank " + std::to_string(rank_) + " is in none of the replica group's lists " + lists_str(in),
            in.loc, "every rank of the world is in one list of the replica group", ir::ErrorKind::Value);
}

std::vector<double> RanksExec::read(const ir::Instruction& in, const ir::Access& a, int64_t width,
                                    const int64_t* loops, const int64_t* pids) {
  std::vector<int64_t> point = {0, 0};
  const ValueOf value_of = values_at(point, loops, pids);
  const TensorMem& t = mem_.at(a.tensor);
  std::vector<double> values(width);
  for (int64_t p = 0; p < width; ++p) {
    point[1] = p;
    values[p] = load_element(t.decl->dtype, t.data, read_offset(mem_, in, a, value_of));
  }
  return values;
}

void RanksExec::write(const ir::Instruction& in, const ir::Access& a, const std::vector<double>& values,
                      const int64_t* loops, const int64_t* pids, int64_t first) {
  std::vector<int64_t> point = {0, 0};
  const ValueOf value_of = values_at(point, loops, pids);
  TensorMem& t = mem_.at(a.tensor);
  ensure_filled(t);
  for (size_t p = 0; p < values.size(); ++p) {
    point[1] = first + static_cast<int64_t>(p);
    const int64_t off = point_offset(mem_, in, a, value_of);
    store_element(t.decl->dtype, t.data, off, values[p]);
    uninit::wrote(t, off);
  }
}

std::optional<std::vector<double>> RanksExec::received(const ir::Instruction& in, size_t k, int64_t width,
                                                       const std::vector<int64_t>& members,
                                                       const std::vector<RankData>& all) const {
  const auto n = static_cast<int64_t>(members.size());
  const auto me = std::find(members.begin(), members.end(), rank_) - members.begin();
  std::vector<double> out(width);
  switch (in.opcode) {
    case ir::Opcode::CcAllReduce: return fold(in.alu, all, k, 0, width);
    case ir::Opcode::CcReduceScatter: return fold(in.alu, all, k, me * width, width);
    case ir::Opcode::CcAllGather: {  // dst walks [members, src]
      const int64_t chunk = width / n;
      for (int64_t m = 0; m < n; ++m) std::copy_n(all[m][k].begin(), chunk, out.begin() + m * chunk);
      return out;
    }
    case ir::Opcode::CcAllToAll: {  // src and dst walk [members, chunk]
      const int64_t chunk = width / n;
      for (int64_t m = 0; m < n; ++m) std::copy_n(all[m][k].begin() + me * chunk, chunk, out.begin() + m * chunk);
      return out;
    }
    case ir::Opcode::CcPermute:
      for (size_t i = 2; i + 1 < in.imms.size(); i += 2)
        if (static_cast<int64_t>(in.imms[i + 1]) == rank_) return all[static_cast<size_t>(in.imms[i])][k];
      return std::nullopt;
    case ir::Opcode::CcPermuteImplicit: return all[(me + n - 1) % n][k];
    case ir::Opcode::CcPermuteImplicitReduce: {  // the predecessor's op(srcs0, srcs1) of channel k, in fp32
      const std::vector<double>& theirs = all[(me + n - 1) % n].at(k);
      const std::vector<double>& right = all[(me + n - 1) % n].at(k + 1 + in.extra_dsts.size());
      std::vector<float> a(theirs.begin(), theirs.end()), b(right.begin(), right.end());
      eval_binary(in.alu, a.data(), b.data(), a.data(), width);
      return std::vector<double>(a.begin(), a.end());
    }
    default: return std::nullopt;
  }
}

void RanksExec::run_variable(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  const std::vector<int64_t> list = members(in);
  const auto n = static_cast<int64_t>(list.size());
  const auto me = std::find(list.begin(), list.end(), rank_) - list.begin();
  const int flags = static_cast<int>(in.imms[0]);
  const size_t dsts = 1 + in.extra_dsts.size();
  RankData mine = {read(in, in.srcs[0], in.widths[dsts], loops, pids)};
  if (flags & 4) {
    mine.push_back(prepared_[in.srcs[1].tensor]);
  } else {
    mine.push_back(read(in, in.srcs[1], in.widths[dsts + 1], loops, pids));
  }
  const std::vector<double> meta = mine[1];
  const std::vector<RankData> all = ranks_->meet(rank_, in, list, std::move(mine));
  const int64_t slot = in.widths[0] / n;
  const bool gather = in.opcode == ir::Opcode::CcAllGatherV;
  for (int64_t m = 0; m < n; ++m) {
    // Rank m's metadata: row r, column c at r * n + c (all_gather_v: its first column).
    const std::vector<double>& theirs = all[m][1];
    const auto count = static_cast<int64_t>(theirs[gather ? 0 : me]);
    const auto displ = static_cast<int64_t>(theirs[n + (gather ? 0 : me)]);
    const int64_t at = (flags & 2) ? static_cast<int64_t>(meta[3 * n + m]) : m * slot;
    const auto src_size = static_cast<int64_t>(all[m][0].size());
    if (count < 0 || displ < 0 || displ + count > src_size || at < 0 || at + count > in.widths[0] ||
        (!(flags & 2) && count > slot))
      sim_error("err_tensor_access_out_of_bound",
                in.api + ": rank " + std::to_string(list[m]) + " sends " + std::to_string(count) +
                    " element(s) from " + std::to_string(displ) + " of its " + std::to_string(src_size) +
                    " to rank " + std::to_string(rank_) + "'s position " + std::to_string(at) + " of " +
                    std::to_string(in.widths[0]) + (flags & 2 ? "" : " (slots of " + std::to_string(slot) + ")"),
                in.loc, "", ir::ErrorKind::Index);
    write(in, in.dst, {all[m][0].begin() + displ, all[m][0].begin() + displ + count}, loops, pids, at);
    if (!gather && !(flags & 1)) write(in, in.extra_dsts[0], {static_cast<double>(count)}, loops, pids, 2 * n + m);
  }
}

void RanksExec::run(const ir::Instruction& in, const int64_t* loops, const int64_t* pids) {
  if (in.opcode == ir::Opcode::RankId) {
    if (in.imms.empty()) return write(in, in.dst, {static_cast<double>(rank_)}, loops, pids);
    const std::vector<int64_t> list = members(in);  // self_index_in_replica_group; in no list fails here
    const auto at = std::find(list.begin(), list.end(), rank_) - list.begin();
    return write(in, in.dst, {static_cast<double>(at)}, loops, pids);
  }
  if (in.opcode == ir::Opcode::CcProcessingRankId) {
    // At step k the data of the rank k places before the caller in its ring (its list, in order).
    const std::vector<int64_t> list = members(in);
    const auto n = static_cast<int64_t>(list.size());
    const int64_t at = std::find(list.begin(), list.end(), rank_) - list.begin();
    const int64_t step = static_cast<int64_t>(in.imms[0]) % n;
    return write(in, in.dst, {static_cast<double>(list[(at - step + n) % n])}, loops, pids);
  }
  if (in.opcode == ir::Opcode::CcPrepare) {
    prepared_[in.srcs[0].tensor] = read(in, in.srcs[0], in.widths[1], loops, pids);
    return;
  }
  if (in.opcode == ir::Opcode::CcAllToAllV || in.opcode == ir::Opcode::CcAllGatherV)
    return run_variable(in, loops, pids);
  const std::vector<int64_t> list = members(in);
  const size_t dsts = 1 + in.extra_dsts.size();
  RankData mine;
  for (size_t k = 0; k < in.srcs.size(); ++k) mine.push_back(read(in, in.srcs[k], in.widths[dsts + k], loops, pids));
  const std::vector<RankData> all = ranks_->meet(rank_, in, list, std::move(mine));
  for (size_t k = 0; k < dsts; ++k)
    if (auto values = received(in, k, in.widths[k], list, all)) write(in, dst_at(in, k), *values, loops, pids);
}

}  // namespace nkic::sim
