"""A long Play of the classification lab: does it stay flat?

Starts `streamlit run app.py`, opens the classification lab in Debian's headless Chromium at speed 10,
presses Play and keeps playing for --minutes. Every --interval seconds it prints one JSON line: the
bytes/s the browser received over the websocket, the epochs/s the page's epoch counter (`.lv-epoch`)
advanced, and the server's resident memory (VmRSS of its process). The last line compares the first
interval with the last one: a run that stays flat has the same traffic, speed and memory at both ends.

    python benchmarks/long_play.py [--minutes 10] [--interval 60] [--path "classification?lang=en&speed=10"]
"""
import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deploy.local import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB, from /proc/<pid>/status."""
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


def shown_epoch(page) -> int:
    """The epoch the live view shows ("Epoch 12,345")."""
    digits = re.sub(r"\D", "", page.locator(".lv-epoch").first.inner_text())
    return int(digits or 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--interval", type=float, default=60.0, help="seconds per printed sample")
    ap.add_argument("--path", default="classification?lang=en&speed=10")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    log = tempfile.NamedTemporaryFile("w+", prefix="long_play_server_", suffix=".log", delete=False)
    received = [0]  # websocket bytes the browser received

    def on_websocket(ws) -> None:
        ws.on("framereceived", lambda payload: received.__setitem__(0, received[0] + len(payload)))

    samples = []
    with running_app(log) as (base, server):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("websocket", on_websocket)
            page.goto(f"{base}/{a.path}")
            page.wait_for_selector('[data-testid="live-boundary"]', timeout=120_000)
            page.wait_for_timeout(2000)
            page.get_by_role("button", name=re.compile("Play")).first.click()
            page.wait_for_function("() => /[1-9]/.test(document.querySelector('.lv-epoch')?.textContent || '')",
                                   timeout=60_000)
            start = time.perf_counter()
            t0, b0, e0, m0 = start, received[0], shown_epoch(page), rss_mb(server.pid)
            while t0 - start < a.minutes * 60 - 1e-6:
                # waiting inside Playwright (not time.sleep) lets it deliver the websocket events meanwhile
                page.wait_for_timeout(1000 * min(a.interval, a.minutes * 60 - (t0 - start)))
                t1, b1, e1, m1 = time.perf_counter(), received[0], shown_epoch(page), rss_mb(server.pid)
                sample = {"t_s": round(t1 - start), "ws_kB_per_s": round((b1 - b0) / (t1 - t0) / 1e3, 1),
                          "epochs_per_s": round((e1 - e0) / (t1 - t0), 1), "epoch": e1,
                          "server_rss_MB_start": round(m0, 1), "server_rss_MB_end": round(m1, 1)}
                print(json.dumps(sample), flush=True)
                samples.append(sample)
                t0, b0, e0, m0 = t1, b1, e1, m1
            exceptions = page.locator('[data-testid="stException"]').count()
            browser.close()
    first, last = samples[0], samples[-1]
    tracebacks = Path(log.name).read_text(errors="replace").count("Traceback")
    print(json.dumps({
        "minutes": a.minutes, "path": a.path, "exceptions_on_page": exceptions, "server_tracebacks": tracebacks,
        "server_log": log.name,
        "ws_kB_per_s": {"first": first["ws_kB_per_s"], "last": last["ws_kB_per_s"]},
        "epochs_per_s": {"first": first["epochs_per_s"], "last": last["epochs_per_s"]},
        "server_rss_MB": {"start": first["server_rss_MB_start"], "end": last["server_rss_MB_end"]},
    }))


if __name__ == "__main__":
    main()
