"""Serve a classroom past one process: K `streamlit run app.py` processes behind HAProxy with sticky sessions.

    python deploy/classroom.py --processes K --port 8501 [--address 0.0.0.0]

A school, more students than one machine holds: the same launcher plays each part on its own machine, one
Redis for every app process (the class store), app processes on each app machine, one HAProxy in front of them:

    python deploy/classroom.py --store-only --bind 192.168.1.10 --store-port 6379              # the store
    python deploy/classroom.py --apps-only --processes K --bind 192.168.1.11 --first-port 8601 \
        --store redis://192.168.1.10:6379/0                                                     # each app machine
    python deploy/classroom.py --processes 0 --remote 192.168.1.11:8601 --remote ...  --port 8501   # the front

Each app process holds the sessions (models, training runs) of the browsers HAProxy sent to it; a
cookie keeps every request of a browser, its websocket included, on that one process. Classroom mode
needs one class store that every process shares: unless MLSIM_CLASS_STORE names one, the launcher starts
a private redis-server for its processes (`start_redis`; `running_redis` for the tests and benchmarks).
The launcher watches every process it started (`watch`): one that exits is reaped, said, and started again
on its port (an app process, the class store), or everything stops with a message (HAProxy, or a process
that exits MAX_RESTARTS times in RESTART_WINDOW_S). Ctrl-C or SIGTERM stops everything the launcher started.
"""
import argparse
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).with_name("haproxy.cfg.template")
INSTALL_HINT = ("haproxy is not installed. Install it with `sudo apt-get install haproxy` (Debian, Ubuntu), "
                "`sudo dnf install haproxy` (Fedora) or `brew install haproxy` (macOS), then run this again.")
# --log-requests: one line per request, written when the response starts (a websocket's 101 too):
# client, backend/process, status, method, path, "user agent"
STORE_ENV = "MLSIM_CLASS_STORE"  # ui.classroom.STORE_ENV (not imported: the launcher needs no Streamlit)
REQUEST_LOG = '    log global\n    option logasap\n    log-format "%ci %b/%s %ST %HM %HU %{+Q}[capture.req.hdr(0)]"'
MAX_RESTARTS = 3  # a process that exits this often within RESTART_WINDOW_S is not started again: everything stops
RESTART_WINDOW_S = 60.0
STORE_NAME = "the class store (redis-server)"


class Stop(Exception):
    """Ctrl-C or SIGTERM arrived."""


def _stop(signum, frame):
    raise Stop


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at `address` right now."""
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def reach(bind: str) -> str:
    """The address this machine reaches a server bound to `bind` at (every interface: the loopback)."""
    return "127.0.0.1" if bind in ("0.0.0.0", "") else bind


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the launcher dies, even by SIGKILL, so no app process is left behind."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def spawn(cmd: list[str], log: Path | None) -> subprocess.Popen:
    """Start cmd in its own session (the terminal's Ctrl-C reaches only the launcher, which stops it in order)."""
    out = log.open("w", encoding="utf-8") if log else None
    try:
        return subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT if out else None, start_new_session=True,
                                preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    finally:
        if out:
            out.close()  # the child holds its own copy


def start_app(port: int, log: Path, address: str = "127.0.0.1") -> subprocess.Popen:
    return spawn([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", address,
                  "--server.port", str(port), "--server.headless", "true"], log)


def find_haproxy() -> str | None:
    """haproxy's path; Debian puts it in /usr/sbin, which is not on an ordinary user's PATH."""
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")


def find_redis() -> str | None:
    """redis-server's path (Debian: /usr/bin; some systems put it in /usr/sbin, not on a user's PATH)."""
    return shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/usr/local/sbin")


def start_redis(folder: Path, port: int, bind: str = "127.0.0.1") -> subprocess.Popen:
    """A redis-server of its own on `bind`:`port` (`folder` its directory, nothing written to disk); RuntimeError
    if redis-server is missing (see find_redis). An explicit bind turns Redis's protected mode off for that address:
    bind a school's store to its LAN address only, never to a network outside the school's."""
    exe = find_redis()
    if exe is None:
        raise RuntimeError("redis-server is missing (apt-get install redis-server)")
    return spawn([exe, "--port", str(port), "--bind", bind, "--dir", str(folder), "--save", "",
                  "--appendonly", "no"], folder / "redis.log")


def wait_listening(port: int, proc: subprocess.Popen, timeout_s: float = 10, address: str = "127.0.0.1") -> None:
    """Until something accepts connections on `address`:`port`; RuntimeError if `proc` exits or time runs out."""
    deadline = time.time() + timeout_s
    while True:
        try:
            socket.create_connection((reach(address), port), timeout=0.5).close()
            return
        except OSError as err:
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{proc.args[0]} did not start listening on port {port}") from err
            time.sleep(0.1)


@contextmanager
def running_redis(folder: Path, timeout_s: float = 10):
    """start_redis on a free port; yields (URL, process) once it accepts connections, and stops it on the way out."""
    port = free_port()
    proc = start_redis(folder, port)
    try:
        wait_listening(port, proc, timeout_s)
        yield f"redis://127.0.0.1:{port}/0", proc
    finally:
        stop_all([proc])


class Child:
    """A process the launcher started (now: start() is called) and watches; start() starts it again, with the same
    command, port and log. `restart` False: its exit stops everything (HAProxy: nothing reaches the apps without
    it); `why` says what its exit means."""

    def __init__(self, name: str, start: Callable[[], subprocess.Popen], log: Path | None = None,
                 restart: bool = True, why: str = ""):
        self.name, self.start, self.log, self.restart, self.why = name, start, log, restart, why
        self.exits: list[float] = []  # when it exited, within the last RESTART_WINDOW_S
        self.proc = start()


def watch(children: list[Child], say: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)
          ) -> str | None:
    """One look at every child: one that exited is reaped (Popen.poll waits for it: no zombie is left), said with
    the last lines of its log, and started again. Returns why everything must stop instead (a child that may not be
    restarted, or one that exited MAX_RESTARTS times within RESTART_WINDOW_S), else None."""
    now = time.monotonic()
    for child in children:
        code = child.proc.poll()
        if code is None:
            continue
        child.exits = [t for t in child.exits if now - t < RESTART_WINDOW_S] + [now]
        lines = tail(child.log) if child.log else ""
        said = f"{child.name} exited with code {code}{child.why}." + (f" Last lines of {child.log}:\n{lines}"
                                                                     if lines else "")
        if not child.restart:
            return said
        if len(child.exits) >= MAX_RESTARTS:
            return f"{said}\nIt exited {len(child.exits)} times in {RESTART_WINDOW_S:.0f} s: not starting it again."
        say(f"{said} Starting it again.")
        child.proc = child.start()
    return None


def class_store(args: argparse.Namespace, work: Path) -> Child | None:
    """Several app processes share one class store (else a student on another process finds no class): the one
    MLSIM_CLASS_STORE names (None), or a private redis-server that the app processes inherit in their environment,
    once it listens (its Child, for the launcher to watch)."""
    if getattr(args, "store", ""):
        os.environ[STORE_ENV] = args.store  # the app processes inherit it
    if os.environ.get(STORE_ENV) or args.processes + len(args.remote) < 2 or args.processes == 0:
        return None  # (a front with no app process of its own uses no store: its app machines were given theirs)
    if args.remote:  # other machines cannot reach a private redis on 127.0.0.1
        print(f"Warning: app processes on several machines need one class store: set {STORE_ENV}="
              f"redis://<address>:6379/0 for every one of them, or classroom mode works only within a process",
              file=sys.stderr, flush=True)
        return None
    if find_redis() is None:
        print(f"Warning: redis-server is not installed, so each app process keeps its own classes and students "
              f"on another process cannot join them. Install it (sudo apt-get install redis-server) or set "
              f"{STORE_ENV}=redis://host:port/0.", file=sys.stderr, flush=True)
        return None
    port = free_port()
    store = Child(STORE_NAME, lambda: start_redis(work, port), work / "redis.log",
                  why=" (the classes it held are gone: a teacher starts a new class; the app processes reconnect)")
    try:
        wait_listening(port, store.proc)
    except RuntimeError:
        stop_all([store.proc])
        raise
    os.environ[STORE_ENV] = f"redis://127.0.0.1:{port}/0"
    print(f"Class store: a private redis-server at {os.environ[STORE_ENV]} (set {STORE_ENV} to use another)",
          flush=True)
    return store


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def render_config(bind: str, servers: dict[str, str], stats_socket: Path, cookie: str, log_requests: bool) -> str:
    """The HAProxy configuration: the template with the listen address and one server line per backend."""
    lines = "\n".join(f"    server {name} {addr} cookie {name} check" for name, addr in servers.items())
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        bind=bind, servers=lines, stats_socket=stats_socket, cookie=cookie,
        global_log="    log stdout format raw local0" if log_requests else "",
        defaults_log=REQUEST_LOG if log_requests else "")


def server_states(stats_socket: Path) -> dict[str, str]:
    """Each backend server's health as HAProxy sees it: "UP" once a health check passed, else e.g. "DOWN (L4CON)".

    {} while HAProxy is not answering. HAProxy counts a server UP before its first check, hence check_status.
    """
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(str(stats_socket))
            s.sendall(b"show stat\n")
            data = b"".join(iter(lambda: s.recv(65536), b""))
    except OSError:
        return {}
    rows = csv.DictReader(io.StringIO(data.decode().lstrip("# ")))
    return {r["svname"]: r["status"] if r["check_status"] == "L7OK" else f'{r["status"]} ({r["check_status"]})'
            for r in rows if r["pxname"] == "apps" and r["svname"] not in ("FRONTEND", "BACKEND")}


def lan_address() -> str:
    """This machine's address on the network students reach it by (a UDP connect sends no packet)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
        except OSError:
            return socket.gethostbyname(socket.gethostname())


def port_taken(address: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
            return False
        except OSError:
            return True


def tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]) if log.exists() else ""


def stop_all(procs: list[subprocess.Popen]) -> None:
    """Terminate each process, wait for it (SIGKILL after 15 s): none is left running or unreaped."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.time() + 15
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def start_apps(args: argparse.Namespace, work: Path, children: list[Child]) -> dict[str, tuple[Child, str]]:
    """Start args.processes app processes on args.bind (ports from args.first_port on, else free ones), each added
    to `children`; {name: (its Child, the address HOST:PORT others reach it at)}."""
    apps = {}
    for i in range(1, args.processes + 1):
        port = args.first_port + i - 1 if args.first_port else free_port(reach(args.bind))
        log = work / f"app{i}.log"
        apps[f"app{i}"] = (Child(f"app{i}", lambda port=port, log=log: start_app(port, log, args.bind), log,
                                 why=" (its students are sent to the other processes meanwhile; their training "
                                     "restarts)"), f"{reach(args.bind)}:{port}")
        children.insert(0, apps[f"app{i}"][0])
    print(f"Starting {args.processes} app process{'es' if args.processes != 1 else ''} on {args.bind} "
          f"(logs in {work})", flush=True)
    return apps


def wait_healthy(apps: dict[str, tuple[Child, str]], deadline: float, timeout: float) -> bool:
    """Until every app process answers its own health check (before HAProxy sends anyone to it); False, said, if
    one exits or the deadline passes."""
    waiting = dict(apps)
    while waiting:
        for name, (child, addr) in list(waiting.items()):
            if child.proc.poll() is not None:
                print(f"{name} exited with code {child.proc.returncode}:\n{tail(child.log)}", file=sys.stderr)
                return False
            if healthy(f"http://{addr}"):
                del waiting[name]
        if waiting and time.time() > deadline:
            print(f"{', '.join(waiting)} not healthy after {timeout:.0f} s", file=sys.stderr)
            return False
        time.sleep(0.3)
    return True


def watch_until_stopped(children: list[Child]) -> int:
    """Watch every child until one cannot go on (returns 1) or Ctrl-C / SIGTERM (Stop)."""
    while (why := watch(children)) is None:
        time.sleep(1)
    print(f"{why}\nStopping everything.", file=sys.stderr, flush=True)
    return 1


def serve_apps(args: argparse.Namespace, work: Path, children: list[Child]) -> int:
    """--apps-only: one app machine of a school. The app processes on args.bind, their class store the school's one
    (args.store); no HAProxy: the front's launcher (--remote, one per line printed) balances to them."""
    t0 = time.time()
    apps = start_apps(args, work, children)
    if not wait_healthy(apps, time.time() + args.timeout, args.timeout):
        return 1
    public = lan_address() if args.bind in ("0.0.0.0", "") else args.bind
    addrs = [f"{public}:{addr.rsplit(':', 1)[1]}" for _, addr in apps.values()]
    print(f"{len(addrs)} app process{'es' if len(addrs) != 1 else ''} ready in {time.time() - t0:.1f} s, class store "
          f"{os.environ.get(STORE_ENV) or 'memory'}: {' '.join(addrs)}", flush=True)
    print("For the front's launcher: " + " ".join(f"--remote {a}" for a in addrs) + "   (Ctrl-C stops them)",
          flush=True)
    return watch_until_stopped(children)


def serve_store(args: argparse.Namespace, work: Path, children: list[Child]) -> int:
    """--store-only: the school's one class store, a redis-server on args.bind:args.store_port, watched (restarted
    if it exits: the classes it held are gone)."""
    port = args.store_port
    store = Child(STORE_NAME, lambda: start_redis(work, port, args.bind), work / "redis.log",
                  why=" (the classes it held are gone: a teacher starts a new class; the app processes reconnect)")
    children.append(store)
    wait_listening(port, store.proc, address=args.bind)
    public = lan_address() if args.bind in ("0.0.0.0", "") else args.bind
    print(f"Class store ready: give every app machine --store redis://{public}:{port}/0   (Ctrl-C stops it)",
          flush=True)
    return watch_until_stopped(children)


def serve(args: argparse.Namespace, work: Path, children: list[Child]) -> int:
    """Start the app processes and HAProxy in front of them (each added to `children` as it starts), then watch
    them all until one cannot go on (returns 1) or Ctrl-C / SIGTERM (Stop)."""
    t0 = time.time()
    apps = start_apps(args, work, children) if args.processes else {}
    deadline = time.time() + args.timeout
    if not wait_healthy(apps, deadline, args.timeout):
        return 1

    servers = {name: addr for name, (_, addr) in apps.items()}
    servers |= {f"remote{i}": addr for i, addr in enumerate(args.remote, 1)}
    cfg, stats_socket = work / "haproxy.cfg", work / "haproxy.sock"
    cfg.write_text(render_config(f"{args.address}:{args.port}", servers, stats_socket, args.cookie, args.log_requests),
                   encoding="utf-8")
    # its output (errors, request log) goes to ours; stopped first: no new request reaches an app that is going away
    haproxy = Child("haproxy", lambda: spawn([args.haproxy, "-f", str(cfg), "-db"], None), restart=False,
                    why=" (its message is above)")
    children.insert(0, haproxy)
    while (states := server_states(stats_socket)).keys() != servers.keys() or set(states.values()) != {"UP"}:
        if haproxy.proc.poll() is not None:
            print(f"haproxy exited with code {haproxy.proc.returncode} (its message is above)", file=sys.stderr)
            return 1
        if time.time() > deadline:
            print(f"backends not healthy in HAProxy after {args.timeout:.0f} s: {states}", file=sys.stderr)
            return 1
        time.sleep(0.3)

    host = lan_address() if args.address in ("0.0.0.0", "") else args.address
    plural = "es" if len(servers) != 1 else ""
    print(f"{len(servers)} app process{plural} behind HAProxy, ready in {time.time() - t0:.1f} s "
          f"({', '.join(f'{n}={a}' for n, a in servers.items())})", flush=True)
    print(f"Students open: http://{host}:{args.port}   (Ctrl-C stops everything)", flush=True)
    return watch_until_stopped(children)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                    help="app processes on this machine (default: the number of cores)")
    ap.add_argument("--port", type=int, default=8501, help="the port students connect to (default 8501)")
    ap.add_argument("--address", default="0.0.0.0",
                    help="the address HAProxy listens on (default 0.0.0.0: every interface)")
    ap.add_argument("--remote", action="append", default=[], metavar="HOST:PORT",
                    help="also balance to an app process on another machine (repeat for each)")
    ap.add_argument("--cookie", default="SERVERID", help="the sticky-session cookie's name (default SERVERID)")
    ap.add_argument("--log-requests", action="store_true",
                    help="print one line per request: client, backend/process, status, method, path, user agent")
    ap.add_argument("--timeout", type=float, default=120, help="seconds to wait for every process to be healthy")
    school = ap.add_argument_group("a school: several machines, one class store, one HAProxy")
    part = school.add_mutually_exclusive_group()
    part.add_argument("--apps-only", action="store_true",
                      help="start only the app processes (on --bind, class store --store), no HAProxy: an app "
                           "machine; it prints the --remote lines for the front")
    part.add_argument("--store-only", action="store_true",
                      help="start only the class store, a redis-server on --bind:--store-port")
    school.add_argument("--bind", default="127.0.0.1",
                        help="the address the app processes (or the store) listen on (default 127.0.0.1; an app "
                             "machine of a school: its LAN address)")
    school.add_argument("--first-port", type=int, default=0,
                        help="the app processes' ports: this one and the next ones (default: free ports)")
    school.add_argument("--store", default="", metavar="URL",
                        help=f"the class store every app process uses, e.g. redis://192.168.1.10:6379/0 "
                             f"(default: ${STORE_ENV}, else a private redis-server)")
    school.add_argument("--store-port", type=int, default=6379, help="--store-only: the store's port (default 6379)")
    args = ap.parse_args(argv)
    if args.store_only:
        if find_redis() is None:
            print("redis-server is not installed (sudo apt-get install redis-server)", file=sys.stderr)
            return 2
        if port_taken(args.bind, args.store_port):
            print(f"{args.bind}:{args.store_port} is in use: choose another --store-port", file=sys.stderr)
            return 2
    elif args.apps_only:
        if args.processes < 1 or args.remote:
            ap.error("--apps-only starts app processes (--processes 1 or more) and balances to none (no --remote)")
        if not (args.store or os.environ.get(STORE_ENV)):
            ap.error("--apps-only needs the school's one class store, which every app process shares: "
                     "--store redis://HOST:PORT/0 (or --store memory for a single process)")
    else:
        if args.processes < 0 or args.processes + len(args.remote) == 0:
            ap.error("need at least one app process (--processes) or --remote backend")
        args.haproxy = find_haproxy()
        if args.haproxy is None:
            print(INSTALL_HINT, file=sys.stderr)
            return 2
        if port_taken(args.address, args.port):
            print(f"{args.address}:{args.port} is in use (another server?): choose another --port", file=sys.stderr)
            return 2

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    children: list[Child] = []  # HAProxy first, then the app processes, then the class store: the order they stop
    work = Path(tempfile.mkdtemp(prefix="classroom-"))
    try:
        if args.store_only:
            return serve_store(args, work, children)
        store = class_store(args, work)
        children += [store] if store else []
        return (serve_apps if args.apps_only else serve)(args, work, children)
    except Stop:
        print("Stopping " + ("the class store" if args.store_only else "the app processes" if args.apps_only
                             else "HAProxy and the app processes"), flush=True)
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop_all([c.proc for c in children if c.name != STORE_NAME])
        stop_all([c.proc for c in children if c.name == STORE_NAME])  # after the apps: they may still write to it
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
