// A student's page, told of the teacher's changes (ui/classroom.py mounts it on every run of a student's page, zero
// height). It holds one socket on the app's live channel (server/live_channel.py, served by server/class_push.py):
// it says which version of the class the page shows ("watch <v>"), and the server answers when the class has another
// ({v}) or has ended ({ended}); then the page reruns (the trigger "changed"), which takes the class's settings. No
// timer reruns the page: it runs when the class changed. Python sends {path, token, v}; a new token (the page's
// session was rendered anew after the old one expired) opens a new socket. A socket refused or lost is opened again
// after a pause, through a rerun (the trigger "retry"), which brings a token that is valid now.
const PROTOCOL = 'mlsim.live';
const RETRY_MS = [1000, 2000, 5000, 10000];
const W = (window.__mlsimClassWatch = window.__mlsimClassWatch || { ws: null, token: null, v: null, tries: 0 });

function watch(v) {
  W.v = v;
  if (W.ws && W.ws.readyState === WebSocket.OPEN) W.ws.send(`watch ${v}`);
}

function open(data, trigger) {
  const url = (window.location.protocol === 'https:' ? 'wss://' : 'ws://') + window.location.host + data.path;
  const ws = new WebSocket(url, [PROTOCOL, data.token]);
  W.ws = ws; W.token = data.token;
  ws.onopen = () => { W.tries = 0; W.opened = (W.opened || 0) + 1; ws.send(`watch ${W.v}`); };
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    W.pushes = (W.pushes || 0) + 1;
    trigger('changed', msg.ended ? -1 : msg.v);
  };
  ws.onclose = () => {
    if (W.ws !== ws) return;
    W.ws = null; W.token = null;
    const wait = RETRY_MS[Math.min(W.tries, RETRY_MS.length - 1)];
    W.tries += 1;
    setTimeout(() => { if (!W.ws) trigger('retry', W.tries); }, wait);
  };
}

export default function (component) {
  const { data, setTriggerValue } = component;
  if (!data || typeof data.token !== 'string' || typeof WebSocket === 'undefined') return;
  window.__mlsimClassVersion = data.v;  // what this page shows (the browser tests read it)
  if (W.ws && W.token !== data.token) { const old = W.ws; W.ws = null; old.close(); }
  if (!W.ws) { W.v = data.v; open(data, setTriggerValue); } else if (W.v !== data.v) watch(data.v);
}
