"""Snapshots made for what a screen shows (`Shown`): the views of the sessions asked for and
of the holders of the blocks asked for, nothing else; the rest of the snapshot is the whole
one's, and a whole snapshot made after them is what it would have been without them."""

from __future__ import annotations

from pathlib import Path

from pooltui.lang import compile_file
from pooltui.sim import Shown, Simulation

SMALL = str(Path(__file__).parent.parent / "tui" / "specs" / "small.pool")


def at(events: int) -> Simulation:
    sim = Simulation(compile_file(SMALL))
    for _ in range(events):
        sim.step()
    return sim


def test_only_the_sessions_asked_for_and_the_rest_as_the_whole_one() -> None:
    sim = at(60)
    whole = sim.snapshot()
    assert whole.shown is None and len(whole.sessions) >= 3
    one = whole.sessions[1]
    ended = 10_000  # no such session live: asked for, it has no view and is covered
    part = sim.snapshot(Shown(frozenset((one.session_id, ended))))
    assert part.sessions == (one,)
    assert part.covers(one.session_id) and part.covers(ended)
    assert not part.covers(whole.sessions[0].session_id)
    assert whole.covers(whole.sessions[0].session_id)  # a whole one covers every session
    assert (part.pools, part.stages, part.counts, part.last_event) == (
        whole.pools, whole.stages, whole.counts, whole.last_event,
    )  # fmt: skip


def test_a_block_asked_for_brings_its_holder() -> None:
    sim = at(60)
    whole = sim.snapshot()
    blocks = whole.pool("kv").blocks
    assert blocks is not None
    held = next(b for b in range(blocks.nblocks) if blocks.owner(b) is not None)
    owner = blocks.owner(held)
    assert owner is not None
    part = sim.snapshot(Shown(blocks=(("kv", held),)))
    assert [s.session_id for s in part.sessions] == [owner.session_id]
    free = Shown(blocks=(("kv", blocks.nblocks - 1), ("nopool", 0), ("kv", 10_000)))
    if blocks.owner(blocks.nblocks - 1) is None:
        assert sim.snapshot(free).sessions == ()


def test_a_whole_snapshot_after_partial_ones_is_as_without_them() -> None:
    sim, fresh = at(40), at(40)
    sim.snapshot()  # the caches of views (queued sessions, attributes) are filled...
    for _ in range(25):
        sim.step()
        fresh.step()
        sim.snapshot(Shown(frozenset((1,))))  # ...and left as they are by these
    assert sim.snapshot() == fresh.snapshot()
