#include "ir/Diagnostic.h"

#include <fstream>
#include <mutex>
#include <unordered_map>

namespace nkic::ir {

std::string source_line(const std::string& file, int line) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::vector<std::string>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(file);
  if (it == cache.end()) {
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string s; std::getline(in, s);) lines.push_back(s);
    it = cache.emplace(file, std::move(lines)).first;
  }
  if (line < 1 || line > static_cast<int>(it->second.size())) return "";
  return it->second[line - 1];
}

namespace {
void excerpt(std::string& out, const ir::SourceLoc& loc) {
  if (!loc.known()) return;
  std::string src = source_line(*loc.file, loc.line);
  if (src.empty()) return;
  out += "\n    " + src;
  if (loc.col > 0) {
    std::string pad;
    for (int i = 0; i < loc.col - 1 && i < static_cast<int>(src.size()); ++i)
      pad += src[i] == '\t' ? '\t' : ' ';
    out += "\n    " + pad + "^";
  }
}
}  // namespace

std::string render(const Diagnostic& d) {
  std::string out;
  if (d.loc.known()) out += d.loc.str() + ": ";
  out += "error: ";
  if (!d.code.empty()) out += "[" + d.code + "] ";
  out += d.message;
  if (!d.api.empty()) out += " (in '" + d.api + "')";
  excerpt(out, d.loc);
  for (const Note& n : d.notes) {
    out += "\n" + (n.loc.known() ? n.loc.str() + ": " : std::string()) + "note: " + n.message;
    excerpt(out, n.loc);
  }
  if (!d.hint.empty()) out += "\nhint: " + d.hint;
  return out;
}

const char* NkiError::what() const noexcept {
  rendered_ = render(diag_);
  return rendered_.c_str();
}

void fail(Diagnostic d) { throw NkiError(std::move(d)); }

}  // namespace nkic::ir
