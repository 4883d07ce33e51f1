#include "sim/Rendezvous.h"

#include <string>

#include "ir/Diagnostic.h"

namespace nkic::sim {

namespace {

// "ncc.all_reduce at line 12": a collective as a diagnostic names it.
std::string where(const ir::Instruction& in) {
  return (in.api.empty() ? std::string(ir::name(in.opcode)) : in.api) + " at line " + std::to_string(in.loc.line);
}

std::string ranks_str(const std::vector<int64_t>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

}  // namespace

std::vector<RankData> Rendezvous::meet(int rank, const ir::Instruction& in, const std::vector<int64_t>& members,
                                       RankData data) {
  std::unique_lock lock(mu_);
  if (aborted_) throw Aborted{};
  Rank& me = ranks_.at(rank);
  const size_t k = me.reached.size();
  me.reached.push_back(&in);
  me.members = members;
  // A member already here with another collective: the two ranks' programs differ.
  for (int64_t m : members) {
    const Rank& other = ranks_.at(m);
    if (m == rank || other.reached.size() <= k || other.reached[k] == &in) continue;
    const ir::Instruction& theirs = *other.reached[k];
    aborted_ = true;
    cv_.notify_all();
    ir::fail({"err_collective_mismatch",
              "rank " + std::to_string(rank) + "'s collective #" + std::to_string(k + 1) + " is " + where(in) +
                  ", rank " + std::to_string(m) + "'s is " + where(theirs) +
                  ": every rank of a replica group issues the same collectives in the same order",
              ir::ErrorKind::Runtime,
              in.loc,
              {{theirs.loc, "rank " + std::to_string(m) + "'s collective #" + std::to_string(k + 1)}},
              "a collective must not depend on the rank (ncc.rank_id) through a run-time loop bound",
              in.api});
  }
  size_t pos = 0;
  while (members[pos] != rank) ++pos;
  Meeting& meeting = meetings_[{k, members}];
  if (meeting.data.empty()) meeting.data.resize(members.size());
  meeting.data[pos] = std::move(data);
  if (++meeting.arrived == members.size()) {
    for (int64_t m : members) ranks_[m].state = State::running;
    cv_.notify_all();
  } else {
    me.state = State::waiting;
    check_progress();
    cv_.wait(lock, [&] { return aborted_ || meeting.arrived == members.size(); });
    if (aborted_) throw Aborted{};
  }
  std::vector<RankData> all = meeting.data;
  if (++meeting.collected == members.size()) meetings_.erase({k, members});
  return all;
}

void Rendezvous::finish(int rank) {
  std::lock_guard lock(mu_);
  ranks_.at(rank).state = State::finished;
  check_progress();
}

void Rendezvous::abort() {
  std::lock_guard lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

void Rendezvous::check_progress() {
  int waiting = -1;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    if (ranks_[r].state == State::running) return;
    if (ranks_[r].state == State::waiting && waiting < 0) waiting = static_cast<int>(r);
  }
  if (waiting < 0 || aborted_) return;
  // Nothing runs: the first waiting rank waits for a member that will never come.
  const Rank& w = ranks_[waiting];
  const size_t k = w.reached.size() - 1;
  const ir::Instruction& in = *w.reached[k];
  const std::vector<int64_t>& members = w.members;
  std::string others;
  std::vector<ir::Note> notes;
  for (int64_t m : members) {
    const Rank& o = ranks_[m];
    if (m == waiting || (o.reached.size() == k + 1 && o.reached[k] == &in)) continue;
    others += others.empty() ? "" : "; ";
    if (o.state == State::finished) {
      others += "rank " + std::to_string(m) + " finished after " + std::to_string(o.reached.size()) +
                " collective(s)";
    } else {
      others += "rank " + std::to_string(m) + " waits at its collective #" + std::to_string(o.reached.size()) + ", " +
                where(*o.reached.back());
      notes.push_back({o.reached.back()->loc, "rank " + std::to_string(m) + " waits here"});
    }
  }
  aborted_ = true;
  cv_.notify_all();
  ir::fail({"err_collective_deadlock",
            "rank " + std::to_string(waiting) + " waits at its collective #" + std::to_string(k + 1) + ", " +
                where(in) + ", for the ranks of its replica-group list " + ranks_str(members) + ", but " + others,
            ir::ErrorKind::Runtime, in.loc, std::move(notes),
            "every rank of a replica group issues the same collectives in the same order", in.api});
}

}  // namespace nkic::sim
