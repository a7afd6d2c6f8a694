// The class at a glance (labs/classroom/board.py): one tile per student, drawn from {tiles, pick_label}. Each tile is
// a button (a click or Enter shows that student's run to the class: the trigger "pick" with their id); its words are
// set as text, never as markup (a name is what a student typed). The picture: the boundary as a thumbnail (thumb:
// side × side bytes, the second class's probability when k = 1, else the likeliest class), else a sparkline of the
// key figure. PALETTE is prepended by board.py.
const BOARD_CSS = `
.mlsim-board{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:8px}
.mlsim-tile{display:flex;gap:8px;text-align:left;font:inherit;color:inherit;background:transparent;cursor:pointer;
  border:1px solid rgba(128,128,128,.45);border-radius:8px;padding:6px 8px;min-height:24px}
.mlsim-tile:hover{border-color:${PALETTE.blue}}
.mlsim-tile.away{opacity:.55}
.mlsim-tile .who{font-weight:600}
.mlsim-tile .meta{font-size:.8rem;line-height:1.25}
.mlsim-tile .diff{font-size:.75rem;opacity:.85;word-break:break-all}
.mlsim-tile canvas{flex:none;border-radius:4px}`;

function hexRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function drawThumb(canvas, thumb) {
  const side = thumb.side, bytes = Uint8Array.from(atob(thumb.data), (c) => c.charCodeAt(0));
  const ctx = canvas.getContext('2d'), img = ctx.createImageData(side, side);
  const a = hexRgb(PALETTE.orange), b = hexRgb(PALETTE.blue);
  const classes = [PALETTE.orange, PALETTE.blue, PALETTE.green, PALETTE.purple, PALETTE.red].map(hexRgb);
  for (let i = 0; i < side * side; i++) {
    let rgb;
    if (thumb.k === 1) { const p = bytes[i] / 255; rgb = a.map((x, j) => x + (b[j] - x) * p); }
    else rgb = classes[bytes[i] % classes.length];
    img.data.set([rgb[0], rgb[1], rgb[2], 255], i * 4);
  }
  const tmp = document.createElement('canvas');
  tmp.width = tmp.height = side;
  tmp.getContext('2d').putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(tmp, 0, 0, canvas.width, canvas.height);
}

function drawSpark(canvas, values) {
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  if (values.length < 2) return;
  const lo = Math.min(...values), hi = Math.max(...values), span = hi - lo || 1;
  ctx.strokeStyle = PALETTE.blue; ctx.lineWidth = 1.5; ctx.beginPath();
  values.forEach((v, i) => {
    const x = 2 + (i / (values.length - 1)) * (canvas.width - 4), y = 2 + (1 - (v - lo) / span) * (canvas.height - 4);
    if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y);
  });
  ctx.stroke();
}

function line(cls, text) {
  const el = document.createElement('div');
  el.className = cls; el.textContent = text;
  return el;
}

function tileEl(tile, pickLabel, pick) {
  const el = document.createElement('button');
  el.type = 'button';
  el.className = 'mlsim-tile' + (tile.away ? ' away' : '');
  el.dataset.student = tile.id;
  el.setAttribute('aria-label', `${pickLabel}: ${tile.name}`);
  const canvas = document.createElement('canvas');
  if (tile.thumb) { canvas.width = canvas.height = 56; drawThumb(canvas, tile.thumb); }
  else { canvas.width = 56; canvas.height = 32; drawSpark(canvas, tile.spark || []); }
  canvas.setAttribute('aria-hidden', 'true');
  const text = document.createElement('div');
  text.append(line('who', tile.name), line('meta', `${tile.lab} · ${tile.mode}`));
  const numbers = [tile.step, ...tile.figures].filter(Boolean);
  if (numbers.length) text.append(line('meta', numbers.join(' · ')));
  if (tile.diff.length) text.append(line('diff', tile.diff.join(', ')));
  el.append(canvas, text);
  el.addEventListener('click', () => pick(tile.id));
  return el;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  if (!data) return;
  let root = parentElement.querySelector('.mlsim-board');
  if (!root) {
    const style = document.createElement('style');
    style.textContent = BOARD_CSS;
    root = document.createElement('div');
    root.className = 'mlsim-board';
    root.setAttribute('role', 'list');
    parentElement.append(style, root);
  }
  const tiles = data.tiles.map((tile) => {
    const item = document.createElement('div');
    item.setAttribute('role', 'listitem');
    item.append(tileEl(tile, data.pick_label, (id) => setTriggerValue('pick', id)));
    return item;
  });
  const focused = root.contains(document.activeElement) ? document.activeElement.dataset.student : null;
  root.replaceChildren(...tiles);
  if (focused) root.querySelector(`[data-student="${window.CSS.escape(focused)}"]`)?.focus();
  root.dataset.tiles = String(data.tiles.length);
}
