// Presenter view's keyboard shortcuts: space Play/Pause, ArrowRight Step, r Reset. They press the live
// view's own buttons (keys "<run>.play", the one Play/Pause button, "<run>.step" and "<run>.reset" in
// ui/live_run.py; Streamlit gives each keyed element the class st-key-<key> with dots written as dashes), so a
// shortcut does exactly what a click does.
const ACTIONS = { ' ': ['play'], 'ArrowRight': ['step'], 'r': ['reset'], 'R': ['reset'] };
// a focused element that takes these keys itself: one that says so (data-own-keys: the foundations lab's vector pad,
// whose arrow keys move a point and whose space switches it), a slider (its arrows move it), a tab (its arrows)
const OWN_KEYS = '[data-own-keys], [role="slider"], [role="tab"]';

function runButton(kind) {
  const re = new RegExp('(^|\\s)st-key-\\S+-' + kind + '(\\s|$)');
  for (const el of document.querySelectorAll('[class*="st-key-"]')) {
    if (!re.test(el.className)) continue;
    const b = el.querySelector('button');
    if (b && !b.disabled) return b;
  }
  return null;
}

function onKey(e) {
  const tag = (e.target && e.target.tagName) || '';
  if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(tag)
      || (e.target && e.target.isContentEditable) || (e.target && e.target.closest && e.target.closest(OWN_KEYS))) {
    return;
  }
  const kinds = ACTIONS[e.key];
  if (!kinds) return;
  for (const kind of kinds) {
    const b = runButton(kind);
    if (b) { e.preventDefault(); b.click(); return; }
  }
}

export default function () {
  if (!window.__mlsimPresentKeys) {  // once per page, however often the component is redrawn
    window.__mlsimPresentKeys = true;
    document.addEventListener('keydown', onKey, true);
  }
}
