// Live view of the classification lab: decision boundary, network diagram and loss curve.
// (Colours, decoding, the panel drawings and the frame player come from live_common.js.)

const BOUNDARY = 360;  // the decision boundary's side, px (times the presenter view's zoom)
const NET_HEIGHT = 380;  // the network drawing's height, px (likewise)

function setup(root) {
  root.innerHTML = `<style>${STYLE}${COMMON_STYLE}</style><div class="lv">
    <div class="lv-head">
      <span class="lv-epoch"></span><span class="lv-loss"></span><span class="lv-status"></span>
    </div>
    <div class="lv-body">
      <canvas class="lv-net" data-testid="live-network"></canvas>
      <div class="lv-right">
        <canvas class="lv-boundary" data-testid="live-boundary" width="${BOUNDARY}" height="${BOUNDARY}"></canvas>
        <canvas class="lv-curve" data-testid="live-curve"></canvas>
      </div>
    </div></div>`;
  const q = (s) => root.querySelector(s);
  const S = { root, queue: [], seq: null, raf: 0, lastDraw: 0, data: null, zoom: 1, card: q('.lv'),
              head: { epoch: q('.lv-epoch'), loss: q('.lv-loss'), status: q('.lv-status') },
              net: q('.lv-net'), boundary: q('.lv-boundary'), curve: q('.lv-curve'), liveText: liveText(q('.lv')),
              say: sayFrame };
  withDownload(S.net, () => 'network');
  withDownload(S.boundary, () => 'boundary');
  withDownload(S.curve, () => (S.data && S.data.curve && S.data.curve.title) || 'loss');
  return S;
}

// What a screen reader hears (ui/live_common.js follow, at most once a second while playing, at once when it stops):
// the boundary's name with the architecture and the epoch, and the live text with the frame's losses and accuracy.
const arch = (d) => (d.net ? d.net.sizes.join('-') : '');

function sayFrame(S, f) {
  const L = S.data.labels, epoch = f.epoch.toLocaleString();
  nameCanvas(S.boundary, fillWords(L.a11y_boundary, { arch: arch(S.data), epoch }));
  const acc = f.val_acc === null || f.val_acc === undefined ? ''
    : fillWords(L.a11y_acc, { acc: String(Math.round(f.val_acc * 100)) });
  return fillWords(L.a11y_live, { epoch, train: num(f.train_loss), val: num(f.val_loss), acc });
}

// the network's and the curve's names, when they are drawn (a few times a second at most)
function nameStatic(S) {
  const d = S.data, L = d.labels;
  if (d.net) nameCanvas(S.net, fillWords(L.a11y_net, { arch: arch(d), inputs: d.net.inputs.join(', ') }));
  if (d.curve) {
    const values = panelValues(d.curve, d.a11y || {});
    nameCanvas(S.curve, values ? L.a11y_curve + (d.a11y.then || '; ') + values : L.a11y_curve);
  }
}

// Colour of one grid cell from its channel bytes (1 channel: probability of class 1 or a
// regression value; k channels: class probabilities).
function cellColour(d, px, i) {
  if (d.channels === 1) {
    let v = px[i] / 255;
    if (d.discretize) v = d.problem === 'regression' ? (v < 0.5 ? 0.15 : 0.85) : (v >= d.threshold ? 0.85 : 0.15);
    return diverging(v);
  }
  let best = 0, c = [0, 0, 0];
  for (let j = 0; j < d.channels; j++) {
    const p = px[i * d.channels + j] / 255;
    if (p > px[i * d.channels + best] / 255) best = j;
    c = c.map((x, m) => x + p * CLASS[j][m]);
  }
  const conf = px[i * d.channels + best] / 255, floor = 1 / d.channels;
  const strength = Math.max(0, (conf - floor) / (1 - floor));
  return d.discretize ? mix(WHITE, CLASS[best], 0.65) : mix(WHITE, c, 0.75 * strength);
}

// one offscreen canvas and pixel buffer per grid resolution, kept: a frame reuses them
const GRIDS = new Map();
function gridCanvas(res) {
  let g = GRIDS.get(res);
  if (!g) {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = res;
    const ctx = canvas.getContext('2d');
    g = { canvas, ctx, img: ctx.createImageData(res, res) };
    GRIDS.set(res, g);
  }
  return g;
}

// fade < 1 lightens the picture, so the points drawn on top of the boundary stay visible
function drawGrid(ctx, d, b64, res, x, y, size, fade = 1) {
  const px = bytes(b64), g = gridCanvas(res), out = g.img.data;
  for (let i = 0; i < res * res; i++) {
    const c = fade < 1 ? mix(WHITE, cellColour(d, px, i), fade) : cellColour(d, px, i);
    out[i * 4] = c[0]; out[i * 4 + 1] = c[1]; out[i * 4 + 2] = c[2]; out[i * 4 + 3] = 255;
  }
  g.ctx.putImageData(g.img, 0, 0);
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(g.canvas, x, y, size, size);
}

function drawPoints(ctx, d, xy64, lab64, size, stroke) {
  if (!xy64) return;
  const xy = bytes(xy64), lab = bytes(lab64);
  for (let i = 0; i < lab.length; i++) {
    const colour = d.channels === 1 ? diverging(d.problem === 'regression' ? lab[i] / 255 : lab[i]) : CLASS[lab[i]];
    ctx.beginPath();
    ctx.arc(xy[2 * i] / 255 * size, (1 - xy[2 * i + 1] / 255) * size, 3.5, 0, 2 * Math.PI);
    ctx.fillStyle = css(colour); ctx.fill();
    ctx.lineWidth = 1; ctx.strokeStyle = stroke; ctx.stroke();
  }
}

// what is drawn over the boundary and changes only when new points come (a few times a second): the points and
// the axis numbers, painted once on a transparent layer of their own that every frame copies
function overlay(S, px) {
  const d = S.data, o = S.overlay || (S.overlay = { canvas: document.createElement('canvas') });
  if (o.points === d.points && o.px === px && o.showVal === d.show_val) return o.canvas;
  Object.assign(o, { points: d.points, px, showVal: d.show_val });
  o.canvas.width = o.canvas.height = px;
  const ctx = o.canvas.getContext('2d'), size = BOUNDARY;
  ctx.setTransform(S.zoom, 0, 0, S.zoom, 0, 0);
  if (d.points) {
    drawPoints(ctx, d, d.points.train_xy, d.points.train_y, size, 'white');
    if (d.show_val) drawPoints(ctx, d, d.points.val_xy, d.points.val_y, size, 'black');
  }
  ctx.fillStyle = 'rgba(0,0,0,0.55)'; ctx.font = '11px sans-serif';
  [-6, -3, 0, 3, 6].forEach((v) => {
    const p = (v + 6) / 12 * size;
    ctx.fillText(String(v), Math.min(Math.max(p - 4, 2), size - 12), size - 3);
    ctx.fillText(String(v), 2, Math.min(Math.max(size - p + 4, 10), size - 14));
  });
  return o.canvas;
}

function drawBoundary(S, f) {
  const d = S.data, ctx = S.boundary.getContext('2d'), size = BOUNDARY, px = Math.round(BOUNDARY * S.zoom);
  if (S.boundary.width !== px) S.boundary.width = S.boundary.height = px;
  ctx.setTransform(S.zoom, 0, 0, S.zoom, 0, 0);
  drawGrid(ctx, d, f.grid, d.res, 0, 0, size, 0.62);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.drawImage(overlay(S, px), 0, 0);
  const L = d.labels;
  S.head.epoch.textContent = `${L.epoch} ${f.epoch.toLocaleString()}`;
  const fmt = (v) => (v === null || v === undefined ? '–' : v.toFixed(3));
  S.head.loss.textContent = `${L.train_loss} ${fmt(f.train_loss)}   ${L.val_loss} ${fmt(f.val_loss)}`;
}

function drawNet(S) {
  const n = S.data.net, canvas = S.net;
  const pad = S.zoom > 1 ? 32 : 0;  // the presenter view's card
  const width = Math.max(280, (S.root.clientWidth - pad - S.boundary.width - 24) / S.zoom), H = NET_HEIGHT, box = 34;
  const cw = Math.round(width * S.zoom), ch = Math.round(H * S.zoom);
  if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch; }  // a new size clears it
  const ctx = canvas.getContext('2d');
  ctx.setTransform(S.zoom, 0, 0, S.zoom, 0, 0);
  ctx.clearRect(0, 0, width, H);
  const left = 56, gapX = (width - left - box - 8) / Math.max(1, n.sizes.length - 1);
  const pos = n.sizes.map((m, c) => {
    const gapY = Math.min(box + 12, (H - 24) / m), top = (H - 16 - gapY * (m - 1) - box) / 2;
    return Array.from({ length: m }, (_, r) => [left + c * gapX, top + r * gapY]);
  });
  // links: width and opacity by |w|, colour by sign (blue positive, orange negative)
  n.weights.forEach((W, l) => {
    const nin = n.sizes[l];
    W.forEach((w, idx) => {
      const [x0, y0] = pos[l][idx % nin], [x1, y1] = pos[l + 1][Math.floor(idx / nin)];
      const s = Math.min(1, Math.abs(w) / n.wmax);
      ctx.beginPath();
      ctx.moveTo(x0 + box, y0 + box / 2);
      ctx.bezierCurveTo((x0 + box + x1) / 2, y0 + box / 2, (x0 + box + x1) / 2, y1 + box / 2, x1, y1 + box / 2);
      ctx.lineWidth = 0.5 + 5 * s;
      ctx.strokeStyle = css(w >= 0 ? BLUE : ORANGE);
      ctx.globalAlpha = 0.3 + 0.6 * s;
      ctx.stroke();
    });
  });
  ctx.globalAlpha = 1;
  // nodes: a thumbnail of what each input feature / neuron / output computes over the plane
  const thumb = { channels: 1, problem: 'regression', discretize: false };
  let k = 0;
  pos.forEach((col, c) => col.forEach(([x, y], r) => {
    drawGrid(ctx, thumb, n.thumbs[k++], n.thumbs_res, x, y, box);
    ctx.strokeStyle = PALETTE.neutral; ctx.lineWidth = 1; ctx.strokeRect(x, y, box, box);
    if (c === 0) {
      ctx.fillStyle = PALETTE.ink; ctx.font = '12px sans-serif'; ctx.fillText(n.inputs[r], 4, y + box / 2 + 4);
    }
  }));
  ctx.fillStyle = PALETTE.text; ctx.font = '11px sans-serif';
  pos.forEach((col, c) => ctx.fillText(n.titles[c], col[0][0], H - 4));
}

function drawCurve(S) {
  paintPanel(S.curve, S.data.curve, S.zoom);
}

function render(S, data) {
  const zoom = presentCard(S.card, data, Math.max(BOUNDARY, NET_HEIGHT)), rezoom = zoom !== S.zoom;
  S.zoom = zoom;
  const fresh = data.seq !== S.seq;
  // the points, the network and the curve come only a few times a second while playing: keep the last ones
  const sent = { net: data.net != null, curve: data.curve != null };
  for (const k of ['points', 'net', 'curve']) if (data[k] == null && S.data) data[k] = S.data[k];
  S.data = data;
  play(S, data, drawBoundary);
  if (data.net && ((fresh && sent.net) || rezoom)) drawNet(S);
  if (data.curve && ((fresh && sent.curve) || rezoom)) drawCurve(S);
  if (fresh && (sent.net || sent.curve || !S.net.hasAttribute('aria-label'))) nameStatic(S);
  const status = data.labels.status || '', cls = 'lv-status ' + data.status;  // written only when they change
  if (S.head.status.textContent !== status) S.head.status.textContent = status;
  if (S.head.status.className !== cls) S.head.status.className = cls;
}

export default function (component) {
  return liveComponent(component, setup, render);
}
