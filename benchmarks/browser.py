"""Browser figures: first paint, live frame rate, slider redraw latency.

Starts `streamlit run app.py`, drives Debian's headless Chromium with Playwright, and prints one
JSON object. Counters come from the live components (window.__mlsimLive: updates received, frames
drawn, epoch shown); "pixels_changed" compares two screenshots of the first live canvas.

    python benchmarks/browser.py [--seconds 10]        # classification: all figures
    python benchmarks/browser.py --live-only --path "regression?lang=en&solver=gd"   # any lab's Play
"""
import argparse
import io
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deploy.local import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402

STATS = "() => ({...window.__mlsimLive})"


def wait_painted(page, timeout_s=90):
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stElementContainer\"]').length > 3",
                           timeout=timeout_s * 1000)


LIVE_CANVAS = '[data-testid="live-boundary"], [data-testid="live-panel-0"]'


def live_canvas(page) -> np.ndarray:
    png = page.locator(LIVE_CANVAS).first.screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def slider_latency(page, label: str, presses: int) -> list[float]:
    """Seconds from a key press on a slider to the redrawn boundary, for each press."""
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider").first
    out = []
    for i in range(presses):
        before = page.evaluate(STATS)["frames"]
        thumb.focus()
        t0 = time.perf_counter()
        page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function(f"() => window.__mlsimLive.frames > {before}", timeout=20_000)
        out.append(time.perf_counter() - t0)
        time.sleep(0.4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--path", default="classification?lang=en")
    ap.add_argument("--live-only", action="store_true", help="only the live frame rate of --path")
    ap.add_argument("--play", default="Play", help="regex of the button that starts training")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    t_start, out = time.perf_counter(), {}
    with running_app() as (base, _):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            while True:
                try:
                    page.goto(f"{base}/?lang=en", timeout=5000)
                    break
                except Exception:
                    time.sleep(0.1)
            wait_painted(page)
            out["home_first_paint_s_after_server_start"] = round(time.perf_counter() - t_start, 2)

            page.goto(f"{base}/{a.path}")
            wait_painted(page)
            if not a.live_only:
                page.wait_for_selector('[data-testid="live-boundary"]', timeout=90_000)
                time.sleep(1)
                out["slider_redraw_ms"] = [round(1000 * s, 0) for s in slider_latency(page, "Noise", 10)]
                out["slider_redraw_median_ms"] = statistics.median(out["slider_redraw_ms"])

            page.get_by_role("button", name=re.compile(a.play)).first.click()
            page.wait_for_selector(LIVE_CANVAS, timeout=90_000)
            time.sleep(2)
            s0, t0 = page.evaluate(STATS), time.perf_counter()
            shot_a = live_canvas(page)
            time.sleep(1)
            shot_b = live_canvas(page)
            time.sleep(max(0.0, a.seconds - 1))
            s1, dt = page.evaluate(STATS), time.perf_counter() - t0
            out["live_frames_per_s"] = round((s1["frames"] - s0["frames"]) / dt, 1)
            out["updates_per_s"] = round((s1["updates"] - s0["updates"]) / dt, 1)
            out["frames_received_per_s"] = round((s1.get("received", 0) - s0.get("received", 0)) / dt, 1)
            out["frames_dropped_per_s"] = round((s1.get("dropped", 0) - s0.get("dropped", 0)) / dt, 1)
            out["epochs_per_s_on_screen"] = round((s1["epoch"] - s0["epoch"]) / dt, 1)
            out["live_pixels_changed"] = bool(shot_a.shape == shot_b.shape and np.abs(shot_a - shot_b).mean() > 0.05)
            out["exceptions_on_page"] = page.locator('[data-testid="stException"]').count()
            browser.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
