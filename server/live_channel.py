"""Live frames on a channel of their own: a WebSocket per live view, beside Streamlit's, to the same app process.

A live view's canvas component (ui/live_common.js) asks this socket for its next update once it has taken the last
one in, so it is sent only what it can draw, and no Streamlit rerun or React render happens per frame. What the
socket serves is a Feed (ui/live_run.py): the session's own cursor on its run, drawn as the page draws it.

Who may read a feed: the browser the page was rendered for, and only while it renders the view.
- A token (secrets.token_urlsafe, 256 bits) is made when the page renders the view, for that session's run; it names
  one feed. It travels to the browser in the component's data (on the session's own Streamlit socket) and back in
  the socket's subprotocol header, never in a URL, so no address bar, shared link or request log holds it.
- It is bound to the browser: BROWSER_COOKIE, an HttpOnly random cookie the app sets on the first page load
  (`middleware`), as the session's Streamlit socket presented it. Another browser, with another cookie (or none),
  is refused even with a copy of the token.
- The request's Origin must be the app's own (its Host header): another site's page cannot open it.
- It expires TTL_S after its last use, and when the session renders the view for another run (a new token then).
Anything else is refused before the socket opens: HTTP 403. Behind HAProxy the sticky cookie keeps the socket on the
process that holds the session; a socket that drops is opened again with a new token from the next render.

What one browser can cost the process (a mischievous student, a script):
- sockets: MAX_PER_TOKEN on one token (a view has one; two while a dropped one is replaced), MAX_PER_BROWSER in all
  for one browser cookie; the next is refused (403).
- requests: a socket is answered at most once per MIN_GAP_S, what a view can draw (asking faster only waits).
- messages: a frame longer than MAX_MESSAGE is refused from its header (close 1009), before its payload is read.
- handshakes: each refused handshake spends a token of its address's bucket (HANDSHAKES); an address with none left
  is refused before anything else is read, after REFUSE_DELAY_S, which costs a sleeping coroutine: a flood from a
  few clients is slowed to their patience. A handshake that opens costs no token, so a class behind one address
  (a school's NAT) opening its views at once is never held back by it.

Nothing here imports Streamlit's script-side API: the route is Starlette's (mounted by app.py through st.App).
"""
from __future__ import annotations

import json
import math
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Protocol
from urllib.parse import urlsplit

PATH = "/_mlsim/live"  # the socket's route (Streamlit reserves /_stcore/, /media/, /component/, /static/)
PROTOCOL = "mlsim.live"  # the subprotocol the browser asks for; the token is the second one it offers
BROWSER_COOKIE = "mlsim_browser"
TTL_S = 120.0  # a token nobody used (rendered or read) for this long is gone
MAX_MESSAGE = 64  # bytes a browser's message may have ("next", or "shows <run> <step> <status>")
STATUSES = ("playing", "paused", "stopped")
MAX_PER_TOKEN = 2  # open sockets on one token: its view's, and a dropped one's until the server sees it closed
MAX_PER_BROWSER = 16  # open sockets of one browser cookie: every live view of its tabs (a page has 1-3)
MIN_GAP_S = 0.04  # a socket is answered at most this often: a view takes an update in no less (~40 ms of frames)
HANDSHAKE_BURST = 20  # refused handshakes an address may make at once (a server restart refuses a class's tokens)...
HANDSHAKE_RATE = 5.0  # ...and per second after that
REFUSE_DELAY_S = 2.0  # an address past its refusals waits this long for the next one
MAX_DELAYED = 512  # refusals kept waiting at once; past that they are sent at once (a socket each is not free)
_served = False  # whether this process serves the route (app.py's st.App); AppTest and a bare script do not


class Feed(Protocol):
    """What a channel serves (ui.live_run): the next update of a live view, as the component's data. A feed with an
    async `serve(websocket, alive)` answers its socket itself (a student's class: server.class_push.ClassFeed)."""

    def update(self, shown: tuple[int, int, str] | None = None) -> dict: ...


@dataclass
class Channel:
    token: str
    owner: Hashable  # (session, live key): a session renders one view of a run at a time
    browser: str  # the browser cookie the session was rendered for
    feed: Feed
    used: float = field(default_factory=time.monotonic)

    def expired(self, now: float) -> bool:
        return now - self.used > TTL_S


class Registry:
    """The process's channels by token; a session's owner key holds one token at a time. It counts the sockets open
    on each token and each browser (`attach`, `detach`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._by_token: dict[str, Channel] = {}
        self._by_owner: dict[Hashable, Channel] = {}
        self._open: Counter[tuple[str, str]] = Counter()  # ("token", t) / ("browser", b) -> sockets open

    def issue(self, owner: Hashable, browser: str, feed: Feed) -> str:
        """The token of `owner`'s view of `feed` (the same one while it is the same feed and valid, else a new one;
        the old one is revoked)."""
        if not browser:
            raise ValueError("a channel needs the browser's cookie")
        now = self._clock()
        with self._lock:
            self._sweep(now)
            old = self._by_owner.get(owner)
            if old is not None and old.feed is feed and old.browser == browser:
                old.used = now
                return old.token
            if old is not None:
                self._by_token.pop(old.token, None)
            ch = Channel(secrets.token_urlsafe(32), owner, browser, feed, now)
            self._by_token[ch.token] = self._by_owner[owner] = ch
            return ch.token

    def revoke(self, owner: Hashable) -> None:
        with self._lock:
            ch = self._by_owner.pop(owner, None)
            if ch is not None:
                self._by_token.pop(ch.token, None)

    def claim(self, token: str, browser: str | None) -> Channel | None:
        """The channel of `token` if it is valid for this browser, else None (unknown, forged, expired, revoked, or
        another browser's)."""
        now = self._clock()
        with self._lock:
            self._sweep(now)
            ch = self._by_token.get(token)
            if ch is None or ch.expired(now) or not browser or not secrets.compare_digest(ch.browser, browser):
                return None
            ch.used = now
            return ch

    def attach(self, ch: Channel) -> bool:
        """Count a socket opening on `ch`; False (not counted) when its token or its browser has its most open."""
        with self._lock:
            if self._open["token", ch.token] >= MAX_PER_TOKEN or self._open["browser", ch.browser] >= MAX_PER_BROWSER:
                return False
            self._open["token", ch.token] += 1
            self._open["browser", ch.browser] += 1
            return True

    def detach(self, ch: Channel) -> None:
        """A socket `attach` counted has closed."""
        with self._lock:
            for key in (("token", ch.token), ("browser", ch.browser)):
                self._open[key] -= 1
                if self._open[key] <= 0:
                    del self._open[key]

    def touch(self, ch: Channel) -> bool:
        """Mark `ch` used; False once it has been revoked or replaced (its socket then closes)."""
        now = self._clock()
        with self._lock:
            if self._by_token.get(ch.token) is not ch or ch.expired(now):
                return False
            ch.used = now
            return True

    def _sweep(self, now: float) -> None:
        for token, ch in list(self._by_token.items()):
            if ch.expired(now):
                del self._by_token[token]
                if self._by_owner.get(ch.owner) is ch:
                    del self._by_owner[ch.owner]

    def __len__(self) -> int:
        return len(self._by_token)


class Buckets:
    """A token bucket per address: `take(address)` spends one, False when the address has none left (it gets `rate`
    a second back, up to `burst`); `left(address)` whether it has one. Full buckets are forgotten once more than
    `most` addresses are known."""

    def __init__(self, burst: float = HANDSHAKE_BURST, rate: float = HANDSHAKE_RATE, most: int = 4096,
                 clock: Callable[[], float] = time.monotonic):
        self.burst, self.rate, self.most, self._clock = burst, rate, most, clock
        self._lock = threading.Lock()
        self._level: dict[str, tuple[float, float]] = {}  # address -> (tokens, when)

    def _tokens(self, address: str, now: float) -> float:
        tokens, at = self._level.get(address, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self.rate)

    def left(self, address: str) -> bool:
        with self._lock:
            return self._tokens(address, self._clock()) >= 1

    def take(self, address: str) -> bool:
        now = self._clock()
        with self._lock:
            tokens = self._tokens(address, now)
            self._level[address] = (tokens - 1 if tokens >= 1 else tokens, now)
            if len(self._level) > self.most:
                self._level = {a: v for a, v in self._level.items() if self._tokens(a, now) < self.burst}
            return tokens >= 1


REGISTRY = Registry()
HANDSHAKES = Buckets()


def served() -> bool:
    """Whether this process serves the channel's route (else a live view pulls its updates through Streamlit)."""
    return _served


def same_origin(headers: dict[str, str]) -> bool:
    """The request comes from a page of this app: its Origin's host is the Host it was sent to."""
    origin, host = headers.get("origin"), headers.get("host")
    return bool(origin and host) and urlsplit(origin).netloc.lower() == host.lower()


def offered_token(headers: dict[str, str]) -> str | None:
    """The token the browser offered as its second subprotocol (`new WebSocket(url, [PROTOCOL, token])`)."""
    offered = [p.strip() for p in headers.get("sec-websocket-protocol", "").split(",")]
    return offered[1] if len(offered) == 2 and offered[0] == PROTOCOL and offered[1] else None


def client_address(peer: object, forwarded: object) -> str:
    """Where a request came from: its peer's address; behind a proxy on this machine (a loopback peer, or none known:
    st.context.ip_address hides a loopback one), the last X-Forwarded-For entry, the one the proxy added (the
    launcher's HAProxy: option forwardfor); earlier entries are the client's to write and are not read. "local"
    where neither is a string (a test harness's session)."""
    peer = peer if isinstance(peer, str) else None
    if peer in (None, "", "127.0.0.1", "::1") and isinstance(forwarded, str) and forwarded.strip():
        return forwarded.rsplit(",", 1)[-1].strip()[:64] or "local"
    return (peer or "local")[:64]


def cookie(headers: dict[str, str], name: str = BROWSER_COOKIE) -> str | None:
    jar = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 — a malformed cookie header is no cookie
        return None
    return jar[name].value if name in jar else None


def check(headers: dict[str, str], registry: Registry = REGISTRY) -> Channel | None:
    """The channel a socket request may read (headers: lower-case names), or None: refused."""
    token = offered_token(headers)
    if token is None or not same_origin(headers):
        return None
    return registry.claim(token, cookie(headers))


async def live_socket(websocket) -> None:
    """The route: refuses (HTTP 403) an address with no refusals left (late), what `check` refuses and a socket past
    its token's or browser's count (each spends one of its address's refusals); then answers each "next" with the
    feed's next update, and each "shows ..." (parse_shown) with that, or with {"idle": true} when the view already
    shows where its run is, at most once per MIN_GAP_S."""
    import anyio
    from anyio import CapacityLimiter, to_thread
    from starlette.websockets import WebSocketDisconnect

    headers = {k.lower(): v for k, v in websocket.headers.items()}
    client = websocket.client.host if websocket.client else None
    address = client_address(client, headers.get("x-forwarded-for"))
    if not HANDSHAKES.left(address):
        return await _refuse(websocket, late=True)
    ch = check(headers)
    if ch is None or not REGISTRY.attach(ch):
        HANDSHAKES.take(address)
        return await _refuse(websocket)
    try:
        limit_frames(websocket, MAX_MESSAGE)
        await websocket.accept(subprotocol=PROTOCOL)
        if hasattr(ch.feed, "serve"):  # a feed that speaks for itself: a student's class (server.class_push)
            return await ch.feed.serve(websocket, lambda: REGISTRY.touch(ch))
        due = 0.0
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            msg = message.get("text")  # None: a binary message, never ours
            shown = parse_shown(msg) if msg is not None else None
            if msg is None or len(msg) > MAX_MESSAGE or (msg != "next" and shown is None) or not REGISTRY.touch(ch):
                break  # not ours to answer, or its token was revoked (a new run) or expired
            await anyio.sleep(max(0.0, due - time.monotonic()))  # pace: a view asking faster than it draws waits
            due = time.monotonic() + MIN_GAP_S
            data = await to_thread.run_sync(ch.feed.update, shown, limiter=_limiter(CapacityLimiter))
            await websocket.send_text(to_json(data))
        await websocket.close(code=1000)
    except (WebSocketDisconnect, OSError):  # the browser went (uvicorn's ClientDisconnected is an OSError)
        return
    finally:
        REGISTRY.detach(ch)


_delayed = [0]  # refusals waiting now


async def _refuse(websocket, late: bool = False) -> None:
    """Close before accept: the handshake gets HTTP 403; `late`, after REFUSE_DELAY_S (while fewer than MAX_DELAYED
    wait), so that a client refused again and again cannot ask again at once."""
    import anyio

    if late and _delayed[0] < MAX_DELAYED:
        _delayed[0] += 1
        try:
            await anyio.sleep(REFUSE_DELAY_S)
        finally:
            _delayed[0] -= 1
    try:
        await websocket.close(code=1008)
    except (OSError, RuntimeError):  # the client gave up waiting: nothing to send
        pass


def limit_frames(websocket, size: int) -> bool:
    """Make the server refuse a frame longer than `size` bytes from its header, before it reads the payload (close
    1009): uvicorn reads every socket's messages up to Streamlit's server.maxMessageSize (200 MB), which this
    socket's never need. Reaches the connection's sans-I/O websockets protocol through the ASGI receive callable
    (uvicorn's websockets-sansio implementation, the one Streamlit runs); False where the server is another one,
    and then a long message is refused once read."""
    protocol = getattr(getattr(websocket, "_receive", None), "__self__", None)
    conn = getattr(protocol, "conn", None)
    if conn is None or not hasattr(conn, "max_message_size"):
        return False
    conn.max_message_size = size
    return True


def parse_shown(msg: str) -> tuple[int, int, str] | None:
    """A view that is not playing says what it shows: "shows <run> <step> <status>" (run and step "-" before its
    first frame, which no cursor matches); None for anything else."""
    parts = msg.split(" ")
    if len(parts) != 4 or parts[0] != "shows" or parts[3] not in STATUSES:
        return None
    try:
        return tuple(-1 if p == "-" else int(p) for p in parts[1:3]) + (parts[3],)
    except ValueError:
        return None


def to_json(data) -> str:
    """Compact JSON that the browser's JSON.parse reads: a NaN or an infinity (a diverged loss) is sent as null."""
    try:
        return json.dumps(data, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return json.dumps(_finite(data), separators=(",", ":"), allow_nan=False)


def _finite(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


_limiters: list = []


def _limiter(make):
    """One thread limiter for every feed (a feed waits ~40 ms for frames: they must not hold Starlette's own)."""
    if not _limiters:
        _limiters.append(make(64))
    return _limiters[0]


class BrowserCookie:
    """ASGI middleware: every HTTP response to a browser without BROWSER_COOKIE sets one (random, HttpOnly), which the
    session's Streamlit socket then presents, a channel is bound to and a class knows a student by. SameSite=Lax:
    opening a link from another site (a QR scanner, a chat) sends it, so the browser keeps its cookie and a student
    stays one student (with Strict that page load came without it and was given a new one); another site's page
    still cannot send it with a request of its own (a socket, a form)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or _has_cookie(scope):
            return await self.app(scope, receive, send)
        value = secrets.token_urlsafe(24)
        secure = "; Secure" if scope.get("scheme") == "https" else ""

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"set-cookie", f"{BROWSER_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax"
                                f"{secure}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def _has_cookie(scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"cookie" and cookie({"cookie": value.decode("latin-1")}):
            return True
    return False


def url_path() -> str:
    """The socket's path on this server (under Streamlit's server.baseUrlPath, if one is set)."""
    from streamlit import config

    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{PATH}" if base else PATH


def routes() -> list:
    """The channel's route for st.App (app.py); from then on this process's live views use it."""
    from starlette.routing import WebSocketRoute

    global _served
    _served = True
    return [WebSocketRoute(url_path(), live_socket)]


def middleware() -> list:
    from starlette.middleware import Middleware

    return [Middleware(BrowserCookie)]
