// A position in the user's kernel source. File names are interned so that an
// instruction carries a pointer, not a string copy (100k-instruction unrolls).
#pragma once
#include <string>
#include <string_view>

namespace nkic::ir {

const std::string* intern_file(std::string_view path);

struct SourceLoc {
  const std::string* file = nullptr;
  int line = 0;
  int col = 0;  // 1-based; 0 = unknown
  bool known() const { return file != nullptr && line > 0; }
  std::string str() const;  // "file:line:col"
};

// Locations registered once (by the front end, for each call site it hooks)
// and named by a small integer afterwards, so that a traced call passes an id
// instead of a file name. Id kNoLocation names no location.
constexpr int kNoLocation = -1;
int register_location(const SourceLoc& loc);
SourceLoc registered_location(int id);  // an unknown location for kNoLocation or an unregistered id

}  // namespace nkic::ir
