"""Snapshots of big states: what a snapshot works out for a long queue, and the compact
block sets it carries (issue 13: `space` within 100 ms on a full GPU).

Worked from docs/decisions.md ("The debugger"): a snapshot works out a queued hold's
planned figures (units, need, hit) for the first QUEUE_PLANNED positions of its queue only,
the rows the Queue panel lists; the rest keep their position, wait and keys, with no
figures (`planned` false). Everything else a snapshot says is unchanged.
"""

from __future__ import annotations

import pickle
from typing import Any

from pooltui.sim.snapshot import QUEUE_PLANNED, BlockContents, Cells, Registered, Shown
from tests.sim.helpers import sim_of

# One seat, one block of 8 units: every hold but the admitted one waits.
ONE_SEAT = """
stage gpu step {
  budget 64;
  seats 1;
  time 1;
}

pool kv {
  cap 8;
  block 8;
  evict lru;
  preempt none;
  queue fifo;
  admit via gpu;
}
"""

# 250 sessions arrive at 0 and each wants one block (8 units) of a one-block pool. At that
# instant all 250 arrive first (by index), each hold queued; then the instant settles and
# the gpu's first iteration admits req[0] (docs/decisions.md, "Time and order"). So the
# queue is longest, 250 holds in arrival order, after the last arrival.
LONG_QUEUE = (
    ONE_SEAT
    + """
session req[250] {
  arrive at (0);
  hold kv (8) {
    run gpu prefill (8);
  }
}
"""
)


def test_a_long_queue_has_figures_for_its_head_only() -> None:
    sim = sim_of(LONG_QUEUE)
    snap = None
    while sim.step() is not None:
        snap = sim.snapshot()
        if len(snap.pool("kv").queue) == 250:
            break
    assert snap is not None
    queue = snap.pool("kv").queue
    assert len(queue) == 250 > QUEUE_PLANNED == 200
    assert [item.position for item in queue] == list(range(250))
    assert [item.session for item in queue] == [f"req[{i}]" for i in range(250)]
    head, tail = queue[:QUEUE_PLANNED], queue[QUEUE_PLANNED:]
    # The head: its header now, 8 units, nothing cached to hit.
    assert all(item.planned and item.units == 8 and item.hit == 0 for item in head)
    # The tail: no figures, but where it is and how long it has waited.
    assert all(not item.planned and item.units is None and item.need is None for item in tail)
    assert all(item.hit == 0 and item.waited == 0 for item in tail)


def test_a_screen_asks_for_the_rows_it_shows_and_the_sessions_it_inspects() -> None:
    # `Shown.queue`: the debugger's frames plan the positions its Queue panel shows, and a
    # shown session wherever it waits (even past QUEUE_PLANNED); the rest as unplanned
    # tail rows. Nothing else differs from the whole snapshot.
    sim = sim_of(LONG_QUEUE)
    while sim.step() is not None:
        if len(sim.snapshot().pool("kv").queue) == 250:
            break
    whole = sim.snapshot()
    inspected = (whole.session("req[40]").session_id, whole.session("req[230]").session_id)
    part = sim.snapshot(Shown(frozenset(inspected), queue=32))
    assert (whole.queue_planned, part.queue_planned) == (QUEUE_PLANNED, 32)
    queue = part.pool("kv").queue
    planned = [item.position for item in queue if item.planned]
    assert planned == [*range(32), 40, 230]
    for item in queue:
        if item.planned:  # units 8 (the header), nothing cached to hit
            assert (item.units, item.hit) == (8, 0)
        else:
            assert (item.units, item.need, item.hit) == (None, None, 0)

    # Apart from `planned` and its figures, the queue is the whole one's.
    def where(item: Any) -> tuple[Any, ...]:
        return (item.session, item.position, item.keys, item.waited, item.enqueued_at)

    assert [where(i) for i in queue] == [where(i) for i in whole.pool("kv").queue]
    assert (part.stages, part.counts, part.last_event) == (
        whole.stages, whole.counts, whole.last_event,
    )  # fmt: skip
    # More than QUEUE_PLANNED asked: QUEUE_PLANNED planned.
    assert sim.snapshot(Shown(queue=10_000)).queue_planned == QUEUE_PLANNED


def test_a_short_queue_is_planned_whole() -> None:
    sim = sim_of(LONG_QUEUE.replace("req[250]", "req[5]"))
    longest = 0
    while sim.step() is not None:
        queue = sim.snapshot().pool("kv").queue
        longest = max(longest, len(queue))
        assert all(item.planned and item.units == 8 for item in queue)
    assert longest == 5


def test_registered_is_the_set_of_blocks_with_a_hash() -> None:
    # Per block ever used, its hash or -1 (none): blocks 1, 2 and 4 are registered.
    s = Registered((-1, 17, 3, -1, 99))
    assert 1 in s and 2 in s and 4 in s
    assert 0 not in s and 3 not in s and 5 not in s and -1 not in s and "1" not in s
    assert list(s) == [1, 2, 4] and len(s) == 3
    assert {1, 2} <= s and s == {1, 2, 4} and s == frozenset({1, 2, 4})
    assert Registered() == frozenset() and len(Registered()) == 0
    assert repr(s) == "Registered({1, 2, 4})"


def test_cells_read_a_blocks_owner_from_its_holder_or_its_entry() -> None:
    # Six blocks, five ever used. Hold 3 (owner 1) holds blocks 0 and 3 (count > 0: its
    # first holder's); entry 0 (owner 2) caches block 1 and entry 2 (owner 3) block 4
    # (count 0, registered: its entry's); block 2 is free (count 0, not registered), its
    # holder and entry left from before (the ledger does not clear them): still free;
    # block 5 was never used: free.
    owner, entry = (3, 7, 3, 3, 7), (0, 0, 0, 2, 2)
    counts, hashes = (1, 0, 0, 2, 0), (11, 12, -1, 13, 14)
    cells = Cells(6, owner, entry, counts, hashes, {3: 1}, {0: 2, 2: 3})
    assert len(cells) == 6
    assert list(cells) == [1, 2, 0, 1, 3, 0]
    assert cells[-1] == 0 and cells[1:4] == (2, 0, 1) and cells[3:6] == (1, 3, 0)
    assert cells[::2] == (1, 0, 3) and cells[4:2] == ()
    assert cells.used() == {0: 1, 1: 2, 3: 1, 4: 3}
    assert cells == [1, 2, 0, 1, 3, 0]
    # The same blocks with a sixth id used since and freed again: the same cells.
    same = Cells(6, (*owner, 5), (*entry, 9), (*counts, 0), (*hashes, -1), {3: 1}, {0: 2, 2: 3})
    assert cells == same
    assert cells != Cells(6, owner, entry, counts, hashes, {3: 1}, {0: 2, 2: 1})
    assert repr(cells) == "Cells(6, {0: 1, 1: 2, 3: 1, 4: 3})"
    try:
        cells[6]
    except IndexError:
        pass
    else:
        raise AssertionError("block 6 of 6 read")


def test_block_contents_reads_as_pairs() -> None:
    c = BlockContents(("a", None, "b"), [3, 0, 1])
    assert len(c) == 3
    assert c[0] == ("a", 3) and c[1] == (None, 0) and c[2] == ("b", 1)
    assert list(c) == [("a", 3), (None, 0), ("b", 1)]
    assert c[1:] == ((None, 0), ("b", 1))
    assert c == [("a", 3), (None, 0), ("b", 1)]
    assert c == BlockContents(["a", None, "b"], (3, 0, 1))
    assert c != BlockContents(("a", None, "b"), [3, 0, 2])
    assert repr(c) == "BlockContents([('a', 3), (None, 0), ('b', 1)])"


def test_a_checkpoint_leaves_the_block_hashes_out_and_they_come_back_the_same() -> None:
    from pooltui.sim.content import Content

    c = Content(7, [("system", 32), ([1, 2, 3], 16)])
    before = c.hashes(16, 0, 8)  # 32 + 48 units of pieces, then 3 blocks of the private stream
    assert len(c.bh) >= 8
    data = pickle.dumps(c, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(data)
    assert back.bh == [] and back.bh_block == 0  # the cache is not in the checkpoint
    assert back == c and back.hashes(16, 0, 8) == before
    assert [back.block_hash(j, 16) for j in range(8)] == before
    assert back.prefix_hash(40) == c.prefix_hash(40)


CHANGING = (
    ONE_SEAT
    + """
session s {
  arrive at (0);
  a = 1;
  hold kv (8) {
    run gpu prefill (8);
  }
  a = 2.5;
  hold kv (8) {
    run gpu prefill (8);
  }
}
"""
)


def test_an_attribute_set_again_shows_its_new_value_in_the_next_snapshot() -> None:
    # A snapshot reuses the last one's attributes of a session only while they are
    # unchanged: `a` is 1 through the first hold, then 2.5 (a float: shown as it is).
    sim = sim_of(CHANGING)
    seen: list[object] = []
    while sim.step() is not None:
        view = sim.snapshot().session("s")
        if view is not None:
            a = dict(view.attrs).get("a")
            if a is not None and (not seen or seen[-1] != a):
                seen.append(a)
    assert seen == [1, 2.5]


def test_a_checkpoint_keeps_every_field_of_a_content_but_its_cache() -> None:
    # A field added to Content later must be added to what a checkpoint keeps.
    from pooltui.sim.content import _KEPT, Content

    assert set(Content.__slots__) - set(_KEPT) == {"bh", "bh_block"}
    assert set(_KEPT) <= set(Content.__slots__)
