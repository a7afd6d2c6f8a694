"""K students in real browsers: K headless Chromiums at the lowest CPU priority open one lab and press Play.

The browsers run under `nice -n 19`, so on a small machine the server gets the CPU first (in a class
they run on the students' laptops). Per session it reads the live component's counters
(window.__mlsimLive: frames drawn, epoch shown) over --seconds; it prints one JSON line per session
and a total with the server's CPU (cores) and memory (VmRSS) before, while playing and after the
browsers closed (and --after seconds more: Streamlit keeps a closed session for its reconnect window).

    python benchmarks/classroom_browser.py --sessions 4 [--seconds 30] [--path "classification?lang=en"]
"""
import argparse
import json
import os
import re
import stat
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from browser import LIVE_CANVAS, STATS, wait_painted  # noqa: E402
from deploy.local import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402


def rss_mb(pid: int) -> float:
    return int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text()).group(1)) / 1024


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def settled_rss(pid: int, limit_s: float = 90.0) -> float:
    """VmRSS (MB) once it has moved less than 1 MB over 5 s (imports and the engine's compilation done)."""
    samples, t0 = [rss_mb(pid)], time.monotonic()
    while time.monotonic() - t0 < limit_s and (len(samples) < 6 or max(samples[-6:]) - min(samples[-6:]) >= 1.0):
        time.sleep(1.0)
        samples.append(rss_mb(pid))
    return round(samples[-1], 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--after", type=float, default=0.0, help="seconds to wait after closing before the last sample")
    ap.add_argument("--path", default="classification?lang=en")
    ap.add_argument("--play", default="Play", help="regex of the button that starts training")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    niced = Path(tempfile.mkdtemp()) / "chromium-nice"
    niced.write_text(f'#!/bin/sh\nexec nice -n 19 {CHROMIUM} "$@"\n')
    niced.chmod(niced.stat().st_mode | stat.S_IEXEC)
    out = {"sessions": a.sessions, "path": a.path}
    with running_app() as (base, server):
        url = f"{base}/{a.path}"
        with sync_playwright() as p:
            browsers = [p.chromium.launch(executable_path=str(niced), args=CHROMIUM_ARGS) for _ in range(a.sessions)]
            pages = [b.new_page(viewport={"width": 1400, "height": 1000}) for b in browsers]
            for i, page in enumerate(pages):
                while True:
                    try:
                        page.goto(url, timeout=10_000)
                        break
                    except Exception:
                        time.sleep(0.2)
                if i == 0:  # the memory of one session open: what the server returns to after a class leaves
                    page.locator(LIVE_CANVAS).first.wait_for(timeout=180_000)  # the lab has run once
                    out["rss_mb_one_open"] = settled_rss(server.pid)
            for page in pages:
                wait_painted(page, timeout_s=180)
            out["rss_mb_open"] = round(rss_mb(server.pid), 1)
            for page in pages:
                page.get_by_role("button", name=re.compile(a.play)).first.click(timeout=60_000)
            time.sleep(3)
            s0, c0, t0 = [page.evaluate(STATS) for page in pages], cpu_s(server.pid), time.perf_counter()
            time.sleep(a.seconds)
            s1, c1, t1 = [page.evaluate(STATS) for page in pages], cpu_s(server.pid), time.perf_counter()
            dt = t1 - t0
            rows = []
            for i, (x, y, page) in enumerate(zip(s0, s1, pages, strict=True)):
                rows.append({"session": i, "frames_per_s": round((y["frames"] - x["frames"]) / dt, 1),
                             "epochs_per_s": round((y["epoch"] - x["epoch"]) / dt, 1),
                             "exceptions": page.locator('[data-testid="stException"]').count()})
                print(json.dumps(rows[-1]))
            out.update(server_cpu_cores=round((c1 - c0) / dt, 2), rss_mb_playing=round(rss_mb(server.pid), 1),
                       frames_per_s_min=min(r["frames_per_s"] for r in rows),
                       epochs_per_s_min=min(r["epochs_per_s"] for r in rows),
                       epochs_per_s_total=round(sum(r["epochs_per_s"] for r in rows), 1),
                       exceptions=sum(r["exceptions"] for r in rows))
            for b in browsers:
                b.close()
        time.sleep(a.after)
        out["rss_mb_after_close"] = settled_rss(server.pid)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
