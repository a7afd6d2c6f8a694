"""Follow latency: how long after the teacher changes a setting K students' pages show it.

One teacher and K students (default 30) are AppTest sessions of the real app in this process (main.py, the
lab's page, ui/classroom.py, the in-process class store), as one app process serves them. Each student waits on the
class as its page does in a browser: its watch on the live channel (server.class_push.Watch.wait, the server's own
code, on an event loop as the server's) is told of the teacher's new version, and the student's page then reruns
(the watch's trigger), whose ui.classroom.follow applies the settings through the lab's schema before the page
draws. The browser's round trip (a socket message, a rerun request: milliseconds on a LAN) is not in it. The
teacher changes one setting per round (its page runs, then publishes). Latency = from the start of the teacher's
change to the end of the student's page run that shows the new value (checked on the student's widget). Prints
per-round figures and the median/p95. AppTest runs cannot overlap (each swaps in its own Streamlit runtime), so the
page runs take turns (RUNS): as on a server, where every session's script shares the process's one GIL, one page run
at a time. The sessions share one compiled-script cache, as a server's sessions do (AppTest makes one per run).

With --processes K (K > 1) the students are spread over K worker processes, each an app process of its
own, and the class lives in a private redis-server named by MLSIM_CLASS_STORE, started as the launcher
(deploy/classroom.py) starts one for its K processes behind HAProxy: another process's change reaches a student's
watch within server.class_push.LOOK_S. Times are taken with time.time() so that the processes' figures compare.

    python -m benchmarks classroom_follow [--students 30] [--rounds 5] [--lab classification] [--processes 1]
"""
import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deploy.local import open_app, open_lab  # noqa: E402
from server import class_push  # noqa: E402
from ui import classroom  # noqa: E402

# per lab: its page, and the selectbox the teacher changes (key, two values to alternate between)
LABS = {"classification": ("labs/classification/page.py", "cls.activation", ("relu", "tanh")),
        "regression": ("labs/regression/page.py", "reg.loss", ("huber", "mse"))}


RUNS = threading.Lock()


def quiet() -> None:
    """AppTest sessions log a warning per bare call; the figures are what this prints."""
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def as_a_server():
    """For the block, the AppTest sessions of this process are served as a server serves its sessions:
    - one compiled-script cache for all, as a server's Runtime has (AppTest makes a new one per run, which compiles
      main.py and the page again on every run: a fifth of a run's time);
    - each its own network address: they all come from "local", and a class takes at most
      server.classroom.JOIN_LIMIT new students a minute from one address (a school's NAT joins over a minute or two).
    Both are put back after (the tests run this benchmark in their own process)."""
    from streamlit.testing.v1 import app_test, local_script_runner

    before = app_test.ScriptCache, local_script_runner.ScriptCache, classroom.address
    cache = before[0]()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: cache
    classroom.address = lambda: f"bench-{classroom.credential()}"  # AppTest's session ids are all the same
    try:
        yield
    finally:
        app_test.ScriptCache, local_script_runner.ScriptCache, classroom.address = before


class Loop:
    """The server's event loop, on a thread of its own: the students' watches wait on it."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def wait(self, code: str, known: int, timeout: float) -> int | None:
        coro = class_push.WATCH.wait(classroom.room(), code, known, timeout)
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()


class Student:
    """One student's AppTest session, its watch on a thread of its own (start, then stop.set and join)."""

    def __init__(self, code: str, key: str, loop: Loop):
        self.thread = threading.Thread(target=self.watch_class, daemon=True)
        self.at = open_app("en")
        self.at.query_params["class"] = code
        self.at.run()  # joins, and follows the teacher onto the lab
        self.code, self.key, self.loop = code, key, loop
        self.seen = classroom.room().state(code).version
        self.done: dict[int, tuple] = {}  # version -> (time its page showed it, the value shown, the page run's s)
        self.stop = threading.Event()

    def watch_class(self) -> None:
        while not self.stop.is_set():
            version = self.loop.wait(self.code, self.seen, 1.0)
            if version is None or self.stop.is_set():
                continue
            with RUNS:
                began = time.time()
                self.at.run()  # what the watch's trigger does: the whole app, follow() first
                self.done[version] = (time.time(), self.at.selectbox(key=self.key).value, time.time() - began)
            self.seen = version


def students_in_process(code: str, key: str, n: int, ready, stop, results) -> None:
    """One app process's students: join, follow until `stop`, then hand back what each saw and when."""
    quiet()
    with as_a_server():
        class_push.WATCH.listen(classroom.room())
        loop = Loop()
        students = [Student(code, key, loop) for _ in range(n)]
        for s in students:
            s.thread.start()
        ready.put(n)
        stop.wait()
        for s in students:
            s.stop.set()
        for s in students:
            s.thread.join(5)
    results.put([s.done for s in students])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks classroom_follow", description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gap", type=float, default=10.0, help="seconds between the teacher's changes")
    parser.add_argument("--lab", choices=sorted(LABS), default="classification")
    parser.add_argument("--processes", type=int, default=1, help="app processes the students are spread over")
    args = parser.parse_args(argv)
    if args.processes > 1:
        from deploy.classroom import running_redis

        with tempfile.TemporaryDirectory() as folder, running_redis(Path(folder)) as (url, _):
            os.environ[classroom.STORE_ENV] = url
            return follow_rounds(args)
    return follow_rounds(args)


def follow_rounds(args) -> None:
    quiet()
    with as_a_server():  # the teacher's session too
        run_rounds(args)


def run_rounds(args) -> None:
    page, key, values = LABS[args.lab]
    teacher = open_lab("labs/classroom/page.py")
    teacher.button(key="room.start_btn").click().run()
    code = teacher.session_state["_cls.code"]
    teacher.switch_page(page).run()  # publishes: the class follows this lab
    t0 = time.time()
    ctx = mp.get_context("spawn")
    ready, results, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    shares = [args.students // args.processes + (i < args.students % args.processes) for i in range(args.processes)]
    if args.processes == 1:
        threading.Thread(target=students_in_process, args=(code, key, args.students, ready, stop, results),
                         daemon=True).start()
        workers = []
    else:
        workers = [ctx.Process(target=students_in_process, args=(code, key, n, ready, stop, results))
                   for n in shares]
        for w in workers:
            w.start()
    for _ in shares:
        ready.get()
    print(f"{args.students} students in {args.processes} app process(es) joined class {code} on {args.lab} in "
          f"{time.time() - t0:.1f} s (pushed, "
          f"store {classroom.room().store.__class__.__name__})")
    time.sleep(1.0)
    rounds = []
    for r in range(args.rounds):
        value = values[r % 2]
        start = time.time()
        with RUNS:
            teacher.selectbox(key=key).set_value(value).run()  # the teacher's change: publish, then the page
        rounds.append((classroom.room().state(code).version, value, start, time.time() - start))
        time.sleep(max(0.0, start + args.gap - time.time()))
    stop.set()
    seen = [done for _ in shares for done in results.get()]
    for w in workers:
        w.join()
    latencies = []
    for r, (version, value, start, teacher_s) in enumerate(rounds):
        got = [done[version][0] - start for done in seen if version in done]
        wrong = sum(done[version][1] != value for done in seen if version in done)
        latencies += got
        print(f"round {r + 1}: {key}={value}: teacher's run {teacher_s:.2f} s; {len(got)}/{len(seen)} followed, "
              f"median {statistics.median(got):.2f} s, max {max(got):.2f} s, wrong values {wrong}")
    runs = [done[version][2] for version, *_ in rounds for done in seen if version in done]
    print(f"a student's page run (the app, following): mean {statistics.mean(runs):.3f} s; they take turns within "
          f"an app process, so the last of {len(seen)} students waits about {len(seen) / args.processes:.0f} runs")
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    print(f"follow latency over {len(latencies)} student page updates: median {statistics.median(latencies):.2f} s, "
          f"p95 {p95:.2f} s, max {latencies[-1]:.2f} s")


if __name__ == "__main__":
    main()
