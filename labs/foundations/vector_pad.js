// Two vectors dragged on a canvas (labs/foundations/vector_pad.py). Python sends a, b and what it computed from
// them (a + b, k·a, the projection of a on b: sim.plots.foundations.vector_pad_payload); the handles at a's and
// b's tips follow the pointer at once, snapped to the sliders' 0.1 grid, and each move is sent back (at most one
// every SEND_MS while dragging, and on release) so that the server recomputes the numbers. Until they come back,
// the derived arrows are drawn faint. Nothing here computes a number the page shows.
const SIZE = 420, SEND_MS = 120, HIT_PX = 16;
const PURPLE = rgb(PALETTE.purple), GREEN = rgb(PALETTE.green), GUIDE = rgb(PALETTE.guide), INK = rgb(PALETTE.ink);

function setup(root) {
  root.innerHTML = `<style>${STYLE}${COMMON_STYLE}</style>
    <div class="vp" data-testid="vector-pad"><canvas class="vp-canvas" width="${SIZE}" height="${SIZE}"></canvas>
    <div class="vp-help"></div></div>`;
  const canvas = root.querySelector('.vp-canvas');
  const S = { root: root.querySelector('.vp'), canvas, ctx: canvas.getContext('2d'), drag: null, zoom: 1,
              help: root.querySelector('.vp-help'), sent: 0, timer: 0 };
  withDownload(canvas, () => 'vectors');
  const toWorld = (e) => {
    const box = canvas.getBoundingClientRect(), R = S.data.range;
    const x = ((e.clientX - box.left) / box.width) * 2 * R - R, y = R - ((e.clientY - box.top) / box.height) * 2 * R;
    const snap = (v) => Math.max(-S.data.limit, Math.min(S.data.limit, Math.round(v / S.data.step) * S.data.step));
    return [+snap(x).toFixed(6), +snap(y).toFixed(6)];
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
    S.component.setTriggerValue('moved', { a: S.pos.a, b: S.pos.b });
  };
  canvas.addEventListener('pointerdown', (e) => {
    S.drag = near(e);
    if (S.drag) { canvas.setPointerCapture(e.pointerId); e.preventDefault(); }
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!S.drag) { canvas.style.cursor = near(e) ? 'grab' : 'default'; return; }
    const p = toWorld(e);
    if (p[0] === S.pos[S.drag][0] && p[1] === S.pos[S.drag][1]) return;
    S.pos[S.drag] = p; S.stale = true; paint(S);
    const wait = SEND_MS - (performance.now() - S.sent);
    if (wait <= 0) send(); else if (!S.timer) S.timer = setTimeout(send, wait);
  });
  const release = () => {
    if (!S.drag) return;
    S.drag = null;
    if (S.timer) clearTimeout(S.timer);
    send();
  };
  canvas.addEventListener('pointerup', release);
  canvas.addEventListener('pointercancel', release);
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
  const o = [0, 0], d = data.derived, faint = S.stale ? 0.25 : 1, a = S.pos.a, b = S.pos.b;
  arrow(ctx, X, Y, d.a, d.total, mix(WHITE, BLUE, 0.45), 2 * z, [4 * z, 4 * z], faint, z);
  arrow(ctx, X, Y, o, d.total, PURPLE, 2.5 * z, null, faint, z);
  arrow(ctx, X, Y, o, d.scaled, mix(WHITE, ORANGE, 0.55), 2.5 * z, [7 * z, 4 * z], faint, z);
  if (d.projection) {
    arrow(ctx, X, Y, o, d.projection, GREEN, 2.5 * z, null, faint, z);
    ctx.save(); ctx.globalAlpha = faint; ctx.strokeStyle = css(GREEN); ctx.setLineDash([2 * z, 3 * z]);
    ctx.beginPath(); ctx.moveTo(X(d.a[0]), Y(d.a[1])); ctx.lineTo(X(d.projection[0]), Y(d.projection[1])); ctx.stroke();
    ctx.restore();
  }
  arrow(ctx, X, Y, o, a, ORANGE, 3 * z, null, 1, z);
  arrow(ctx, X, Y, o, b, BLUE, 3 * z, null, 1, z);
  ctx.font = `bold ${13 * z}px sans-serif`;
  [['a', a, ORANGE], ['b', b, BLUE]].forEach(([name, p, colour]) => {
    ctx.fillStyle = css(WHITE); ctx.strokeStyle = css(colour); ctx.lineWidth = 2.5 * z;
    ctx.beginPath(); ctx.arc(X(p[0]), Y(p[1]), 7 * z, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
    ctx.fillStyle = css(INK);
    ctx.fillText(`${data.labels[name]} (${p[0].toFixed(1)}, ${p[1].toFixed(1)})`, X(p[0]) + 10 * z, Y(p[1]) - 8 * z);
  });
  S.root.dataset.a = a.join(','); S.root.dataset.b = b.join(',');
  S.root.dataset.paints = String((+S.root.dataset.paints || 0) + 1);
}

export default function (component) {
  const { data, parentElement } = component;
  const S = parentElement.__vpad || (parentElement.__vpad = setup(parentElement));
  S.component = component;
  S.data = data;
  if (!S.drag) { S.pos = { a: data.a.slice(), b: data.b.slice() }; S.stale = false; }
  const zoom = presentCard(S.root, data);
  if (zoom !== S.zoom || S.canvas.width !== Math.round(SIZE * zoom)) {
    S.zoom = zoom; S.canvas.width = S.canvas.height = Math.round(SIZE * zoom);
  }
  S.help.textContent = data.labels.help;
  paint(S);
}
