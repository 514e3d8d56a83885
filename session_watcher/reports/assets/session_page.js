(function () {
'use strict';
const M = JSON.parse(document.getElementById('model').textContent);
const LIVE = document.body.dataset.live === '1';
const NS = 'http://www.w3.org/2000/svg';
const GRADE_COLOUR = {A:'#a6e3a1', B:'#94e2d5', C:'#f9e2af', D:'#fab387', F:'#f38ba8'};
const STOPS = [[92.5,[0xa6,0xe3,0xa1]],[77.5,[0x94,0xe2,0xd5]],[62.5,[0xf9,0xe2,0xaf]],
               [47.5,[0xfa,0xb3,0x87]],[30,[0xf3,0x8b,0xa8]]];
const LABEL_W = 250, RIGHT_PAD = 76, NARROW_LABEL_W = 130, NARROW_PAD = 28, ROW_H = 12, BAR_H = 8, TOP = 14;
const TURN_H = 20;  // a turn's header row in the waterfall: its words, and its span's bar below them
const LONG_ROWS = 300;  // a longer waterfall opens with its turns folded, the last one open
// where a label may be cut: a space, a path separator or punctuation (never inside a word)
const BOUNDARY = /[\s\/\\\-_.:|,;()\[\]{}="'<>*]/;
// the theme's colours (theme.css, light or dark), read at each render
const C = {};
const THEME_KEYS = ['call', 'read', 'write', 'bash', 'task', 'other', 'error', 'amber', 'red', 'mark', 'x',
  'xsweet', 'bp', 'grid', 'plot', 'line', 'dim', 'lamp-white', 'lamp-green', 'lamp-amber', 'lamp-red', 'cold', 'hold',
  'restart'];
function readTheme() {
  const cs = getComputedStyle(document.documentElement);
  for (const k of THEME_KEYS) C[k] = cs.getPropertyValue('--' + k).trim();
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function text(parent, x, y, s, cls, tip, anchor) {
  const t = el('text', {x:x, y:y, 'class':cls, 'data-tip':tip, 'text-anchor':anchor}, parent);
  t.textContent = s;
  return t;
}
function exact(n) { return n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en-US'); }
function pad(n) { return String(n).padStart(2, '0'); }
function fmtTime(ts) {
  const d = new Date(ts * 1000);
  return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}
function num(v, d) { return v === null || v === undefined || !isFinite(v) ? '-' : Number(v).toFixed(d); }
function scoreColour(score) {
  if (score >= STOPS[0][0]) return rgb(STOPS[0][1]);
  for (let i = 1; i < STOPS.length; i++) {
    if (score >= STOPS[i][0]) {
      const [s0, c0] = STOPS[i - 1], [s1, c1] = STOPS[i];
      const f = (s0 - score) / (s0 - s1);
      return rgb(c0.map((v, j) => v + (c1[j] - v) * f));
    }
  }
  return rgb(STOPS[STOPS.length - 1][1]);
}
function rgb(c) { return '#' + c.map(v => pad(Math.round(v).toString(16))).join(''); }
// a tool's colour by what it does, either agent's name for it (Codex: a shell command that reads a file
// is ShellRead, a patch Edit; its shell tools and code-mode cells run commands)
const SHELL_TOOLS = ['Bash', 'PowerShell', 'exec_command', 'exec', 'shell', 'shell_command', 'container.exec',
                     'write_stdin'];
function toolColour(r) {
  if (r.isError) return C.error;
  if (['Write', 'Edit', 'MultiEdit', 'NotebookEdit'].includes(r.name)) return C.write;
  if (r.name === 'Read' || r.name === 'ShellRead') return C.read;
  if (SHELL_TOOLS.includes(r.name)) return C.bash;
  if (r.name === 'Task' || r.name === 'Agent') return C.task;
  return C.other;
}
// the figure behind a signal's grade, and what it is (core.health's fields); without one, `-` and
// why, in `health`'s words (core.health.no_number, the model's health.why)
function healthValue(h, name) {
  const has = v => v !== null && v !== undefined && isFinite(v);
  const none = ['-', (h.why || {})[name] || 'nothing to judge yet'];
  switch (name) {
    case 'Context Fill': return has(h.fillPercent) ? [num(h.fillPercent, 1) + '\u00a0%', num(h.fillPercent, 1) +
      '\u00a0% of the context window in use'] : none;
    case 'Compactions': return [String(h.compactionCount), h.compactionCount + ' compaction(s) in the session'];
    case 'Re-reads': return has(h.rereadRatio) ? [num(h.rereadRatio, 2), num(h.rereadRatio, 2) +
      ' of the file reads read a file again'] : none;
    case 'Error Rate': return has(h.errorAcceleration) ? [num(h.errorAcceleration, 2) + 'x',
      'the second half of the tool calls fails ' + num(h.errorAcceleration, 2) + 'x as often as the first']
      : none;
    case 'Tool Efficiency': return has(h.toolEfficiency) ? [num(h.toolEfficiency, 2) + 'x',
      'the second half of the tool calls writes ' + num(h.toolEfficiency, 2) + 'x as often as the first']
      : none;
  }
  return none;
}
// a session without an API call has no grade (core.health.ungraded): `-` and why (`nothing`)
function healthTip(h) {
  return 'Context Health: ' + (h.grade === null ? '- (' + h.nothing + ')' : h.grade + ' (score: ' + h.score + '/100)');
}

// ---------------------------------------------------------------- toolbar and breakdown
function renderToolbar() {
  const h = M.health;
  const badge = document.getElementById('grade-badge');
  badge.textContent = h.grade === null ? '-' : h.grade;
  badge.style.background = GRADE_COLOUR[h.grade] || '';
  badge.dataset.tip = healthTip(h);
  badge.setAttribute('aria-label', healthTip(h));
  const calls = M.rows.filter(r => r.kind === 'call');
  const tools = M.rows.filter(r => r.kind === 'tool');
  const lastCall = calls.length ? calls[calls.length - 1] : null, last = lastCall ? lastCall.prompt : null;
  const stats = document.getElementById('stats');
  stats.textContent = '';
  const add = (label, value, tip) => {
    const s = document.createElement('span'); s.className = 'stat';
    const b = document.createElement('b'); b.textContent = value;
    if (tip) b.dataset.tip = tip;
    s.append(label + ' ', b); stats.appendChild(s);
  };
  // a fork's copies of its parent's calls: rows of its context, counted in the parent (M.fork); so
  // are the tool calls those copies made (a tool row's `call`: the call that asked for it)
  const copied = M.fork ? M.fork.inheritedCalls : 0;
  add('calls', String(calls.length - copied), copied ? M.fork.text : undefined);
  const mine = copied ? tools.filter(t => !(t.call !== null && t.call <= M.fork.inheritedTo)) : tools;
  const left = tools.length - mine.length;
  add('tool calls', String(mine.length), left ? left + ' tool call' + (left === 1 ? '' : 's') +
      ' of the copied calls not counted here (counted in the session forked from)' : undefined);
  add('re-reads', String(mine.filter(t => t.reread).length));
  add('compactions', String(M.compactions.length));
  // every figure in words comes written from core.numbers (promptText, windowText, durationText, ...)
  add('context', (lastCall ? lastCall.promptText : '-') + ' / ' + M.windowText,
      exact(last) + ' of ' + exact(M.window) + '\u00a0tokens (' + num(h.fillPercent, 1) + '\u00a0%)');
  add('duration', M.durationText.replace(/ /g, '\u00a0'));  // core.numbers' words: one quantity, never cut
  const inner = document.querySelector('#breakdown .inner');
  inner.querySelectorAll('.bd-row').forEach(e => e.remove());
  for (const s of h.signals) {
    const row = document.createElement('div'); row.className = 'bd-row';
    const name = document.createElement('span'); name.className = 'bd-name'; name.textContent = s.name;
    const bar = document.createElement('div'); bar.className = 'bd-bar';
    const fill = document.createElement('div');
    const none = s.grade === null;  // nothing graded: no call yet
    fill.style.width = (none ? 0 : s.value) + '%'; fill.style.background = GRADE_COLOUR[s.grade] || '';
    bar.appendChild(fill); bar.dataset.tip = s.name + ': ' + (none ? h.nothing : s.value + '/100');
    const g = document.createElement('span'); g.className = 'bd-grade'; g.textContent = none ? '-' : s.grade;
    g.style.color = GRADE_COLOUR[s.grade] || '';
    const [shown, says] = none ? ['-', h.nothing] : healthValue(h, s.name);
    const v = document.createElement('span'); v.className = 'bd-value'; v.textContent = shown;
    v.dataset.tip = s.name + ': ' + says + (none ? '' : ' (sub-score ' + s.value + '/100, grade ' + s.grade + ')');
    const w = document.createElement('span'); w.className = 'bd-weight';
    w.textContent = Math.round(s.weight * 100) + '%';
    row.append(name, bar, g, v, w); inner.appendChild(row);
  }
}
// what a restart saves now, in `status`'s words (core.render.lamp_words, priced when the page was made)
function renderNow() {
  const p = document.getElementById('restart-now'), r = M.restartNow;
  p.hidden = !r;
  if (r) p.textContent = 'now (' + fmtTime(r.asOf) + (r.since ? ', ' + r.since : '') + '): ' + r.text;
}
function setBreakdown(open) {
  const p = document.getElementById('breakdown');
  p.classList.toggle('open', open);
  p.setAttribute('aria-hidden', open ? 'false' : 'true');
  document.getElementById('grade-badge').setAttribute('aria-expanded', open ? 'true' : 'false');
}

// ---------------------------------------------------------------- chart
function geometry() {
  // the chart's content box (its padding is not ours to draw in: that clipped labels at the right edge)
  const chart = document.getElementById('chart'), cs = getComputedStyle(chart);
  const inner = chart.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const full = Math.max(280, Math.floor(inner));
  const narrow = full < 700;  // a phone: a slim label column
  const lw = narrow ? NARROW_LABEL_W : LABEL_W, w = full - lw - (narrow ? NARROW_PAD : RIGHT_PAD);
  const span = Math.max(1e-3, M.t1 - M.t0);
  return {full: full, w: w, lw: lw, narrow: narrow, X: t => lw + (t - M.t0) / span * w};
}
// width of a label before it is placed (monospace: ~0.6 em a character)
function textWidth(s, px) { return String(s).length * px * 0.61; }
// the time axis's step: the smallest whose labels (HH:MM, or :SS between two minutes) fit with some
// air between two, at any width
function niceStep(span, px) {
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
  for (const s of steps) if (s / span * px >= textWidth('00:00', 10) + 12) return s;
  return 86400;
}
// a tick's label: HH:MM on a whole minute, :SS between two
function tickLabel(t) {
  const d = new Date(t * 1000);
  return d.getSeconds() ? ':' + pad(d.getSeconds()) : pad(d.getHours()) + ':' + pad(d.getMinutes());
}
// keep the values whose y positions are at least `gap` px apart (in the order given: first wins)
function spaced(items, gap) {
  const kept = [];
  for (const it of items) if (kept.every(k => Math.abs(k.y - it.y) >= gap)) kept.push(it);
  return kept;
}
// a label placed only where it does not overlap the labels placed before it in the same row
function rowLabel(parent, placed, x, y, s, cls, tip, px, maxRight) {
  const w = textWidth(s, px);
  if (x + w > maxRight) return null;
  if (placed.some(p => x < p[1] + 4 && p[0] < x + w + 4)) return null;
  placed.push([x, x + w]);
  return text(parent, x, y, s, cls, tip);
}
function renderHead(g) {
  const svg = document.getElementById('head-svg');
  svg.textContent = '';
  const story = M.story || [];
  const LAMP_Y = 6, LAMP_H = 8, X_Y = 22, X_H = 150, BP_Y = X_Y + X_H + 12, BP_H = 64;
  const HB_Y = BP_Y + BP_H + 12, AX_Y = HB_Y + 8;
  const H = AX_Y + 20, lw = g.lw;
  svg.setAttribute('width', g.full); svg.setAttribute('height', H);
  const X = g.X, right = lw + g.w;
  const defs = el('defs', {}, svg);
  const clip = el('clipPath', {id: 'bp-clip'}, defs);
  el('rect', {x: lw, y: BP_Y, width: g.w, height: BP_H}, clip);
  // compaction marks behind everything
  for (const c of M.compactions)
    el('line', {x1: X(c.ts), x2: X(c.ts), y1: 0, y2: HB_Y - 2, 'class': 'compaction-mark',
      stroke: C.error, 'stroke-opacity': .4, 'stroke-width': 2, 'stroke-dasharray': '4 3'}, svg);
  text(svg, 6, LAMP_Y + 7, 'lamp', 'lbl', 'the watcher\'s lamp after each API call');
  text(svg, 6, X_Y + 10, g.narrow ? 'x, xSweet' : 'x vs xSweet', 'lbl',
       'x = L / B (context over baseline); xSweet = the cheapest point to restart');
  text(svg, 6, BP_Y + 10, 'bp', 'lbl', 'bill premium: how much more a cycle ending here costs than the optimal one;' +
       ' drawn past the sweet spot only (before it the lamp stays green whatever bp says)');
  text(svg, 6, HB_Y + 5, 'health', 'lbl', 'context health score at each 5\u00a0% of the session');
  el('rect', {x: lw, y: X_Y, width: g.w, height: X_H, fill: C.plot, 'class': 'plot'}, svg);
  el('rect', {x: lw, y: BP_Y, width: g.w, height: BP_H, fill: C.plot, 'class': 'plot'}, svg);
  if (!M.storyAvailable || !story.length) {
    const msg = M.storyError ? 'the watcher\'s trace failed: ' + M.storyError
      : M.storyAvailable ? 'no API call yet' : 'the watcher\'s trace is not available for this session';
    const t = text(svg, lw + 8, X_Y + 20, msg, 'small');
    t.textContent = msg.length * 5.5 > g.w - 16 ? msg.slice(0, Math.max(8, Math.floor((g.w - 16) / 5.5) - 1)) + '…' : msg;
    t.setAttribute('data-tip', msg);
  } else {
    const fin = v => v !== null && v !== undefined && isFinite(v);
    let ymax = 2;
    for (const r of story) for (const v of [r.x, r.xSweet]) if (fin(v)) ymax = Math.max(ymax, v);
    ymax *= 1.08;
    const Yx = v => X_Y + X_H - Math.min(v, ymax) / ymax * X_H;
    // bp means something past the sweet spot only (the lamp stays green before it, whatever bp says;
    // at a segment's start x is below the sweet spot and bp runs high): drawn there, nowhere else
    const rightArm = r => fin(r.br) && fin(r.x) && fin(r.xSweet) && r.L && r.x >= r.xSweet;
    // the bp scale: up to the 95th percentile (early calls can spike far above it), at least 30 %
    const brs = story.filter(rightArm).map(r => r.br).sort((a, b) => a - b);
    const p95 = brs.length ? brs[Math.floor(0.95 * (brs.length - 1))] : 0;
    const bmax = Math.ceil(Math.max(0.3, Math.min(1.5, p95 * 1.15)) * 10) / 10;
    const Yb = v => BP_Y + BP_H - Math.min(v, bmax) / bmax * BP_H;
    for (let i = 0; i < story.length; i++) {
      const r = story[i], x0 = X(r.ts), x1 = i + 1 < story.length ? X(story[i + 1].ts) : right;
      el('rect', {x: x0, y: LAMP_Y, width: Math.max(1, x1 - x0), height: LAMP_H,
        fill: C['lamp-' + r.lamp] || C.dim, 'fill-opacity': r.lamp === 'white' ? .5 : .9,
        'class': 'lamp-zone lamp-' + r.lamp}, svg);
    }
    // y grid of x: values at least 14 px apart
    for (const {v, y} of spaced([1, 2, 3, 5, 8, 13, 21, 34].filter(v => v < ymax).map(v => ({v: v, y: Yx(v)})), 14)) {
      el('line', {x1: lw, x2: right, y1: y, y2: y, stroke: C.grid, 'stroke-width': 1}, svg);
      text(svg, lw - 4, y + 3, String(v), 'small y-tick', null, 'end');
    }
    // the bp scale: zero, the amber and red thresholds (the session's config: bp_amber, bp_red), the top
    const at = M.lampAt || {};
    const ticks = [{v: at.amber, n: 'amber', c: C.amber}, {v: at.red, n: 'red', c: C.red}, {v: 0, n: ''},
                   {v: bmax, n: ''}].filter(t => typeof t.v === 'number' && t.v <= bmax).map(t => ({...t, y: Yb(t.v)}));
    for (const t of ticks.filter(t => t.n))
      el('line', {x1: lw, x2: right, y1: t.y, y2: t.y, stroke: t.c, 'stroke-opacity': .6, 'stroke-dasharray': '3 3',
        'class': 'bp-threshold'}, svg);
    for (const t of spaced(ticks, 11)) {
      const pct = (t.v > 0 && t.v < 0.01 ? (t.v * 100).toFixed(1) : Math.round(t.v * 100)) + '%';
      text(svg, lw - 4, t.y + 3, (t.n && !g.narrow ? t.n + ' ' : '') + pct, 'small y-tick bp-tick',
           t.n ? 'BP_' + t.n.toUpperCase() + ' = ' + t.v : null, 'end');
    }
    const cuts = M.compactions.map(c => c.ts);
    const line = (key, Y, attrs) => {
      let d = '', pen = false, prev = null;
      for (const r of story) {
        // a compaction starts a new segment: the line does not bridge it
        if (prev !== null && cuts.some(c => c > prev && c <= r.ts)) pen = false;
        prev = r.ts;
        // x before any cache read (a cold first call: L = 0) is no position: no point drawn
        if (!fin(r[key]) || (key === 'x' && !r.L) || (key === 'br' && !rightArm(r))) { pen = false; continue; }
        d += (pen ? 'L' : 'M') + X(r.ts).toFixed(1) + ' ' + Y(r[key]).toFixed(1) + ' ';
        pen = true;
      }
      if (d) el('path', Object.assign({d: d, fill: 'none'}, attrs), svg);
    };
    line('xSweet', Yx, {stroke: C.xsweet, 'stroke-width': 1.5, 'stroke-dasharray': '5 3', 'class': 'xsweet-line'});
    line('x', Yx, {stroke: C.x, 'stroke-width': 1.5, 'class': 'x-line'});
    line('br', Yb, {stroke: C.bp, 'stroke-width': 1.5, 'class': 'bp-line', 'clip-path': 'url(#bp-clip)'});
    // values above the scale: a small mark at its top edge, the value on hover
    for (const r of story) if (rightArm(r) && r.br > bmax) {
      const cx = X(r.ts);
      el('path', {d: 'M' + (cx - 3) + ' ' + (BP_Y + 5) + 'l3 -5 3 5z', fill: C.bp, 'class': 'bp-off',
        'data-tip': 'bp ' + Math.round(r.br * 100) + '\u00a0% at call #' + r.call + ' (above the scale)'}, svg);
    }
    // bill cycles and the gate
    const placed = [];
    for (const r of story) {
      if (r.billDone > 0) {
        const cx = X(r.ts);
        el('path', {d: 'M' + cx + ' ' + (BP_Y + BP_H - 9) + 'l4 4 -4 4 -4 -4z', fill: C.mark, 'class': 'bill-mark',
          'data-tip': 'bill cycle completed at call #' + r.call + ' (' + fmtTime(r.ts) + ')' +
                      (r.billDone > 1 ? ', ' + r.billDone + ' cycles' : '')}, svg);
      }
      for (const a of r.alerts || []) {
        const m = alertMark(a, g.narrow);
        mark(svg, placed, X(r.ts), m, m.tip + ' at call #' + r.call + ' (' + fmtTime(r.ts) + ')');
      }
    }
    // the guard's words at a cold prompt, and the restarts taken with a handoff (files beside the states)
    for (const h of M.holds || []) {
      const m = h.asked ? {cls: 'hold-mark', c: C.hold, w: 1.5, dash: '1 2', label: 'hold', short: 'hold',
                           tip: 'the guard held the prompt back: nothing was sent (the cache had expired)'}
                        : {cls: 'hold-mark', c: C.hold, w: 1.5, dash: '1 2', label: 'guard', short: 'g',
                           tip: 'the guard said what the prompt would re-write (the cache had expired)'};
      if (h.ts >= M.t0 && h.ts <= M.t1) mark(svg, placed, X(h.ts), m, m.tip + ' (' + fmtTime(h.ts) + ')');
    }
    for (const t of M.restarts || []) {
      const out = t.kind === 'out', other = String(t.other || '').slice(0, 8);
      const m = {cls: 'restart-mark', c: C.restart, w: 2, dash: null, label: out ? 'restart' : 'from handoff',
                 short: out ? 'rst' : 'hdf',
                 tip: out ? 'restart taken: session ' + other + ' started with this session\'s handoff'
                          : 'this session started with the handoff of session ' + other};
      if (t.ts >= M.t0 && t.ts <= M.t1) mark(svg, placed, X(t.ts), m, m.tip + ' (' + fmtTime(t.ts) + ')');
    }
    function mark(svg, placed, gx, m, tip) {
      el('line', {x1: gx, x2: gx, y1: LAMP_Y, y2: BP_Y + BP_H, stroke: m.c, 'stroke-width': m.w,
        'stroke-dasharray': m.dash, 'class': m.cls, 'data-tip': tip}, svg);
      // a label only where it does not run into the one before (the line and its tooltip stay)
      rowLabel(svg, placed, gx + 3, X_Y + 9, g.narrow ? m.short : m.label, 'alert-label', tip, 9, right);
    }
    // hover zones: one per call
    for (let i = 0; i < story.length; i++) {
      const r = story[i], x0 = X(r.ts), x1 = i + 1 < story.length ? X(story[i + 1].ts) : right;
      el('rect', {x: x0, y: LAMP_Y, width: Math.max(1, x1 - x0), height: BP_Y + BP_H - LAMP_Y,
        fill: 'transparent', 'class': 'story-hover', 'data-call': r.call,
        'data-tip': 'call #' + r.call + ' at ' + fmtTime(r.ts) + '\nx ' + (r.L ? num(r.x, 2) : '- (no cache read yet)') +
          '   xSweet ' + num(r.xSweet, 2) + '\nbp ' + (rightArm(r) ? num(r.br, 3) : '- (before the sweet spot)') +
          '   lamp ' + r.lamp +
          '\nL ' + exact(r.L) + '\u00a0tokens' +
          '\nbill progress ' + num(r.billProgress, 2) + '   bills ' + r.bills +
          (r.billDone > 0 ? '\na bill cycle completed' : '') +
          (r.alerts || []).map(a => '\n' + alertMark(a, false).tip).join('')}, svg);
    }
    text(svg, right + 4, Yx(Math.min(ymax, story[story.length - 1].x || 0)) + 3, 'x', 'small');
  }
  // the health bar
  const grad = el('linearGradient', {id: 'health-gradient', x1: 0, x2: 1, y1: 0, y2: 0}, defs);
  const bar = M.healthBar || [];
  bar.forEach((b, i) => el('stop', {offset: (bar.length > 1 ? i / (bar.length - 1) * 100 : 0) + '%',
                                    'stop-color': scoreColour(b.score)}, grad));
  el('rect', {x: lw, y: HB_Y, width: g.w, height: 4, fill: 'url(#health-gradient)', id: 'health-bar'}, svg);
  bar.forEach((b, i) => {
    if (i === bar.length - 1) return;
    el('rect', {x: X(b.t), y: HB_Y - 3, width: Math.max(1, X(bar[i + 1].t) - X(b.t)), height: 10, fill: 'transparent',
      'data-tip': 'Health at ' + fmtTime(b.t) + ': ' + b.grade + ' (score: ' + b.score + '/100)'}, svg);
  });
  // time axis: ticks far enough apart for their labels, none past either edge
  el('line', {x1: lw, x2: right, y1: AX_Y, y2: AX_Y, stroke: C.line}, svg);
  const span = Math.max(1e-3, M.t1 - M.t0);
  const step = niceStep(span, g.w);
  const first = Math.ceil(M.t0 / step) * step;
  const placed = [];
  for (let t = first; t <= M.t1 + 1e-6; t += step) {
    el('line', {x1: X(t), x2: X(t), y1: AX_Y, y2: AX_Y + 4, stroke: C.line}, svg);
    const lab = tickLabel(t);
    const half = textWidth(lab, 10) / 2;
    if (X(t) - half < lw - 30 || X(t) + half > g.full) continue;
    const tx = rowLabel(svg, placed, X(t) - half, AX_Y + 15, lab, 'axis time-tick', null, 10, g.full);
    if (tx) { tx.setAttribute('x', X(t)); tx.setAttribute('text-anchor', 'middle'); }
  }
}
// an alert of the watcher's trace as a mark: the gate (staying costs more than restarting), a reminder
// after it, a cold return (back after the cache expired); its class, colour, line and words
function alertMark(a, narrow) {
  if (a.kind === 'gate')
    return {cls: 'gate-mark', c: C.red, w: 2, dash: null, label: 'gate', short: 'gate',
            tip: 'the gate tripped: staying now costs more than a fresh start'};
  if (a.kind === 'guard') {
    const gap = a.gapText ? ' after ' + a.gapText : '';
    return {cls: 'cold-mark', c: C.cold, w: 1.5, dash: '4 3', label: 'cold return', short: 'cold',
            tip: 'cold return' + gap + ': the cache had expired' +
                 (a.rewrite ? '; the call re-wrote ' + exact(a.rewrite) + '\u00a0tokens' : '')};
  }
  const n = a.reminder > 0 ? a.reminder : '';
  return {cls: 'backstop-mark', c: C.amber, w: 1, dash: null, label: 'reminder' + (n ? ' ' + n : ''),
          short: 'r' + n, tip: 'reminder' + (n ? ' ' + n : '') + ' after the gate (a backstop: still past it)'};
}
function rereadIcon(parent, x, y, tip) {
  const g = el('g', {'class': 'reread-mark', transform: 'translate(' + x + ',' + y + ')', 'data-tip': tip}, parent);
  el('rect', {width: 10, height: 10, fill: 'transparent'}, g);
  el('path', {d: 'M8.2 3.2A3.6 3.6 0 1 0 8.6 6.4', fill: 'none', stroke: C.mark, 'stroke-width': 1.4,
              'stroke-linecap': 'round'}, g);
  el('path', {d: 'M9.4 0.8L8.6 3.8 5.7 3.0z', fill: C.mark}, g);
  return g;
}
function shortModel(m) { return (m || 'API call').replace(/^claude-/, '').replace(/-\d{8}$/, ''); }
// `s` cut to at most `max` characters at a boundary, with an ellipsis; a first word too long for
// `max` is left out whole (`…`), never cut
function cutEnd(s, max) {
  if (s.length <= max) return s;
  if (max < 1) return '';
  for (let j = Math.min(max - 1, s.length - 1); j > 0; j--) {
    if (BOUNDARY.test(s[j])) return s.slice(0, j).replace(/\s+$/, '') + '…';
  }
  return '…';
}
// a waterfall label within `max` characters: whole if it fits; a path keeps its last parts
// (`Read …/color/gradient.go`), anything else its first words (`Bash find / -iname…`)
function fitLabel(head, detail, max) {
  const full = detail ? head + ' ' + detail : head;
  if (full.length <= max) return full;
  const room = max - head.length - 2;  // the head, a space and the ellipsis
  if (detail && room > 1 && /[\/\\]/.test(detail) && !/\s/.test(detail)) {  // a path
    for (let i = 1; i < detail.length; i++) {
      if ((detail[i] === '/' || detail[i] === '\\') && detail.length - i <= room) return head + ' …' + detail.slice(i);
    }
    const base = detail.slice(Math.max(detail.lastIndexOf('/'), detail.lastIndexOf('\\')) + 1);
    const part = cutEnd(base, room);  // the file's name, as much of it as fits between its words
    return head + ' …' + (part === '…' ? '' : part);
  }
  return cutEnd(full, max);
}
// the rows in turns: a turn is the user's prompt and the calls and tool calls that answer it
function turns() {
  const known = new Map((M.turns || []).map(t => [t.n, t]));
  const groups = [];
  for (const r of M.rows) {
    const n = r.turn === undefined || r.turn === null ? null : r.turn;
    let g = groups[groups.length - 1];
    if (!g || g.turn !== n) {
      g = {turn: n, rows: [], calls: 0, tools: 0, start: r.start, end: r.start, info: known.get(n) || null};
      groups.push(g);
    }
    g.rows.push(r);
    g.calls += r.kind === 'call'; g.tools += r.kind === 'tool';
    g.end = Math.max(g.end, r.end === null ? M.t1 : r.end);
  }
  return groups;
}
const folded = new Map();  // turn -> open (true) or folded (false), as the reader chose
let foldDefault = null;  // 'open', 'fold' (the buttons), or null: by the session's length
function isOpen(g, i, groups) {
  if (g.turn === null || groups.length < 2) return true;
  if (folded.has(g.turn)) return folded.get(g.turn);
  if (foldDefault) return foldDefault === 'open';
  return M.rows.length <= LONG_ROWS || i === groups.length - 1;
}
// turn 0: what the transcript holds before its first prompt (a session resumed or cut)
function turnName(g) { return g.turn === 0 ? 'before the first prompt' : 'turn ' + g.turn; }
function turnWords(g) {
  const parts = [g.calls + (g.calls === 1 ? ' call' : ' calls')];
  if (g.tools) parts.push(g.tools + (g.tools === 1 ? ' tool call' : ' tool calls'));
  return parts.join(', ');
}
function renderBody(g) {
  const svg = document.getElementById('waterfall');
  svg.textContent = '';
  const X = g.X, right = g.lw + g.w;
  const maxChars = Math.floor((g.lw - 10) / textWidth('0', 10));
  const groups = turns();
  const layout = [];  // [kind, y, item]
  let y = TOP;
  groups.forEach((grp, i) => {
    grp.open = isOpen(grp, i, groups);
    if (grp.turn !== null && groups.length > 1) { layout.push(['turn', y, grp]); y += TURN_H; }
    if (grp.open) for (const r of grp.rows) { layout.push(['row', y, r]); y += ROW_H; }
  });
  const H = y + 6;
  svg.setAttribute('width', g.full); svg.setAttribute('height', H);
  const back = el('g', {'class': 'layer-back'}, svg);
  const front = el('g', {'class': 'layer-bars'}, svg);
  let stripe = 0;
  for (const [kind, ry] of layout) {
    if (kind === 'row' && stripe++ % 2 === 0)
      el('rect', {x: 0, y: ry, width: right, height: ROW_H, fill: C.grid, 'fill-opacity': .35}, back);
    if (kind === 'turn') stripe = 0;
  }
  const placed = [];
  for (const c of M.compactions) {
    const cx = X(c.ts);
    el('line', {x1: cx, x2: cx, y1: TOP - 2, y2: H, 'class': 'compaction-line', stroke: C.error,
      'stroke-opacity': .4, 'stroke-width': 2, 'stroke-dasharray': '4 3'}, back);
    const tip = 'compaction (' + (c.trigger || '?') + ') at ' + fmtTime(c.ts) +
      (c.preTokens ? ', ' + exact(c.preTokens) + '\u00a0tokens before' : '');
    const fits = cx + 3 + textWidth('compaction', 9) <= g.full;
    rowLabel(back, placed, fits ? cx + 3 : cx - 3 - textWidth('compaction', 9), 9, 'compaction',
             'compaction-label', tip, 9, g.full);
  }
  let prevModel = null;
  for (const [kind, ry, item] of layout) {
    if (kind === 'turn') { turnRow(front, g, ry, item, maxChars); continue; }
    const r = item, by = ry + (ROW_H - BAR_H) / 2;
    const end = r.end === null ? M.t1 : r.end;
    const x0 = X(r.start), bw = Math.max(2, X(end) - x0);
    let tip, label, colour, cls;
    if (r.kind === 'call') {
      colour = C.call; cls = 'bar bar-call';
      const model = shortModel(r.model);
      // the model where it starts or changes; the call's number alone elsewhere
      label = fitLabel('#' + r.n, model !== prevModel ? model : '', maxChars);
      prevModel = model;
      tip = 'API call #' + r.n + ' · ' + (r.model || '?') + '\n' + fmtTime(r.start) + ' → ' + fmtTime(end) +
        ' (' + r.durText + ')\nprompt ' + exact(r.prompt) + '\u00a0tokens (input ' + exact(r.input) +
        ', cache read ' + exact(r.cacheRead) + ', cache write ' + exact(r.cacheWrite) + ')\noutput ' +
        exact(r.output) + '\u00a0tokens';
    } else {
      colour = toolColour(r); cls = 'bar bar-tool tool-' + r.name + (r.isError ? ' bar-error' : '');
      label = '  ' + fitLabel(r.name, r.label || '', maxChars - 2);
      tip = r.name + (r.label ? ' ' + r.label : '') + '\n' + fmtTime(r.start) + ' → ' +
        (r.end === null ? 'running' : fmtTime(r.end) + ' (' + r.durText + ')') +
        (r.isError ? '\nerror' : '') + (r.reread ? '\nre-read' : '');
    }
    const t = text(front, 6, ry + 9, label, 'lbl', tip);
    if (r.kind === 'call') t.setAttribute('data-call', r.n);
    el('rect', {x: x0, y: by, width: bw, height: BAR_H, rx: 1.5, fill: colour, 'class': cls,
      'data-tip': tip, 'fill-opacity': r.end === null ? .5 : 1}, front);
    if (r.kind === 'call') {
      const tok = r.promptText, after = x0 + bw + 4 + textWidth(tok, 9) <= g.full;
      text(front, after ? x0 + bw + 4 : x0 - 4, ry + 9, tok, 'small', exact(r.prompt) + '\u00a0prompt tokens',
           after ? null : 'end');
    } else if (r.reread) {
      rereadIcon(front, x0 + bw + 2, ry + 1, 'Re-read: file was already read at ' + fmtTime(r.firstReadAt));
    }
  }
  renderNav(groups);
}
// a turn's header: a button that folds or opens it, when it began and what it holds, its span in time
function turnRow(parent, g, y, grp, maxChars) {
  const info = grp.info || {}, right = g.lw + g.w;
  const says = (info.text ? '“' + info.text + '”\n' : '') + turnName(grp) + ' from ' + fmtTime(grp.start) +
    ' to ' + fmtTime(grp.end) + ': ' + turnWords(grp) + (grp.open ? '\nclick to fold' : '\nclick to open');
  const row = el('g', {'class': 'turn' + (grp.open ? ' open' : ''), role: 'button', tabindex: 0,
    'aria-expanded': grp.open ? 'true' : 'false', 'data-turn': grp.turn, 'data-tip': says}, parent);
  el('rect', {x: 0, y: y + 1, width: right, height: TURN_H - 2, rx: 2, fill: C.line, 'fill-opacity': .55,
    'class': 'turn-band'}, row);
  const x0 = g.X(grp.start), x1 = Math.max(x0 + 2, g.X(grp.end));
  el('rect', {x: x0, y: y + TURN_H - 4, width: x1 - x0, height: 3, fill: C.call, 'fill-opacity': .6,
    'class': 'turn-span'}, row);
  text(row, 6, y + 11, fitLabel((grp.open ? '▾ ' : '▸ ') + (grp.turn === 0 ? 'start' : 'turn ' + grp.turn),
                                fmtTime(grp.start).slice(0, 5), maxChars), 'lbl turn-label');
  const room = Math.floor((g.w - 8) / textWidth('0', 10));
  const words = turnWords(grp) + (info.text ? ' · ' + info.text : '');
  if (room > 4) text(row, g.lw + 4, y + 11, cutEnd(words, room), 'lbl turn-words');
}
function renderNav(groups) {
  const nav = document.getElementById('nav'), sel = document.getElementById('jump');
  const many = groups.length > 1 && groups[0].turn !== null;
  nav.hidden = !many;
  if (!many) return;
  const keep = sel.value;
  sel.textContent = '';
  const first = document.createElement('option'); first.value = ''; first.textContent = 'a turn…';
  sel.appendChild(first);
  for (const grp of groups) {
    const o = document.createElement('option');
    o.value = String(grp.turn);
    o.textContent = turnName(grp) + ' · ' + fmtTime(grp.start).slice(0, 5) + ' · ' + turnWords(grp) +
      (grp.info && grp.info.text ? ' · ' + cutEnd(grp.info.text, 40) : '');
    sel.appendChild(o);
  }
  sel.value = keep && [...sel.options].some(o => o.value === keep) ? keep : '';
}
// bring a turn's header (or a call's row) below the sticky header band, and mark it for a moment
function reveal(target) {
  if (!target) return;
  const top = document.getElementById('top'), band = getComputedStyle(top).position === 'sticky' ? top.offsetHeight : 0;
  const y = target.getBoundingClientRect().top + window.scrollY - band - 8;
  window.scrollTo({top: Math.max(0, y), behavior: 'instant'});
  target.classList.add('hit');
  setTimeout(() => target.classList.remove('hit'), 1500);
}
function openTurn(n) {
  folded.set(n, true);
  render();
}
function jumpToTurn(n) {
  openTurn(n);
  reveal(document.querySelector('#waterfall .turn[data-turn="' + n + '"]'));
}
function jumpToCall(n) {
  const row = M.rows.find(r => r.kind === 'call' && r.n === n);
  if (!row) return;
  if (row.turn !== undefined && row.turn !== null) openTurn(row.turn); else render();
  reveal(document.querySelector('#waterfall text[data-call="' + n + '"]'));
}
function render() {
  readTheme();
  renderToolbar();
  renderNow();
  const g = geometry();
  renderHead(g);
  renderBody(g);
  document.body.dataset.rows = String(M.rows.length);
}

// ---------------------------------------------------------------- tooltips and events
const tip = document.getElementById('tip');
document.addEventListener('mouseover', e => {
  const t = e.target.closest ? e.target.closest('[data-tip]') : null;
  if (!t) { tip.style.display = 'none'; return; }
  tip.textContent = t.getAttribute('data-tip');
  tip.style.display = 'block';
});
document.addEventListener('mousemove', e => {
  if (tip.style.display !== 'block') return;
  const w = tip.offsetWidth, h = tip.offsetHeight;
  let x = e.clientX + 12, y = e.clientY + 14;
  if (x + w > window.innerWidth - 4) x = Math.max(4, e.clientX - w - 12);
  if (y + h > window.innerHeight - 4) y = Math.max(4, e.clientY - h - 14);
  tip.style.left = x + 'px'; tip.style.top = y + 'px';
});
document.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
document.getElementById('grade-badge').addEventListener('click', () => {
  setBreakdown(!document.getElementById('breakdown').classList.contains('open'));
});
document.addEventListener('keydown', e => { if (e.key === 'Escape') setBreakdown(false); });
// turns: a header folds or opens its turn (click, Enter, Space); the buttons fold or open them all;
// the menu jumps to one; a call on the story above jumps to its row
function toggleTurn(head) {
  const n = Number(head.getAttribute('data-turn'));
  folded.set(n, head.getAttribute('aria-expanded') !== 'true');
  render();
  const again = document.querySelector('#waterfall .turn[data-turn="' + n + '"]');
  if (again) again.focus({preventScroll: true});
}
document.getElementById('waterfall').addEventListener('click', e => {
  const head = e.target.closest('.turn');
  if (head) toggleTurn(head);
});
document.getElementById('waterfall').addEventListener('keydown', e => {
  const head = e.target.closest ? e.target.closest('.turn') : null;
  if (head && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); toggleTurn(head); }
});
document.getElementById('head-svg').addEventListener('click', e => {
  const zone = e.target.closest('.story-hover');
  if (zone) jumpToCall(Number(zone.getAttribute('data-call')));
});
document.getElementById('open-all').addEventListener('click', () => { folded.clear(); foldDefault = 'open'; render(); });
document.getElementById('fold-all').addEventListener('click', () => { folded.clear(); foldDefault = 'fold'; render(); });
document.getElementById('jump').addEventListener('change', e => {
  if (e.target.value !== '') jumpToTurn(Number(e.target.value));
});
let resizeTimer = null;
window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(render, 80); });
if (window.matchMedia) window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', render);
render();

if (LIVE && window.EventSource) {
  const status = document.getElementById('live');
  let updates = 0;
  const es = new EventSource('events' + location.search);  // the page's own query: its token
  es.onopen = () => { status.classList.add('on'); status.textContent = 'live'; };
  es.onerror = () => { status.classList.remove('on'); status.textContent = 'reconnecting…'; };
  es.onmessage = ev => {
    const msg = JSON.parse(ev.data);
    if (msg.type === 'health:update') M.health = msg.health;
    else if (msg.type === 'rows') M.rows = M.rows.slice(0, msg.from).concat(msg.rows);  // no spread: 100k+ rows
    else if (msg.type === 'session') Object.assign(M, msg.session);
    else return;
    updates++;
    document.body.dataset.updates = String(updates);
    status.textContent = 'live · updated ' + fmtTime(Date.now() / 1000);
    render();
  };
}
})();
