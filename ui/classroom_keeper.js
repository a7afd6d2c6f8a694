// Classroom mode's memory in the browser (ui/classroom.py mounts it on every run, zero height).
// - This browser's id: random, made once and kept in localStorage (shared by every tab of the browser), so a
//   student's answers and the rate limit count per browser, not per tab. Not a secret.
// - The class this tab teaches, {code, secret}, in sessionStorage: it survives a reload of this tab (and the
//   browser reopening the closed tab), but another tab or window of the app starts without it, so it does not
//   become a second teacher by accident (a duplicated tab copies it: the server then gives the class to the
//   tab that hands it back last, see server.classroom.Classroom.resume). It is never put in a URL.
// Python sends {n, teacher, drop, ask}: n is its session's random nonce, teacher the pair to keep (while this
// tab teaches), drop true once the class ended or was lost, ask true while the session is a student's. Once
// per session (per n), if the tab keeps a pair or the session asks, this hands back {browser, class}: the id,
// and the pair it keeps, which the server checks against the class store. (Handing back reruns the page: a
// session outside any class, with nothing kept, is spared that.)
const BROWSER = 'mlsim.browser', TEACHER = 'mlsim.class';
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';  // 64: no bias from bytes
const ID_LEN = 22;  // server.classroom.BROWSER_ID_LEN
const KEEPER = (window.__mlsimClassKeeper = window.__mlsimClassKeeper || { sent: new Set(), id: null });

function read(storage, key) {
  try { return window[storage].getItem(key); } catch { return null; }  // storage off (privacy settings)
}

function write(storage, key, value) {
  try {
    if (value === null) window[storage].removeItem(key); else window[storage].setItem(key, value);
  } catch { /* storage off */ }
}

function browserId() {
  const kept = read('localStorage', BROWSER);
  if (kept && kept.length === ID_LEN && [...kept].every((c) => ID_ALPHABET.includes(c))) return kept;
  if (!KEEPER.id) {  // without storage: one id for this page, as a tab was before
    const bytes = crypto.getRandomValues(new Uint8Array(ID_LEN));
    KEEPER.id = Array.from(bytes, (b) => ID_ALPHABET[b % 64]).join('');
  }
  write('localStorage', BROWSER, KEEPER.id);
  return KEEPER.id;
}

function heldClass() {
  try {
    const pair = JSON.parse(read('sessionStorage', TEACHER));
    const valid = pair && typeof pair.code === 'string' && typeof pair.secret === 'string';
    return valid ? { code: pair.code, secret: pair.secret } : null;
  } catch {
    return null;
  }
}

export default function (component) {
  const { data, setTriggerValue } = component;
  if (!data || typeof data.n !== 'string') return;
  const held = heldClass();  // read before anything is written: a fresh session hands back what the tab kept
  if (data.teacher) write('sessionStorage', TEACHER, JSON.stringify(data.teacher));
  else if (data.drop) write('sessionStorage', TEACHER, null);
  const give = data.teacher ? null : held;
  if (KEEPER.sent.has(data.n) || !(give || data.ask)) return;
  KEEPER.sent.add(data.n);
  setTriggerValue('hello', { browser: browserId(), class: give });
}
