"""K classification sessions on one server process, driven through the code the page runs.

Each session builds its model and its player as the page does (ui.live.player_for), presses Play, and a
"browser" thread per session does what the page's fragment does: takes the newest frames (ui.player.Player.frames,
waiting up to ui.live_run.WAIT_S) and builds the payload the component receives (ui.live.payload). Prints one JSON
line per session and a total: epochs/s trained and frames/s delivered, and the process's memory before and after.

    python -m benchmarks classroom --sessions 10 [--seconds 20] [--speed 1]
"""
import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import KeyLabels  # noqa: E402
from sim.core.threads import configure_threads  # noqa: E402
from sim.nets.training import ClassifierConfig, Trainer  # noqa: E402
from ui import live  # noqa: E402
from ui.live_run import WAIT_S  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


def browser(player, stop: threading.Event, counts: dict) -> None:
    """What a playing fragment does, over and over: wait for frames, build the component's payload."""
    seen = 0
    while not stop.is_set():
        got = player.frames(after=seen, timeout=WAIT_S)
        if got:
            seen = got[-1][0]
            with player.lock:
                live.payload(player.model, [f for _, f in got], seq=seen, status="playing", threshold=0.5,
                             discretize=False, show_val=False, labels=KeyLabels(), input_labels=["x1", "x2"],
                             titles=["", "", "", ""])
            counts["frames"] += len(got)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks classroom", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--speed", type=int, default=1, help="the lab's speed setting (×150 epochs a second)")
    args = parser.parse_args(argv)
    configure_threads()
    before = rss_mb()
    players = []
    for i in range(args.sessions):
        player = live.player_for(Trainer(ClassifierConfig(seed=i)))
        player.speed = live.EPOCHS_PER_FRAME * args.speed  # as the page sets it
        players.append(player)
        live.payload(player.model, [player.latest()[1]], seq=0, status="paused", threshold=0.5, discretize=False,
                     show_val=False, labels=KeyLabels(), input_labels=["x1", "x2"], titles=["", "", "", ""])  # warm-up
    built = rss_mb()
    stop = threading.Event()
    counts = [{"frames": 0} for _ in players]
    watchers = [threading.Thread(target=browser, args=(p, stop, c)) for p, c in zip(players, counts, strict=True)]
    start_epochs = [p.model.epoch for p in players]
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    for p, w in zip(players, watchers, strict=True):
        p.play()
        w.start()
    time.sleep(args.seconds)
    stop.set()
    for p, w in zip(players, watchers, strict=True):
        p.close()
        w.join()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    rows = []
    for i, (p, c, e0) in enumerate(zip(players, counts, start_epochs, strict=True)):
        rows.append({"session": i, "epochs_per_s": round((p.model.epoch - e0) / wall, 1),
                     "frames_per_s": round(c["frames"] / wall, 1)})
        print(json.dumps(rows[-1]))
    print(json.dumps({
        "sessions": args.sessions, "speed": args.speed, "seconds": round(wall, 1),
        "epochs_per_s_total": round(sum(r["epochs_per_s"] for r in rows), 1),
        "epochs_per_s_min": min(r["epochs_per_s"] for r in rows),
        "frames_per_s_min": min(r["frames_per_s"] for r in rows),
        "cpu_cores_used": round(cpu / wall, 2),
        "rss_mb_before": round(before, 1), "rss_mb_sessions_built": round(built, 1),
        "rss_mb_per_session": round((built - before) / args.sessions, 2), "rss_mb_after": round(rss_mb(), 1),
    }))


if __name__ == "__main__":
    main()
