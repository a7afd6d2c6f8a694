// Shared by the live components: colours, byte decoding, and the frame player.
// Python sends a few frames (real model snapshots, taken one after another) per fragment rerun;
// the player shows them at a steady pace, so the picture moves smoothly although every rerun is
// a round trip. While playing, the browser asks for the next update once it has taken this one in
// (a trigger value, which reruns the fragment): a browser that falls behind asks less often, so a
// class of slow laptops is never sent more than it can draw, and every update carries the newest
// frames. Nothing here computes model output: it only turns bytes and numbers into pixels.
const ORANGE = [245, 147, 34], BLUE = [8, 119, 189], WHITE = [255, 255, 255];
const CLASS = [[245, 147, 34], [8, 119, 189], [44, 160, 44], [148, 103, 189], [214, 39, 40]];
const FRAME_MS = 1000 / 40;  // playback pace; frames beyond a short backlog are skipped
const SLACK_MS = 6;  // animation callbacks arrive irregularly: draw when a frame is nearly due
// counters read by the browser benchmarks: updates received, frames drawn, last epoch
const STATS = (window.__mlsimLive = window.__mlsimLive || { updates: 0, frames: 0, epoch: 0, received: 0, dropped: 0 });

const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const mix = (a, b, t) => [0, 1, 2].map((i) => a[i] + (b[i] - a[i]) * t);
const css = (c) => `rgb(${c[0] | 0},${c[1] | 0},${c[2] | 0})`;
// value in [0, 1] -> orange (0) . white (0.5) . blue (1), as in TensorFlow Playground
const diverging = (v) => (v < 0.5 ? mix(ORANGE, WHITE, v * 2) : mix(WHITE, BLUE, (v - 0.5) * 2));

// Queue the frames of a new update and keep one animation loop running that draws them; while playing,
// ask for the next update at the next animation frame (a browser too busy to paint does not ask).
// S is the component's persistent state (kept on its root element); drawFrame(S, frame) paints;
// component is what Streamlit passed to the component's function (its setTriggerValue asks).
function play(S, data, drawFrame, component) {
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
    if (data.status !== 'playing') STATS.dropped += S.queue.splice(0, S.queue.length - 1).length;
    else requestAnimationFrame(() => component.setTriggerValue('pull', data.seq));
  }
  const tick = (t) => {
    S.raf = requestAnimationFrame(tick);
    if (!S.queue.length || t - S.lastDraw < FRAME_MS - SLACK_MS) return;
    S.lastDraw = t;
    drawFrame(S, S.queue.shift());
    STATS.frames++;
  };
  if (!S.raf) { S.lastDraw = 0; S.raf = requestAnimationFrame(tick); }
  return () => { cancelAnimationFrame(S.raf); S.raf = 0; };
}
