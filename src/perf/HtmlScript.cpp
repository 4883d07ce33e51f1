#include "perf/HtmlScript.h"

namespace nkic::perf {

namespace {

// Draws the report from the page's JSON data. The timeline has a time axis, one row per
// compute engine and one per core's group of DMA queues (its busy share over time; a click on
// its name lists the queues), and redraws on zoom (wheel), pan (drag) and reset. A steady-state
// stretch of a loop repeats the slices of the period before it: they are drawn where they
// fall once a period is wide enough to see, else the stretch is one box per track, filled to
// the track's busy fraction and labelled with its repeat count. Hovering names the instruction,
// API, source line and duration. For a headless browser the page marks <body> with what it
// drew: data-drawn (instruction slices), data-repeated (of them, repeated from a stretch's
// period), data-blocks (stretches drawn as boxes), data-busy (per engine, the busy percentage
// of the visible window the drawing shows, as JSON), data-view (the window, ns) and, on a
// script error, data-error. The window can be given in the address: #t0=<ns>&t1=<ns>.
constexpr const char* kScript = R"JS(
window.addEventListener('error', e => { document.body.dataset.error = String(e.message); });
const D = JSON.parse(document.getElementById('nkic-data').textContent);
const us = ns => (ns / 1000).toFixed(3);
const fmt = ns => Math.abs(ns) >= 1e6 ? (ns / 1e6).toPrecision(4) + ' ms' : Math.abs(ns) >= 1e3
  ? (ns / 1e3).toPrecision(4) + ' us' : ns.toPrecision(4) + ' ns';
document.getElementById('title').textContent = D.kernel + ' on ' + D.target + ': ' + us(D.latency) + ' us predicted';
const sum = document.getElementById('summary');
const row = (k, v, id) => {
  const tr = sum.insertRow(); tr.insertCell().textContent = k;
  const c = tr.insertCell(); c.textContent = v; if (id) c.id = id;
};
row('latency', us(D.latency) + ' us');
const ENGINES = ['pe', 'act', 'dve', 'pool'];
const width = e => (e === 'dma' ? D.dma_queues : 1) * D.cores;
for (const [e, busy, n] of D.engines)
  row(e + ' busy', (D.latency > 0 ? 100 * busy / (D.latency * Math.max(width(e), 1)) : 0).toFixed(1) + ' % (' + n +
      ' instructions)', 'busy-' + e);
row('MFU / HFU', (100 * D.mfu).toFixed(1) + ' % / ' + (100 * D.hfu).toFixed(1) + ' %');
row('DMA', D.dma_bytes + ' bytes, ' + (100 * D.dma_utilisation).toFixed(1) + ' % of peak bandwidth');
row('SBUF peak', D.sbuf_peak + ' of ' + D.sbuf_capacity + ' bytes per partition');
row('PSUM peak', D.psum_peak + ' of ' + D.psum_capacity + ' bytes per partition');
if (D.not_drawn) row('not drawn', D.not_drawn + ' shortest instruction slices (the timeline keeps the longest)');
if (D.decided_by) row('decided by', D.decided_by);
for (const n of D.notes) row('note', n);

// Per track: its instructions (by start) and its steady-state stretches.
const tpc = D.tracks_per_core;
const engineOf = t => (t % tpc < 4 ? ENGINES[t % tpc] : 'dma');
const byTrack = {};
const track = t => byTrack[t] || (byTrack[t] = {slices: [], blocks: []});
for (const [t, start, dur, op, api, loc] of D.slices) track(t).slices.push({start, dur, op, api, loc});
for (const [t, start, dur, repeat, period, loc, pattern] of D.blocks) {
  const pat = pattern.map(([start, dur, op, api, loc]) => ({start, dur, op, api, loc}));
  const busy = repeat * pat.reduce((a, s) => a + s.dur, 0);
  track(t).blocks.push({start, dur, repeat, period, loc, pat, busy,
                        lo: Math.min(...pat.map(s => s.start)), hi: Math.max(...pat.map(s => s.start + s.dur))});
}
Object.values(byTrack).forEach(T => T.slices.sort((a, b) => a.start - b.start));

const colors = {pe: '#4e79a7', act: '#59a14f', dve: '#f28e2b', pool: '#b07aa1', dma: '#76b7b2'};
const tl = document.getElementById('timeline'), tip = document.getElementById('tip');
const W = 1200, left = 110, axisH = 22, rowH = 18, plotW = W - left - 10;
const MIN_PERIOD_PX = 4, MAX_REPEATED = 60000;
const expanded = new Set();
let t0 = 0, t1 = Math.max(D.latency, 1), hits = [];
const m = /t0=([\d.e+-]+)&t1=([\d.e+-]+)/.exec(location.hash);
if (m && +m[2] > +m[1]) t0 = +m[1], t1 = +m[2];

function rows() {
  const out = [];
  for (let c = 0; c < D.cores; c++) {
    const pre = D.cores > 1 ? 'core' + c + '.' : '';
    ENGINES.forEach((e, i) => out.push({label: pre + e, tracks: [c * tpc + i], engine: e, counted: true}));
    const queues = [...Array(D.dma_queues).keys()].map(q => c * tpc + 4 + q);
    out.push({label: (expanded.has(c) ? '- ' : '+ ') + pre + 'dma x' + D.dma_queues, tracks: queues, engine: 'dma',
              group: c, counted: true});
    if (expanded.has(c)) queues.forEach((t, q) => out.push({label: '   ' + pre + 'dma' + q, tracks: [t], engine: 'dma'}));
  }
  return out;
}

// What track `t` does in the window, as `sink.slice(start, dur, info)` for each instruction
// and `sink.block(stretch, from, to)` for a stretch too dense to draw slice by slice.
function emit(t, sx, sink) {
  const T = byTrack[t];
  if (!T) return;
  for (const s of T.slices) if (s.start < t1 && s.start + s.dur > t0) sink.slice(s.start, s.dur, s, 0);
  for (const b of T.blocks) {
    if (b.start >= t1 || b.start + b.dur <= t0) continue;
    const r0 = Math.max(1, Math.floor((t0 - b.hi) / b.period)), r1 = Math.min(b.repeat, Math.ceil((t1 - b.lo) / b.period));
    if (b.pat.length && b.period * sx >= MIN_PERIOD_PX && (r1 - r0 + 1) * b.pat.length <= MAX_REPEATED) {
      for (let r = r0; r <= r1; r++)
        for (const s of b.pat) {
          const start = s.start + r * b.period;
          if (start < t1 && start + s.dur > t0) sink.slice(start, s.dur, s, r, b);
        }
    } else {
      sink.block(b, Math.max(b.start, t0), Math.min(b.start + b.dur, t1));
    }
  }
}

function axis(g, sx) {
  const raw = (t1 - t0) / 10, p = 10 ** Math.floor(Math.log10(raw)), f = raw / p;
  const step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
  g.strokeStyle = '#eee'; g.fillStyle = '#000'; g.font = '11px sans-serif';
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    const x = left + (t - t0) * sx;
    g.beginPath(); g.moveTo(x, axisH - 4); g.lineTo(x, tl.height); g.stroke();
    g.fillText(fmt(t), x + 2, 12);
  }
}

function draw() {
  const R = rows(), sx = plotW / (t1 - t0), busy = {}, clip = (a, b) => Math.min(b, t1) - Math.max(a, t0);
  tl.width = W; tl.height = axisH + rowH * R.length + 4;
  const g = tl.getContext('2d');
  hits = []; axis(g, sx);
  let drawn = 0, repeated = 0, blocks = 0;
  R.forEach((r, i) => {
    const y = axisH + i * rowH, color = colors[r.engine], bins = r.group !== undefined ? new Float64Array(plotW) : null;
    g.fillStyle = '#000'; g.font = '11px sans-serif'; g.fillText(r.label, 4, y + 13);
    hits.push({x: 0, y, w: left, h: rowH, row: r});
    const add = v => { if (r.counted) busy[r.engine] = (busy[r.engine] || 0) + v; };
    const spread = (a, b, density) => {  // busy time into the group's pixel columns
      for (let x = Math.max(0, Math.floor((a - t0) * sx)); x < Math.min(plotW, Math.ceil((b - t0) * sx)); x++)
        bins[x] += density * clip(Math.max(a, t0 + x / sx), Math.min(b, t0 + (x + 1) / sx));
    };
    const sink = {
      slice(start, dur, s, rep, b) {
        add(clip(start, start + dur)); drawn++; if (rep) repeated++;
        if (bins) return spread(start, start + dur, 1);
        const x = left + Math.max(0, (start - t0) * sx), w = Math.max((Math.min(start + dur, t1) - Math.max(start, t0)) * sx, 0.5);
        g.fillStyle = color; g.fillRect(x, y + 2, w, rowH - 4);
        hits.push({x, y, w: Math.max(w, 2), h: rowH, text: s.op + ' (' + s.api + ')\n' + (s.loc || 'no source line') +
          '\nstart ' + fmt(start) + ', duration ' + fmt(dur) + (rep ? '\nrepeat ' + rep + ' of ' + b.repeat +
          ' of a steady-state period (' + fmt(b.period) + ')' : '')});
      },
      block(b, a, e) {
        const frac = b.pat.length ? b.busy / b.dur : 0;
        add(frac * (e - a)); blocks++;
        if (bins) return spread(a, e, frac);
        const x = left + (a - t0) * sx, w = Math.max((e - a) * sx, 1), h = (rowH - 4) * frac;
        g.fillStyle = color + '33'; g.fillRect(x, y + 2, w, rowH - 4);
        g.fillStyle = color; g.fillRect(x, y + rowH - 2 - h, w, h);
        g.strokeStyle = color; g.strokeRect(x + 0.5, y + 2.5, w - 1, rowH - 5);
        const label = 'x' + b.repeat + ', ' + (100 * frac).toFixed(1) + ' % busy';
        g.fillStyle = '#000'; if (w > g.measureText(label).width + 6) g.fillText(label, x + 3, y + 13);
        hits.push({x, y, w, h: rowH, text: 'steady state: the period before it (' + fmt(b.period) + ') repeated ' +
          b.repeat + ' times\n' + (b.loc || 'no source line') + '\n' + r.label + ' ' + (100 * frac).toFixed(1) +
          ' % busy: ' + fmt(b.busy) + ' of ' + fmt(b.dur) + (b.pat.length ? '\nzoom in to see its instructions'
                                                                          : '\nits instructions were not recorded')});
      },
    };
    r.tracks.forEach(t => emit(t, sx, sink));
    if (bins) {
      const full = r.tracks.length / sx;  // queue-time of one pixel column
      g.fillStyle = color;
      bins.forEach((v, x) => { const h = (rowH - 4) * Math.min(1, v / full); if (h > 0) g.fillRect(left + x, y + rowH - 2 - h, 1, h); });
      hits.push({x: left, y, w: plotW, h: rowH, bins, full, row: r});
    }
  });
  const pct = {};
  for (const e of [...ENGINES, 'dma']) pct[e] = 100 * (busy[e] || 0) / ((t1 - t0) * width(e));
  Object.assign(document.body.dataset, {drawn: String(drawn), repeated: String(repeated), blocks: String(blocks),
                                        busy: JSON.stringify(pct), view: t0 + ',' + t1});
  occupancy(sx);
}

function occupancy(sx) {
  const oc = document.getElementById('occupancy');
  oc.width = W; oc.height = 160;
  const o = oc.getContext('2d');
  const plot = (idx, color, scale) => {
    o.strokeStyle = color; o.beginPath();
    D.occupancy.forEach(([t, s, p], i) => {
      const v = idx === 1 ? s : p, x = left + (t - t0) * sx, y = 150 - 140 * v / scale;
      i ? o.lineTo(x, y) : o.moveTo(x, y);
    });
    o.stroke();
  };
  plot(1, '#4e79a7', Math.max(D.sbuf_capacity, D.sbuf_peak, 1));
  plot(2, '#e15759', Math.max(D.psum_capacity, D.psum_peak, 1));
  o.clearRect(0, 0, left, oc.height);
  o.fillStyle = '#000';
  o.fillText('SBUF (blue, of ' + D.sbuf_capacity + ' B) and PSUM (red, of ' + D.psum_capacity + ' B) per partition', left, 10);
}

function view(a, b) {
  const span = Math.max(b - a, 1), end = Math.max(D.latency, 1);
  t0 = Math.min(Math.max(a, 0), Math.max(end - span, 0)); t1 = Math.min(t0 + span, end);
  history.replaceState(null, '', '#t0=' + t0 + '&t1=' + t1);
  draw();
}
const timeAt = ev => t0 + (ev.offsetX - left) * (t1 - t0) / plotW;
tl.addEventListener('wheel', ev => {
  ev.preventDefault();
  const k = Math.exp(ev.deltaY * 0.002), at = timeAt(ev);
  view(at - (at - t0) * k, at + (t1 - at) * k);
});
let drag = null;
tl.addEventListener('mousedown', ev => { drag = {x: ev.offsetX, t0, t1, moved: false}; });
window.addEventListener('mouseup', () => { drag = null; tl.style.cursor = 'grab'; });
tl.addEventListener('dblclick', () => view(0, D.latency));
document.getElementById('reset').addEventListener('click', () => view(0, D.latency));
tl.addEventListener('click', ev => {
  const h = hits.find(h => h.row && h.row.group !== undefined && ev.offsetX < left && ev.offsetY >= h.y && ev.offsetY < h.y + h.h);
  if (!h) return;
  expanded.has(h.row.group) ? expanded.delete(h.row.group) : expanded.add(h.row.group);
  draw();
});
tl.addEventListener('mousemove', ev => {
  if (drag) {
    const dt = (ev.offsetX - drag.x) * (drag.t1 - drag.t0) / plotW;
    tl.style.cursor = 'grabbing'; tip.style.display = 'none';
    return view(drag.t0 - dt, drag.t1 - dt);
  }
  let text = '';
  for (let i = hits.length - 1; i >= 0 && !text; i--) {
    const h = hits[i];
    if (ev.offsetX < h.x || ev.offsetX >= h.x + h.w || ev.offsetY < h.y || ev.offsetY >= h.y + h.h) continue;
    if (h.text) text = h.text;
    else if (h.bins) text = h.row.label.slice(2) + ' at ' + fmt(timeAt(ev)) + ': ' +
      (100 * h.bins[Math.floor(ev.offsetX - left)] / h.full).toFixed(1) + ' % of the queues busy\nclick its name to list the queues';
    else if (h.row && h.row.group !== undefined) text = 'click to ' + (expanded.has(h.row.group) ? 'hide' : 'list') + ' the queues';
  }
  tip.style.display = text ? 'block' : 'none';
  tip.textContent = text;
  tip.style.left = ev.pageX + 12 + 'px'; tip.style.top = ev.pageY + 12 + 'px';
});
tl.addEventListener('mouseleave', () => { tip.style.display = 'none'; });

const lines = document.getElementById('lines');
for (const [where, text, busy, crit, n] of D.lines) {
  const tr = lines.insertRow();
  [where, text, us(busy), us(crit), n].forEach(v => { tr.insertCell().textContent = v; });
}
draw();
)JS";

}  // namespace

const char* html_report_script() { return kScript; }

}  // namespace nkic::perf
