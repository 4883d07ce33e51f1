#include <algorithm>
#include <cstdio>
#include <sstream>

#include "ir/Diagnostic.h"
#include "perf/Report.h"

namespace nkic::perf {

namespace {

constexpr size_t kPageSlices = 40000;  // the page draws at most this many (the longest)

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
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
  int tracks = kComputeTracks;
  for (const Slice& s : p.slices) tracks = std::max(tracks, s.track + 1);
  o << "],\"tracks\":[";
  for (int t = 0; t < tracks; ++t) o << (t ? "," : "") << json_string(track_name(p, t));
  std::vector<const Slice*> shown;
  for (const Slice& s : p.slices) shown.push_back(&s);
  if (shown.size() > kPageSlices) {
    std::stable_sort(shown.begin(), shown.end(), [](const Slice* a, const Slice* b) { return a->duration > b->duration; });
    shown.resize(kPageSlices);
  }
  o << "],\"slices\":[";
  for (size_t i = 0; i < shown.size(); ++i) {
    const Slice& s = *shown[i];
    o << (i ? "," : "") << "[" << s.track << "," << num(s.start) << "," << num(s.duration) << ","
      << json_string(s.repeat > 1 ? s.api + " x" + std::to_string(s.repeat) : ir::name(s.opcode)) << ","
      << json_string(s.loc.known() ? s.loc.str() : "") << "]";
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
  o << "],\"notes\":[";
  for (size_t i = 0; i < p.notes.size(); ++i) o << (i ? "," : "") << json_string(p.notes[i]);
  o << "]}";
  return o.str();
}

// The page's script draws the timeline and the occupancy on canvases and fills
// the tables; it marks <body data-drawn="N"> with the slices it drew (and
// data-error with a script error), so a headless browser can tell it rendered.
constexpr const char* kScript = R"JS(
window.addEventListener('error', e => { document.body.dataset.error = String(e.message); });
const D = JSON.parse(document.getElementById('nkic-data').textContent);
const us = ns => (ns / 1000).toFixed(3);
document.getElementById('title').textContent = D.kernel + ' on ' + D.target + ': ' + us(D.latency) + ' us predicted';
const sum = document.getElementById('summary');
const row = (k, v) => { const tr = sum.insertRow(); tr.insertCell().textContent = k; tr.insertCell().textContent = v; };
row('latency', us(D.latency) + ' us');
for (const [e, busy, n] of D.engines) {
  const width = (e === 'dma' ? D.dma_queues : 1) * D.cores;
  row(e + ' busy', (D.latency > 0 ? 100 * busy / (D.latency * Math.max(width, 1)) : 0).toFixed(1) + ' % (' + n + ' instructions)');
}
row('MFU / HFU', (100 * D.mfu).toFixed(1) + ' % / ' + (100 * D.hfu).toFixed(1) + ' %');
row('DMA', D.dma_bytes + ' bytes, ' + (100 * D.dma_utilisation).toFixed(1) + ' % of peak bandwidth');
row('SBUF peak', D.sbuf_peak + ' of ' + D.sbuf_capacity + ' bytes per partition');
row('PSUM peak', D.psum_peak + ' of ' + D.psum_capacity + ' bytes per partition');
for (const n of D.notes) row('note', n);

const colors = {pe: '#4e79a7', act: '#59a14f', dve: '#f28e2b', pool: '#b07aa1', dma: '#76b7b2'};
const tl = document.getElementById('timeline');
const W = tl.width = 1200, rowH = 18, left = 60;
tl.height = rowH * D.tracks.length + 20;
const g = tl.getContext('2d');
g.font = '11px sans-serif';
D.tracks.forEach((t, i) => { g.fillStyle = '#000'; g.fillText(t, 4, i * rowH + 13); });
const span = Math.max(D.latency, 1), sx = (W - left - 10) / span;
let drawn = 0;
for (const [track, start, dur, label] of D.slices) {
  const name = D.tracks[track] || '';
  g.fillStyle = colors[name.startsWith('dma') ? 'dma' : name] || '#999';
  g.fillRect(left + start * sx, track * rowH + 2, Math.max(dur * sx, 0.5), rowH - 4);
  drawn++;
}
g.fillStyle = '#000';
g.fillText('0', left, tl.height - 4);
g.fillText(us(span) + ' us', W - 80, tl.height - 4);

const oc = document.getElementById('occupancy');
oc.width = 1200; oc.height = 160;
const o = oc.getContext('2d');
const cap = Math.max(D.sbuf_capacity, D.sbuf_peak, 1);
const plot = (idx, color, scale) => {
  o.strokeStyle = color; o.beginPath();
  D.occupancy.forEach(([t, s, p], i) => {
    const v = idx === 1 ? s : p, x = left + t * sx, y = 150 - 140 * v / scale;
    i ? o.lineTo(x, y) : o.moveTo(x, y);
  });
  o.stroke();
};
plot(1, '#4e79a7', cap);
plot(2, '#e15759', Math.max(D.psum_capacity, D.psum_peak, 1));
o.fillStyle = '#000';
o.fillText('SBUF (blue, of ' + D.sbuf_capacity + ' B) and PSUM (red, of ' + D.psum_capacity + ' B) per partition', left, 10);

const lines = document.getElementById('lines');
for (const [where, text, busy, crit, n] of D.lines) {
  const tr = lines.insertRow();
  [where, text, us(busy), us(crit), n].forEach(v => { tr.insertCell().textContent = v; });
}
document.body.dataset.drawn = String(drawn);
)JS";

}  // namespace

std::string html_report(const Profile& p) {
  std::string data = page_data(p);
  // "</" inside the data would end the script element.
  for (size_t i = 0; (i = data.find("</", i)) != std::string::npos; i += 3) data.replace(i, 2, "<\\/");
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nkic profile: " << p.kernel << "</title>\n"
    << "<style>body{font-family:sans-serif;margin:16px}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;text-align:left}"
       "canvas{border:1px solid #ddd;display:block;margin:8px 0}</style></head>\n<body>\n"
    << "<h2 id=\"title\"></h2>\n<table id=\"summary\"></table>\n<h3>Engine timeline</h3>\n"
    << "<canvas id=\"timeline\"></canvas>\n<h3>SBUF / PSUM occupancy</h3>\n<canvas id=\"occupancy\"></canvas>\n"
    << "<h3>Time by source line</h3>\n<table id=\"lines\"><tr><th>line</th><th>source</th><th>busy (us)</th>"
       "<th>critical path (us)</th><th>instructions</th></tr></table>\n"
    << "<script type=\"application/json\" id=\"nkic-data\">" << data << "</script>\n<script>" << kScript
    << "</script>\n</body></html>\n";
  return o.str();
}

}  // namespace nkic::perf
