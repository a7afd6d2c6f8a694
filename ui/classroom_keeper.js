// Classroom mode's memory in the browser (ui/classroom.py mounts it on every run, zero height).
// The class this tab teaches, {code, secret}, is kept in sessionStorage: it survives a reload of this tab (and the
// browser reopening the closed tab), but another tab or window of the app starts without it, so it does not become
// a second teacher by accident (a duplicated tab copies it: the server then gives the class to the tab that hands it
// back last, see server.classroom.Classroom.resume). It is never put in a URL. A student keeps nothing here: the
// class knows a student by the browser's HttpOnly cookie, which no script reads or changes.
// Python sends {n, teaching, pair, pair_id, drop}: n is its session's random nonce; pair the teacher's pair to keep,
// sent only until this tab says it keeps it (the trigger "kept", with pair_id), so the secret crosses the socket once;
// teaching true while the session teaches; drop true once the class ended or was lost (or moved to another tab).
// Once per session (per n), a session that neither teaches nor dropped a class gets back the pair this tab kept, if
// any (the trigger "hello"), which the server checks against the class store. (Handing back reruns the page: a
// session outside any class, with nothing kept, is spared that.)
const TEACHER = 'mlsim.class';
const KEEPER = (window.__mlsimClassKeeper = window.__mlsimClassKeeper || { sent: new Set(), kept: new Set() });

function read(key) {
  try { return window.sessionStorage.getItem(key); } catch { return null; }  // storage off (privacy settings)
}

function write(key, value) {
  try {
    if (value === null) window.sessionStorage.removeItem(key); else window.sessionStorage.setItem(key, value);
  } catch { /* storage off */ }
}

function heldClass() {
  try {
    const pair = JSON.parse(read(TEACHER));
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
  if (data.pair) {
    write(TEACHER, JSON.stringify({ code: data.pair.code, secret: data.pair.secret }));
    if (!KEEPER.kept.has(data.pair_id)) {
      KEEPER.kept.add(data.pair_id);
      setTriggerValue('kept', data.pair_id);
    }
  } else if (data.drop) {
    write(TEACHER, null);
  }
  // a pair the server dropped is never handed back: it is worth nothing now, and handing it back would replace the
  // page's message (e.g. "now taught from another tab") with "has ended"
  if (data.teaching || data.drop || !held || KEEPER.sent.has(data.n)) return;
  KEEPER.sent.add(data.n);
  setTriggerValue('hello', held);
}
