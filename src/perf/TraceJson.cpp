#include <algorithm>
#include <cstdio>
#include <sstream>

#include "perf/Report.h"

namespace nkic::perf {

const char* name(Track t) {
  static const char* const kNames[] = {"pe", "act", "dve", "pool", "dma"};
  return kNames[static_cast<int>(t)];
}

std::string track_name(const Profile& p, int track) {
  const int per = p.tracks_per_core(), local = track % per;
  const std::string prefix = p.cores > 1 ? "core" + std::to_string(track / per) + "." : "";
  return prefix + (local < kComputeTracks ? name(static_cast<Track>(local)) : "dma" + std::to_string(local - kComputeTracks));
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

double busy_within(const Profile& p, const Slice& s) {
  if (s.repeat == 1) return s.duration;
  double period = 0;
  for (int64_t i = s.pattern_begin; i < s.pattern_end; ++i) {
    const Slice& q = p.slices[static_cast<size_t>(i)];
    if (q.track == s.track) period += q.duration;
  }
  return period * static_cast<double>(s.repeat);
}

namespace {

// Trace-event times are microseconds; three decimals keep nanoseconds.
std::string us(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ns / 1000.0);
  return buf;
}

}  // namespace

std::string trace_json(const Profile& p) {
  std::ostringstream o;
  o << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"kernel\":" << json_string(p.kernel)
    << ",\"target\":" << json_string(p.target) << ",\"latency_us\":" << us(p.latency) << "},\"traceEvents\":[";
  o << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":"
    << json_string(p.kernel + " on " + p.target + " (predicted)") << "}}";
  int tracks = kComputeTracks;
  for (const Slice& s : p.slices) tracks = std::max(tracks, s.track + 1);
  for (int t = 0; t < tracks; ++t)
    o << ",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" << t << ",\"args\":{\"name\":"
      << json_string(track_name(p, t)) << "}},{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":" << t
      << ",\"args\":{\"sort_index\":" << t << "}}";
  for (const Slice& s : p.slices) {
    const std::string label = s.repeat > 1 ? s.api + " x" + std::to_string(s.repeat) : ir::name(s.opcode);
    o << ",{\"ph\":\"X\",\"pid\":1,\"tid\":" << s.track << ",\"ts\":" << us(s.start) << ",\"dur\":" << us(s.duration)
      << ",\"name\":" << json_string(label) << ",\"args\":{\"api\":" << json_string(s.api);
    if (s.loc.known()) o << ",\"source\":" << json_string(s.loc.str()) << ",\"line\":" << s.loc.line;
    // A steady-state stretch is one slice here: how busy its track is within it.
    if (s.repeat > 1)
      o << ",\"repeat\":" << s.repeat << ",\"period_us\":" << us(s.period) << ",\"busy_us\":" << us(busy_within(p, s));
    o << "}}";
  }
  o << "]}";
  return o.str();
}

}  // namespace nkic::perf
