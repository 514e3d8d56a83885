(function () {
'use strict';
const M = JSON.parse(document.getElementById('model').textContent);
const LIVE = document.body.dataset.live === '1';
const NS = 'http://www.w3.org/2000/svg';
const GRADE_COLOUR = {A:'#a6e3a1', B:'#94e2d5', C:'#f9e2af', D:'#fab387', F:'#f38ba8'};
const STOPS = [[92.5,[0xa6,0xe3,0xa1]],[77.5,[0x94,0xe2,0xd5]],[62.5,[0xf9,0xe2,0xaf]],
               [47.5,[0xfa,0xb3,0x87]],[30,[0xf3,0x8b,0xa8]]];
const LAMP = {white:'#cdd6f4', green:'#a6e3a1', amber:'#fab387', red:'#f38ba8'};
const LABEL_W = 250, ROW_H = 12, BAR_H = 8, TOP = 14;

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
function fmtTok(n) {
  if (n === null || n === undefined) return '-';
  const a = Math.abs(n);
  if (a < 1000) return String(Math.round(n));
  if (a < 10000) return (n / 1000).toFixed(1).replace(/\.0$/, '') + 'k';
  if (a < 999500) return Math.round(n / 1000) + 'k';
  return (n / 1e6).toFixed(2).replace(/0$/, '').replace(/\.0$/, '') + 'M';
}
function pad(n) { return String(n).padStart(2, '0'); }
function fmtTime(ts) {
  const d = new Date(ts * 1000);
  return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}
function fmtDur(s) {
  if (s < 60) return s.toFixed(1) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
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
function toolColour(r) {
  if (r.isError) return '#f38ba8';
  if (['Write', 'Edit', 'MultiEdit', 'NotebookEdit'].includes(r.name)) return '#a6e3a1';
  if (r.name === 'Read') return '#94e2d5';
  if (r.name === 'Bash') return '#cba6f7';
  if (r.name === 'Task' || r.name === 'Agent') return '#f5c2e7';
  return '#89dceb';
}
function healthTip(h) { return 'Context Health: ' + h.grade + ' (score: ' + h.score + '/100)'; }

// ---------------------------------------------------------------- toolbar and breakdown
function renderToolbar() {
  const h = M.health;
  const badge = document.getElementById('grade-badge');
  badge.textContent = h.grade;
  badge.style.background = GRADE_COLOUR[h.grade];
  badge.dataset.tip = healthTip(h);
  badge.setAttribute('aria-label', healthTip(h));
  const calls = M.rows.filter(r => r.kind === 'call');
  const tools = M.rows.filter(r => r.kind === 'tool');
  const last = calls.length ? calls[calls.length - 1].prompt : null;
  const stats = document.getElementById('stats');
  stats.textContent = '';
  const add = (label, value, tip) => {
    const s = document.createElement('span'); s.className = 'stat';
    const b = document.createElement('b'); b.textContent = value;
    if (tip) b.dataset.tip = tip;
    s.append(label + ' ', b); stats.appendChild(s);
  };
  add('calls', String(calls.length));
  add('tool calls', String(tools.length));
  add('re-reads', String(tools.filter(t => t.reread).length));
  add('compactions', String(M.compactions.length));
  add('context', fmtTok(last) + ' / ' + fmtTok(M.window),
      exact(last) + ' of ' + exact(M.window) + ' tokens (' + num(h.fillPercent, 1) + ' %)');
  add('duration', fmtDur(Math.max(0, M.t1 - M.t0)));
  const inner = document.querySelector('#breakdown .inner');
  inner.querySelectorAll('.bd-row').forEach(e => e.remove());
  for (const s of h.signals) {
    const row = document.createElement('div'); row.className = 'bd-row';
    const name = document.createElement('span'); name.className = 'bd-name'; name.textContent = s.name;
    const bar = document.createElement('div'); bar.className = 'bd-bar';
    const fill = document.createElement('div');
    fill.style.width = s.value + '%'; fill.style.background = GRADE_COLOUR[s.grade];
    bar.appendChild(fill); bar.dataset.tip = s.name + ': ' + s.value + '/100';
    const g = document.createElement('span'); g.className = 'bd-grade'; g.textContent = s.grade;
    g.style.color = GRADE_COLOUR[s.grade];
    const w = document.createElement('span'); w.className = 'bd-weight';
    w.textContent = Math.round(s.weight * 100) + '%';
    row.append(name, bar, g, w); inner.appendChild(row);
  }
}
function setBreakdown(open) {
  const p = document.getElementById('breakdown');
  p.classList.toggle('open', open);
  p.setAttribute('aria-hidden', open ? 'false' : 'true');
  document.getElementById('grade-badge').setAttribute('aria-expanded', open ? 'true' : 'false');
}

// ---------------------------------------------------------------- chart
function geometry() {
  const full = Math.max(760, document.getElementById('chart').clientWidth);
  const w = full - LABEL_W - 76;
  const span = Math.max(1e-3, M.t1 - M.t0);
  return {full: full, w: w, X: t => LABEL_W + (t - M.t0) / span * w};
}
function niceStep(span, px) {
  const want = span / Math.max(1, px / 90);
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600];
  for (const s of steps) if (s >= want) return s;
  return 43200;
}
function renderHead(g) {
  const svg = document.getElementById('head-svg');
  svg.textContent = '';
  const story = M.story || [];
  const LAMP_Y = 6, LAMP_H = 8, X_Y = 22, X_H = 96, BP_Y = 126, BP_H = 40, HB_Y = 176, AX_Y = 182;
  const H = AX_Y + 20;
  svg.setAttribute('width', g.full); svg.setAttribute('height', H);
  const X = g.X, right = LABEL_W + g.w;
  // compaction marks behind everything
  for (const c of M.compactions)
    el('line', {x1: X(c.ts), x2: X(c.ts), y1: 0, y2: HB_Y - 2, 'class': 'compaction-mark',
      stroke: '#f38ba8', 'stroke-opacity': .4, 'stroke-width': 2, 'stroke-dasharray': '4 3'}, svg);
  text(svg, 6, LAMP_Y + 7, 'lamp', 'lbl', 'the watcher\'s lamp after each API call');
  text(svg, 6, X_Y + 10, 'x vs xSweet', 'lbl',
       'x = L / B (context over baseline); xSweet = the cheapest point to restart');
  text(svg, 6, BP_Y + 10, 'bp', 'lbl', 'relative excess cost of a cycle ending here');
  text(svg, 6, HB_Y + 5, 'health', 'lbl', 'context health score at each 5 % of the session');
  el('rect', {x: LABEL_W, y: X_Y, width: g.w, height: X_H, fill: '#181825'}, svg);
  el('rect', {x: LABEL_W, y: BP_Y, width: g.w, height: BP_H, fill: '#181825'}, svg);
  if (!M.storyAvailable || !story.length) {
    text(svg, LABEL_W + 8, X_Y + 20, M.storyError ? 'the watcher\'s trace failed: ' + M.storyError
         : M.storyAvailable ? 'no API call yet' : 'the watcher\'s trace is not available for this session', 'small');
  } else {
    const fin = v => v !== null && v !== undefined && isFinite(v);
    let ymax = 2;
    for (const r of story) for (const v of [r.x, r.xSweet]) if (fin(v)) ymax = Math.max(ymax, v);
    ymax *= 1.08;
    const Yx = v => X_Y + X_H - Math.min(v, ymax) / ymax * X_H;
    let bmax = 0.3;
    for (const r of story) if (fin(r.br)) bmax = Math.max(bmax, Math.min(r.br, 1.5));
    const Yb = v => BP_Y + BP_H - Math.min(v, bmax) / bmax * BP_H;
    for (let i = 0; i < story.length; i++) {
      const r = story[i], x0 = X(r.ts), x1 = i + 1 < story.length ? X(story[i + 1].ts) : right;
      el('rect', {x: x0, y: LAMP_Y, width: Math.max(1, x1 - x0), height: LAMP_H,
        fill: LAMP[r.lamp] || '#45475a', 'fill-opacity': r.lamp === 'white' ? .35 : .85,
        'class': 'lamp-zone lamp-' + r.lamp}, svg);
    }
    // y grid
    for (const v of [1, 2, 3, 5, 8, 13, 21].filter(v => v < ymax)) {
      el('line', {x1: LABEL_W, x2: right, y1: Yx(v), y2: Yx(v), stroke: '#313244', 'stroke-width': 1}, svg);
      text(svg, LABEL_W - 4, Yx(v) + 3, String(v), 'small', null, 'end');
    }
    let lastLabel = Infinity;
    for (const [v, c, n] of [[0.10, '#fab387', 'amber'], [0.25, '#f38ba8', 'red']]) {
      if (v > bmax) continue;
      el('line', {x1: LABEL_W, x2: right, y1: Yb(v), y2: Yb(v), stroke: c, 'stroke-opacity': .5,
        'stroke-dasharray': '3 3'}, svg);
      const ly = Math.min(Yb(v) + 3, lastLabel - 9);
      text(svg, right + 4, ly, n + ' ' + v.toFixed(2), 'small', 'BP_' + n.toUpperCase() + ' = ' + v);
      lastLabel = ly;
    }
    const cuts = M.compactions.map(c => c.ts);
    const line = (key, Y, attrs) => {
      let d = '', pen = false, prev = null;
      for (const r of story) {
        // a compaction starts a new segment: the line does not bridge it
        if (prev !== null && cuts.some(c => c > prev && c <= r.ts)) pen = false;
        prev = r.ts;
        if (!fin(r[key])) { pen = false; continue; }
        d += (pen ? 'L' : 'M') + X(r.ts).toFixed(1) + ' ' + Y(r[key]).toFixed(1) + ' ';
        pen = true;
      }
      if (d) el('path', Object.assign({d: d, fill: 'none'}, attrs), svg);
    };
    line('xSweet', Yx, {stroke: '#a6e3a1', 'stroke-width': 1.5, 'stroke-dasharray': '5 3', 'class': 'xsweet-line'});
    line('x', Yx, {stroke: '#89b4fa', 'stroke-width': 1.5, 'class': 'x-line'});
    line('br', Yb, {stroke: '#fab387', 'stroke-width': 1.5, 'class': 'bp-line'});
    // bill cycles and the gate
    let lastAlertX = -Infinity;
    for (const r of story) {
      if (r.billDone > 0) {
        const cx = X(r.ts);
        el('path', {d: 'M' + cx + ' ' + (BP_Y + BP_H - 9) + 'l4 4 -4 4 -4 -4z', fill: '#f9e2af', 'class': 'bill-mark',
          'data-tip': 'bill cycle completed at call #' + r.call + ' (' + fmtTime(r.ts) + ')' +
                      (r.billDone > 1 ? ', ' + r.billDone + ' cycles' : '')}, svg);
      }
      for (const a of r.alerts || []) {
        const gx = X(r.ts), gate = a.kind === 'gate';
        el('line', {x1: gx, x2: gx, y1: LAMP_Y, y2: BP_Y + BP_H, stroke: gate ? '#f38ba8' : '#fab387',
          'stroke-width': gate ? 2 : 1, 'class': gate ? 'gate-mark' : 'backstop-mark'}, svg);
        if (gx - lastAlertX < 48) continue;  // labels would overlap; the line and its tooltip stay
        lastAlertX = gx;
        text(svg, gx + 3, X_Y + 9, gate ? 'gate' : 'reminder ' + a.reminder, 'small',
             (gate ? 'the gate tripped' : 'backstop reminder ' + a.reminder) + ' at call #' + r.call +
             ' (' + fmtTime(r.ts) + ')');
      }
    }
    // hover zones: one per call
    for (let i = 0; i < story.length; i++) {
      const r = story[i], x0 = X(r.ts), x1 = i + 1 < story.length ? X(story[i + 1].ts) : right;
      el('rect', {x: x0, y: LAMP_Y, width: Math.max(1, x1 - x0), height: BP_Y + BP_H - LAMP_Y,
        fill: 'transparent', 'class': 'story-hover',
        'data-tip': 'call #' + r.call + ' at ' + fmtTime(r.ts) + '\nx ' + num(r.x, 2) +
          '   xSweet ' + num(r.xSweet, 2) + '\nbp ' + num(r.br, 3) + '   lamp ' + r.lamp +
          '\nL ' + exact(r.L) + ' tokens' +
          '\nbill progress ' + num(r.billProgress, 2) + '   bills ' + r.bills +
          (r.billDone > 0 ? '\na bill cycle completed' : '') +
          (r.alerts || []).map(a => a.kind === 'gate' ? '\nthe gate tripped' : '\nbackstop reminder ' + a.reminder)
            .join('')}, svg);
    }
    text(svg, right + 4, Yx(Math.min(ymax, story[story.length - 1].x || 0)) + 3, 'x', 'small');
  }
  // the health bar
  const defs = el('defs', {}, svg);
  const grad = el('linearGradient', {id: 'health-gradient', x1: 0, x2: 1, y1: 0, y2: 0}, defs);
  const bar = M.healthBar || [];
  bar.forEach((b, i) => el('stop', {offset: (bar.length > 1 ? i / (bar.length - 1) * 100 : 0) + '%',
                                    'stop-color': scoreColour(b.score)}, grad));
  el('rect', {x: LABEL_W, y: HB_Y, width: g.w, height: 4, fill: 'url(#health-gradient)', id: 'health-bar'}, svg);
  bar.forEach((b, i) => {
    if (i === bar.length - 1) return;
    el('rect', {x: X(b.t), y: HB_Y - 3, width: Math.max(1, X(bar[i + 1].t) - X(b.t)), height: 10, fill: 'transparent',
      'data-tip': 'Health at ' + fmtTime(b.t) + ': ' + b.grade + ' (score: ' + b.score + '/100)'}, svg);
  });
  // time axis
  el('line', {x1: LABEL_W, x2: right, y1: AX_Y, y2: AX_Y, stroke: '#45475a'}, svg);
  const span = Math.max(1e-3, M.t1 - M.t0), step = niceStep(span, g.w);
  const first = Math.ceil(M.t0 / step) * step;
  for (let t = first; t <= M.t1 + 1e-6; t += step) {
    el('line', {x1: X(t), x2: X(t), y1: AX_Y, y2: AX_Y + 4, stroke: '#45475a'}, svg);
    const d = new Date(t * 1000);
    const lab = step < 60 ? fmtTime(t) : pad(d.getHours()) + ':' + pad(d.getMinutes());
    text(svg, X(t), AX_Y + 15, lab, 'axis', null, 'middle');
  }
}
function rereadIcon(parent, x, y, tip) {
  const g = el('g', {'class': 'reread-mark', transform: 'translate(' + x + ',' + y + ')', 'data-tip': tip}, parent);
  el('rect', {width: 10, height: 10, fill: 'transparent'}, g);
  el('path', {d: 'M8.2 3.2A3.6 3.6 0 1 0 8.6 6.4', fill: 'none', stroke: '#f9e2af', 'stroke-width': 1.4,
              'stroke-linecap': 'round'}, g);
  el('path', {d: 'M9.4 0.8L8.6 3.8 5.7 3.0z', fill: '#f9e2af'}, g);
  return g;
}
function renderBody(g) {
  const svg = document.getElementById('waterfall');
  svg.textContent = '';
  const rows = M.rows, X = g.X, right = LABEL_W + g.w;
  const H = TOP + rows.length * ROW_H + 6;
  svg.setAttribute('width', g.full); svg.setAttribute('height', H);
  const back = el('g', {'class': 'layer-back'}, svg);
  const front = el('g', {'class': 'layer-bars'}, svg);
  for (let i = 0; i < rows.length; i += 2)
    el('rect', {x: 0, y: TOP + i * ROW_H, width: right, height: ROW_H, fill: '#ffffff', 'fill-opacity': .018}, back);
  for (const c of M.compactions) {
    const cx = X(c.ts);
    el('line', {x1: cx, x2: cx, y1: TOP - 2, y2: H, 'class': 'compaction-line', stroke: '#f38ba8',
      'stroke-opacity': .4, 'stroke-width': 2, 'stroke-dasharray': '4 3'}, back);
    text(back, cx + 3, 9, 'compaction', 'compaction-label', 'compaction (' + (c.trigger || '?') + ') at ' +
         fmtTime(c.ts) + (c.preTokens ? ', ' + exact(c.preTokens) + ' tokens before' : ''));
  }
  rows.forEach((r, i) => {
    const y = TOP + i * ROW_H, by = y + (ROW_H - BAR_H) / 2;
    const end = r.end === null ? M.t1 : r.end;
    const x0 = X(r.start), bw = Math.max(2, X(end) - x0);
    let tip, label, colour, cls;
    if (r.kind === 'call') {
      colour = '#89b4fa'; cls = 'bar bar-call';
      label = '#' + r.n + ' ' + (r.model || 'API call').replace(/^claude-/, '');
      tip = 'API call #' + r.n + ' · ' + (r.model || '?') + '\n' + fmtTime(r.start) + ' → ' + fmtTime(end) +
        ' (' + fmtDur(end - r.start) + ')\nprompt ' + exact(r.prompt) + ' tokens (input ' + exact(r.input) +
        ', cache read ' + exact(r.cacheRead) + ', cache write ' + exact(r.cacheWrite) + ')\noutput ' +
        exact(r.output) + ' tokens';
    } else {
      colour = toolColour(r); cls = 'bar bar-tool tool-' + r.name + (r.isError ? ' bar-error' : '');
      label = '  ' + r.name + ' ' + (r.label || '');
      tip = r.name + (r.label ? ' ' + r.label : '') + '\n' + fmtTime(r.start) + ' → ' +
        (r.end === null ? 'running' : fmtTime(r.end) + ' (' + fmtDur(r.end - r.start) + ')') +
        (r.isError ? '\nerror' : '') + (r.reread ? '\nre-read' : '');
    }
    if (label.length > 40) label = label.slice(0, 18) + '…' + label.slice(-21);
    text(front, 6, y + 9, label, 'lbl', tip);
    el('rect', {x: x0, y: by, width: bw, height: BAR_H, rx: 1.5, fill: colour, 'class': cls,
      'data-tip': tip, 'fill-opacity': r.end === null ? .5 : 1}, front);
    if (r.kind === 'call') {
      text(front, x0 + bw + 4, y + 9, fmtTok(r.prompt), 'small', exact(r.prompt) + ' prompt tokens');
    } else if (r.reread) {
      rereadIcon(front, x0 + bw + 2, y + 1, 'Re-read: file was already read at ' + fmtTime(r.firstReadAt));
    }
  });
}
function render() {
  renderToolbar();
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
let resizeTimer = null;
window.addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(render, 80); });
render();

if (LIVE && window.EventSource) {
  const status = document.getElementById('live');
  let updates = 0;
  const es = new EventSource('events');
  es.onopen = () => { status.classList.add('on'); status.textContent = 'live'; };
  es.onerror = () => { status.classList.remove('on'); status.textContent = 'reconnecting…'; };
  es.onmessage = ev => {
    const msg = JSON.parse(ev.data);
    if (msg.type === 'health:update') M.health = msg.health;
    else if (msg.type === 'rows') M.rows.splice(msg.from, M.rows.length - msg.from, ...msg.rows);
    else if (msg.type === 'session') Object.assign(M, msg.session);
    else return;
    updates++;
    document.body.dataset.updates = String(updates);
    status.textContent = 'live · updated ' + fmtTime(Date.now() / 1000);
    render();
  };
}
})();
