// Step-by-step animation of the IO simulator (data from sim/plots/memsim_anim.py): each step's tile travels
// between HBM, L2 and the SRAM of one SM, the running byte counters rise, and the blocks of the score matrix
// change state. Everything plays here: the controls never wait for the server. Python sends the byte counts.
// (Colours and the frame counters come from live_common.js.)
const TENSOR = { Q: BLUE, K: ORANGE, V: CLASS[2], O: CLASS[3], S: CLASS[4], P: rgb(PALETTE.brown) };
const CELL = [mix(WHITE, rgb(PALETTE.masked), 0.25), mix(WHITE, BLUE, 0.45), rgb(PALETTE.masked),
              mix(WHITE, ORANGE, 0.7)];  // by state code
const HBM_BG = mix(WHITE, ORANGE, 0.12), L2_BG = mix(WHITE, CLASS[2], 0.12), SM_BG = mix(WHITE, BLUE, 0.1);
const TRAVEL_MS = 450;  // a tile's trip after Step; while playing, a trip takes most of a step
const MIN_TRAVEL_MS = 60;  // steps shorter than this show the tile where it arrives
// a reader who asks for less motion (prefers-reduced-motion) gets no trips at all: each step is drawn as it ends, and
// nothing moves before a press of Play or Step (nothing here plays by itself either way)
const LESS_MOTION = window.matchMedia ? window.matchMedia('(prefers-reduced-motion: reduce)') : { matches: false };
const DIAGRAM_W = 540, DIAGRAM_H = 300, MATRIX = 280, MARGIN = 18;  // side by side in a ~870 px column

const fill = (s, p) => s.replace(/\{(\w+)\}/g, (m, k) => (k in p ? p[k] : m));
function human(b) {  // binary units, as the Python side's human_bytes
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (; b >= 1024 && i < units.length - 1; i++) b /= 1024;
  return i ? `${b.toFixed(1)} ${units[i]}` : `${b} B`;
}
const COUNTERS = [['hbm_read', 'hbm_read', ORANGE], ['hbm_write', 'hbm_write', ORANGE],
                  ['l2', 'l2_traffic', CLASS[2]], ['sram', 'sram_traffic', BLUE]];  // [payload, label, colour]

function setup(root) {
  root.innerHTML = `<style>${STYLE}${COMMON_STYLE}</style>
    <div class="ma" data-testid="memsim-anim">
      <div class="ma-controls">
        <button class="ma-play primary" data-testid="memsim-play"></button>
        <button class="ma-back" data-testid="memsim-back"></button>
        <button class="ma-step" data-testid="memsim-step"></button>
        <button class="ma-reset" data-testid="memsim-reset"></button>
        <input class="ma-scrub" type="range" min="0" value="0" data-testid="memsim-scrub">
        <span class="ma-pos" data-testid="memsim-position"></span><span class="ma-speed"></span>
      </div>
      <div class="ma-caption" data-testid="memsim-caption"></div>
      <div class="ma-body">
        <div class="ma-left">
          <canvas class="ma-diagram" data-testid="memsim-diagram" width="${DIAGRAM_W}" height="${DIAGRAM_H}"></canvas>
          <div class="ma-counters"><div class="ma-title ma-ctitle"></div>${COUNTERS.map(([k]) => `
            <div class="ma-row" data-counter="${k}"><span class="ma-name"></span><span class="ma-val"></span>
              <span class="ma-of"></span><span class="ma-bar"><i></i></span></div>`).join('')}</div>
        </div>
        <div class="ma-right">
          <div class="ma-title ma-gtitle"></div>
          <canvas class="ma-grid" data-testid="memsim-grid"
                  width="${MATRIX + MARGIN + 2}" height="${MATRIX + MARGIN + 2}"></canvas>
          <div class="ma-legend"></div>
        </div>
      </div>
    </div>`;
  const q = (s) => root.querySelector(s);
  const S = { root: q('.ma'), play: q('.ma-play'), scrub: q('.ma-scrub'), pos: 0, playing: false, raf: 0,
              diagram: q('.ma-diagram').getContext('2d'), grid: q('.ma-grid').getContext('2d'),
              text: { pos: q('.ma-pos'), speed: q('.ma-speed'), caption: q('.ma-caption'), ctitle: q('.ma-ctitle'),
                      gtitle: q('.ma-gtitle'), legend: q('.ma-legend') },
              rows: COUNTERS.map(([k]) => q(`[data-counter="${k}"]`)), zoom: 1, liveText: liveText(q('.ma')),
              say: sayStep, canvases: { diagram: q('.ma-diagram'), grid: q('.ma-grid') } };
  withDownload(q('.ma-diagram'), () => 'memory-diagram');
  withDownload(q('.ma-grid'), () => 'score-blocks');
  const now = () => performance.now();
  const pause = () => { S.playing = false; S.travel = 0; };
  S.play.onclick = () => {
    if (S.playing) pause();
    else {
      if (S.pos >= S.data.steps) seek(S, 0);
      S.playing = true; S.p0 = S.pos; S.t0 = now() - 1000 / S.speed;  // the first step at once
    }
    animate(S);
  };
  q('.ma-step').onclick = () => {
    pause(); seek(S, Math.min(S.pos + 1, S.data.steps));
    S.travel = LESS_MOTION.matches ? 0 : TRAVEL_MS; S.stepAt = now(); animate(S);
  };
  q('.ma-back').onclick = () => { pause(); seek(S, Math.max(S.pos - 1, 0)); animate(S); };
  q('.ma-reset').onclick = () => { pause(); seek(S, 0); animate(S); };
  S.scrub.oninput = () => { pause(); seek(S, +S.scrub.value); animate(S); };
  return S;
}

// A new configuration: start at step 0, paused.
function load(S, data) {
  S.id = data.id; S.data = data; S.playing = false; S.travel = 0;
  S.cells = new Uint8Array(data.t_r * data.t_c);
  S.pos = 0; S.chip = new Map();
  const off = document.createElement('canvas');  // one pixel per block, scaled up onto the matrix
  off.width = data.t_c; off.height = data.t_r;
  S.off = off; S.offCtx = off.getContext('2d'); S.img = S.offCtx.createImageData(data.t_c, data.t_r);
  S.scrub.max = data.steps;
}

// Short name of step k's tile, as drawn on it: K[5], Q[3], S[3,5].
function tileName(d, k) {
  const e = d.events, t = e.tensor[k];
  if (e.kernel[k] === 'fused' && e.action[k] === 'compute') return `S[${e.row[k]},${e.col[k]}]`;
  return `${t}[${t === 'K' || t === 'V' ? e.col[k] : e.row[k]}]`;
}

// Whose SRAM a step uses: a program (row block) of the fused kernel, or one of the naive kernels.
const owner = (e, k) => (e.kernel[k] === 'fused' ? e.row[k] : e.kernel[k]);

function apply(S, k) {
  const e = S.data.events, run = e.cells[k], t = e.tensor[k], a = e.action[k];
  if (run) for (let j = run[1]; j < run[2]; j++) S.cells[run[0] * S.data.t_c + j] = e.state[k];
  const who = owner(e, k), held = S.chip.get(who) || {};
  S.chip.set(who, held);
  if (a === 'load' || a === 'compute') held[t] = tileName(S.data, k);
  if (a === 'compute' && e.kernel[k] === 'fused') held.O = `O[${e.row[k]}]`;  // the accumulator, updated in place
  if (a === 'store') e.kernel[k] === 'fused' ? S.chip.delete(who) : delete held[t];  // a program ends with its O
}

function seek(S, p) {
  if (p < S.pos) { S.cells.fill(0); S.chip.clear(); S.pos = 0; }
  for (; S.pos < p; S.pos++) apply(S, S.pos);
  S.travel = 0;
}

// One animation loop while playing or while a tile is on its way; it paints only what changed.
function animate(S) {
  S.play.textContent = S.playing ? S.data.labels.pause : S.data.labels.play;
  if (S.raf) return;
  const tick = (now) => {
    S.raf = 0;
    const n = S.data.steps, dur = 1000 / S.speed;
    if (S.playing) {
      const target = Math.min(n, S.p0 + Math.floor((now - S.t0) / dur));
      if (target !== S.pos) {
        seek(S, target);
        S.stepAt = S.t0 + (target - S.p0) * dur;
        S.travel = dur >= MIN_TRAVEL_MS && !LESS_MOTION.matches ? 0.8 * dur : 0;
      }
      if (S.pos >= n) { S.playing = false; S.play.textContent = S.data.labels.play; }
    }
    const phase = S.travel ? Math.min(1, (now - S.stepAt) / S.travel) : 1;
    if (S.pos !== S.shownPos || phase !== S.shownPhase) paint(S, phase);
    if (S.playing || phase < 1) S.raf = requestAnimationFrame(tick);
  };
  S.raf = requestAnimationFrame(tick);
}

function paint(S, phase) {
  for (const ctx of [S.grid, S.diagram]) ctx.setTransform(S.zoom, 0, 0, S.zoom, 0, 0);  // the presenter view's zoom
  if (S.pos !== S.shownPos) { drawGrid(S); showText(S); }
  drawDiagram(S, phase);
  S.shownPos = S.pos; S.shownPhase = phase;
  S.root.dataset.step = S.pos;
  STATS.frames++; STATS.epoch = S.pos;
}

// ---- the memory hierarchy -------------------------------------------------------------------------------

function layout(d) {
  const hbm = { x: 6, y: 8, w: 156, h: DIAGRAM_H - 16 };
  const l2 = d.l2 ? { x: 204, y: 96, w: 100, h: 108 } : null;
  const sm = { x: 350, y: 8, w: 184, h: DIAGRAM_H - 16 };
  const onChip = ['Q', 'K', 'V', 'S', 'P', 'O'].filter((t) => d.tensors.includes(t) || t === 'S');
  const slots = {}, chip = {};
  d.tensors.forEach((t, k) => {  // two columns in HBM, three on chip
    slots[t] = { x: hbm.x + 10 + (k % 2) * 72, y: hbm.y + 34 + Math.floor(k / 2) * 78, w: 64, h: 64 };
  });
  onChip.forEach((t, k) => {
    chip[t] = { x: sm.x + 8 + (k % 3) * 57, y: sm.y + 34 + Math.floor(k / 3) * 58, w: 53, h: 48 };
  });
  return { hbm, l2, sm, slots, chip, compute: { x: sm.x + 8, y: sm.y + 176, w: sm.w - 16, h: 94 } };
}

const centre = (r) => [r.x + r.w / 2, r.y + r.h / 2];

function box(ctx, r, bg, border, title) {
  ctx.fillStyle = css(bg); ctx.fillRect(r.x, r.y, r.w, r.h);
  ctx.strokeStyle = css(border); ctx.lineWidth = 1.5; ctx.strokeRect(r.x, r.y, r.w, r.h);
  ctx.fillStyle = PALETTE.ink; ctx.font = '600 13px sans-serif'; ctx.fillText(title, r.x + 8, r.y + 18);
}

function tile(ctx, [x, y], t, name, dashed) {
  const w = 50, h = 28;
  ctx.fillStyle = css(mix(WHITE, TENSOR[t], 0.8)); ctx.fillRect(x - w / 2, y - h / 2, w, h);
  ctx.strokeStyle = dashed ? css(CLASS[2]) : PALETTE.ink; ctx.lineWidth = 2; ctx.setLineDash(dashed ? [4, 3] : []);
  ctx.strokeRect(x - w / 2, y - h / 2, w, h); ctx.setLineDash([]);
  ctx.fillStyle = PALETTE.white; ctx.font = '600 12px sans-serif'; ctx.textAlign = 'center';
  ctx.fillText(name, x, y + 4, w - 4);
  ctx.textAlign = 'left';
}

// point at `phase` (0..1, eased) along a polyline
function along(path, phase) {
  const p = 0.5 - 0.5 * Math.cos(Math.PI * phase);
  const lens = path.slice(1).map((q, i) => Math.hypot(q[0] - path[i][0], q[1] - path[i][1]));
  let left = p * lens.reduce((a, b) => a + b, 0), i = 0;
  while (i < lens.length - 1 && left > lens[i]) left -= lens[i++];
  const f = lens[i] ? left / lens[i] : 1;
  return [0, 1].map((c) => path[i][c] + (path[i + 1][c] - path[i][c]) * f);
}

function drawDiagram(S, phase) {
  const d = S.data, L = d.labels, e = d.events, ctx = S.diagram, G = layout(d), k = S.pos - 1;
  const t = k >= 0 ? e.tensor[k] : null, a = k >= 0 ? e.action[k] : null, hit = k >= 0 && e.hit[k];
  ctx.clearRect(0, 0, DIAGRAM_W, DIAGRAM_H);
  // the links: HBM - (L2 -) SM, the one in use in the tile's colour
  const midY = DIAGRAM_H / 2, moving = (a === 'load' || a === 'store') && phase < 1;
  const hbmEdge = G.hbm.x + G.hbm.w;
  const links = G.l2 ? [[hbmEdge, G.l2.x, !hit], [G.l2.x + G.l2.w, G.sm.x, true]] : [[hbmEdge, G.sm.x, true]];
  links.forEach(([x0, x1, used]) => {
    ctx.strokeStyle = moving && used ? css(TENSOR[t]) : PALETTE.masked; ctx.lineWidth = 10;
    ctx.beginPath(); ctx.moveTo(x0, midY); ctx.lineTo(x1, midY); ctx.stroke();
  });
  box(ctx, G.hbm, HBM_BG, ORANGE, L.hbm);
  d.tensors.forEach((name) => {
    const r = G.slots[name], active = name === t && (a === 'load' || a === 'store') && !hit;
    ctx.fillStyle = css(mix(WHITE, TENSOR[name], 0.25)); ctx.fillRect(r.x, r.y, r.w, r.h);
    ctx.strokeStyle = active ? PALETTE.ink : css(TENSOR[name]); ctx.lineWidth = active ? 3 : 1;
    ctx.strokeRect(r.x, r.y, r.w, r.h);
    ctx.fillStyle = PALETTE.ink; ctx.font = '600 18px sans-serif'; ctx.fillText(name, r.x + 8, r.y + 26);
    ctx.font = '11px sans-serif'; ctx.fillText(name === 'S' || name === 'P' ? 'N×N' : 'N×d', r.x + 8, r.y + 48);
  });
  if (G.l2) {
    box(ctx, G.l2, L2_BG, CLASS[2], L.l2);
    if (a === 'load' && k >= 0 && e.hit[k] !== null) {
      ctx.fillStyle = hit ? css(CLASS[2]) : PALETTE.guide; ctx.font = '600 13px sans-serif';
      ctx.fillText(hit ? L.l2_hit : L.l2_miss, G.l2.x + 8, G.l2.y + G.l2.h - 12);
    }
  }
  const program = k >= 0 && e.kernel[k] === 'fused' ? fill(L.sm_program, { i: e.row[k] }) : L.sm;
  box(ctx, G.sm, SM_BG, BLUE, program);
  const held = k >= 0 ? S.chip.get(owner(e, k)) || {} : {};
  Object.entries(G.chip).forEach(([name, r]) => {
    const arriving = name === t && a === 'load' && phase < 1, here = held[name] && !arriving;
    ctx.setLineDash(here ? [] : [3, 3]); ctx.lineWidth = 1; ctx.strokeStyle = css(TENSOR[name]);
    ctx.fillStyle = here ? css(mix(WHITE, TENSOR[name], 0.35)) : PALETTE.white;
    ctx.fillRect(r.x, r.y, r.w, r.h); ctx.strokeRect(r.x, r.y, r.w, r.h); ctx.setLineDash([]);
    ctx.fillStyle = here ? PALETTE.ink : PALETTE.line; ctx.font = '600 12px sans-serif';
    ctx.fillText(here ? held[name] : name, r.x + 5, r.y + 28, r.w - 8);
  });
  const c = G.compute;
  ctx.fillStyle = PALETTE.white; ctx.fillRect(c.x, c.y, c.w, c.h);
  if (a === 'compute') {  // a flash: strongest mid-step
    ctx.fillStyle = css(mix(WHITE, TENSOR[t], 0.35 + 0.45 * Math.sin(Math.PI * phase)));
    ctx.fillRect(c.x, c.y, c.w, c.h);
  }
  if (a === 'skip') {
    ctx.fillStyle = css(CELL[2]); ctx.fillRect(c.x, c.y, c.w, c.h); ctx.strokeStyle = PALETTE.line; ctx.lineWidth = 1;
    ctx.save(); ctx.beginPath(); ctx.rect(c.x, c.y, c.w, c.h); ctx.clip();
    ctx.beginPath();
    for (let x = c.x - c.h; x < c.x + c.w; x += 12) { ctx.moveTo(x, c.y + c.h); ctx.lineTo(x + c.h, c.y); }
    ctx.stroke();
    ctx.restore();
  }
  ctx.strokeStyle = css(BLUE); ctx.lineWidth = 1.5; ctx.strokeRect(c.x, c.y, c.w, c.h);
  ctx.fillStyle = PALETTE.ink; ctx.font = '600 12px sans-serif'; ctx.fillText(L.compute, c.x + 8, c.y + 18);
  if (a === 'compute') { ctx.font = '600 16px sans-serif'; ctx.fillText(tileName(d, k), c.x + 8, c.y + 52); }
  if (a === 'skip') { ctx.font = '600 14px sans-serif'; ctx.fillText(L.masked, c.x + 8, c.y + 52); }
  if (moving) {  // the tile on its way: HBM -> (L2 ->) SRAM for a load, back for a store; an L2 hit starts at L2
    const hbmEnd = centre(G.slots[t]), chipEnd = centre(G.chip[t]);
    let path = [hbmEnd, [G.hbm.x + G.hbm.w, midY], ...(G.l2 ? [centre(G.l2)] : []), [G.sm.x, midY], chipEnd];
    if (hit) path = path.slice(2);
    if (a === 'store') path.reverse();
    tile(ctx, along(path, phase), t, tileName(d, k), hit);
  }
}

// ---- the block grid of S ------------------------------------------------------------------------------

function drawGrid(S) {
  const d = S.data, L = d.labels, ctx = S.grid, e = d.events, k = S.pos - 1;
  const cw = MATRIX * d.block_n / d.N, ch = MATRIX * d.block_m / d.N, x0 = MARGIN, y0 = MARGIN;
  const px = S.img.data;
  S.cells.forEach((s, i) => { px.set(CELL[s], i * 4); px[i * 4 + 3] = 255; });
  S.offCtx.putImageData(S.img, 0, 0);
  ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.fillStyle = PALETTE.text; ctx.font = '11px sans-serif'; ctx.fillText(L.keys, x0, 12);
  ctx.save(); ctx.translate(4, y0); ctx.rotate(Math.PI / 2); ctx.fillText(L.queries, 0, 0); ctx.restore();  // downwards
  ctx.save(); ctx.beginPath(); ctx.rect(x0, y0, MATRIX, MATRIX); ctx.clip();
  ctx.imageSmoothingEnabled = false;  // blocks stay sharp; the last, partial block is cut at the matrix edge
  ctx.drawImage(S.off, x0, y0, cw * d.t_c, ch * d.t_r);
  if (Math.min(cw, ch) >= 5) {  // big enough for the hatching of masked blocks and the block borders
    ctx.strokeStyle = PALETTE.line; ctx.lineWidth = 1;
    S.cells.forEach((s, i) => {
      if (s !== 2) return;
      const x = x0 + (i % d.t_c) * cw, y = y0 + Math.floor(i / d.t_c) * ch;
      ctx.beginPath(); ctx.moveTo(x, y + ch); ctx.lineTo(x + cw, y); ctx.stroke();
    });
    ctx.strokeStyle = PALETTE.white;
    ctx.beginPath();
    for (let j = 1; j < d.t_c; j++) { ctx.moveTo(x0 + j * cw, y0); ctx.lineTo(x0 + j * cw, y0 + MATRIX); }
    for (let i = 1; i < d.t_r; i++) { ctx.moveTo(x0, y0 + i * ch); ctx.lineTo(x0 + MATRIX, y0 + i * ch); }
    ctx.stroke();
  }
  if (k >= 0) {  // the current row and column block (at least 3 px, to show on a fine grid), unless they fill it
    const row = e.row[k], col = e.col[k], band = 'rgba(255, 196, 0, 0.22)';
    ctx.fillStyle = band;
    if (row !== null && d.t_r > 1) ctx.fillRect(x0, y0 + row * ch, MATRIX, Math.max(ch, 3));
    if (col !== null && d.t_c > 1) ctx.fillRect(x0 + col * cw, y0, Math.max(cw, 3), MATRIX);
    ctx.strokeStyle = PALETTE.ink; ctx.lineWidth = 2;
    const run = e.cells[k];
    if (run) ctx.strokeRect(x0 + run[1] * cw, y0 + run[0] * ch, Math.max((run[2] - run[1]) * cw, 3), Math.max(ch, 3));
    else if (row !== null && col !== null) {
      ctx.strokeRect(x0 + col * cw, y0 + row * ch, Math.max(cw, 3), Math.max(ch, 3));
    }
  }
  ctx.restore();
  ctx.strokeStyle = PALETTE.guide; ctx.lineWidth = 1; ctx.strokeRect(x0 - 0.5, y0 - 0.5, MATRIX + 1, MATRIX + 1);
}

// ---- texts: controls, caption, counters ---------------------------------------------------------------

function caption(d, k) {
  const e = d.events, L = d.labels, t = e.tensor[k], a = e.action[k], i = e.row[k], j = e.col[k];
  const kernel = fill(L['kernel.' + e.kernel[k]], { i });
  const tile = e.kernel[k] === 'fused' && a === 'compute' ? fill(L['tile.cell'], { i, j })
    : fill(L[t === 'K' || t === 'V' ? 'tile.cols' : 'tile.rows'], { tensor: t, i, j });
  const key = a === 'load' ? (e.hit[k] === true ? 'do.load_hit' : e.hit[k] === false ? 'do.load_l2' : 'do.load')
    : a === 'compute' ? (e.kernel[k] === 'fused' ? 'do.compute_fused' : 'do.compute') : 'do.' + a;
  const run = e.cells[k];
  const action = fill(L[key], { tile, bytes: human(e.sram[k]), i, count: run ? run[2] - run[1] : 0 });
  return fill(L.caption, { kernel, action });
}

// What a screen reader hears at step `pos` (ui/live_common.js follow: at most once a second while playing, at once
// when it stops): both canvases' names and the live text, from the step shown.
function sayStep(S, pos) {
  const d = S.data, L = d.labels, k = pos - 1, n = d.counters;
  const at = { step: pos.toLocaleString(), steps: d.steps.toLocaleString(), caption: k >= 0 ? caption(d, k) : L.ready,
               read: human(k >= 0 ? n.hbm_read[k] : 0), written: human(k >= 0 ? n.hbm_write[k] : 0) };
  const count = d.states.map(() => 0);
  S.cells.forEach((c) => { count[c]++; });
  const counts = d.states.map((s, c) => `${L['state.' + s]} ${count[c]}`).join(L['a11y.sep']);
  nameCanvas(S.canvases.diagram, fill(L['a11y.diagram'], at));
  nameCanvas(S.canvases.grid, fill(L['a11y.grid'], { ...at, counts, t_r: d.t_r, t_c: d.t_c }));
  return fill(L['a11y.live'], at);
}

function showText(S) {
  const d = S.data, L = d.labels, n = d.steps, k = S.pos - 1;
  S.text.pos.textContent = fill(L.position, { step: S.pos.toLocaleString(), steps: n.toLocaleString() });
  S.text.caption.textContent = k >= 0 ? caption(d, k) : L.ready;
  follow(S, S.pos, !S.playing || S.pos >= n);
  S.scrub.value = S.pos;
  COUNTERS.forEach(([name], r) => {
    const row = S.rows[r], values = d.counters[name], total = values[n - 1], now = k >= 0 ? values[k] : 0;
    row.querySelector('.ma-val').textContent = human(now);
    row.querySelector('i').style.width = `${total ? (100 * now) / total : 0}%`;
  });
}

// texts that change only with the data (a new configuration, or another language)
function showLabels(S) {
  const d = S.data, L = d.labels, n = d.steps;
  [['.ma-back', 'back'], ['.ma-step', 'step'], ['.ma-reset', 'reset']].forEach(([sel, key]) => {
    S.root.querySelector(sel).textContent = L[key];
  });
  S.scrub.setAttribute('aria-label', L.scrub);
  S.text.speed.textContent = L.speed;
  S.text.ctitle.textContent = L.counters;
  S.text.gtitle.textContent = L.grid;
  COUNTERS.forEach(([name, label, colour], r) => {
    const row = S.rows[r];
    row.hidden = name === 'l2' && !d.l2;
    row.querySelector('.ma-name').textContent = L[label];
    row.querySelector('.ma-of').textContent = fill(L.of_total, { total: human(d.counters[name][n - 1]) });
    row.querySelector('i').style.background = css(colour);
  });
  const hatch = `repeating-linear-gradient(135deg, ${PALETTE.masked} 0 4px, ${PALETTE.line} 4px 5px)`;
  S.text.legend.innerHTML = d.states.map((s, c) =>
    `<span><i style="background:${c === 2 ? hatch : css(CELL[c])}"></i>${L['state.' + s]}</span>`).join('')
    + `<span><i class="ma-current"></i>${L.current}</span>`;
}

export default function (component) {
  const { data, parentElement } = component;
  const S = parentElement.__memsim || (parentElement.__memsim = setup(parentElement));
  if (data.id !== S.id) load(S, data);
  else S.data = data;  // the same run again (another language, another speed): keep the position
  if (S.playing && data.speed !== S.speed) { S.p0 = S.pos; S.t0 = performance.now(); }
  S.speed = data.speed;
  const zoom = presentCard(S.root, data, Math.max(DIAGRAM_H, MATRIX + MARGIN + 2));
  if (zoom !== S.zoom) {  // the canvases' pixels follow the zoom; paint() draws at it
    S.zoom = zoom;
    S.diagram.canvas.width = Math.round(DIAGRAM_W * zoom); S.diagram.canvas.height = Math.round(DIAGRAM_H * zoom);
    S.grid.canvas.width = S.grid.canvas.height = Math.round((MATRIX + MARGIN + 2) * zoom);
  }
  showLabels(S);
  S.shownPos = -1;  // paint everything once
  animate(S);
  return () => { cancelAnimationFrame(S.raf); S.raf = 0; };
}
