// Generic live view: each frame holds panels ("xy" charts and "heatmap"s) drawn side by side.
// (Colours, decoding and the frame player come from live_common.js.)
const MARGIN = { left: 54, right: 10, top: 22, bottom: 32 };

function setupPlots(root) {
  root.innerHTML = `<style>${STYLE}</style><div class="lp-caption"></div><div class="lp-panels"></div>`;
  return { root, queue: [], seq: null, raf: 0, lastDraw: 0, caption: root.querySelector('.lp-caption'),
           box: root.querySelector('.lp-panels'), canvases: [] };
}

// about five round tick values covering [lo, hi]
function ticks(lo, hi) {
  const span = hi - lo || 1, step0 = Math.pow(10, Math.floor(Math.log10(span / 5)));
  const step = [1, 2, 5, 10].map((m) => m * step0).find((s) => span / s <= 6) || step0 * 10;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

const fmtTick = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(0) : String(+v.toPrecision(4)));

function extent(p, axis) {
  const given = p[axis + '_range'];
  if (given) return given;
  let lo = Infinity, hi = -Infinity;
  p.series.forEach((s) => s[axis].forEach((v) => { if (v !== null && (axis === 'x' || !p.log_y || v > 0)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }));
  if (!isFinite(lo)) return [0, 1];
  if (lo === hi) return [lo - 1, hi + 1];
  const pad = axis === 'y' && !p.log_y ? (hi - lo) * 0.05 : 0;
  return [lo - pad, hi + pad];
}

function drawXY(ctx, p) {
  const W = p.width, H = p.height, pw = W - MARGIN.left - MARGIN.right, ph = H - MARGIN.top - MARGIN.bottom;
  const [x0, x1] = extent(p, 'x');
  let [y0, y1] = extent(p, 'y');
  const ty = (v) => (p.log_y ? Math.log10(Math.max(v, 1e-12)) : v);
  if (p.log_y) { y0 = ty(y0); y1 = ty(y1); if (y0 === y1) { y0 -= 1; y1 += 1; } }
  const X = (v) => MARGIN.left + ((v - x0) / (x1 - x0)) * pw;
  const Y = (v) => MARGIN.top + ph - ((ty(v) - y0) / (y1 - y0)) * ph;
  ctx.font = '11px sans-serif'; ctx.fillStyle = '#555'; ctx.strokeStyle = '#eee'; ctx.lineWidth = 1;
  ticks(x0, x1).forEach((v) => { const x = X(v); ctx.beginPath(); ctx.moveTo(x, MARGIN.top); ctx.lineTo(x, MARGIN.top + ph); ctx.stroke(); ctx.fillText(fmtTick(v), x - 8, H - MARGIN.bottom + 13); });
  const yTicks = p.log_y ? ticks(y0, y1).filter((v) => Number.isInteger(v)) : ticks(y0, y1);  // decades only
  yTicks.forEach((v) => { const y = MARGIN.top + ph - ((v - y0) / (y1 - y0)) * ph; ctx.beginPath(); ctx.moveTo(MARGIN.left, y); ctx.lineTo(MARGIN.left + pw, y); ctx.stroke(); ctx.fillText(p.log_y ? '1e' + v : fmtTick(v), 14, y + 4); });
  ctx.strokeStyle = '#999'; ctx.strokeRect(MARGIN.left, MARGIN.top, pw, ph);
  ctx.save(); ctx.beginPath(); ctx.rect(MARGIN.left, MARGIN.top, pw, ph); ctx.clip();
  p.series.forEach((s) => {
    ctx.strokeStyle = ctx.fillStyle = s.color; ctx.lineWidth = s.width; ctx.setLineDash(s.dash ? [5, 4] : []);
    if (s.kind === 'line') {
      ctx.beginPath(); let pen = false;
      s.x.forEach((xv, i) => { const yv = s.y[i]; if (xv === null || yv === null || (p.log_y && yv <= 0)) { pen = false; return; }
        pen ? ctx.lineTo(X(xv), Y(yv)) : ctx.moveTo(X(xv), Y(yv)); pen = true; });
      ctx.stroke();
    } else {
      s.x.forEach((xv, i) => { const yv = s.y[i]; if (xv === null || yv === null) return; ctx.beginPath(); ctx.arc(X(xv), Y(yv), s.size, 0, 2 * Math.PI); ctx.fill(); });
    }
  });
  ctx.restore(); ctx.setLineDash([]);
  ctx.fillStyle = '#222'; ctx.font = '12px sans-serif'; ctx.fillText(p.title, MARGIN.left, 14);
  ctx.fillStyle = '#555'; ctx.font = '11px sans-serif'; ctx.fillText(p.x_label, MARGIN.left + pw / 2 - 20, H - 3);
  if (p.y_label) { ctx.save(); ctx.translate(9, MARGIN.top + ph / 2 + 20); ctx.rotate(-Math.PI / 2); ctx.fillText(p.y_label, 0, 0); ctx.restore(); }
  const labelled = p.series.filter((s) => s.label);  // legend, as wide as its longest label
  const lw = Math.max(0, ...labelled.map((s) => ctx.measureText(s.label).width)) + 20;
  let ly = MARGIN.top + 12;
  labelled.forEach((s) => { ctx.fillStyle = s.color; ctx.fillRect(MARGIN.left + pw - lw, ly - 7, 10, 3); ctx.fillStyle = '#333'; ctx.fillText(s.label, MARGIN.left + pw - lw + 14, ly - 2); ly += 13; });
}

function drawHeatmap(ctx, p) {
  const rl = p.row_labels ? 44 : 6, top = p.col_labels ? 36 : 20;
  const cw = (p.width - rl - 4) / p.cols, ch = (p.height - top - 4) / p.rows;
  const px = bytes(p.data), mask = p.mask ? bytes(p.mask) : null;
  for (let r = 0; r < p.rows; r++) for (let c = 0; c < p.cols; c++) {
    const i = r * p.cols + c, x = rl + c * cw, y = top + r * ch;
    if (mask && mask[i]) {  // masked: grey with diagonal hatching, never a colour that reads as a weight
      ctx.fillStyle = '#d9d9d9'; ctx.fillRect(x, y, cw, ch);
      ctx.strokeStyle = '#a0a0a0'; ctx.lineWidth = 1; ctx.beginPath(); ctx.moveTo(x, y + ch); ctx.lineTo(x + cw, y); ctx.stroke();
      continue;
    }
    const v = px[i] / 255;
    ctx.fillStyle = css(p.colormap === 'diverging' ? diverging(v) : mix(WHITE, BLUE, v));
    ctx.fillRect(x, y, cw + 0.5, ch + 0.5);
    if (p.text && cw > 26 && ch > 13) { ctx.fillStyle = v > 0.6 ? '#fff' : '#222'; ctx.font = '10px sans-serif'; ctx.fillText(p.text[i], x + 3, y + ch / 2 + 4); }
  }
  ctx.fillStyle = '#333'; ctx.font = '11px sans-serif';
  if (p.row_labels) p.row_labels.forEach((l, r) => ctx.fillText(String(l).slice(0, 6), 2, top + r * ch + ch / 2 + 4));
  if (p.col_labels) p.col_labels.forEach((l, c) => { ctx.save(); ctx.translate(rl + c * cw + cw / 2 + 3, top - 3); ctx.rotate(-Math.PI / 3); ctx.fillText(String(l).slice(0, 6), 0, 0); ctx.restore(); });
  ctx.fillStyle = '#222'; ctx.font = '12px sans-serif'; ctx.fillText(p.title, rl, 13);
}

function drawPlots(S, frame) {
  S.caption.textContent = frame.caption || '';
  frame.panels.forEach((p, k) => {
    let cv = S.canvases[k];
    if (!cv) { cv = S.canvases[k] = document.createElement('canvas'); cv.dataset.testid = 'live-panel-' + k; S.box.appendChild(cv); }
    if (cv.width !== p.width || cv.height !== p.height) { cv.width = p.width; cv.height = p.height; }
    const ctx = cv.getContext('2d');
    ctx.clearRect(0, 0, cv.width, cv.height);
    (p.type === 'heatmap' ? drawHeatmap : drawXY)(ctx, p);
  });
  while (S.canvases.length > frame.panels.length) S.canvases.pop().remove();
}

export default function (component) {
  const { data, parentElement } = component;
  const S = parentElement.__plots || (parentElement.__plots = setupPlots(parentElement));
  S.caption.className = 'lp-caption ' + data.status;
  return play(S, data, drawPlots, component);
}
