"""server/live_channel.py and ui.live_run.Feed: who may read a live view's channel, and what it is sent.

A token names one session's view of one run, is bound to the browser's cookie, expires unused, and a socket request
must come from the app's own origin with the token in its subprotocol header; everything else gets nothing.
"""
from test_live_core import Walk

from server.live_channel import (
    BROWSER_COOKIE,
    MAX_PER_BROWSER,
    MAX_PER_TOKEN,
    PROTOCOL,
    TTL_S,
    Buckets,
    Registry,
    check,
    client_address,
    cookie,
    limit_frames,
    offered_token,
    parse_shown,
    same_origin,
    to_json,
)
from sim.core.live import LiveSpec, Runs
from ui.live_plots import show_frames
from ui.live_run import Feed


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Views:
    """Stand-ins for two sessions' feeds."""

    def __init__(self, name: str):
        self.name = name

    def update(self) -> dict:
        return {"view": self.name}


def headers(token: str | None, browser: str | None = "b-1", origin: str = "http://10.0.0.5:8501",
            host: str = "10.0.0.5:8501") -> dict[str, str]:
    h = {"host": host, "origin": origin}
    if token is not None:
        h["sec-websocket-protocol"] = f"{PROTOCOL}, {token}"
    if browser is not None:
        h["cookie"] = f"SERVERID=app1; {BROWSER_COOKIE}={browser}"
    return h


def test_a_token_opens_its_own_sessions_view_only_in_its_own_browser():
    reg = Registry()
    mine, theirs = Views("mine"), Views("theirs")
    t1 = reg.issue(("session-1", "cls"), "b-1", mine)
    t2 = reg.issue(("session-2", "cls"), "b-2", theirs)
    assert t1 != t2 and len(t1) >= 40  # 256 random bits
    assert reg.claim(t1, "b-1").feed is mine and reg.claim(t2, "b-2").feed is theirs
    assert reg.claim(t2, "b-1") is None  # another session's token, from this browser: nothing
    assert reg.claim(t1, "b-2") is None and reg.claim(t1, None) is None and reg.claim(t1, "") is None


def test_a_forged_or_altered_token_is_refused():
    reg = Registry()
    good = reg.issue(("s", "lm.train"), "b-1", Views("v"))
    for forged in ("", "x", good[:-1], good + "A", good.upper() if good.upper() != good else good.lower(),
                   "0" * len(good)):
        assert reg.claim(forged, "b-1") is None, forged


def test_a_token_expires_unused_and_lives_while_used():
    clock = Clock()
    reg = Registry(clock)
    view = Views("v")
    token = reg.issue(("s", "cls"), "b-1", view)
    clock.now += TTL_S * 0.9
    ch = reg.claim(token, "b-1")
    assert ch is not None  # used: its life starts again
    clock.now += TTL_S * 0.9
    assert reg.touch(ch)
    clock.now += TTL_S + 1
    assert reg.claim(token, "b-1") is None and not reg.touch(ch)
    assert reg.issue(("s", "cls"), "b-1", view) != token  # the next render makes a new one
    assert len(reg) == 1  # the expired one is gone


def test_a_render_of_the_same_view_keeps_its_token_and_another_run_revokes_it():
    reg = Registry()
    first, second = Views("run 1"), Views("run 2")
    token = reg.issue(("s", "cls"), "b-1", first)
    assert reg.issue(("s", "cls"), "b-1", first) == token  # a rerun: the open socket stays valid
    ch = reg.claim(token, "b-1")
    new = reg.issue(("s", "cls"), "b-1", second)  # new settings: a new cursor, a new token
    assert new != token and reg.claim(token, "b-1") is None and not reg.touch(ch)
    assert reg.claim(new, "b-1").feed is second
    reg.revoke(("s", "cls"))
    assert reg.claim(new, "b-1") is None


def test_a_channel_needs_a_browser_cookie():
    try:
        Registry().issue(("s", "cls"), "", Views("v"))
    except ValueError:
        return
    raise AssertionError("a token without a browser to bind it to")


def test_a_socket_request_needs_the_apps_origin_its_browser_and_the_token_in_its_header():
    reg = Registry()
    token = reg.issue(("s", "cls"), "b-1", Views("v"))
    assert check(headers(token), reg) is not None
    assert check(headers(token, origin="http://evil.example"), reg) is None  # another site's page
    assert check(headers(token, origin="http://10.0.0.5:9999"), reg) is None  # another port is another origin
    assert check({k: v for k, v in headers(token).items() if k != "origin"}, reg) is None
    assert check(headers(token, browser="b-2"), reg) is None  # another browser
    assert check(headers(token, browser=None), reg) is None
    assert check(headers(None), reg) is None
    assert check({**headers(token), "sec-websocket-protocol": token}, reg) is None  # not our protocol's form
    assert check(headers("forged"), reg) is None


def test_a_token_and_a_browser_open_a_bounded_number_of_sockets():
    """Issue 40: 200 sockets on one token were accepted. MAX_PER_TOKEN per token, MAX_PER_BROWSER per browser cookie;
    a closed socket frees its place."""
    reg = Registry()
    views = [Views(str(i)) for i in range(MAX_PER_BROWSER + 1)]
    chs = [reg.claim(reg.issue(("s", f"view{i}"), "b-1", v), "b-1") for i, v in enumerate(views)]
    assert [reg.attach(chs[0]) for _ in range(MAX_PER_TOKEN + 1)] == [True] * MAX_PER_TOKEN + [False]
    reg.detach(chs[0])
    assert reg.attach(chs[0])  # its place again
    opened = [reg.attach(ch) for ch in chs[1:]]  # the browser's other views
    assert opened.count(True) == MAX_PER_BROWSER - MAX_PER_TOKEN and not opened[-1]
    other = reg.claim(reg.issue(("t", "view"), "b-2", Views("x")), "b-2")
    assert reg.attach(other)  # another browser is not held back


def test_a_bucket_per_address_refills_at_its_rate():
    clock = Clock()
    buckets = Buckets(burst=3, rate=2.0, most=2, clock=clock)
    assert [buckets.take("10.0.0.1") for _ in range(4)] == [True, True, True, False]
    assert not buckets.left("10.0.0.1") and buckets.left("10.0.0.2")  # each address its own
    clock.now += 0.5  # one back (2 a second)
    assert buckets.left("10.0.0.1") and buckets.take("10.0.0.1") and not buckets.left("10.0.0.1")
    buckets.take("a")
    clock.now += 10  # every bucket full again
    buckets.take("b")  # more addresses than it keeps (2): the full ones are forgotten
    assert buckets._level.keys() == {"b"} and buckets.left("10.0.0.1")  # a forgotten one starts full


def test_the_address_a_request_came_from():
    assert client_address("10.0.0.5", None) == "10.0.0.5"
    assert client_address("10.0.0.5", "1.2.3.4") == "10.0.0.5"  # a remote peer's own header means nothing
    assert client_address("127.0.0.1", "6.6.6.6, 10.0.0.9") == "10.0.0.9"  # the proxy's entry, not the client's
    assert client_address(None, "10.0.0.9") == "10.0.0.9"  # st.context.ip_address hides a loopback peer
    assert client_address("127.0.0.1", None) == "127.0.0.1" and client_address(None, "") == "local"
    assert client_address(object(), object()) == "local" and len(client_address("x" * 500, None)) == 64


def test_frames_longer_than_a_message_are_refused_by_the_servers_parser():
    """limit_frames sets the connection's own limit (uvicorn's websockets-sansio protocol, reached through the ASGI
    receive callable), so the parser refuses a long frame from its header; another server leaves it alone."""
    from types import SimpleNamespace

    class Protocol:  # uvicorn's WebSocketsSansIOProtocol: .conn is websockets' ServerProtocol
        def __init__(self):
            from websockets.server import ServerProtocol

            self.conn = ServerProtocol(max_size=200 << 20)

        async def receive(self):
            return {}

    proto = Protocol()
    assert limit_frames(SimpleNamespace(_receive=proto.receive), 64) and proto.conn.max_message_size == 64
    assert not limit_frames(SimpleNamespace(_receive=lambda: None), 64)


def test_header_parsing():
    assert offered_token({"sec-websocket-protocol": f"{PROTOCOL}, abc"}) == "abc"
    assert offered_token({"sec-websocket-protocol": f"{PROTOCOL}"}) is None
    assert offered_token({"sec-websocket-protocol": "other, abc"}) is None
    assert cookie({"cookie": f"a=1; {BROWSER_COOKIE}=xyz"}) == "xyz"
    assert cookie({"cookie": "a=1"}) is None and cookie({"cookie": '"; ;=;"bad'}) is None and cookie({}) is None
    assert same_origin({"origin": "https://Host:1", "host": "host:1"})
    assert not same_origin({"origin": "null", "host": "host:1"})


def test_a_diverged_loss_is_sent_as_null():
    assert to_json({"loss": float("nan"), "xs": [1.0, float("inf")], "n": 3}) == '{"loss":null,"xs":[1.0,null],"n":3}'


def walk_feed(stop_at: int | None = None) -> tuple[Feed, list]:
    runs = Runs()
    cursor = runs.open(LiveSpec("test.channel", ("walk", stop_at), lambda: Walk(1, stop_at=stop_at)))
    feed = Feed(cursor)
    shown = []

    def show(frames, seq, status, cursor):
        shown.append(status)
        show_frames([{"caption": str(f["x"]), "panels": [], "step": f["step"], "run": f["run"], "n": f["n"]}
                     for f in frames], key="test.view", seq=seq, status=status)

    feed.show = show
    return feed, shown


def test_a_feed_sends_what_the_labs_show_gives_its_component_and_moves_the_sessions_cursor():
    feed, shown = walk_feed()
    first = feed.update()  # no Streamlit script runs here: the component's data is captured
    assert first["status"] == "paused" and [f["step"] for f in first["frames"]] == [0] and not first["rerun"]
    feed.cursor.play()
    steps = []
    for _ in range(30):
        data = feed.update()
        assert data["status"] == "playing" and data["seq"] > first["seq"]
        steps += [f["step"] for f in data["frames"]]
    assert steps == sorted(set(steps)) and steps[-1] > 0  # each frame once, in order, the cursor moved on
    assert all(f["run"] == feed.cursor.serial for f in data["frames"])
    feed.cursor.runs.scheduler.close()


def test_a_run_that_stops_by_itself_tells_the_browser_to_rerun_the_page():
    feed, shown = walk_feed(stop_at=5)
    feed.cursor.play()
    for _ in range(200):
        data = feed.update()
        if data["status"] != "playing":
            break
    assert data["status"] == "stopped" and data["rerun"] and data["frames"][-1]["step"] == 5
    assert not feed.update()["rerun"]  # once
    feed.cursor.runs.scheduler.close()


def test_a_view_not_playing_that_shows_where_its_run_is_gets_idle_and_one_behind_gets_the_move():
    """The browser of a paused view says what it shows ("shows run step status"); a move it missed (a Step whose
    page rerun never arrived) comes back as an update when it says so twice, anything else as {"idle": true}."""
    feed, shown = walk_feed()
    cursor = feed.cursor
    first = feed.update()
    at = (first["frames"][-1]["run"], first["frames"][-1]["step"], first["status"])
    assert at == (cursor.serial, 0, "paused") and feed.update(at) == {"idle": True, "rerun": False}
    cursor.step_once()  # the click's callback ran; its page rerun is what the browser missed
    assert feed.update(at) == {"idle": True, "rerun": False}  # behind once: the page's rerun may be on its way
    missed = feed.update(at)  # behind twice: it was lost
    assert missed["status"] == "paused" and missed["frames"][-1]["step"] == cursor.pos > 0
    assert feed.update((cursor.serial, cursor.pos, "paused")) == {"idle": True, "rerun": False}
    assert feed.update((cursor.serial, cursor.pos, "playing"))["idle"]  # it shows another status: once idle,
    assert "frames" in feed.update((cursor.serial, cursor.pos, "playing"))  # then the update
    cursor.play()
    assert "frames" in feed.update((cursor.serial, cursor.pos, "playing"))  # playing: always the next frames
    cursor.runs.scheduler.close()


def test_what_a_view_says_it_shows_is_read_strictly():
    assert parse_shown("shows 3 120 paused") == (3, 120, "paused")
    assert parse_shown("shows - - stopped") == (-1, -1, "stopped")
    for bad in ("next", "shows 3 120", "shows 3 120 paused x", "shows a 1 paused", "shows 1 1 dancing", "", "shows"):
        assert parse_shown(bad) is None, bad


def test_the_page_and_the_channel_take_turns_to_draw():
    """The known hazard (issue 38): the channel's thread drew a view's show() while a page rerun of the same session
    drew it too, both reading and writing the session's state. Feed.draw makes them take turns: a show() that sleeps
    while drawing is never entered twice at once, from the channel's update and from the page's side together."""
    import threading
    import time

    feed, _ = walk_feed()
    inside, most = [0], [0]
    lock = threading.Lock()

    def show(frames, seq, status, cursor):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)
        with lock:
            inside[0] -= 1

    feed.show = show
    page = threading.Thread(target=lambda: [feed.draw(show, [], 0, "paused") for _ in range(10)])
    channel = threading.Thread(target=lambda: [feed.update() for _ in range(10)])
    page.start()
    channel.start()
    page.join()
    channel.join()
    assert most[0] == 1
    feed.cursor.runs.scheduler.close()
