// What a screen reader and a keyboard need of every page that only the browser can set (ui/layout.py mounts it on
// every run, hidden, in the sidebar). Python sends {lang}: the page's language as <html lang> takes it ("zh-CN", "en").
// - <html lang> is the page's language: Streamlit's page says "en" whatever it shows, so a screen reader read the
//   Chinese pages with an English voice (WCAG 3.1.1).
// - The sidebar's menu is a valid list: Streamlit puts each menu section (its header and its <li>s) in a <div> inside
//   the <ul> (axe's rules "list" and "listitem"; a bare Streamlit app with a sectioned st.navigation has the same).
//   The section's <div> becomes an item of the list, holding its header and its links.
// - A formula or a code block wider than its column scrolls sideways (Streamlit's CSS): it takes the keyboard's focus
//   then, so the arrow keys scroll it (axe's "scrollable-region-focusable").
// Streamlit redraws the page and may write the lang back: a MutationObserver (one per page) sets all of it again, at
// most once a frame.
const MENU = '[data-testid="stSidebarNavItems"]';
const SCROLLERS = '.katex-display, [data-testid="stCode"] pre';
const STATE = (window.__mlsimA11y = window.__mlsimA11y || { lang: null, observer: null, queued: false });

function apply() {
  STATE.queued = false;
  const root = document.documentElement;
  if (STATE.lang && root.lang !== STATE.lang) root.lang = STATE.lang;
  for (const section of document.querySelectorAll(`${MENU} > div:not([role])`)) {
    section.setAttribute('role', 'listitem');
  }
  for (const li of document.querySelectorAll(`${MENU} > div > li:not([role])`)) li.setAttribute('role', 'none');
  for (const el of document.querySelectorAll(SCROLLERS)) {
    const wide = el.scrollWidth > el.clientWidth + 1;
    if (wide && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      el.dataset.mlsimScroll = '1';
    } else if (!wide && el.dataset.mlsimScroll) {  // only a tab stop of ours is taken back
      el.removeAttribute('tabindex');
      delete el.dataset.mlsimScroll;
    }
  }
}

function schedule() {
  if (STATE.queued) return;
  STATE.queued = true;
  window.requestAnimationFrame(apply);
}

export default function (component) {
  const { data } = component;
  if (!data || typeof data.lang !== 'string') return;
  STATE.lang = data.lang;
  apply();
  if (!STATE.observer) {
    STATE.observer = new MutationObserver(schedule);
    STATE.observer.observe(document.documentElement, { subtree: true, childList: true, attributes: true,
      attributeFilter: ['lang'] });
    window.addEventListener('resize', schedule);
  }
}
