#include "ir/SourceLoc.h"

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

}  // namespace nkic::ir
