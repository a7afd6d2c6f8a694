// Generic live view: each frame holds panels ("xy" charts and "heatmap"s) drawn side by side.
// (Colours, decoding, the panel drawings and the frame player come from live_common.js.)
function setupPlots(root) {
  root.innerHTML = `<style>${STYLE}</style><div class="lp-caption"></div><div class="lp-panels"></div>`;
  return { root, queue: [], seq: null, raf: 0, lastDraw: 0, caption: root.querySelector('.lp-caption'),
           box: root.querySelector('.lp-panels'), canvases: [] };
}

function drawPlots(S, frame) {
  S.caption.textContent = frame.caption || '';
  frame.panels.forEach((p, k) => {
    let cv = S.canvases[k];
    if (!cv) { cv = S.canvases[k] = document.createElement('canvas'); cv.dataset.testid = 'live-panel-' + k; S.box.appendChild(cv); }
    paintPanel(cv, p);
  });
  while (S.canvases.length > frame.panels.length) S.canvases.pop().remove();
}

export default function (component) {
  const { data, parentElement } = component;
  const S = parentElement.__plots || (parentElement.__plots = setupPlots(parentElement));
  S.caption.className = 'lp-caption ' + data.status;
  return play(S, data, drawPlots, component);
}
