"""A small fake of `pooltui.sim.Simulation` for the debugger's tests.

It plays a scripted workload (sessions `chat[i]` on one pool `kv` served by a step stage
`gpu`, optionally a `cap inf` pool `host`) through the same API as the real simulator and
hands out real `Snapshot`s and `Event`s, so the app is tested against the contract, not
against the simulator's internals. `break_pool(label)` makes the next event break an
invariant; `error_at` makes an event stop with a spec runtime error; `deadlock` ends the
script with a deadlock.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pooltui.lang.errors import Diagnostic, SpecError
from pooltui.lang.ir import CPool, CSession, CStage, Num, Program, Span
from pooltui.sim.eventlog import EventLog
from pooltui.sim.events import Event
from pooltui.sim.snapshot import (
    BlockMap,
    BlockOwner,
    Counts,
    EntryView,
    HoldView,
    PoolView,
    QueueItemView,
    ResidentView,
    SessionView,
    Snapshot,
    StageView,
    Violation,
)

SPEC_FILE = "fake.pool"
SOURCE = """\
# Six chats share a small KV cache; watch the cache hit when a chat comes back.
# Block 16, cap 256: only a few chats fit at once.
stage gpu step {
  budget 64;
  seats 4;
}

pool kv {
  cap 256;
  block 16;
  evict lru;
  admit via gpu;
}

session chat[6] {
  arrive every (0.5);
  prompt = 32;
  hold kv (prompt) reserve (prompt + 16) {
    run gpu prefill (prompt);
    run gpu decode (2);
  }
}
"""
HEADER = (
    "Six chats share a small KV cache; watch the cache hit when a chat comes back.\n"
    "Block 16, cap 256: only a few chats fit at once."
)


def span(line: int, col: int = 3, end_col: int | None = None) -> Span:
    text = SOURCE.split("\n")[line - 1]
    return Span(SPEC_FILE, line, col, line, end_col or len(text) + 1)


SPAN_ARRIVE = span(16)
SPAN_HOLD = span(18)
SPAN_PREFILL = span(19, 5)
SPAN_DECODE = span(20, 5)
SPAN_POOL = span(8, 1)
SPAN_STAGE = span(3, 1)
SPAN_SESSION = span(15, 1)


def make_program(with_host: bool = False) -> Program:
    pools = [CPool("kv", cap=256, block=16, admit_via="gpu", span=SPAN_POOL)]
    if with_host:
        pools.append(CPool("host", span=SPAN_POOL))
    return Program(
        file=SPEC_FILE,
        source=SOURCE,
        seed=0,
        stages=(CStage("gpu", "step", budget=64, seats=4, span=SPAN_STAGE),),
        pools=tuple(pools),
        sessions=(CSession("chat", 6, None, _arrive(), (), family=True, span=SPAN_SESSION),),
        checks=(),
        header_comment=HEADER,
    )


def _arrive() -> Any:
    from pooltui.lang.ir import ArriveEvery

    return ArriveEvery(Num(0.5))


# --------------------------------------------------------------------------- the script


@dataclass
class _Hold:
    sid: int
    units: int
    blocks: list[int]
    computed: int
    context: int
    admitted_at: float
    order: int


@dataclass
class _Entry:
    sid: int
    blocks: list[int]
    last: float
    order: int


@dataclass
class _Run:
    sid: int
    phase: str
    left: int  # prefill: tokens left; decode: steps left
    tokens: int = 0
    steps: int = 0
    target: int = 0


class _Script:
    """Runs the toy workload once, recording (event, snapshot) pairs."""

    def __init__(self, sessions: int, nblocks: int, prompt: int, with_host: bool, returning: bool):
        self.n = sessions
        self.nblocks = nblocks
        self.block = 16
        self.prompt = prompt
        self.with_host = with_host
        self.t = 0.0
        self.free = list(range(nblocks))
        self.holds: dict[int, _Hold] = {}
        self.entries: list[_Entry] = []
        self.queue: list[tuple[int, float, bool]] = []  # (sid, enqueued_at, preempted)
        self.runs: list[_Run] = []
        self.arrived: dict[int, float] = {}
        self.ended: set[int] = set()
        self.iteration = 0
        self.busy = False
        self.orders = 0
        self.host_units = 0
        self.evictions = 0
        self.out: list[tuple[Event, Snapshot]] = []
        self.returning = returning
        self.turn: dict[int, int] = {}

    def name(self, sid: int) -> str:
        return f"chat[{sid}]"

    def emit(self, moment: str, why: str, sid: int | None = None, **kw: Any) -> None:
        data = tuple(kw.pop("data", ()))
        ev = Event(
            index=len(self.out),
            time=self.t,
            moment=moment,
            why=why,
            session=self.name(sid) if sid is not None else None,
            session_id=sid,
            session_class="chat" if sid is not None else None,
            data=data,
            **kw,
        )
        self.out.append((ev, self.snapshot(ev)))

    # -- state to snapshot
    def snapshot(self, ev: Event | None) -> Snapshot:
        owners: list[BlockOwner] = []
        cells = [0] * self.nblocks
        for hold in self.holds.values():
            owners.append(BlockOwner("hold", self.name(hold.sid), hold.sid))
            for b in hold.blocks:
                cells[b] = len(owners)
        for rank, entry in enumerate(self.entries):
            owners.append(BlockOwner("cached", self.name(entry.sid), entry.sid, rank))
            for b in entry.blocks:
                cells[b] = len(owners)
        holds = tuple(
            HoldView(
                self.name(h.sid), h.sid, "kv", h.units, len(h.blocks), h.computed, h.context,
                self.prompt + 16, tuple(h.blocks), h.admitted_at, h.order,
            )
            for h in sorted(self.holds.values(), key=lambda h: h.order)
        )  # fmt: skip
        entries = tuple(
            EntryView(
                self.name(e.sid), e.sid, len(e.blocks) * 16, len(e.blocks), tuple(e.blocks),
                rank, (e.last, e.order), e.last, e.sid not in self.ended,
            )
            for rank, e in enumerate(self.entries)
        )  # fmt: skip
        queue = tuple(
            QueueItemView(
                self.name(sid), sid, pos, self.prompt, None, self.prompt + 16,
                self._hit(sid), (), self.t - at, pre, at,
            )
            for pos, (sid, at, pre) in enumerate(self.queue)
        )  # fmt: skip
        allocated = sum(len(h.blocks) for h in self.holds.values()) * 16
        cached = sum(len(e.blocks) for e in self.entries) * 16
        kv = PoolView(
            name="kv", index=None, label="kv", cap=self.nblocks * 16, block=16,
            allocated=allocated, cached=cached, free=self.nblocks * 16 - allocated - cached,
            nblocks=self.nblocks, blocks=BlockMap(self.nblocks, 16, tuple(cells), tuple(owners)),
            holds=holds, entries=entries, queue=queue, evict="lru", queue_policy="fifo",
            preempt="none", admit_via="gpu", tier_of=(), span=SPAN_POOL,
        )  # fmt: skip
        pools = [kv]
        if self.with_host:
            pools.append(
                PoolView(
                    name="host",
                    index=None,
                    label="host",
                    cap=math.inf,
                    block=None,
                    allocated=40 * len(self.holds),
                    cached=24 * len(self.entries),
                    free=math.inf,
                    nblocks=None,
                    blocks=None,
                    holds=(),
                    entries=(),
                    queue=(),
                    evict="lru",
                    queue_policy="fifo",
                    preempt="none",
                    admit_via=None,
                    tier_of=(),
                )
            )
        residents = tuple(
            ResidentView(
                self.name(r.sid), r.sid, r.phase, r.tokens,  # type: ignore[arg-type]
                self.holds[r.sid].computed if r.sid in self.holds else 0,
                self.holds[r.sid].context if r.sid in self.holds else 0,
                r.target, r.steps, "kv", self.holds[r.sid].order if r.sid in self.holds else 0,
            )
            for r in self.runs
        )  # fmt: skip
        used = sum(r.tokens for r in self.runs) if self.busy else 0
        gpu = StageView(
            name="gpu", index=None, label="gpu", kind="step", iteration=self.iteration,
            busy=self.busy, iteration_start=self.t if self.busy else None,
            iteration_end=self.t + 0.25 if self.busy else None, budget=64, budget_used=used,
            budget_left=64 - used, seats=4, seats_left=4 - len(self.runs), residents=residents,
            memory=("kv",), span=SPAN_STAGE,
        )  # fmt: skip
        sessions = tuple(
            SessionView(
                self.name(sid), sid, "chat", sid, sid, self._state(sid), at,
                (("prompt", self.prompt), ("turn", self.turn.get(sid, 0))),
                tuple(h for h in holds if h.session_id == sid), SPAN_HOLD,
            )
            for sid, at in sorted(self.arrived.items())
            if sid not in self.ended
        )  # fmt: skip
        ended = len(self.ended)
        counts = Counts(
            len(self.arrived), len(self.arrived) - ended, ended, 0, 0, self.evictions, 0, 0
        )
        return Snapshot(
            time=self.t, event_index=ev.index if ev else -1, events_total=0, last_event=ev,
            pools=tuple(pools), stages=(gpu,), sessions=sessions, counts=counts,
            finished=False, halted=None, violation=None,
        )  # fmt: skip

    def _state(self, sid: int) -> str:
        if any(q[0] == sid for q in self.queue):
            return "queued on kv"
        if any(r.sid == sid for r in self.runs):
            return "resident of gpu"
        return "holding kv"

    def _hit(self, sid: int) -> int:
        for e in self.entries:
            if e.sid == sid:
                return min(len(e.blocks) * 16, self.prompt)
        return 0

    # -- the workload
    def play(self, deadlock: bool) -> None:
        arrivals = [(0.5 * (i + 1), i) for i in range(self.n)]
        if self.returning:
            # chat[0] comes back for a second turn: it hits its cache entry.
            arrivals.append((0.5 * (self.n + 3), 0))
        arrivals.sort()
        ai = 0
        while ai < len(arrivals) or self.queue or self.runs:
            next_arrival = arrivals[ai][0] if ai < len(arrivals) else math.inf
            if not self.runs and not self.queue:
                self.t = next_arrival
            while ai < len(arrivals) and arrivals[ai][0] <= self.t:
                _, sid = arrivals[ai]
                ai += 1
                self.arrived[sid] = self.t
                self.ended.discard(sid)
                self.turn[sid] = self.turn.get(sid, 0) + 1
                self.emit("arrive", f"{self.name(sid)} arrives", sid, span=SPAN_ARRIVE)
                self.queue.append((sid, self.t, False))
                self.emit(
                    "enqueue", f"{self.name(sid)} waits for {self.prompt} units of kv",
                    sid, pool="kv", units=self.prompt, span=SPAN_HOLD,
                )  # fmt: skip
            self._iteration()
            if deadlock and ai >= len(arrivals) and not self.runs and not self.queue:
                break
        if deadlock:
            self.arrived[99] = self.t
            self.queue.append((99, self.t, False))
            self.emit(
                "deadlock", "chat[99] waits for 999 units of kv; nothing can free them",
                99, pool="kv", others=("chat[99]",), span=SPAN_HOLD,
            )  # fmt: skip

    def _iteration(self) -> None:
        if not self.runs and not self.queue:
            return
        self.iteration += 1
        self.busy = True
        budget = 64
        for run in self.runs:
            run.tokens = min(run.left, budget) if run.phase == "prefill" else 1
            budget -= run.tokens
        # admission, head of line
        admitted = []
        while self.queue and len(self.runs) < 4 and budget > 0:
            sid, _, _ = self.queue[0]
            need = math.ceil(self.prompt / 16)
            hit = [e for e in self.entries if e.sid == sid]
            hit_blocks = hit[0].blocks if hit else []
            if hit:
                self.entries.remove(hit[0])
            want = need - len(hit_blocks)
            while len(self.free) < want and self.entries:
                victim = self.entries.pop(0)
                self.evictions += 1
                self.free.extend(victim.blocks)
                self.free.sort()
                self.emit(
                    "evict", f"{self.name(victim.sid)}'s cache entry goes to make room",
                    victim.sid, pool="kv", units=len(victim.blocks) * 16,
                    blocks=tuple(victim.blocks), span=SPAN_POOL,
                )  # fmt: skip
            if len(self.free) < want:
                if hit:
                    self.entries.insert(0, hit[0])
                break
            self.queue.pop(0)
            blocks = hit_blocks + self.free[:want]
            del self.free[:want]
            self.orders += 1
            computed = len(hit_blocks) * 16
            self.holds[sid] = _Hold(sid, self.prompt, blocks, min(computed, self.prompt),
                                    min(computed, self.prompt), self.t, self.orders)  # fmt: skip
            left = self.prompt - self.holds[sid].computed
            run = _Run(sid, "prefill", max(left, 1), target=self.prompt)
            run.tokens = min(run.left, budget)
            budget -= run.tokens
            self.runs.append(run)
            admitted.append(sid)
            self.emit(
                "admit", f"{self.name(sid)} fits: {len(blocks)} blocks, hit {computed}",
                sid, pool="kv", stage="gpu", units=self.prompt, blocks=tuple(blocks),
                span=SPAN_HOLD, data=(("hit", computed),),
            )  # fmt: skip
        tokens = sum(r.tokens for r in self.runs)
        self.emit(
            "iteration", f"gpu iteration {self.iteration}: {tokens} tokens, {len(self.runs)} residents",
            stage="gpu", span=SPAN_PREFILL,
            data=(("iteration", self.iteration), ("tokens", tokens)),
        )  # fmt: skip
        self.t = round(self.t + 0.25, 6)
        self.busy = False
        self.emit(
            "iteration-end", f"gpu iteration {self.iteration} ends", stage="gpu", span=SPAN_STAGE
        )
        for run in list(self.runs):
            hold = self.holds[run.sid]
            if run.phase == "prefill":
                run.left -= run.tokens
                hold.computed += run.tokens
                hold.context = hold.computed
                if run.left <= 0:
                    self.emit("run-done", f"{self.name(run.sid)} prefilled", run.sid,
                              stage="gpu", span=SPAN_PREFILL)  # fmt: skip
                    run.phase, run.left, run.target, run.steps = "decode", 2, 2, 0
            else:
                run.steps += 1
                run.left -= 1
                hold.computed = hold.context
                hold.context += 1
                if run.left <= 0:
                    self.emit("run-done", f"{self.name(run.sid)} decoded 2 steps", run.sid,
                              stage="gpu", span=SPAN_DECODE)  # fmt: skip
                    self.runs.remove(run)
                    del self.holds[run.sid]
                    self.orders += 1
                    self.entries.append(
                        _Entry(run.sid, hold.blocks[: hold.computed // 16], self.t, self.orders)
                    )
                    self.free.extend(hold.blocks[hold.computed // 16 :])
                    self.free.sort()
                    self.emit("release", f"{self.name(run.sid)} releases kv: {hold.computed} units cached",
                              run.sid, pool="kv", units=hold.size if hasattr(hold, 'size') else hold.units,
                              blocks=tuple(hold.blocks), span=SPAN_HOLD)  # fmt: skip
                    self.ended.add(run.sid)
                    self.emit("end", f"{self.name(run.sid)} is done", run.sid, span=SPAN_SESSION,
                              data=(("how", "done"),))  # fmt: skip
            run.tokens = 0


# --------------------------------------------------------------------------- the fake


@dataclass(frozen=True)
class FakeExpr:
    text: str
    code: Any


class FakeSim:
    """Same public API as `pooltui.sim.Simulation`, over a precomputed script."""

    def __init__(
        self,
        sessions: int = 6,
        nblocks: int = 8,
        prompt: int = 32,
        *,
        with_host: bool = False,
        deadlock: bool = False,
        error_at: int | None = None,
        returning: bool = True,
    ) -> None:
        self.program = make_program(with_host)
        script = _Script(sessions, nblocks, prompt, with_host, returning)
        script.play(deadlock)
        self._script = script.out
        self._cursor = -1
        self._recorded = 0
        self._violation_at: int | None = None
        self._broken: str | None = None
        self._error_at = error_at
        self.error: Diagnostic | None = None
        self.steps_taken = 0  # for tests: how much work a command did
        self._log: EventLog | None = None

    # -- test hooks
    def break_pool(self, label: str) -> None:
        self._broken = label

    # -- moving
    def step(self) -> Event | None:
        if self.halted or self._cursor + 1 >= len(self._script):
            return None
        self._cursor += 1
        self.steps_taken += 1
        self._recorded = max(self._recorded, self._cursor + 1)
        if self._broken is not None and self._violation_at is None:
            self._violation_at = self._cursor
        return self._script[self._cursor][0]

    def skip(self, n: int, *, whole: bool = False, each: Any = None) -> int:
        """`Simulation.skip`: here every event is its own action, so `whole` changes nothing."""
        start = self._cursor
        while self._cursor - start < n and self.step() is not None:
            if each is not None:
                each()
        return self._cursor - start

    def events_reader(self) -> Any:
        """`Simulation.events_reader`: views of a log holding the script's events."""
        if self._log is None:
            self._log = EventLog([e for e, _ in self._script])
        return self._log.reader()

    def step_iteration(self, stage: str | None = None) -> list[Event]:
        out = []
        while True:
            ev = self.step()
            if ev is None:
                break
            out.append(ev)
            if ev.moment == "iteration-end" and (stage is None or ev.stage == stage):
                break
        return out

    def run(self, until: float | None = None, events: int | None = None) -> None:
        n = 0
        while events is None or n < events:
            ev = self.step()
            if ev is None:
                return
            n += 1
            if until is not None and ev.time > until:
                self.back()
                return

    def run_until(self, predicate: Any, limit: int | None = None) -> Event | None:
        n = 0
        while limit is None or n < limit:
            ev = self.step()
            if ev is None:
                return None
            if predicate(ev):
                return ev
            n += 1
        return None

    def back(self) -> Event | None:
        if self._cursor >= 0:
            self._cursor -= 1
        return self._script[self._cursor][0] if self._cursor >= 0 else None

    def goto(self, index: int) -> None:
        index = max(-1, min(index, len(self._script) - 1))
        self._cursor = index
        self._recorded = max(self._recorded, index + 1)

    # -- looking
    def snapshot(self, shown: Any = None) -> Snapshot:  # every session's views
        from dataclasses import replace

        base = _initial(self) if self._cursor < 0 else self._script[self._cursor][1]
        violation = self.violation
        halted = self.halted
        return replace(
            base,
            events_total=self._recorded,
            finished=self.finished,
            halted=halted,
            violation=violation,
        )

    def evaluate(self, expr: Any) -> float:
        snap = self.snapshot()
        kv = snap.pool("kv")
        env = {
            "now": snap.time,
            "free": lambda p: snap.pool(p).free,
            "allocated": lambda p: snap.pool(p).allocated,
            "cached": lambda p: snap.pool(p).cached,
            "queued": lambda p: len(snap.pool(p).queue),
            "residents": lambda s: len(snap.stage(s).residents),
            "kv": "kv",
            "gpu": "gpu",
            "host": "host",
            "min": min,
            "max": max,
        }
        del kv
        value = eval(expr.code, {"__builtins__": {}}, env)  # test-only: trusted text
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int | float):
            return value
        raise TypeError(value)

    @property
    def events(self) -> Sequence[Event]:
        return [e for e, _ in self._script[: self._recorded]]

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def time(self) -> float:
        return self._script[self._cursor][0].time if self._cursor >= 0 else 0.0

    @property
    def finished(self) -> bool:
        return self._cursor + 1 >= len(self._script) and not self.halted

    @property
    def halted(self) -> str | None:
        if self._violation_at is not None and self._cursor >= self._violation_at:
            return f"allocated + cached > cap on {self._broken}"
        if self._error_at is not None and self._cursor >= self._error_at:
            self.error = Diagnostic(Span(SPEC_FILE, 17, 12, 17, 14), "division by zero")
            return "runtime error: division by zero"
        if self._cursor >= 0 and self._script[self._cursor][0].moment == "deadlock":
            return "deadlock: chat[99] waits for 999 units of kv"
        return None

    @property
    def violation(self) -> Violation | None:
        if self._violation_at is not None and self._cursor >= self._violation_at:
            ev = self._script[self._violation_at][0]
            blocks = ev.blocks or (0, 1)
            return Violation(
                "allocated + cached <= cap",
                f"{self._broken}: allocated 272 + cached 0 > cap 256",
                pool=self._broken,
                blocks=blocks,
            )
        return None


def _initial(sim: FakeSim) -> Snapshot:
    script = _Script(0, 8, 32, len(sim.program.pools) > 1, False)
    script.nblocks = sim._script[0][1].pools[0].nblocks or 8 if sim._script else 8
    script.free = list(range(script.nblocks))
    return script.snapshot(None)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KNOWN = {
    "now",
    "free",
    "allocated",
    "cached",
    "queued",
    "residents",
    "kv",
    "gpu",
    "host",
    "min",
    "max",
}


def fake_compile_condition(text: str, program: Any = None, file: str = "<condition>") -> FakeExpr:
    """A stand-in for `pooltui.lang.compile_condition`: the queries the fake knows, with a
    located error for an unknown name."""
    for m in _NAME.finditer(text):
        if m.group() not in _KNOWN:
            d = Diagnostic(
                Span(file, 1, m.start() + 1, 1, m.end() + 1),
                f"unknown name '{m.group()}'",
                notes=("queries: cap allocated cached free queued",),
            )
            raise SpecError([d], source=text)
    code_text = text.replace("&&", " and ").replace("||", " or ")
    try:
        code = compile(code_text, file, "eval")
    except SyntaxError as exc:
        col = exc.offset or 1
        d = Diagnostic(Span(file, 1, col, 1, col + 1), "syntax error")
        raise SpecError([d], source=text) from None
    return FakeExpr(text, code)
