"""The class pushed to its students over the live channel, instead of every student page polling it.

A student's page holds one socket on the live channel (server/live_channel.py: the same route, token and limits as a
live view's) whose feed is a ClassFeed. The page says which version of the class it shows ("watch <version>"); the
server answers once the class has another ({"v": version}) or has ended ({"ended": true}), and the page then reruns
(ui/classroom_watch.js), so a student's page runs only when the teacher changed something. Meanwhile the feed writes
the student's tile of the class at a glance (`glance`, at most once every TILE_S; every PRESENT_S when nothing
changed, so the teacher sees who is still here).

One look at the store per class every LOOK_S, however many students wait on it (Watch): a class of 30 idle students
costs the process ten reads a second. A change made in this process (Classroom's listeners) wakes them at once;
another process's (the launcher's, with Redis) within LOOK_S.

Nothing here imports Streamlit: the feed's `glance` and `room` are handed in by ui/classroom.py.
"""
from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from server import classroom as cr

LOOK_S = 0.1  # a class's version is read this often while a student waits on it (another process's change)
TILE_S = 1.0  # a student's tile is written at most this often...
PRESENT_S = 4.0  # ...and at least this often (it says they are here; SEEN_S is the limit)
ENDED = -1  # the version of a class that has ended


@dataclass
class _Class:
    version: int | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0
    task: asyncio.Task | None = None


class Watch:
    """The versions of the classes this process's students wait on, one reader per class."""

    def __init__(self, look_s: float = LOOK_S):
        self.look_s = look_s
        self._classes: dict[str, _Class] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._rooms: set[int] = set()
        self._lock = threading.Lock()

    def listen(self, room: cr.Classroom) -> None:
        """Wake this process's waiters as soon as `room` saves a change (once per room)."""
        with self._lock:
            if id(room) in self._rooms:
                return
            self._rooms.add(id(room))
        room.listeners.append(self.changed)

    def changed(self, code: str, version: int) -> None:
        """A change saved in this process (any thread): the waiters on `code` look now."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._set, code, version)

    def _set(self, code: str, version: int) -> None:
        c = self._classes.get(code)
        if c is not None and c.version != version:
            c.version = version
            c.changed.set()
            c.changed = asyncio.Event()

    async def wait(self, room: cr.Classroom, code: str, known: int | None, timeout: float) -> int | None:
        """The class's version once it is not `known` (ENDED once it has ended), or None after `timeout` seconds
        of no change (also while the store cannot be read)."""
        self._loop = asyncio.get_running_loop()
        c = self._classes.setdefault(code, _Class())
        c.waiting += 1
        try:
            if c.task is None or c.task.done():
                c.task = asyncio.create_task(self._read(room, code, c))
            deadline = self._loop.time() + timeout
            while c.version is None or c.version == known:
                left = deadline - self._loop.time()
                if left <= 0:
                    return None
                try:
                    await asyncio.wait_for(c.changed.wait(), left)
                except TimeoutError:
                    return None
            return c.version
        finally:
            c.waiting -= 1

    async def _read(self, room: cr.Classroom, code: str, c: _Class) -> None:
        """Read the class's version every look_s while anyone waits on it (in a thread: Redis is a network call)."""
        idle = 0.0
        while idle < 5 * self.look_s or c.waiting:
            idle = 0.0 if c.waiting else idle + self.look_s
            try:
                version = await asyncio.to_thread(_version, room, code)
            except cr.StoreUnavailable:
                version = None
            if version is not None:
                self._set(code, version)
            if version == ENDED:
                break
            await asyncio.sleep(self.look_s)
        if self._classes.get(code) is c:
            del self._classes[code]


def _version(room: cr.Classroom, code: str) -> int:
    try:
        return room.state(code).version
    except cr.ClassNotFound:
        return ENDED


WATCH = Watch()


def parse_watch(msg: object) -> int | None:
    """"watch <version>" (the version the page shows) -> the version; None for anything else."""
    if not isinstance(msg, str) or not msg.startswith("watch "):
        return None
    try:
        return int(msg[6:])
    except ValueError:
        return None


class ClassFeed:
    """A student's socket on the class: pushes the class's changes, writes the student's tile."""

    def __init__(self, room: cr.Classroom, code: str, student: str, glance: Callable[[], dict | None],
                 watch: Watch = WATCH):
        self.room, self.code, self.student, self.glance, self.watch = room, code, student, glance, watch
        watch.listen(room)

    def update(self, shown=None) -> dict:  # the live channel's Feed protocol: a class feed serves its socket itself
        return {"idle": True}

    def report(self, last: tuple[str | None, float]) -> tuple[str | None, float]:
        """Write the tile if it changed (or PRESENT_S passed); returns what was written and when."""
        tile = self.glance()
        if tile is None:
            return last
        raw = json.dumps(tile, sort_keys=True, default=str)
        now = time.monotonic()
        if raw == last[0] and now - last[1] < PRESENT_S:
            return last
        try:
            self.room.report(self.code, self.student, tile)
        except cr.ClassroomError:
            return last
        return raw, now

    async def serve(self, websocket, alive: Callable[[], bool]) -> None:
        """Answer "watch <v>" with the next version (or the end), and write the tile, until the socket closes or
        its token is revoked (`alive`)."""
        asked: list[int] = []
        wake = asyncio.Event()

        async def push() -> None:
            last: tuple[str | None, float] = (None, 0.0)
            due = 0.0
            while alive():
                if time.monotonic() >= due:
                    last = await asyncio.to_thread(self.report, last)
                    due = time.monotonic() + TILE_S
                if asked:
                    got = await self.watch.wait(self.room, self.code, asked[-1], max(0.05, due - time.monotonic()))
                    if got is not None and asked:
                        asked.clear()
                        await websocket.send_text(json.dumps({"ended": True} if got == ENDED else {"v": got}))
                else:
                    wake.clear()
                    try:
                        await asyncio.wait_for(wake.wait(), max(0.05, due - time.monotonic()))
                    except TimeoutError:
                        pass
            await websocket.close(code=1000)

        pusher = asyncio.create_task(push())
        try:
            while not pusher.done():
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                version = parse_watch(message.get("text"))
                if version is None:
                    await websocket.close(code=1008)
                    return
                asked.append(version)
                del asked[:-1]
                wake.set()
        finally:
            pusher.cancel()
