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

Nothing here imports Streamlit's script-side API: the route is Starlette's (mounted by app.py through st.App).
"""
from __future__ import annotations

import json
import math
import secrets
import threading
import time
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
_served = False  # whether this process serves the route (app.py's st.App); AppTest and a bare script do not


class Feed(Protocol):
    """What a channel serves (ui.live_run): the next update of a live view, as the component's data."""

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
    """The process's channels by token; a session's owner key holds one token at a time."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._by_token: dict[str, Channel] = {}
        self._by_owner: dict[Hashable, Channel] = {}

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


REGISTRY = Registry()


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
    """The route: refuses (HTTP 403) what `check` refuses; then answers each "next" with the feed's next update, and
    each "shows ..." (parse_shown) with that, or with {"idle": true} when the view already shows where its run is."""
    from anyio import CapacityLimiter, to_thread
    from starlette.websockets import WebSocketDisconnect

    ch = check({k.lower(): v for k, v in websocket.headers.items()})
    if ch is None:
        await websocket.close(code=1008)  # before accept: the handshake gets HTTP 403
        return
    await websocket.accept(subprotocol=PROTOCOL)
    try:
        while True:
            msg = await websocket.receive_text()
            shown = parse_shown(msg)
            if len(msg) > MAX_MESSAGE or (msg != "next" and shown is None) or not REGISTRY.touch(ch):
                break  # not ours to answer, or its token was revoked (a new run) or expired
            data = await to_thread.run_sync(ch.feed.update, shown, limiter=_limiter(CapacityLimiter))
            await websocket.send_text(to_json(data))
        await websocket.close(code=1000)
    except (WebSocketDisconnect, OSError):  # the browser went (uvicorn's ClientDisconnected is an OSError)
        return


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
    """ASGI middleware: every HTTP response to a browser without BROWSER_COOKIE sets one (random, HttpOnly,
    SameSite=Strict), which the session's Streamlit socket then presents and a channel is bound to."""

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
                headers.append((b"set-cookie", f"{BROWSER_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict"
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
