// Generic live view: each frame holds panels ("xy" charts and "heatmap"s) drawn side by side.
// (Colours, decoding, the panel drawings, the frame player and the presenter view come from live_common.js.)
function setupPlots(root) {
  root.innerHTML = `<style>${STYLE}${COMMON_STYLE}</style>`
    + '<div class="lp"><div class="lp-caption"></div><div class="lp-panels"></div></div>';
  return { root, queue: [], seq: null, raf: 0, lastDraw: 0, data: null, card: root.querySelector('.lp'),
           caption: root.querySelector('.lp-caption'), box: root.querySelector('.lp-panels'), canvases: [],
           panels: [], liveText: liveText(root.querySelector('.lp')), say: sayPlots };
}

const stepOf = (frame) => (frame.step !== undefined ? frame.step : frame.epoch);

// What a screen reader hears of a frame (ui/live_common.js follow): the canvases' names, and the live text: the
// caption where it carries the run's numbers, else the step and each chart's newest values.
function sayPlots(S, frame) {
  const W = (S.data && S.data.a11y) || {}, step = stepOf(frame);
  frame.panels.forEach((p, k) => { if (S.canvases[k]) nameCanvas(S.canvases[k], panelName(p, W, step)); });
  const caption = (frame.caption || '').replace(/\s*\n\s*/g, ' · ').trim();  // on one line
  if ((caption.match(/\d+(?:[.,]\d+)?/g) || []).length >= 2) return caption;
  const parts = [caption || (step !== undefined ? fillWords(W.step, { step: Number(step).toLocaleString() }) : '')];
  frame.panels.forEach((p) => {
    const values = panelValues(p, W);
    if (values) parts.push(p.title ? fillWords(W.panel, { title: p.title, values }) : values);
  });
  return parts.filter(Boolean).join(W.join || '. ');
}

function drawPlots(S, frame) {
  const zoom = presentCard(S.card, S.data, Math.max(0, ...frame.panels.map((p) => p.height)));  // this frame's panels
  const caption = frame.caption || '';
  if (S.caption.textContent !== caption) S.caption.textContent = caption;  // a change lays out the page around it
  frame.panels.forEach((p, k) => {
    let cv = S.canvases[k];
    if (!cv) {
      cv = S.canvases[k] = document.createElement('canvas'); cv.dataset.testid = 'live-panel-' + k;
      S.box.appendChild(withDownload(cv, () => S.panels[k].title || 'panel-' + k));
      nameCanvas(cv, panelName(p, (S.data && S.data.a11y) || {}, stepOf(frame)));  // named from the start
    }
    S.panels[k] = p;
    paintPanel(cv, p, zoom);
  });
  while (S.canvases.length > frame.panels.length) { S.canvases.pop().parentNode.remove(); S.panels.pop(); }
}

function renderPlots(S, data) {
  S.data = data;
  presentCard(S.card, data);
  const cls = 'lp-caption ' + data.status;
  if (S.caption.className !== cls) S.caption.className = cls;
  play(S, data, drawPlots);
}

export default function (component) {
  return liveComponent(component, setupPlots, renderPlots);
}
