#include <algorithm>
#include <cstdio>
#include <sstream>

#include "ir/Diagnostic.h"
#include "perf/HtmlScript.h"
#include "perf/Report.h"

namespace nkic::perf {

namespace {

constexpr size_t kPageSlices = 40000;  // the page draws at most this many (the longest)

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// One instruction slice for the page: [track,] start, duration, instruction, API, source.
std::string slice_data(const Slice& s, bool with_track) {
  std::ostringstream o;
  o << "[";
  if (with_track) o << s.track << ",";
  o << num(s.start) << "," << num(s.duration) << "," << json_string(ir::name(s.opcode)) << "," << json_string(s.api)
    << "," << json_string(s.loc.known() ? s.loc.str() : "") << "]";
  return o.str();
}

// The page's data: one JSON object the script draws from.
std::string page_data(const Profile& p) {
  std::ostringstream o;
  o << "{\"kernel\":" << json_string(p.kernel) << ",\"target\":" << json_string(p.target)
    << ",\"latency\":" << num(p.latency) << ",\"hfu\":" << num(p.hfu) << ",\"mfu\":" << num(p.mfu)
    << ",\"dma_bytes\":" << p.dma_bytes << ",\"dma_utilisation\":" << num(p.dma_utilisation)
    << ",\"sbuf_peak\":" << p.sbuf_peak_bytes << ",\"psum_peak\":" << p.psum_peak_bytes
    << ",\"sbuf_capacity\":" << p.sbuf_capacity_bytes << ",\"psum_capacity\":" << p.psum_capacity_bytes
    << ",\"dma_queues\":" << p.dma_queues << ",\"cores\":" << p.cores << ",\"engines\":[";
  for (size_t i = 0; i < p.engines.size(); ++i)
    o << (i ? "," : "") << "[" << json_string(name(p.engines[i].track)) << "," << num(p.engines[i].busy) << ","
      << p.engines[i].instructions << "]";
  o << "],\"tracks_per_core\":" << p.tracks_per_core();
  // Steady-state stretches go apart from the instructions, each with the period it repeats.
  std::vector<const Slice*> shown, blocks;
  for (const Slice& s : p.slices) (s.repeat > 1 ? blocks : shown).push_back(&s);
  const size_t dropped = shown.size() > kPageSlices ? shown.size() - kPageSlices : 0;
  if (dropped) {
    std::stable_sort(shown.begin(), shown.end(), [](const Slice* a, const Slice* b) { return a->duration > b->duration; });
    shown.resize(kPageSlices);
  }
  o << ",\"not_drawn\":" << p.slices_dropped + static_cast<int64_t>(dropped) << ",\"slices\":[";
  for (size_t i = 0; i < shown.size(); ++i) o << (i ? "," : "") << slice_data(*shown[i], true);
  o << "],\"blocks\":[";
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Slice& b = *blocks[i];
    o << (i ? "," : "") << "[" << b.track << "," << num(b.start) << "," << num(b.duration) << "," << b.repeat << ","
      << num(b.period) << "," << json_string(b.loc.known() ? b.loc.str() : "") << ",[";
    bool first = true;
    for (int64_t k = b.pattern_begin; k < b.pattern_end; ++k) {
      const Slice& s = p.slices[static_cast<size_t>(k)];
      if (s.track != b.track) continue;
      o << (first ? "" : ",") << slice_data(s, false);
      first = false;
    }
    o << "]]";
  }
  o << "],\"occupancy\":[";
  for (size_t i = 0; i < p.occupancy.size(); ++i)
    o << (i ? "," : "") << "[" << num(p.occupancy[i].time) << "," << p.occupancy[i].sbuf_bytes << ","
      << p.occupancy[i].psum_bytes << "]";
  o << "],\"lines\":[";
  for (size_t i = 0; i < p.lines.size(); ++i) {
    const LineCost& l = p.lines[i];
    std::string text = l.loc.known() ? ir::source_line(*l.loc.file, l.loc.line) : "";
    o << (i ? "," : "") << "[" << json_string(l.loc.known() ? l.loc.str() : "") << "," << json_string(text) << ","
      << num(l.busy) << "," << num(l.critical) << "," << l.instructions << "]";
  }
  o << "],\"decided_by\":" << json_string(p.decided_by) << ",\"notes\":[";
  for (size_t i = 0; i < p.notes.size(); ++i) o << (i ? "," : "") << json_string(p.notes[i]);
  o << "]}";
  return o.str();
}

}  // namespace

std::string html_report(const Profile& p) {
  std::string data = page_data(p);
  // "</" inside the data would end the script element.
  for (size_t i = 0; (i = data.find("</", i)) != std::string::npos; i += 3) data.replace(i, 2, "<\\/");
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nkic profile: " << p.kernel << "</title>\n"
    << "<style>body{font-family:sans-serif;margin:16px}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;text-align:left}"
       "canvas{border:1px solid #ddd;display:block;margin:8px 0}#timeline{cursor:grab}"
       "#tip{position:absolute;display:none;background:#fffff0;border:1px solid #999;padding:4px 6px;"
       "font-size:12px;white-space:pre;pointer-events:none}.help{font-size:12px;color:#555}</style></head>\n<body>\n"
    << "<h2 id=\"title\"></h2>\n<table id=\"summary\"></table>\n<h3>Engine timeline</h3>\n"
    << "<div class=\"help\">Wheel: zoom at the pointer; drag: pan; double-click or <button id=\"reset\">reset"
       "</button>: the whole kernel; click a DMA group's name: its queues. A steady-state loop shows its repeated "
       "instructions once they are wide enough to see, and before that one box per engine, filled to its busy "
       "fraction.</div>\n"
    << "<canvas id=\"timeline\"></canvas>\n<div id=\"tip\"></div>\n<h3>SBUF / PSUM occupancy</h3>\n"
    << "<canvas id=\"occupancy\"></canvas>\n"
    << "<h3>Time by source line</h3>\n<table id=\"lines\"><tr><th>line</th><th>source</th><th>busy (us)</th>"
       "<th>critical path (us)</th><th>instructions</th></tr></table>\n"
    << "<script type=\"application/json\" id=\"nkic-data\">" << data << "</script>\n<script>"
    << html_report_script() << "</script>\n</body></html>\n";
  return o.str();
}

}  // namespace nkic::perf
