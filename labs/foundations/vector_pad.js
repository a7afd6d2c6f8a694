// Two vectors dragged on a canvas (labs/foundations/vector_pad.py). Python sends a, b, the scalar k and the page's
// translated texts (sim.plots.foundations.vector_pad_payload); the handles at a's and b's tips follow the pointer,
// snapped to the sliders' 0.1 grid, and every arrow and every number beside the picture (a + b, k·a, the norms, the
// dot product, the cosine similarity and angle, the projection) is computed and written here, in the browser, at
// once. The same arithmetic as sim.linalg.vectors.analyse, formatted as Python's format specs would (a browser test
// compares the two). Each move is also sent back (at most one every SEND_MS while dragging, and on release), so
// that the page's values and its URL follow. The pad takes the keyboard focus (Tab): a or b chooses the point to move
// (Enter or Space switches), the arrow keys move it one step of the grid, with Shift one unit (BIG_STEPS steps), and
// each move is sent as a drag's are.
const SIZE = 420, SEND_MS = 120, HIT_PX = 16, BIG_STEPS = 10;
const ARROWS = { ArrowRight: [1, 0], ArrowLeft: [-1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
const PENDING_MS = 5000;  // a move the server has not shown back after this long is taken as refused
const PURPLE = rgb(PALETTE.purple), GREEN = rgb(PALETTE.green), GUIDE = rgb(PALETTE.guide), INK = rgb(PALETTE.ink);

function setup(root) {
  root.innerHTML = `<style>${STYLE}${COMMON_STYLE}</style>
    <div class="vp" data-testid="vector-pad"><div class="vp-left">
    <canvas class="vp-canvas" tabindex="0" data-own-keys width="${SIZE}" height="${SIZE}"></canvas>
    <div class="vp-help"></div></div>
    <div class="vp-numbers" data-testid="vector-pad-numbers"></div></div>`;
  const canvas = root.querySelector('.vp-canvas');
  const S = { root: root.querySelector('.vp'), canvas, ctx: canvas.getContext('2d'), drag: null, zoom: 1,
              help: root.querySelector('.vp-help'), numbers: root.querySelector('.vp-numbers'), sent: 0, timer: 0,
              selected: 'a' };
  withDownload(canvas, () => 'vectors');
  // a plane point on the sliders' grid and within their range
  const snap = (v) => +Math.max(-S.data.limit, Math.min(S.data.limit, Math.round(v / S.data.step) * S.data.step))
    .toFixed(6);
  const toWorld = (e) => {
    const box = canvas.getBoundingClientRect(), R = S.data.range;
    const x = ((e.clientX - box.left) / box.width) * 2 * R - R, y = R - ((e.clientY - box.top) / box.height) * 2 * R;
    return [snap(x), snap(y)];
  };
  const near = (e) => {
    const box = canvas.getBoundingClientRect();
    const px = (p) => [box.left + ((p[0] + S.data.range) / (2 * S.data.range)) * box.width,
                       box.top + ((S.data.range - p[1]) / (2 * S.data.range)) * box.height];
    let best = null, bestD = HIT_PX;
    for (const name of ['a', 'b']) {
      const [x, y] = px(S.pos[name]), d = Math.hypot(e.clientX - x, e.clientY - y);
      if (d < bestD) { best = name; bestD = d; }
    }
    return best;
  };
  const send = () => {
    S.timer = 0; S.sent = performance.now();
    S.pending = { a: S.pos.a.slice(), b: S.pos.b.slice() };
    S.component.setTriggerValue('moved', S.pending);
  };
  // a point moved: sent at once, or, within SEND_MS of the last send, when that time is up (the newest position)
  const sendSoon = () => {
    const wait = SEND_MS - (performance.now() - S.sent);
    if (wait <= 0) send(); else if (!S.timer) S.timer = setTimeout(send, wait);
  };
  canvas.addEventListener('pointerdown', (e) => {
    S.drag = near(e);
    if (S.drag) { canvas.setPointerCapture(e.pointerId); e.preventDefault(); }
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!S.drag) { canvas.style.cursor = near(e) ? 'grab' : 'default'; return; }
    const p = toWorld(e);
    if (p[0] === S.pos[S.drag][0] && p[1] === S.pos[S.drag][1]) return;
    S.pos[S.drag] = p; paint(S);
    sendSoon();
  });
  const release = () => {
    if (!S.drag) return;
    S.drag = null;
    if (S.timer) clearTimeout(S.timer);
    send();
  };
  canvas.addEventListener('pointerup', release);
  canvas.addEventListener('pointercancel', release);
  canvas.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || S.drag) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === 'a' || key === 'b') S.selected = key;
    else if (key === 'Enter' || key === ' ') S.selected = S.selected === 'a' ? 'b' : 'a';
    else if (ARROWS[key]) {
      const step = S.data.step * (e.shiftKey ? BIG_STEPS : 1), [dx, dy] = ARROWS[key], p = S.pos[S.selected];
      const to = [snap(p[0] + dx * step), snap(p[1] + dy * step)];
      if (to[0] !== p[0] || to[1] !== p[1]) { S.pos[S.selected] = to; sendSoon(); }
    } else return;
    e.preventDefault();  // the page neither scrolls nor takes the key as a shortcut
    paint(S);
  });
  canvas.addEventListener('focus', () => paint(S));  // the chosen point is ringed while the pad has the focus
  canvas.addEventListener('blur', () => paint(S));
  return S;
}

function arrow(ctx, X, Y, from, to, colour, width, dash, alpha, z) {
  const [x0, y0, x1, y1] = [X(from[0]), Y(from[1]), X(to[0]), Y(to[1])];
  const len = Math.hypot(x1 - x0, y1 - y0);
  ctx.save();
  ctx.globalAlpha = alpha; ctx.strokeStyle = ctx.fillStyle = css(colour); ctx.lineWidth = width;
  ctx.setLineDash(dash || []);
  ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
  if (len > 4) {
    const ux = (x1 - x0) / len, uy = (y1 - y0) / len, h = 10 * z;
    ctx.setLineDash([]);
    ctx.beginPath(); ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - h * ux + h * 0.45 * uy, y1 - h * uy - h * 0.45 * ux);
    ctx.lineTo(x1 - h * ux - h * 0.45 * uy, y1 - h * uy + h * 0.45 * ux);
    ctx.closePath(); ctx.fill();
  }
  ctx.restore();
}

function paint(S) {
  const { ctx, data } = S, W = ctx.canvas.width, R = data.range, z = S.zoom;
  const X = (v) => ((v + R) / (2 * R)) * W, Y = (v) => ((R - v) / (2 * R)) * W;
  ctx.clearRect(0, 0, W, W);
  ctx.fillStyle = css(WHITE); ctx.fillRect(0, 0, W, W);
  ctx.lineWidth = 1; ctx.strokeStyle = css(mix(WHITE, GUIDE, 0.25));
  for (let v = -Math.floor(R); v <= R; v++) {
    ctx.beginPath(); ctx.moveTo(X(v), 0); ctx.lineTo(X(v), W); ctx.moveTo(0, Y(v)); ctx.lineTo(W, Y(v)); ctx.stroke();
  }
  ctx.strokeStyle = css(GUIDE); ctx.lineWidth = 1.5 * z;
  ctx.beginPath(); ctx.moveTo(X(0), 0); ctx.lineTo(X(0), W); ctx.moveTo(0, Y(0)); ctx.lineTo(W, Y(0)); ctx.stroke();
  ctx.fillStyle = css(GUIDE); ctx.font = `${11 * z}px sans-serif`;
  for (let v = -Math.floor(R) + 1; v < R; v++) if (v) ctx.fillText(String(v), X(v) + 2, Y(0) + 12 * z);
  const o = [0, 0], a = S.pos.a, b = S.pos.b, d = analyse(a, b, data.k);
  arrow(ctx, X, Y, a, d.total, mix(WHITE, BLUE, 0.45), 2 * z, [4 * z, 4 * z], 1, z);
  arrow(ctx, X, Y, o, d.total, PURPLE, 2.5 * z, null, 1, z);
  arrow(ctx, X, Y, o, d.scaled, mix(WHITE, ORANGE, 0.55), 2.5 * z, [7 * z, 4 * z], 1, z);
  if (d.projection) {
    arrow(ctx, X, Y, o, d.projection, GREEN, 2.5 * z, null, 1, z);
    ctx.save(); ctx.strokeStyle = css(GREEN); ctx.setLineDash([2 * z, 3 * z]);
    ctx.beginPath(); ctx.moveTo(X(a[0]), Y(a[1])); ctx.lineTo(X(d.projection[0]), Y(d.projection[1])); ctx.stroke();
    ctx.restore();
  }
  arrow(ctx, X, Y, o, a, ORANGE, 3 * z, null, 1, z);
  arrow(ctx, X, Y, o, b, BLUE, 3 * z, null, 1, z);
  ctx.font = `bold ${13 * z}px sans-serif`;
  [['a', a, ORANGE], ['b', b, BLUE]].forEach(([name, p, colour]) => {
    ctx.fillStyle = css(WHITE); ctx.strokeStyle = css(colour); ctx.lineWidth = 2.5 * z;
    ctx.beginPath(); ctx.arc(X(p[0]), Y(p[1]), 7 * z, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
    if (name === S.selected && document.activeElement === S.canvas) {  // the point the arrow keys move
      ctx.save(); ctx.strokeStyle = css(INK); ctx.lineWidth = 1.5 * z; ctx.setLineDash([3 * z, 3 * z]);
      ctx.beginPath(); ctx.arc(X(p[0]), Y(p[1]), 12 * z, 0, 2 * Math.PI); ctx.stroke(); ctx.restore();
    }
    ctx.fillStyle = css(INK);
    ctx.fillText(`${data.labels[name]} (${p[0].toFixed(1)}, ${p[1].toFixed(1)})`, X(p[0]) + 10 * z, Y(p[1]) - 8 * z);
  });
  writeNumbers(S, d);
  namePad(S, d);
  S.root.dataset.a = a.join(','); S.root.dataset.b = b.join(','); S.root.dataset.k = String(data.k);
  S.root.dataset.selected = S.selected;
  S.root.dataset.paints = String((+S.root.dataset.paints || 0) + 1);
}

// ---------- the numbers: sim.linalg.vectors.analyse, operation for operation ----------
const norm = (v) => Math.sqrt(v[0] * v[0] + v[1] * v[1]);
const dot = (u, v) => u[0] * v[0] + u[1] * v[1];

function direction(cos, tol = 1e-9) {
  if (cos === null) return null;
  if (cos >= 1 - tol) return 'same';
  if (cos <= -1 + tol) return 'opposite';
  return Math.abs(cos) <= tol ? 'perpendicular' : cos > 0 ? 'acute' : 'obtuse';
}

function analyse(a, b, k) {
  const na = norm(a), nb = norm(b), ab = dot(a, b);
  const cos = na === 0 || nb === 0 ? null : Math.max(-1, Math.min(1, ab / (na * nb)));
  return { a, b, k, total: [a[0] + b[0], a[1] + b[1]], scaled: [k * a[0], k * a[1]], na, nb, dot: ab, cos,
           angle: cos === null ? null : Math.acos(cos) * (180 / Math.PI),
           projection: nb === 0 ? null : b.map((x) => (ab / nb ** 2) * x),
           zero: [['a', na], ['b', nb]].filter(([, n]) => n === 0).map(([name]) => name), kind: direction(cos) };
}

// Python's format specs: f"{x:.4g}", f"{x:g}" (precision 6) and f"{x:.4f}"
const sign = (x) => (x < 0 || Object.is(x, -0) ? '-' : '');
const trim = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);

function pyG(x, p = 6) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return sign(x) + '0';
  const [mant, e] = Math.abs(x).toExponential(p - 1).split('e'), exp = +e;
  if (exp < -4 || exp >= p) return `${sign(x)}${trim(mant)}e${exp < 0 ? '-' : '+'}${pad2(Math.abs(exp))}`;
  return sign(x) + trim(Math.abs(x).toFixed(p - 1 - exp));
}

const pad2 = (n) => String(n).padStart(2, '0');
const pyF = (x, p) => sign(x) + Math.abs(x).toFixed(p);
const pair = (v) => `(${pyG(v[0], 3)}, ${pyG(v[1], 3)})`;
// a coordinate as a term of a formula, bracketed when negative: √((-1)² + 2²), not √(-1² + 2²)
// (sim.plots.foundations.term does the same in Python)
const term = (s) => (s.startsWith('-') ? `(${s})` : s);
const fill = (text, values) => text.replace(/\{(\w+)\}/g, (m, name) => (name in values ? values[name] : m));
const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
// the catalogue's texts use two pieces of Markdown: **bold** and a line break ("  \n")
const markdown = (s) => escapeHtml(s).replace(/\*\*(.+?)\*\*/g, '<b>$1</b>').replace(/ {2}\n/g, '<br>');

function writeNumbers(S, d) {
  const T = S.data.texts;
  const values = { a: pair(d.a), b: pair(d.b), sum: pair(d.total), k: pyG(d.k), scaled: pair(d.scaled),
                   na: pyG(d.na, 4), nb: pyG(d.nb, 4), ax: term(pyG(d.a[0])), ay: term(pyG(d.a[1])),
                   bx: term(pyG(d.b[0])), by: term(pyG(d.b[1])), dot: pyG(d.dot, 4) };
  let html = `<p class="vp-n-main">${markdown(fill(T.numbers, values))}</p>`;
  if (d.zero.length) {
    html += `<p class="vp-n-zero" role="alert">${markdown(fill(T.zero, { which: d.zero.join(', ') }))}</p>`;
  } else {
    Object.assign(values, { cos: pyF(d.cos, 4), angle: pyF(d.angle, 1), proj: pair(d.projection),
                            coef: pyG(d.dot / d.nb ** 2, 4) });
    html += `<p class="vp-n-angle">${markdown(fill(T.angle, values))}</p>`;
    html += `<p class="vp-n-kind" data-kind="${d.kind}">${markdown(T.kind[d.kind])}</p>`;
  }
  if (html !== S.shown) { S.numbers.innerHTML = html; S.shown = html; }
}

// the canvas's accessible name: the vectors it shows, with their coordinates (ui/live_common.js nameCanvas)
function namePad(S, d) {
  nameCanvas(S.canvas, fill(S.data.labels.a11y, { a: pair(d.a), b: pair(d.b), sum: pair(d.total), k: pyG(d.k),
                                                  scaled: pair(d.scaled) }));
}

export default function (component) {
  const { data, parentElement } = component;
  const S = parentElement.__vpad || (parentElement.__vpad = setup(parentElement));
  S.component = component;
  S.data = data;
  // the server's vectors, unless they are older than what this pad last sent: a rerun started before the last move
  // reached the server brings the vectors as they were, and taking them would send them back with the next drag
  const same = (p, q) => p[0] === q[0] && p[1] === q[1];
  const mine = S.pending && (performance.now() - S.sent < PENDING_MS);
  if (mine && same(data.a, S.pending.a) && same(data.b, S.pending.b)) S.pending = null;
  else if (!S.drag && !S.timer && !mine) S.pos = { a: data.a.slice(), b: data.b.slice() };  // timer: a move unsent
  const zoom = presentCard(S.root, data, SIZE);
  if (zoom !== S.zoom || S.canvas.width !== Math.round(SIZE * zoom)) {
    S.zoom = zoom; S.canvas.width = S.canvas.height = Math.round(SIZE * zoom);
  }
  S.help.textContent = data.labels.help;
  paint(S);
}
