#include "ir/SourceLoc.h"

#include <deque>
#include <mutex>
#include <unordered_set>

namespace nkic::ir {

const std::string* intern_file(std::string_view path) {
  static std::mutex mu;
  static std::unordered_set<std::string> pool;
  std::lock_guard<std::mutex> lock(mu);
  return &*pool.emplace(path).first;
}

std::string SourceLoc::str() const {
  if (!known()) return "<unknown>";
  std::string s = *file + ":" + std::to_string(line);
  if (col > 0) s += ":" + std::to_string(col);
  return s;
}

namespace {
std::mutex& table_mutex() {
  static std::mutex mu;
  return mu;
}
std::deque<SourceLoc>& table() {
  static std::deque<SourceLoc> t;
  return t;
}
}  // namespace

int register_location(const SourceLoc& loc) {
  std::lock_guard<std::mutex> lock(table_mutex());
  table().push_back(loc);
  return static_cast<int>(table().size()) - 1;
}

SourceLoc registered_location(int id) {
  std::lock_guard<std::mutex> lock(table_mutex());
  if (id < 0 || static_cast<size_t>(id) >= table().size()) return {};
  return table()[static_cast<size_t>(id)];
}

}  // namespace nkic::ir
