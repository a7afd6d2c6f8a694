"""Shared class state: a class code, what the class follows, questions and anonymous answers.

No Streamlit here. A class lives in a key-value store: `MemoryStore` (one app process, the default) or
`RedisStore` (several app processes behind the load balancer, each student's browser on any of them).
Only the holder of the class's secret (made at `create`, kept in the teacher's session and that browser
tab's own storage, stored here only as a hash) can change what the class follows, pose or reveal a
question, or end the class; a reloaded teacher's tab hands it back (`resume`) and gets a new one. Every
key of a class expires `timeout_s` after the teacher's last heartbeat, so a class whose teacher is
gone ends by itself and its answers go with it.

A student is who the class says they are: `join` issues a student id for a member credential that the page's script
cannot choose (the server's HttpOnly browser cookie, else the session: ui.classroom), the same id for the same
credential, and answers, sent settings, presence and the rate limit count by it. A new credential (cleared cookies,
a private window, a script) is a new join: at most `join_limit` a minute from one address and `max_students` in all,
so every hash a teacher reads holds at most one entry per student, whatever a student tries.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"  # no 0/O, 1/I/L, 2/Z, 5/S, 8/B: read off a projector without doubt
CODE_LEN = 5
TIMEOUT_S = 90.0  # a class ends this long after the teacher's last heartbeat
RATE_WINDOW_S = 10.0  # each browser may send RATE_LIMIT answers / settings per window
RATE_LIMIT = 8
SEEN_S = 10.0  # a student counts as present this long after their last poll
MAX_TEXT = 300  # longest question or option a teacher can type
MAX_OPTIONS = 6
MAX_STUDENTS = 500  # students one class takes (a class has 20-40): the most entries any hash of a class holds
JOIN_LIMIT = 20  # new students one address may bring into a class per JOIN_WINDOW_S (a class behind one NAT joins
JOIN_WINDOW_S = 60.0  # over a minute or two; a student who makes themselves new again and again is held back)
SECRET_MAX = 64  # a secret handed back by a browser longer than this cannot be one of ours
MAX_NAME = 20  # the name a student may type (optional; shown as text)
MAX_TILE = 4000  # bytes of a student's tile in the class at a glance (a 24×24 thumbnail, a sparkline, settings)
MAX_ASKED = 100  # questions a class keeps for the teacher's file of answers


class ClassroomError(Exception):
    """Base of what the class machinery refuses; `reason` names the message the page shows."""
    reason = "error"


class StoreUnavailable(ClassroomError):
    reason = "store"


class ClassNotFound(ClassroomError):
    reason = "not_found"


class Forbidden(ClassroomError):
    reason = "forbidden"


class RateLimited(ClassroomError):
    reason = "rate"


class BadInput(ClassroomError):
    reason = "bad_input"


class QuestionClosed(ClassroomError):
    reason = "closed"


class ClassFull(ClassroomError):
    reason = "full"


class JoinLimited(ClassroomError):
    reason = "joins"


class Store(Protocol):
    """The few key-value operations a class needs; every key expires (`ttl` seconds)."""

    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str, ttl: float, only_new: bool = False) -> bool: ...
    def delete(self, *keys: str) -> None: ...
    def expire(self, key: str, ttl: float) -> None: ...
    def incr(self, key: str, ttl: float) -> int: ...
    def hset(self, key: str, field: str, value: str, ttl: float) -> None: ...
    def hsetnx(self, key: str, field: str, value: str, ttl: float) -> bool: ...
    def hget(self, key: str, field: str) -> str | None: ...
    def hlen(self, key: str) -> int: ...
    def hgetall(self, key: str) -> dict[str, str]: ...


class MemoryStore:
    """The store inside one app process (a dict with expiry times, behind a lock)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock, self.lock = clock, threading.Lock()
        self.data: dict[str, tuple[float, Any]] = {}
        self.closed = False

    def close(self) -> None:
        """The store goes away: every later call raises StoreUnavailable (as a stopped Redis does)."""
        self.closed = True

    def _live(self, key: str) -> Any:
        if self.closed:
            raise StoreUnavailable("the in-process class store is closed")
        item = self.data.get(key)
        if item is None:
            return None
        if item[0] <= self.clock():
            del self.data[key]
            return None
        return item[1]

    def get(self, key: str) -> str | None:
        with self.lock:
            return self._live(key)

    def set(self, key: str, value: str, ttl: float, only_new: bool = False) -> bool:
        with self.lock:
            if only_new and self._live(key) is not None:
                return False
            self._live(key)  # raises when closed
            self.data[key] = (self.clock() + ttl, value)
            return True

    def delete(self, *keys: str) -> None:
        with self.lock:
            for key in keys:
                self._live(key)
                self.data.pop(key, None)

    def expire(self, key: str, ttl: float) -> None:
        with self.lock:
            value = self._live(key)
            if value is not None:
                self.data[key] = (self.clock() + ttl, value)

    def incr(self, key: str, ttl: float) -> int:
        with self.lock:
            value = self._live(key)
            if value is None:
                self.data[key] = (self.clock() + ttl, 1)
                return 1
            self.data[key] = (self.data[key][0], value + 1)
            return value + 1

    def hset(self, key: str, field: str, value: str, ttl: float) -> None:
        with self.lock:
            table = self._live(key) or {}
            table[field] = value
            self.data[key] = (self.clock() + ttl, table)

    def hsetnx(self, key: str, field: str, value: str, ttl: float) -> bool:
        with self.lock:
            table = self._live(key) or {}
            if field in table:
                return False
            table[field] = value
            self.data[key] = (self.clock() + ttl, table)
            return True

    def hget(self, key: str, field: str) -> str | None:
        with self.lock:
            return (self._live(key) or {}).get(field)

    def hlen(self, key: str) -> int:
        with self.lock:
            return len(self._live(key) or {})

    def hgetall(self, key: str) -> dict[str, str]:
        with self.lock:
            return dict(self._live(key) or {})


class RedisStore:
    """The same operations on a Redis server (`redis://host:port/db`), shared by every app process.

    Short timeouts: a Redis that went away costs a poll half a second, and the page says the class is
    unreachable instead of hanging.
    """

    def __init__(self, url: str, timeout_s: float = 0.5):
        import redis  # only here: the in-process store needs no package

        self.errors = (redis.RedisError, OSError)
        self.r = redis.Redis.from_url(url, decode_responses=True, socket_timeout=timeout_s,
                                      socket_connect_timeout=timeout_s)

    def _call(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except self.errors as e:
            raise StoreUnavailable(str(e)) from e

    def get(self, key: str) -> str | None:
        return self._call(self.r.get, key)

    def set(self, key: str, value: str, ttl: float, only_new: bool = False) -> bool:
        return bool(self._call(self.r.set, key, value, px=int(ttl * 1000), nx=only_new))

    def delete(self, *keys: str) -> None:
        if keys:
            self._call(self.r.delete, *keys)

    def expire(self, key: str, ttl: float) -> None:
        self._call(self.r.pexpire, key, int(ttl * 1000))

    def incr(self, key: str, ttl: float) -> int:
        def run():
            pipe = self.r.pipeline()
            pipe.incr(key)
            pipe.pexpire(key, int(ttl * 1000), nx=True)
            return pipe.execute()[0]
        return self._call(run)

    def hset(self, key: str, field: str, value: str, ttl: float) -> None:
        def run():
            pipe = self.r.pipeline()
            pipe.hset(key, field, value)
            pipe.pexpire(key, int(ttl * 1000))
            pipe.execute()
        self._call(run)

    def hsetnx(self, key: str, field: str, value: str, ttl: float) -> bool:
        def run():
            pipe = self.r.pipeline()
            pipe.hsetnx(key, field, value)
            pipe.pexpire(key, int(ttl * 1000))
            return bool(pipe.execute()[0])
        return self._call(run)

    def hget(self, key: str, field: str) -> str | None:
        return self._call(self.r.hget, key, field)

    def hlen(self, key: str) -> int:
        return self._call(self.r.hlen, key)

    def hgetall(self, key: str) -> dict[str, str]:
        return self._call(self.r.hgetall, key)


def open_store(setting: str | None) -> Store:
    """The store a setting names: "" / "memory" for the in-process one, "redis://host:port/db" for Redis."""
    setting = (setting or "").strip()
    if setting in ("", "memory"):
        return MemoryStore()
    if setting.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(setting)
    raise ValueError(f"unknown class store {setting!r}: use 'memory' or a redis:// URL")


@dataclass(frozen=True)
class Question:
    """A question the teacher poses: its text and options (already in the teacher's language). Revealed: the counts
    are shown to the class and it takes no more answers; closed: no more answers either, counts still hidden."""
    id: str
    text: str
    options: tuple[str, ...]
    revealed: bool = False
    closed: bool = False

    @property
    def open(self) -> bool:
        return not (self.revealed or self.closed)


@dataclass(frozen=True)
class ClassState:
    """What a class follows now; `version` grows with every change the teacher makes."""
    code: str
    lab: str
    params: dict[str, str]
    version: int
    question: Question | None = None
    step: int | None = None  # the teacher's live run's step, as the teacher's page last said (no new version)


def _counts(options: list[str], answers: dict[str, dict]) -> dict[str, int]:
    counts = dict.fromkeys(options, 0)
    for a in answers.values():
        if a.get("a") in counts:
            counts[a["a"]] += 1
    return counts


def new_code(rng: secrets.SystemRandom | None = None) -> str:
    rng = rng or secrets.SystemRandom()
    return "".join(rng.choice(CODE_ALPHABET) for _ in range(CODE_LEN))


def normal_code(raw: str | None) -> str | None:
    """A code as typed (any case, spaces, dashes) in its canonical form, or None if it cannot be one."""
    code = "".join(c for c in (raw or "").upper() if c not in " -")
    return code if len(code) == CODE_LEN and all(c in CODE_ALPHABET for c in code) else None


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Classroom:
    """Every class of one store. Teachers call with their secret; students with the id `join` issued them."""

    def __init__(self, store: Store, timeout_s: float = TIMEOUT_S, rate_limit: int = RATE_LIMIT,
                 rate_window_s: float = RATE_WINDOW_S, max_students: int = MAX_STUDENTS,
                 join_limit: int = JOIN_LIMIT, clock: Callable[[], float] = time.time):
        self.store, self.timeout_s, self.clock = store, timeout_s, clock
        self.rate_limit, self.rate_window_s = rate_limit, rate_window_s
        self.max_students, self.join_limit = max_students, join_limit
        self.listeners: list[Callable[[str, int], None]] = []  # told of every change saved (server.class_push)

    @staticmethod
    def _keys(code: str) -> dict[str, str]:
        base = f"mlsim:class:{code}"
        return {"main": base, "answers": f"{base}:answers", "seen": f"{base}:seen", "inbox": f"{base}:inbox",
                "members": f"{base}:members", "roster": f"{base}:roster", "tiles": f"{base}:tiles",
                "count": f"{base}:count"}

    # the teacher -----------------------------------------------------------------------------------------

    def create(self, lab: str, params: dict[str, str]) -> tuple[str, str]:
        """A new class following (lab, params): returns (code, secret). Only the secret's holder can steer it."""
        secret = secrets.token_urlsafe(24)
        record = {"secret": _hash(secret), "lab": lab, "params": dict(params), "v": 1, "question": None}
        for _ in range(20):
            code = new_code()
            if self.store.set(self._keys(code)["main"], json.dumps(record), self.timeout_s, only_new=True):
                return code, secret
        raise StoreUnavailable("no free class code")  # 25**5 codes: only a broken store gets here

    def _record(self, code: str) -> dict:
        raw = self.store.get(self._keys(code)["main"])
        if raw is None:
            raise ClassNotFound(code)
        return json.loads(raw)

    def _owned(self, code: str, secret: str | None) -> dict:
        record = self._record(code)
        if not secret or not hmac.compare_digest(record["secret"], _hash(secret)):
            raise Forbidden(code)
        return record

    def _save(self, code: str, record: dict) -> None:
        record["v"] += 1
        self.store.set(self._keys(code)["main"], json.dumps(record), self.timeout_s)
        for listener in self.listeners:
            listener(code, record["v"])

    def publish(self, code: str, secret: str | None, lab: str, params: dict[str, str],
                step: int | None = None) -> int:
        """The class follows (lab, params) from now; returns the new version. `step`, the teacher's live run's step,
        is kept without a new version (students take it when they come back to the teacher: Classroom.state)."""
        record = self._owned(code, secret)
        if record["lab"] != lab or record["params"] != params:
            record["lab"], record["params"], record["step"] = lab, dict(params), step
            self._save(code, record)
        elif step is not None and record.get("step") != step:
            record["step"] = step
            self.store.set(self._keys(code)["main"], json.dumps(record), self.timeout_s)
            self.heartbeat(code, secret)
        else:
            self.heartbeat(code, secret)
        return record["v"]

    def resume(self, code: str, secret: object) -> str:
        """The teacher's tab is back (a reload, a new session) with the pair its browser kept: returns a new
        secret for the class, whose hash replaces the old one (ClassNotFound once the class has ended,
        Forbidden for a wrong secret). So one tab steers at a time: a copy of the old pair (a duplicated tab)
        is worth nothing now, and a tab still holding it loses the class at its next heartbeat.
        """
        if not isinstance(secret, str) or not 0 < len(secret) <= SECRET_MAX:
            raise Forbidden(code)
        record = self._owned(code, secret)
        fresh = secrets.token_urlsafe(24)
        record["secret"] = _hash(fresh)  # same version: students have nothing new to follow
        self.store.set(self._keys(code)["main"], json.dumps(record), self.timeout_s)
        self.heartbeat(code, fresh)
        return fresh

    def heartbeat(self, code: str, secret: str | None) -> None:
        """The teacher is still here: every key of the class lives another `timeout_s`."""
        self._owned(code, secret)
        for key in self._keys(code).values():
            self.store.expire(key, self.timeout_s)

    def pose(self, code: str, secret: str | None, text: str, options: list[str] | tuple[str, ...]) -> Question:
        """Ask the class a question; earlier answers are cleared."""
        text, options = text.strip(), tuple(o.strip() for o in options if o and o.strip())
        if not text or len(text) > MAX_TEXT or not 2 <= len(options) <= MAX_OPTIONS \
                or any(len(o) > MAX_TEXT for o in options) or len(set(options)) != len(options):
            raise BadInput(text[:40])
        record = self._owned(code, secret)
        question = Question(secrets.token_hex(4), text, options)
        record["question"] = {"id": question.id, "text": text, "options": list(options), "revealed": False,
                              "closed": False}
        # the class's questions, for the teacher's file of answers (their answers stay until the class ends)
        asked = record.setdefault("asked", [])
        asked.append({"id": question.id, "text": text, "options": list(options), "at": self.clock()})
        del asked[:-MAX_ASKED]
        self._save(code, record)
        return question

    def _set_question(self, code: str, secret: str | None, flag: str) -> None:
        record = self._owned(code, secret)
        if record["question"] is not None and not record["question"].get(flag):
            record["question"][flag] = True
            self._save(code, record)

    def reveal(self, code: str, secret: str | None) -> None:
        """The counts are shown to the class, and the question takes no more answers."""
        self._set_question(code, secret, "revealed")

    def close_question(self, code: str, secret: str | None) -> None:
        """The question takes no more answers or changes (a reload changes nothing); its counts stay hidden until a
        reveal, and its answers stay for the file."""
        self._set_question(code, secret, "closed")

    def _answers(self, code: str) -> dict[str, dict[str, dict]]:
        """question id -> student -> {"a": option, "t": when}."""
        out: dict[str, dict[str, dict]] = {}
        for field_, raw in self.store.hgetall(self._keys(code)["answers"]).items():
            qid, _, student = field_.partition(":")
            out.setdefault(qid, {})[student] = json.loads(raw)
        return out

    def histogram(self, code: str, secret: str | None) -> dict[str, int]:
        """How many students chose each option of the question now posed (the teacher's own view; the class sees
        them once revealed)."""
        record = self._owned(code, secret)
        question = record["question"]
        if question is None:
            return {}
        return _counts(question["options"], self._answers(code).get(question["id"], {}))

    def counts(self, code: str) -> dict[str, int] | None:
        """The counts of the question now posed, for anyone once it is revealed; None before (and with no question)."""
        question = self._record(code)["question"]
        if question is None or not question.get("revealed"):
            return None
        return _counts(question["options"], self._answers(code).get(question["id"], {}))

    def answers_csv(self, code: str, secret: str | None, words: Callable[[str], str] = str,
                    unnamed: Callable[[int], str] = "Student {}".format) -> str:
        """The class's answers as CSV: a row per answer (question, its options, the student, the answer, seconds
        after the question was posed), then a row per option with its count. `words` turns a question's or an
        option's stored text into the teacher's words (a bank question is stored as its i18n key), `unnamed` a
        student's number into the label of a student who typed no name."""
        import csv
        import io

        record = self._owned(code, secret)
        answers, names = self._answers(code), self.roster(code, secret)
        buf = io.StringIO()
        out = csv.writer(buf)
        out.writerow(["row", "question_no", "question", "options", "student", "answer", "seconds", "count"])
        for no, q in enumerate(record.get("asked", []), 1):
            text, options = words(q["text"]), " | ".join(words(o) for o in q["options"])
            got = answers.get(q["id"], {})
            for student, a in sorted(got.items(), key=lambda kv: kv[1]["t"]):
                who = names.get(student)
                label = "?" if who is None else who["name"] or unnamed(who["n"])
                out.writerow(["answer", no, text, options, label, words(a["a"]),
                              f"{a['t'] - q['at']:.1f}", ""])
            for option, n in _counts(q["options"], got).items():
                out.writerow(["count", no, text, options, "", words(option), "", n])
        return buf.getvalue()

    def students(self, code: str, secret: str | None) -> int:
        """Students who polled the class in the last SEEN_S seconds."""
        self._owned(code, secret)
        now = self.clock()
        return sum(now - float(ts) <= SEEN_S for ts in self.store.hgetall(self._keys(code)["seen"]).values())

    def roster(self, code: str, secret: str | None) -> dict[str, dict]:
        """student -> {"n": their number in the class, "name": what they typed ("" if nothing), "label": the name,
        else "Student n"}."""
        self._owned(code, secret)
        out = {}
        for student, raw in self.store.hgetall(self._keys(code)["roster"]).items():
            entry = json.loads(raw)
            out[student] = {**entry, "label": entry["name"] or f"Student {entry['n']}"}
        return out

    def board(self, code: str, secret: str | None) -> list[dict]:
        """The class at a glance: per student who joined, their number, name, the seconds since they were last seen
        and their latest tile (what `report` wrote: lab, following or not, settings, step, key figures, a picture),
        in the order they joined."""
        roster = self.roster(code, secret)
        tiles = self.store.hgetall(self._keys(code)["tiles"])
        seen = self.store.hgetall(self._keys(code)["seen"])
        now = self.clock()
        board = []
        for student, who in roster.items():
            tile = json.loads(tiles[student]) if student in tiles else {}
            ago = now - float(seen[student]) if student in seen else None
            board.append({**tile, "student": student, "n": who["n"], "name": who["name"], "ago": ago})
        return sorted(board, key=lambda b: b["n"])

    def inbox(self, code: str, secret: str | None) -> list[dict]:
        """Settings students sent (each student's latest), newest first: [{"lab", "params", "at"}] (anonymous)."""
        self._owned(code, secret)
        items = [json.loads(v) for v in self.store.hgetall(self._keys(code)["inbox"]).values()]
        return sorted(items, key=lambda s: -s["at"])

    def end(self, code: str, secret: str | None) -> None:
        """The class ends now: its state, students, answers, sent settings and presence go."""
        self._owned(code, secret)
        self.store.delete(*self._keys(code).values())
        for listener in self.listeners:
            listener(code, -1)  # server.class_push.ENDED

    # students --------------------------------------------------------------------------------------------

    def join(self, code: str, credential: str, address: str) -> str:
        """The student id of `credential` in class `code`: the one issued before, else a new one (random, never
        derived from the credential), if `address` has not brought JOIN_LIMIT new students in the last minute
        (JoinLimited) and the class is not full (ClassFull). Only a hash of the credential is stored."""
        self._record(code)
        members, who = self._keys(code)["members"], _hash(credential)[:32]
        known = self.store.hget(members, who)
        if known is not None:
            return known
        if self.store.incr(f"{self._keys(code)['main']}:joins:{address}", JOIN_WINDOW_S) > self.join_limit:
            raise JoinLimited(address)
        if self.store.hlen(members) >= self.max_students:
            raise ClassFull(code)
        student = secrets.token_urlsafe(12)
        if self.store.hsetnx(members, who, student, self.timeout_s):
            n = self.store.incr(self._keys(code)["count"], self.timeout_s)
            self.store.hset(self._keys(code)["roster"], student, json.dumps({"n": n, "name": ""}), self.timeout_s)
            return student
        return self.store.hget(members, who) or student  # the same credential joined at the same moment: its id

    def rename(self, code: str, student: str, name: str) -> str:
        """The name the student typed (at most MAX_NAME characters, no control characters; "" for none), shown to
        the teacher as text; returns it as kept."""
        name = " ".join(str(name).split())
        if len(name) > MAX_NAME or any(not c.isprintable() for c in name):
            raise BadInput(name[:MAX_NAME])
        self._limit(code, student)
        roster = self._keys(code)["roster"]
        raw = self.store.hget(roster, student)
        if raw is None:
            raise ClassNotFound(code)
        self.store.hset(roster, student, json.dumps({**json.loads(raw), "name": name}), self.timeout_s)
        return name

    def report(self, code: str, student: str, tile: dict) -> None:
        """A student's tile in the class at a glance (their page writes it as it runs, at most about once a second):
        also says they are here."""
        raw = json.dumps(tile, separators=(",", ":"), allow_nan=False)
        if len(raw) > MAX_TILE:
            raise BadInput("tile")
        keys = self._keys(code)
        if self.store.hget(keys["roster"], student) is None:
            raise ClassNotFound(code)
        self.store.hset(keys["tiles"], student, raw, self.timeout_s)
        self.store.hset(keys["seen"], student, f"{self.clock():.3f}", self.timeout_s)

    def state(self, code: str, student: str | None = None) -> ClassState:
        """What class `code` follows now (raises ClassNotFound when it has ended); a student's poll."""
        record = self._record(code)
        if student:
            self.store.hset(self._keys(code)["seen"], student, f"{self.clock():.3f}", self.timeout_s)
        q = record["question"]
        question = None if q is None else Question(q["id"], q["text"], tuple(q["options"]), q["revealed"],
                                                   q.get("closed", False))
        return ClassState(code, record["lab"], dict(record["params"]), record["v"], question, record.get("step"))

    def _limit(self, code: str, student: str) -> None:
        if self.store.incr(f"{self._keys(code)['main']}:rate:{student}", self.rate_window_s) > self.rate_limit:
            raise RateLimited(student)

    def answer(self, code: str, student: str, question_id: str, option: str) -> None:
        """A student's answer to the open question (their latest replaces the earlier: one per student); a revealed
        or closed question takes none (QuestionClosed)."""
        self._limit(code, student)
        q = self._record(code)["question"]
        if q is None or q["id"] != question_id or option not in q["options"]:
            raise BadInput(option[:40])
        if q["revealed"] or q.get("closed"):
            raise QuestionClosed(question_id)
        self.store.hset(self._keys(code)["answers"], f"{question_id}:{student}",
                        json.dumps({"a": option, "t": self.clock()}), self.timeout_s)

    def my_answer(self, code: str, student: str, question_id: str) -> str | None:
        """The option this student chose for the question (so a reloaded page shows it), None if none."""
        raw = self.store.hget(self._keys(code)["answers"], f"{question_id}:{student}")
        return None if raw is None else json.loads(raw)["a"]

    def send(self, code: str, student: str, lab: str, params: dict[str, str]) -> None:
        """One-shot "send my settings": the teacher sees them in the inbox and may show them to the class (a
        student's latest replaces their earlier: one entry per student)."""
        self._limit(code, student)
        self._record(code)
        if len(json.dumps(params)) > 4000:
            raise BadInput(lab)
        self.store.hset(self._keys(code)["inbox"], student,
                        json.dumps({"lab": lab, "params": dict(params), "at": self.clock()}), self.timeout_s)


def lan_address() -> str:
    """This machine's address on the LAN (the interface its default route uses); 127.0.0.1 if it has none.

    A UDP socket's connect sends nothing: it only asks the kernel which interface would be used.
    """
    import socket

    for target in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((target, 1))
                addr = s.getsockname()[0]
            if addr and not addr.startswith("0."):
                return addr
        except OSError:
            continue
    return "127.0.0.1"


def join_link(page_url: str, code: str, lan: str) -> str:
    """The link students open: the teacher's own address (scheme, port, path), with a loopback host
    replaced by the LAN address, and the class code as `?class=`."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(page_url or "http://localhost:8501/")
    host = parts.hostname or "localhost"
    if host in ("localhost", "127.0.0.1", "::1", "0.0.0.0"):
        host = lan
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme or "http", netloc, parts.path or "/", f"class={code}", ""))
