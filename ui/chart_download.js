// A download button under an Altair (Vega-Lite) chart. Streamlit 1.67 turns vega-embed's actions menu off
// ("Save as SVG / PNG"); its own toolbar offers "Download as PNG" only, under a time-stamped name. This saves
// the chart drawn just before it, as it is on screen (its SVG), on a white background, in the session's
// format (?figures=png|svg) and named after the lab and the chart: SVG as it is, PNG at twice the pixels.
// PALETTE (assets/palette.json) is defined before this file by ui/charts.py.
const SVG_NS = 'http://www.w3.org/2000/svg';

// the chart drawn just before `el` on the page (the one ui.charts.altair_chart put above this button)
function chartBefore(el) {
  const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg')]
    .filter((s) => s.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
  return charts[charts.length - 1] || null;
}

function svgText(svg) {
  const copy = svg.cloneNode(true), w = svg.getAttribute('width'), h = svg.getAttribute('height');
  copy.setAttribute('xmlns', SVG_NS);
  const card = document.createElementNS(SVG_NS, 'rect');
  card.setAttribute('width', w); card.setAttribute('height', h); card.setAttribute('fill', PALETTE.white);
  copy.insertBefore(card, copy.firstChild);
  return [new XMLSerializer().serializeToString(copy), +w, +h];
}

function save(href, name) {
  const a = document.createElement('a');
  a.href = href; a.download = name;
  document.body.appendChild(a); a.click(); a.remove();
}

function download(el, data) {
  const svg = chartBefore(el);
  if (!svg) return;
  const [text, w, h] = svgText(svg);
  if (data.format === 'svg') {
    const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
    save(url, data.name + '.svg');
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    return;
  }
  const img = new Image();
  img.onload = () => {
    const out = document.createElement('canvas');
    out.width = Math.round(w * data.scale); out.height = Math.round(h * data.scale);
    const ctx = out.getContext('2d');
    ctx.fillStyle = PALETTE.white; ctx.fillRect(0, 0, out.width, out.height);
    ctx.drawImage(img, 0, 0, out.width, out.height);
    save(out.toDataURL('image/png'), data.name + '.png');
  };
  img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(text);
}

export default function (component) {
  const { data, parentElement } = component;
  let button = parentElement.querySelector('button');
  if (!button) {
    parentElement.innerHTML = `<div style="display:flex;justify-content:flex-end"><button type="button"
      data-testid="chart-download" style="font:12px sans-serif;padding:2px 8px;
      border:1px solid var(--mlsim-line, currentColor);
      border-radius:4px;background:transparent;color:inherit;cursor:pointer"></button></div>`;
    button = parentElement.querySelector('button');
  }
  button.textContent = '\u2913 ' + data.format.toUpperCase();
  button.setAttribute('aria-label', data.format.toUpperCase());
  button.onclick = () => download(parentElement, data);
}
