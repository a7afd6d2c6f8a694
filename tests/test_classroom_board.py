"""The class at a glance, questions as a class tool and the pushed class (server.classroom, server.class_push,
sim.core.glance), on the in-process store and on Redis (the `store` fixture of tests/test_classroom.py)."""
import asyncio
import base64
import csv
import io
import json

import numpy as np
import pytest
from test_classroom import store  # noqa: F401 - the fixture: both stores

from server import class_push
from server import classroom as cr
from server.classroom import Classroom
from sim.core.glance import figures, glance, thumbnail


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_roster_names_tiles_and_board(store):  # noqa: F811
    clock = Clock()
    room = Classroom(store, clock=clock)
    code, secret = room.create("classification", {"lr": "0.03"})
    a, b = room.join(code, "browser:a", "10.0.0.1"), room.join(code, "browser:b", "10.0.0.1")
    assert room.join(code, "browser:a", "10.0.0.1") == a  # the same browser: the same student, the same number
    assert room.rename(code, b, "  Ada   Lovelace ") == "Ada Lovelace"
    for bad in ("x" * (cr.MAX_NAME + 1), "bell\x07"):
        with pytest.raises(cr.BadInput):
            room.rename(code, b, bad)
    roster = room.roster(code, secret)
    assert (roster[a]["n"], roster[a]["label"]) == (1, "Student 1")
    assert (roster[b]["n"], roster[b]["label"]) == (2, "Ada Lovelace")
    room.report(code, b, {"lab": "classification", "follow": False, "params": {"lr": "0.3"}, "step": 40,
                          "figures": [["val_loss", 0.21]]})
    clock.now += 3
    board = room.board(code, secret)
    assert [t["n"] for t in board] == [1, 2]
    assert board[0]["ago"] is None and "step" not in board[0]  # joined, never reported: a tile without a run
    assert board[1]["step"] == 40 and board[1]["follow"] is False and board[1]["ago"] == pytest.approx(3.0)
    assert room.students(code, secret) == 1  # a report says the student is here
    with pytest.raises(cr.BadInput):
        room.report(code, b, {"x": "y" * cr.MAX_TILE})
    with pytest.raises(cr.ClassNotFound):
        room.report(code, "not-a-student", {"lab": "x"})
    with pytest.raises(cr.Forbidden):
        room.board(code, "not-the-secret")


def test_closed_question_keeps_its_answers_and_takes_no_more(store):  # noqa: F811
    clock = Clock()
    room = Classroom(store, clock=clock)
    code, secret = room.create("classification", {})
    q = room.pose(code, secret, "Will it curve?", ["yes", "no"])
    room.answer(code, "s1", q.id, "yes")
    clock.now += 2.5
    room.answer(code, "s2", q.id, "no")
    room.answer(code, "s2", q.id, "yes")  # changed their mind while it was open: one answer, the latest
    assert room.counts(code) is None  # hidden from the class until the reveal...
    assert room.histogram(code, secret) == {"yes": 2, "no": 0}  # ...the teacher's own view has them
    room.close_question(code, secret)
    state = room.state(code)
    assert state.question.closed and not state.question.open and not state.question.revealed
    with pytest.raises(cr.QuestionClosed):
        room.answer(code, "s2", q.id, "no")
    with pytest.raises(cr.QuestionClosed):
        room.answer(code, "s3", q.id, "no")
    assert room.my_answer(code, "s2", q.id) == "yes" and room.my_answer(code, "s3", q.id) is None
    assert room.state(code).question.closed  # a later look (a reload) sees it closed too
    room.reveal(code, secret)
    assert room.counts(code) == {"yes": 2, "no": 0}


def test_answers_csv(store):  # noqa: F811
    clock = Clock()
    room = Classroom(store, clock=clock)
    code, secret = room.create("classification", {})
    s1, s2 = room.join(code, "browser:1", "a"), room.join(code, "browser:2", "a")
    room.rename(code, s2, "Grace, H.")  # a comma: quoted by the CSV writer
    q1 = room.pose(code, secret, "key.q1", ["key.o1", "key.o2"])
    clock.now += 4
    room.answer(code, s1, q1.id, "key.o2")
    clock.now += 1
    room.answer(code, s2, q1.id, "key.o2")
    q2 = room.pose(code, secret, "Which?", ["a", "b", "c"])
    clock.now += 2
    room.answer(code, s2, q2.id, "c")
    words = {"key.q1": "Will it curve?", "key.o1": "yes", "key.o2": "no"}
    rows = list(csv.DictReader(io.StringIO(room.answers_csv(code, secret, lambda x: words.get(x, x)))))
    answers = [(r["question_no"], r["question"], r["student"], r["answer"], r["seconds"]) for r in rows
               if r["row"] == "answer"]
    assert answers == [("1", "Will it curve?", "Student 1", "no", "4.0"),
                       ("1", "Will it curve?", "Grace, H.", "no", "5.0"), ("2", "Which?", "Grace, H.", "c", "2.0")]
    counts = [(r["question_no"], r["answer"], r["count"]) for r in rows if r["row"] == "count"]
    assert counts == [("1", "yes", "0"), ("1", "no", "2"), ("2", "a", "0"), ("2", "b", "0"), ("2", "c", "1")]
    assert {r["options"] for r in rows if r["question_no"] == "1"} == {"yes | no"}
    with pytest.raises(cr.Forbidden):
        room.answers_csv(code, None)


def test_teacher_step_is_kept_without_a_new_version(store):  # noqa: F811
    room = Classroom(store)
    code, secret = room.create("classification", {"lr": "0.03"})
    v = room.publish(code, secret, "classification", {"lr": "0.03"}, step=120)
    state = room.state(code)
    assert (state.version, state.step) == (v, 120) and v == 1  # students have nothing new to rerun for
    v2 = room.publish(code, secret, "classification", {"lr": "0.3"}, step=None)
    assert v2 == 2 and room.state(code).step is None  # new settings: a new run, from its start


def run_loop(coro):
    """asyncio.run on a thread of its own: a test before this one (Playwright's sync API) may have left an event
    loop running on this thread, where asyncio.run refuses."""
    import threading

    out = {}

    def run():
        try:
            out["value"] = asyncio.run(coro)
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    if "error" in out:
        raise out["error"]
    return out.get("value")


class FakeSocket:
    """What ClassFeed.serve needs of a Starlette WebSocket: receive() from a queue, send_text() to a list."""

    def __init__(self):
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.sent: list[dict] = []
        self.closed = None

    async def receive(self) -> dict:
        return await self.inbox.get()

    async def send_text(self, text: str) -> None:
        self.sent.append(json.loads(text))

    async def close(self, code: int = 1000) -> None:
        self.closed = code


def test_class_feed_pushes_changes_and_writes_tiles():
    room = Classroom(cr.MemoryStore())
    code, secret = room.create("classification", {"lr": "0.03"})
    student = room.join(code, "browser:s", "a")
    tiles = iter(range(1000))

    async def scenario():
        watch = class_push.Watch(look_s=0.05)
        feed = class_push.ClassFeed(room, code, student, lambda: {"lab": "classification", "step": next(tiles)},
                                    watch=watch)
        ws = FakeSocket()
        alive = [True]
        task = asyncio.create_task(feed.serve(ws, lambda: alive[0]))
        await ws.inbox.put({"type": "websocket.receive", "text": "watch 1"})
        await asyncio.sleep(0.3)
        assert ws.sent == []  # nothing changed: nothing pushed
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.to_thread(room.publish, code, secret, "classification", {"lr": "0.3"})
        for _ in range(100):
            if ws.sent:
                break
            await asyncio.sleep(0.01)
        took = loop.time() - t0
        assert ws.sent == [{"v": 2}]
        await ws.inbox.put({"type": "websocket.receive", "text": "watch 2"})
        await asyncio.to_thread(room.end, code, secret)
        for _ in range(100):
            if len(ws.sent) == 2:
                break
            await asyncio.sleep(0.01)
        assert ws.sent[-1] == {"ended": True}
        await ws.inbox.put({"type": "websocket.receive", "text": "not ours"})
        await asyncio.wait_for(task, 2)
        return took, ws.closed

    took, closed = run_loop(scenario())
    assert closed == 1008  # a message that is not "watch <v>" ends the socket
    assert took < 1.0  # pushed by this process's own change, not found by a timer (a generous bound, not a timing)


def test_class_feed_reports_the_tile_while_the_page_is_idle():
    room = Classroom(cr.MemoryStore())
    code, secret = room.create("classification", {})
    student = room.join(code, "browser:s", "a")
    steps = iter(range(1, 1000))

    async def scenario():
        feed = class_push.ClassFeed(room, code, student, lambda: {"lab": "classification", "step": next(steps)},
                                    watch=class_push.Watch(look_s=0.05))
        ws, alive = FakeSocket(), [True]
        task = asyncio.create_task(feed.serve(ws, lambda: alive[0]))
        await asyncio.sleep(class_push.TILE_S * 2.5)
        alive[0] = False
        await ws.inbox.put({"type": "websocket.disconnect"})
        await asyncio.wait_for(task, 3)

    run_loop(scenario())
    tile = room.board(code, secret)[0]
    assert tile["step"] >= 2  # written again as the run moved on, with no page run


def test_parse_watch():
    assert class_push.parse_watch("watch 12") == 12
    for bad in ("watch", "watch x", "next", None, b"watch 1", "watch 1 2"):
        assert class_push.parse_watch(bad) is None


def test_glance_reads_every_labs_frame():
    """Every live lab's frame at its page's defaults gives a step and a finite key figure (the dashboard's tile)."""
    from benchmarks.classroom import LABS, lab_spec

    for lab in LABS:
        spec, _ = lab_spec(lab)
        run = spec.build()
        run.advance(2 * spec.unit)
        seen = glance(run.frame())
        assert seen["step"] == 2 * spec.unit, lab
        assert seen["figures"] and all(np.isfinite(v) for _, v in seen["figures"]), lab
        assert (seen["thumb"] is not None) == (lab == "classification"), lab
        json.dumps(seen, allow_nan=False)


def test_figures_order_and_models():
    frame = {"epoch": 3, "train_loss": 0.5, "val_loss": 0.7, "val_acc": 0.9, "grid": None}
    assert figures(frame) == [["val_loss", 0.7], ["val_acc", 0.9], ["train_loss", 0.5]]
    assert figures({"steps": 1, "runs": [{"recent": 2.0}, {"recent": float("nan")}, {"recent": 1.0}]}) == \
        [["loss", 2.0], ["loss", 1.0]]
    assert figures({"steps": 1, "loss": np.array([3.0, 2.5], np.float32)}) == [["loss", 2.5]]
    assert figures({"epoch": 1, "last": {"val_loss": 1.5}}) == [["val_loss", 1.5]]


def test_thumbnail_against_a_direct_reading():
    res = 50
    p = np.fromfunction(lambda i, j: (i * 5 + j) % 256, (res, res)).astype(np.uint8)
    small = thumbnail(base64.b64encode(p.tobytes()).decode())
    got = np.frombuffer(base64.b64decode(small["data"]), np.uint8).reshape(20, 20)
    pick = np.round(np.linspace(0, res - 1, 20)).astype(int)
    assert small["k"] == 1 and np.array_equal(got, p[np.ix_(pick, pick)])
    three = np.zeros((res, res, 3), np.uint8)
    three[:, :25, 2] = 200  # class 2 on the left half, class 0 elsewhere
    three[:, 25:, 0] = 200
    small = thumbnail(base64.b64encode(three.tobytes()).decode())
    got = np.frombuffer(base64.b64decode(small["data"]), np.uint8).reshape(20, 20)
    assert small["k"] == 3 and set(got[:, 0]) == {2} and set(got[:, -1]) == {0}
