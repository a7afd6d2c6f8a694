// Shared by the canvas components: colours, byte decoding, the panels, the frame player and the channel.
// Python sends a few frames (real model snapshots, taken one after another) per update; the player
// shows them at a steady pace, so the picture moves smoothly although every update is a round trip.
// While playing, the browser asks for the next update once it has taken this one in: on the view's
// own channel (a WebSocket to the app, server/live_channel.py) where there is one, else by a trigger
// value, which reruns the fragment. A browser that falls behind asks less often, so a class of slow
// laptops is never sent more than it can draw, and every update carries the newest frames. Nothing
// here computes model output: it only turns bytes and numbers into pixels.
// PALETTE (assets/palette.json) is defined before this file by ui.components.component_script
/* exported rgb, ORANGE, BLUE, WHITE, CLASS, STATS, bytes, mix, css, diverging, paintPanel, COMMON_STYLE, presentCard,
   withDownload, play, liveComponent, fillWords, num, nameCanvas, liveText, follow, panelName, panelValues */
const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const ORANGE = rgb(PALETTE.orange), BLUE = rgb(PALETTE.blue), WHITE = rgb(PALETTE.white);
const CLASS = ['orange', 'blue', 'green', 'purple', 'red'].map((k) => rgb(PALETTE[k]));  // class k's colour
const FRAME_MS = 1000 / 40;  // playback pace; frames beyond a short backlog are skipped
const SLACK_MS = 6;  // animation callbacks arrive irregularly: draw when a frame is nearly due
// counters read by the browser benchmarks: updates received, frames drawn, last epoch
const STATS = (window.__mlsimLive = window.__mlsimLive || { updates: 0, frames: 0, epoch: 0, received: 0, dropped: 0 });

const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const mix = (a, b, t) => [0, 1, 2].map((i) => a[i] + (b[i] - a[i]) * t);
const css = (c) => `rgb(${c[0] | 0},${c[1] | 0},${c[2] | 0})`;
// value in [0, 1] -> orange (0) . white (0.5) . blue (1), as in TensorFlow Playground
const diverging = (v) => (v < 0.5 ? mix(ORANGE, WHITE, v * 2) : mix(WHITE, BLUE, (v - 0.5) * 2));

// ---------- panels (built in Python by sim.plots.panels): one drawing function per type ----------
const PANEL_MARGIN = { left: 54, right: 10, top: 22, bottom: 32 };

// about five round tick values covering [lo, hi]
function ticks(lo, hi) {
  const span = hi - lo || 1, step0 = Math.pow(10, Math.floor(Math.log10(span / 5)));
  const step = [1, 2, 5, 10].map((m) => m * step0).find((s) => span / s <= 6) || step0 * 10;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

const fmtTick = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0)
  ? v.toExponential(0) : String(+v.toPrecision(4)));

function extent(p, axis) {
  const given = p[axis + '_range'];
  if (given) return given;
  let lo = Infinity, hi = -Infinity;
  p.series.forEach((s) => s[axis].forEach((v) => {
    if (v !== null && (axis === 'x' || !p.log_y || v > 0)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  }));
  if (!isFinite(lo)) return [0, 1];
  if (lo === hi) return [lo - 1, hi + 1];
  const pad = axis === 'y' && !p.log_y ? (hi - lo) * 0.05 : 0;
  return [lo - pad, hi + pad];
}

// A legend below the plot area (a panel's legend "below"): the labelled series' keys in rows across the panel's
// width, each row LEGEND_ROW px; the plot area gives up that height. {keys: [{s, x, row}], rows}
const LEGEND_ROW = 14;
function legendBelow(ctx, labelled, W) {
  let x = 14, row = 0;
  const keys = labelled.map((s) => {
    const w = 14 + ctx.measureText(s.label).width + 12;
    if (x > 14 && x + w > W - 4) { x = 14; row += 1; }
    const key = { s, x, row };
    x += w;
    return key;
  });
  return { keys, rows: keys.length ? row + 1 : 0 };
}

function drawXY(ctx, p) {
  const W = p.width, H = p.height;
  ctx.font = '11px sans-serif';
  const labelled = p.series.filter((s) => s.label);
  const below = p.legend === 'below' ? legendBelow(ctx, labelled, W) : null;
  const bottom = PANEL_MARGIN.bottom + (below ? below.rows * LEGEND_ROW : 0);
  const pw = W - PANEL_MARGIN.left - PANEL_MARGIN.right, ph = H - PANEL_MARGIN.top - bottom;
  const [x0, x1] = extent(p, 'x');
  let [y0, y1] = extent(p, 'y');
  const ty = (v) => (p.log_y ? Math.log10(Math.max(v, 1e-12)) : v);
  if (p.log_y) { y0 = ty(y0); y1 = ty(y1); if (y0 === y1) { y0 -= 1; y1 += 1; } }
  const X = (v) => PANEL_MARGIN.left + ((v - x0) / (x1 - x0)) * pw;
  const Y = (v) => PANEL_MARGIN.top + ph - ((ty(v) - y0) / (y1 - y0)) * ph;
  ctx.font = '11px sans-serif'; ctx.fillStyle = PALETTE.text; ctx.strokeStyle = PALETTE.rule; ctx.lineWidth = 1;
  ticks(x0, x1).forEach((v) => {
    const x = X(v);
    ctx.beginPath(); ctx.moveTo(x, PANEL_MARGIN.top); ctx.lineTo(x, PANEL_MARGIN.top + ph); ctx.stroke();
    ctx.fillText(fmtTick(v), x - 8, H - bottom + 13);
  });
  const yTicks = p.log_y ? ticks(y0, y1).filter((v) => Number.isInteger(v)) : ticks(y0, y1);  // decades only
  yTicks.forEach((v) => {
    const y = PANEL_MARGIN.top + ph - ((v - y0) / (y1 - y0)) * ph;
    ctx.beginPath(); ctx.moveTo(PANEL_MARGIN.left, y); ctx.lineTo(PANEL_MARGIN.left + pw, y); ctx.stroke();
    ctx.fillText(p.log_y ? '1e' + v : fmtTick(v), 14, y + 4);
  });
  ctx.strokeStyle = PALETTE.guide; ctx.strokeRect(PANEL_MARGIN.left, PANEL_MARGIN.top, pw, ph);
  ctx.save(); ctx.beginPath(); ctx.rect(PANEL_MARGIN.left, PANEL_MARGIN.top, pw, ph); ctx.clip();
  p.series.forEach((s) => {
    ctx.strokeStyle = ctx.fillStyle = s.color; ctx.lineWidth = s.width; ctx.setLineDash(s.dash ? [5, 4] : []);
    if (s.kind === 'line') {
      ctx.beginPath(); let pen = false;
      s.x.forEach((xv, i) => {
        const yv = s.y[i];
        if (xv === null || yv === null || (p.log_y && yv <= 0)) { pen = false; return; }
        if (pen) ctx.lineTo(X(xv), Y(yv)); else ctx.moveTo(X(xv), Y(yv));
        pen = true;
      });
      ctx.stroke();
    } else {
      s.x.forEach((xv, i) => {
        const yv = s.y[i];
        if (xv === null || yv === null) return;
        ctx.beginPath(); ctx.arc(X(xv), Y(yv), s.size, 0, 2 * Math.PI); ctx.fill();
        if (s.texts) ctx.fillText(s.texts[i], X(xv) + s.size + 2, Y(yv) - s.size);  // a word beside its point
      });
    }
  });
  ctx.restore(); ctx.setLineDash([]);
  ctx.fillStyle = PALETTE.ink; ctx.font = '12px sans-serif'; ctx.fillText(p.title, PANEL_MARGIN.left, 14);
  ctx.fillStyle = PALETTE.text; ctx.font = '11px sans-serif';
  ctx.fillText(p.x_label, PANEL_MARGIN.left + pw / 2 - 20, H - bottom + 29);
  if (p.y_label) {
    ctx.save(); ctx.translate(9, PANEL_MARGIN.top + ph / 2 + 20); ctx.rotate(-Math.PI / 2);
    ctx.fillText(p.y_label, 0, 0); ctx.restore();
  }
  if (below) {  // under the x axis's label, outside the plot area
    const top = H - below.rows * LEGEND_ROW;
    below.keys.forEach(({ s, x, row }) => {
      const ly = top + row * LEGEND_ROW + 10;
      ctx.fillStyle = s.color; ctx.fillRect(x, ly - 5, 10, 3);
      ctx.fillStyle = PALETTE.ink; ctx.fillText(s.label, x + 14, ly);
    });
    return;
  }
  const lw = Math.max(0, ...labelled.map((s) => ctx.measureText(s.label).width)) + 20;  // as wide as its longest
  let ly = PANEL_MARGIN.top + 12;
  labelled.forEach((s) => {
    ctx.fillStyle = s.color; ctx.fillRect(PANEL_MARGIN.left + pw - lw, ly - 7, 10, 3);
    ctx.fillStyle = PALETTE.ink; ctx.fillText(s.label, PANEL_MARGIN.left + pw - lw + 14, ly - 2);
    ly += 13;
  });
}

function drawHeatmap(ctx, p) {
  const rl = p.row_labels ? 44 : 6, top = p.col_labels ? 36 : 20;
  const cw = (p.width - rl - 4) / p.cols, ch = (p.height - top - 4) / p.rows;
  const px = bytes(p.data), mask = p.mask ? bytes(p.mask) : null;
  for (let r = 0; r < p.rows; r++) for (let c = 0; c < p.cols; c++) {
    const i = r * p.cols + c, x = rl + c * cw, y = top + r * ch;
    if (mask && mask[i]) {  // masked: grey with diagonal hatching, never a colour that reads as a weight
      ctx.fillStyle = PALETTE.masked; ctx.fillRect(x, y, cw, ch);
      ctx.strokeStyle = PALETTE.line; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x, y + ch); ctx.lineTo(x + cw, y); ctx.stroke();
      continue;
    }
    const v = px[i] / 255;
    ctx.fillStyle = css(p.colormap === 'diverging' ? diverging(v) : mix(WHITE, BLUE, v));
    ctx.fillRect(x, y, cw + 0.5, ch + 0.5);
    if (p.text && cw > 26 && ch > 13) {
      ctx.fillStyle = v > 0.6 ? PALETTE.white : PALETTE.ink; ctx.font = '10px sans-serif';
      ctx.fillText(p.text[i], x + 3, y + ch / 2 + 4);
    }
  }
  ctx.fillStyle = PALETTE.ink; ctx.font = '11px sans-serif';
  if (p.row_labels) p.row_labels.forEach((l, r) => ctx.fillText(String(l).slice(0, 6), 2, top + r * ch + ch / 2 + 4));
  if (p.col_labels) p.col_labels.forEach((l, c) => {
    ctx.save(); ctx.translate(rl + c * cw + cw / 2 + 3, top - 3); ctx.rotate(-Math.PI / 3);
    ctx.fillText(String(l).slice(0, 6), 0, 0); ctx.restore();
  });
  ctx.fillStyle = PALETTE.ink; ctx.font = '12px sans-serif'; ctx.fillText(p.title, rl, 13);
}

// a panel of any type, on a canvas made its size (times `zoom`: the presenter view draws everything larger)
function paintPanel(canvas, p, zoom = 1) {
  const W = Math.round(p.width * zoom), H = Math.round(p.height * zoom);
  if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(zoom, 0, 0, zoom, 0, 0);
  (p.type === 'heatmap' ? drawHeatmap : drawXY)(ctx, p);
}

// ---------- the presenter view, and figures for slides ----------
// In the presenter view (?present=1; every canvas component's data says so in `present`) a component sits on
// a white card and draws its canvases PRESENT_ZOOM times larger, so its 10-12 px text reads at 18-22 px. Every
// canvas has a small download button (shown on hover, like Plotly's modebar) that saves what is on screen as
// PNG, on white: a transparent picture is lost on a dark slide.
const PRESENT_ZOOM = 1.8;
const PRESENT_MAX_HEIGHT = 0.55; // of the window: ui/present.py's canvas max-height (55vh)
const COMMON_STYLE = `
.mlsim-fig { position: relative; display: inline-block; line-height: 0; }
.mlsim-fig > .mlsim-dl { position: absolute; top: 4px; right: 4px; opacity: 0; transition: opacity 0.15s;
  font: 12px sans-serif; line-height: 1.3; padding: 2px 7px; border: 1px solid var(--mlsim-line); border-radius: 4px;
  background: var(--mlsim-white); color: var(--mlsim-ink); cursor: pointer; }
.mlsim-fig:hover > .mlsim-dl, .mlsim-fig > .mlsim-dl:focus { opacity: 1; }
.mlsim-present { background: var(--mlsim-white); color: var(--mlsim-black); padding: 12px 16px; border-radius: 8px; }
.mlsim-sr { position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0; }
`;

// mark `el` as the presenter view's card (or not: data.present, from ui.components.live_component); the zoom
// its canvases are drawn at
// the zoom: PRESENT_ZOOM, less where the component's tallest canvas (`tallest` px before the zoom) would be taller than
// the presenter style shows a canvas: it is drawn at the size it is shown, not drawn large and scaled down
function presentCard(el, data, tallest = 0) {
  const on = Boolean(data && data.present);
  el.classList.toggle('mlsim-present', on);
  if (!on) return 1;
  return tallest > 0 ? Math.max(1, Math.min(PRESENT_ZOOM, PRESENT_MAX_HEIGHT * window.innerHeight / tallest))
    : PRESENT_ZOOM;
}

const slug = (s) => String(s || '').replace(/[^\p{L}\p{N}_]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 60);

// "<lab>-<name>": the lab from the page's address (/classification), the name from the panel
function figureName(name) {
  const lab = window.location.pathname.split('/').filter(Boolean).pop() || '';
  return [slug(lab), slug(name)].filter(Boolean).join('-') || 'figure';
}

// the canvas as a PNG data URL, composited on white
function canvasPNG(canvas) {
  const out = document.createElement('canvas');
  out.width = canvas.width; out.height = canvas.height;
  const ctx = out.getContext('2d');
  ctx.fillStyle = PALETTE.white; ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(canvas, 0, 0);
  return out.toDataURL('image/png');
}

function downloadCanvas(canvas, name) {
  const a = document.createElement('a');
  a.href = canvasPNG(canvas); a.download = figureName(name) + '.png';
  document.body.appendChild(a); a.click(); a.remove();
}

// wrap `canvas` (already in the page, or not yet) in a box with its download button; name() is read on click
function withDownload(canvas, name) {
  const box = document.createElement('div');
  box.className = 'mlsim-fig';
  if (canvas.parentNode) canvas.parentNode.insertBefore(box, canvas);
  box.appendChild(canvas);
  const button = document.createElement('button');
  button.type = 'button'; button.className = 'mlsim-dl'; button.textContent = '\u2913 PNG';
  button.setAttribute('aria-label', 'PNG'); button.dataset.testid = 'canvas-download';
  button.onclick = (e) => { e.stopPropagation(); downloadCanvas(canvas, name()); };
  box.appendChild(button);
  return box;
}

// ---------- what a screen reader hears: the canvases' names and the live text ----------
// The words come from Python in the page's language (templates with {placeholders}); the numbers from the frame drawn.
const SAY_MS = 1000;  // the live text follows a moving view at most once a second
const fillWords = (text, values) => String(text || '').replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));
// a number as the live text says it: 3 significant digits (0.3142 -> 0.314, 1234.5 -> 1.23e+3 stays readable)
const num = (v) => (v === null || v === undefined || !Number.isFinite(+v) ? '–'
  : Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? (+v).toExponential(2) : String(+(+v).toPrecision(3)));

// the canvas is a picture named `text` (written only when it changed); a canvas given another role (one that takes
// the keyboard) keeps it
function nameCanvas(canvas, text) {
  if (!canvas.hasAttribute('role')) canvas.setAttribute('role', 'img');
  if (text && canvas.getAttribute('aria-label') !== text) canvas.setAttribute('aria-label', text);
}

// the view's polite live region: visually hidden, read by screen readers (one per view, appended to `parent`)
function liveText(parent) {
  const p = document.createElement('p');
  p.className = 'mlsim-sr'; p.dataset.testid = 'live-text';
  p.setAttribute('role', 'status'); p.setAttribute('aria-live', 'polite'); p.setAttribute('aria-atomic', 'true');
  parent.appendChild(p);
  return p;
}

// The view drew `frame`: its live text (S.say(S, frame), which may also rename its canvases) follows at most once
// every SAY_MS while it moves, the newest frame's when the time comes, and at once when it stops (`final`: the end
// of a run, a pause, a step).
function follow(S, frame, final) {
  if (!S.say || !S.liveText) return;
  S.sayFrame = frame;
  const wait = SAY_MS - (performance.now() - (S.saidAt === undefined ? -Infinity : S.saidAt));
  if (final || wait <= 0) { clearTimeout(S.sayTimer); S.sayTimer = 0; speak(S); }
  else if (!S.sayTimer) S.sayTimer = setTimeout(() => { S.sayTimer = 0; speak(S); }, wait);
}

function speak(S) {
  S.saidAt = performance.now();
  const text = S.say(S, S.sayFrame) || '';
  if (S.liveText.textContent !== text) S.liveText.textContent = text;
}

// a panel's name (W: the words, ui/live_plots.py's a11y_words): "Loss: loss against step, step 120; Adam 0.31, ..."
function panelName(p, W, step) {
  const title = p.title || p.y_label || '';
  let text = p.type === 'heatmap'
    ? fillWords(W.heatmap, { title, rows: p.rows, cols: p.cols })
    : fillWords(W.xy, { title, x: p.x_label || '', y: p.y_label || p.title || '' });
  if (step !== undefined && step !== null) text += fillWords(W.at, { step: Number(step).toLocaleString() });
  const values = panelValues(p, W);
  return values ? text + (W.then || '; ') + values : text;
}

// the newest value of each labelled line of an xy panel: "Adam 0.31, SGD 0.52" ('' for none, and for heatmaps)
function panelValues(p, W) {
  if (p.type === 'heatmap') return '';
  return p.series.filter((s) => s.label && s.kind === 'line').map((s) => {
    let i = s.y.length - 1;
    while (i >= 0 && (s.y[i] === null || s.y[i] === undefined)) i--;
    return i < 0 ? '' : fillWords(W.value, { name: s.label, value: num(s.y[i]) });
  }).filter(Boolean).join(W.sep || ', ');
}

// Queue the frames of a new update and keep one animation loop running that draws them; while playing,
// ask for the next update at the next animation frame (a browser too busy to paint does not ask).
// S is the component's persistent state (kept on its root element); drawFrame(S, frame) paints.
function play(S, data, drawFrame) {
  if (data.seq !== S.seq) {
    S.seq = data.seq;
    STATS.updates++;
    const last = data.frames[data.frames.length - 1];
    if (last && last.epoch !== undefined) STATS.epoch = last.epoch;
    // frames carry their run and number (run, n): an update with nothing new repeats the newest frame,
    // and a frame already queued or drawn is dropped here
    const seen = (f) => f.run !== undefined && f.run === S.lastRun && f.n <= S.lastN;
    const fresh = data.status === 'playing' ? data.frames.filter((f) => !seen(f)) : data.frames.slice(-1);
    if (last && last.run !== undefined) { S.lastRun = last.run; S.lastN = last.n; }
    S.queue.push(...fresh);
    STATS.received += fresh.length;
    if (S.queue.length > 8) STATS.dropped += S.queue.splice(0, S.queue.length - 3).length;
    S.wantMore = data.status === 'playing'; S.status = data.status;
    if (!S.wantMore) STATS.dropped += S.queue.splice(0, S.queue.length - 1).length;
    else requestAnimationFrame(() => ask(S, data.seq));
    askWhenIdle(S);
  }
  // the loop runs only while frames wait: an empty queue ends it (a paused or idle view asks the browser for no
  // animation frames at all), and the next update starts it again
  const tick = (t) => {
    if (!S.queue.length) { S.raf = 0; return; }
    S.raf = requestAnimationFrame(tick);
    if (t - S.lastDraw < FRAME_MS - SLACK_MS) return;
    S.lastDraw = t;
    const frame = S.queue.shift();
    drawFrame(S, frame);
    STATS.frames++;
    follow(S, frame, S.status !== 'playing' && !S.queue.length);  // its live text (once a second; and when it stops)
    // any live view's step, where a browser measurement reads it (measure_classroom.py)
    const step = frame.step !== undefined ? frame.step : frame.epoch;
    if (step !== undefined) S.root.dataset.liveStep = step;
  };
  if (!S.raf && S.queue.length) S.raf = requestAnimationFrame(tick);
  return () => { cancelAnimationFrame(S.raf); S.raf = 0; };
}

// ---------- the view's channel (server/live_channel.py) ----------
// Where the app serves one, the component's data names it (channel: {path, token}): a WebSocket of this
// view's own, on which it asks for each next update ("next") once it has taken the last one in. An
// update is what the lab's show() gives the component in a rerun, so it is drawn the same way. The
// token travels as the socket's second subprotocol (a header), never in a URL. Without a channel
// (AppTest, a bare script), while it opens, or once it is refused or lost, the view asks by its
// "pull" trigger, which reruns the fragment; that rerun brings the channel again (a new token when
// the old one is gone).
const CHANNEL_PROTOCOL = 'mlsim.live';
const ASK_AGAIN_MS = 5000;  // an answer this late is taken as lost: ask again
// A view that is not playing tells its channel this often what it shows ("shows <run> <step> <status>"), and gets
// its run's update if that moved without it (a click's page rerun that never arrived: said twice in a row), else
// {idle: true}. Without a channel it does not ask.
const IDLE_ASK_MS = 2000;
// A move the channel brought while the page showed another status: the page missed a rerun, and its buttons and
// messages are rerun (the view's fragment) unless the page's own rerun brings them within this time.
const PAGE_CATCH_UP_MS = 3000;

function askWhenIdle(S) {
  clearTimeout(S.idleTimer);
  if (S.wantMore) return;
  S.idleTimer = setTimeout(() => {
    if (S.wantMore || !S.root.isConnected) return;
    const ws = S.ws, now = performance.now();
    if (ws && ws.readyState === WebSocket.OPEN && (!S.waiting || now - S.askedAt > ASK_AGAIN_MS)) {
      S.waiting = true; S.askedAt = now;
      const shown = (x) => (x === undefined ? '-' : x);
      ws.send(`shows ${shown(S.lastRun)} ${shown(S.lastN)} ${S.status}`);
    } else askWhenIdle(S);
  }, IDLE_ASK_MS);
}

// the channel brought an update the page's own rerun did not: rerun the view's fragment if the page still shows
// another status after a moment (its own rerun may be on its way)
function pageFollows(S, data) {
  if (data.status === S.pageStatus) return;
  const seq = S.pageSeq;
  setTimeout(() => {
    if (S.pageSeq === seq && data.status !== S.pageStatus) S.component.setTriggerValue('pull', data.seq);
  }, PAGE_CATCH_UP_MS);
}

function ask(S, seq) {
  const ws = S.ws;
  if (ws && ws.readyState === WebSocket.OPEN) {
    const now = performance.now();
    if (!S.waiting || now - S.askedAt > ASK_AGAIN_MS) { S.waiting = true; S.askedAt = now; ws.send('next'); }
  } else if (!ws || ws.readyState !== WebSocket.CONNECTING) {
    S.component.setTriggerValue('pull', seq);
  }  // still opening: it asks once open
}

function connect(S, channel) {
  if (!channel || typeof WebSocket === 'undefined' || channel.token === S.refused) return;
  if (S.ws && S.wsToken === channel.token) return;
  if (S.ws) S.ws.close();
  const url = (window.location.protocol === 'https:' ? 'wss://' : 'ws://') + window.location.host + channel.path;
  const ws = new WebSocket(url, [CHANNEL_PROTOCOL, channel.token]);
  let opened = false;
  S.ws = ws; S.wsToken = channel.token; S.waiting = false;
  ws.onopen = () => {
    opened = true; STATS.channels = (STATS.channels || 0) + 1;
    if (S.wantMore) ask(S, S.seq);
  };
  ws.onmessage = (ev) => {
    S.waiting = false;
    const data = JSON.parse(ev.data);
    if (data.idle) { askWhenIdle(S); return; }
    STATS.channelUpdates = (STATS.channelUpdates || 0) + 1;
    S.render(S, data);
    if (data.rerun) S.component.setTriggerValue('pull', data.seq);  // it stopped by itself: the page follows
    else pageFollows(S, data);
  };
  ws.onclose = () => {
    if (S.ws !== ws) return;
    S.ws = null; S.waiting = false;
    if (!opened) S.refused = channel.token;
    if (S.wantMore) S.component.setTriggerValue('pull', S.seq);
  };
}

// A live canvas component: setup(root) once (its state S, kept on the root element), render(S, data) for
// each update, from Streamlit or from the channel. component is what Streamlit passed to the component's
// function (its setTriggerValue asks for a rerun).
function liveComponent(component, setup, render) {
  const { data, parentElement } = component;
  const S = parentElement.__live || (parentElement.__live = setup(parentElement));
  S.component = component; S.render = render;
  S.pageStatus = data.status; S.pageSeq = data.seq;  // what the page's own rerun shows (pageFollows)
  render(S, data);
  connect(S, data.channel);
  askWhenIdle(S);
  return () => {
    cancelAnimationFrame(S.raf); S.raf = 0; clearTimeout(S.idleTimer); clearTimeout(S.sayTimer); S.sayTimer = 0;
    setTimeout(() => { if (S.ws && !S.root.isConnected) { S.ws.close(); S.ws = null; } }, 1000);  // unmounted
  };
}
