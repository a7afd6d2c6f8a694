"""Serve a classroom past one process: K `streamlit run app.py` processes behind HAProxy with sticky sessions.

    python deploy/classroom.py --processes K --port 8501 [--address 0.0.0.0]

Each app process holds the sessions (models, training runs) of the browsers HAProxy sent to it; a
cookie keeps every request of a browser, its websocket included, on that one process. Classroom mode
needs one class store that every process shares: unless MLSIM_CLASS_STORE names one, the launcher starts
a private redis-server for its processes (`running_redis`, which the tests and the follow benchmark use
too). Ctrl-C or SIGTERM stops everything the launcher started.
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
from contextlib import ExitStack, contextmanager
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


class Stop(Exception):
    """Ctrl-C or SIGTERM arrived."""


def _stop(signum, frame):
    raise Stop


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def start_app(port: int, log: Path) -> subprocess.Popen:
    return spawn([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
                  "--server.port", str(port), "--server.headless", "true"], log)


def find_haproxy() -> str | None:
    """haproxy's path; Debian puts it in /usr/sbin, which is not on an ordinary user's PATH."""
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")


def find_redis() -> str | None:
    """redis-server's path (Debian: /usr/bin; some systems put it in /usr/sbin, not on a user's PATH)."""
    return shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/usr/local/sbin")


@contextmanager
def running_redis(folder: Path, timeout_s: float = 10):
    """A redis-server of its own (a free port on 127.0.0.1, `folder` its directory, nothing written to disk);
    yields (URL, process) once it accepts connections, and stops it on the way out. RuntimeError if
    redis-server is missing (see find_redis) or does not start."""
    exe = find_redis()
    if exe is None:
        raise RuntimeError("redis-server is missing (apt-get install redis-server)")
    port = free_port()
    proc = spawn([exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "",
                  "--appendonly", "no"], folder / "redis.log")
    try:
        deadline = time.time() + timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError as err:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from err
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0", proc
    finally:
        stop_all([proc])


def class_store(args: argparse.Namespace, work: Path, stack: ExitStack) -> None:
    """Several app processes share one class store (else a student on another process finds no class): the one
    MLSIM_CLASS_STORE names, or a private redis-server that the app processes inherit in their environment."""
    if os.environ.get(STORE_ENV) or args.processes + len(args.remote) < 2:
        return
    if args.remote:  # other machines cannot reach a private redis on 127.0.0.1
        print(f"Warning: app processes on several machines need one class store: set {STORE_ENV}="
              f"redis://<address>:6379/0 for every one of them, or classroom mode works only within a process",
              file=sys.stderr, flush=True)
        return
    if find_redis() is None:
        print(f"Warning: redis-server is not installed, so each app process keeps its own classes and students "
              f"on another process cannot join them. Install it (sudo apt-get install redis-server) or set "
              f"{STORE_ENV}=redis://host:port/0.", file=sys.stderr, flush=True)
        return
    url, _ = stack.enter_context(running_redis(work))
    os.environ[STORE_ENV] = url
    print(f"Class store: a private redis-server at {url} (set {STORE_ENV} to use another)", flush=True)


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


def serve(args: argparse.Namespace, work: Path, started: list[subprocess.Popen]) -> int:
    t0 = time.time()
    apps = {}  # name -> (process, base URL, log file)
    for i in range(1, args.processes + 1):
        port, log = free_port(), work / f"app{i}.log"
        apps[f"app{i}"] = (start_app(port, log), f"http://127.0.0.1:{port}", log)
        started.append(apps[f"app{i}"][0])
    print(f"Starting {args.processes} app process{'es' if args.processes != 1 else ''} (logs in {work})", flush=True)
    deadline = time.time() + args.timeout
    waiting = dict(apps)
    while waiting:  # each process answers its own health check before HAProxy sends anyone to it
        for name, (proc, url, log) in list(waiting.items()):
            if proc.poll() is not None:
                print(f"{name} exited with code {proc.returncode}:\n{tail(log)}", file=sys.stderr)
                return 1
            if healthy(url):
                del waiting[name]
        if waiting and time.time() > deadline:
            print(f"{', '.join(waiting)} not healthy after {args.timeout:.0f} s", file=sys.stderr)
            return 1
        time.sleep(0.3)

    servers = {name: url.removeprefix("http://") for name, (_, url, _) in apps.items()}
    servers |= {f"remote{i}": addr for i, addr in enumerate(args.remote, 1)}
    cfg, stats_socket = work / "haproxy.cfg", work / "haproxy.sock"
    cfg.write_text(render_config(f"{args.address}:{args.port}", servers, stats_socket, args.cookie, args.log_requests),
                   encoding="utf-8")
    haproxy = spawn([args.haproxy, "-f", str(cfg), "-db"], None)  # its output (errors, request log) goes to ours
    started.insert(0, haproxy)  # stopped first: no new request reaches an app that is going away
    while (states := server_states(stats_socket)).keys() != servers.keys() or set(states.values()) != {"UP"}:
        if haproxy.poll() is not None:
            print(f"haproxy exited with code {haproxy.returncode} (its message is above)", file=sys.stderr)
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
    gone = set()
    while True:
        if haproxy.poll() is not None:
            print(f"haproxy exited with code {haproxy.returncode}", file=sys.stderr)
            return 1
        for name, (proc, _, log) in apps.items():
            if proc.poll() is not None and name not in gone:
                gone.add(name)
                print(f"{name} exited with code {proc.returncode}; its students are sent to the other processes "
                      f"(their training restarts). Last lines of {log}:\n{tail(log)}", file=sys.stderr, flush=True)
        time.sleep(1)


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
    args = ap.parse_args(argv)
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
    started: list[subprocess.Popen] = []
    work = Path(tempfile.mkdtemp(prefix="classroom-"))
    stack = ExitStack()  # the private class store, stopped after the app processes
    try:
        class_store(args, work, stack)
        return serve(args, work, started)
    except Stop:
        print("Stopping HAProxy and the app processes", flush=True)
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop_all(started)
        stack.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
