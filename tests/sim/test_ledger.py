"""The block ledger (pooltui.sim.ledger): content-and-reload.md §1, §2 and §4.

Every expectation is worked out by hand from the design, with a table of the expected counts
in a comment. Block size 4 unless said; physical ids come from the free stack first, then
never-used ids in increasing order, so a fresh pool hands out 0, 1, 2, ...

Notation: "sys"x8 is a piece ("sys", 8); p(s) is session s's private stream.
"""

from __future__ import annotations

import os
import pickle
import random
import subprocess
import sys
from bisect import bisect_right
from collections.abc import Callable

import pytest

from pooltui.sim.content import BUCKET, ROOT, anchor, key_hash
from pooltui.sim.ledger import (
    CACHED,
    FREE,
    HELD,
    NONE,
    Content,
    Evicted,
    Hit,
    Ledger,
    Table,
    spill_ranges,
)
from pooltui.sim.ledgercheck import Shadow, check, check_touched
from pooltui.sim.ledgertypes import INDICES_LIMIT, indices
from tests.sim.helpers import kept_as_counted


def admit(L: Ledger, hid: int, content: Content, upto: int, size: int) -> tuple[Table, Hit]:
    """The engine's admission, with no eviction needed: look up, acquire, grow."""
    hit = L.lookup(content, upto)
    assert L.fits(L.nb(size) - len(hit.blocks), hit)
    t = Table(hid, content)
    L.acquire(t, hit)
    assert L.short(L.nb(size) - len(t.blocks)) == 0
    L.grow(t, size)
    return t, hit


def ok(L: Ledger, *tables: Table) -> None:
    assert check(L, tables) is None, check(L, tables)


def refs(L: Ledger, *blocks: int) -> list[int]:
    return [L.ref[b] for b in blocks]


# --------------------------------------------------------------------------- identity


def test_content_identity_pieces_lists_strings_partial() -> None:
    # Block j is units [0, 4(j+1)); equal piece by piece:
    #   [10,11,12]x4 expands to 10x4, 11x4, 12x4         -> blocks 0..2 equal
    #   "a"x8 vs "a"x4,"c"x4: [0,4) is a:4 in both         -> block 0 equal, block 1 not
    #   3 vs 3.0 (numbers) equal; 3 vs "3" not
    #   "a"x2,"b"x2 vs "a"x2,"b"x6: [0,4) equal, [0,8) beyond the first's pieces
    #   is p(1) in one and "b" in the other                -> block 1 differs
    lst = Content(1, [([10, 11, 12], 4)])
    flat = Content(2, [(10, 4), (11, 4), (12, 4)])
    assert [lst.block_hash(j, 4) for j in range(3)] == [flat.block_hash(j, 4) for j in range(3)]
    assert lst.block_hash(3, 4) != flat.block_hash(3, 4)  # p(1) vs p(2)
    a8, a4c4 = Content(1, [("a", 8)]), Content(1, [("a", 4), ("c", 4)])
    assert a8.block_hash(0, 4) == a4c4.block_hash(0, 4)
    assert a8.block_hash(1, 4) != a4c4.block_hash(1, 4)
    assert Content(1, [(3, 4)]).block_hash(0, 4) == Content(2, [(3.0, 4)]).block_hash(0, 4)
    assert Content(1, [(3, 4)]).block_hash(0, 4) != Content(2, [("3", 4)]).block_hash(0, 4)
    ab2, ab6 = Content(1, [("a", 2), ("b", 2)]), Content(1, [("a", 2), ("b", 6)])
    assert ab2.block_hash(0, 4) == ab6.block_hash(0, 4)
    assert ab2.block_hash(1, 4) != ab6.block_hash(1, 4)
    # Any block size: a tier of block 2 sees the same prefixes ([0,4) is its block 1).
    assert a8.block_hash(1, 2) == a8.block_hash(0, 4) == a8.prefix_hash(4)
    # Hashes are 63-bit.
    assert all(0 <= a8.prefix_hash(n) < 1 << 63 for n in range(1, 20))
    with pytest.raises(ValueError):
        Content(1, [("x", 0)])


def test_a_contents_anchors_chain_its_keys_hashes() -> None:
    # Piece k starts at anchor(hash of the prefix before it, its key's hash); the prefix
    # hash after it is that anchor + its units (content.py's definitions, whatever the
    # key's type: 7 and 7.0 are one number, "7" is not).
    for keys in ([7, 8, 9], [7.0, "7", 2.5], [True, -3, 10**12]):
        c = Content(1, [(k, 5) for k in keys])
        h = ROOT
        for k, a, hp in zip(keys, c.anc, c.hp, strict=True):
            assert a == anchor(h, key_hash(k))
            h = a + 5
            assert hp == h
    assert Content(1, [(7, 5)]).hp == Content(2, [(7.0, 5)]).hp != Content(3, [("7", 5)]).hp


def test_hashes_do_not_depend_on_pythonhashseed() -> None:
    code = (
        "from pooltui.sim.ledger import Content\n"
        "c = Content(7, [('sys', 512), (3, 100), ([1, 'two', 3.5], 64)])\n"
        "print([c.prefix_hash(n) for n in (1, 256, 512, 600, 700, 1000, 5000)])\n"
    )
    outs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outs.append(proc.stdout.strip())
    c = Content(7, [("sys", 512), (3, 100), ([1, "two", 3.5], 64)])
    here = str([c.prefix_hash(n) for n in (1, 256, 512, 600, 700, 1000, 5000)])
    assert outs == [here, here]


# --------------------------------------------------------------------------- sharing


def test_two_holds_share_a_system_prompt() -> None:
    # 16 blocks of 4. A = "sys"x8 then p(1), size 10; B = "sys"x8 then p(2), U 12.
    #   A: hit 0, blocks 0 1 2; takes 10 tokens: registers blocks 0, 1 (block 2 not full)
    #   B: cap floor(11/4) = 2 blocks; E = 2 (blocks 0, 1, held by A): hit 8, shared 2,
    #      cached 0; needs nb(12) - 2 = 1 new block: 3
    #   block  ref  holders
    #   0      2    A, B
    #   1      2    A, B
    #   2      1    A
    #   3      1    B         allocated 4, cached 0, fresh 12, free stack empty
    L = Ledger(16, 4)
    a, _ = admit(L, 1, Content(1, [("sys", 8)]), 10, 10)
    assert a.blocks == [0, 1, 2]
    assert L.register(a, 10) == (2, 0)
    b, hit = admit(L, 2, Content(2, [("sys", 8)]), 12, 12)
    assert (hit.blocks, hit.units, hit.shared, hit.cached) == ([0, 1], 8, 2, 0)
    assert (b.blocks, b.nreg) == ([0, 1, 3], 2)
    assert refs(L, 0, 1, 2, 3) == [2, 2, 1, 1]
    assert (L.allocated, L.cached, L.fresh, L.free) == (4, 0, 12, [])
    assert L.holders(0) == [1, 2] and L.holders(2) == [1] and L.holders(3) == [2]
    assert [L.state_of(x) for x in (0, 2, 3, 4, 99)] == [HELD, HELD, HELD, FREE, FREE]
    assert L.summary(1) == "'sys'" and L.summary(2) == "private 1" and L.summary(5) == ""
    ok(L, a, b)


def test_identical_aligned_prompts_make_a_duplicate() -> None:
    # A = B = "p"x8 (sessions 1, 2), size 8 each, admitted one after the other.
    #   A: blocks 0 1, registers both (H0, H1)
    #   B: cap floor(7/4) = 1 block -> hit block 0 (shared); new block 2 for units 4..8
    #   B registers block 2 under H1: a duplicate (copies of H1: [1, 2])
    #   C = "p"x8 then "r"x4, U 13: cap 3; E = 2 -> blocks 0 and 1 (H1's first copy)
    #   block ref: 0:3  1:2  2:1    dups 1, duplicate registrations 1
    L = Ledger(8, 4)
    a, _ = admit(L, 1, Content(1, [("p", 8)]), 8, 8)
    L.register(a, 8)
    b, hit = admit(L, 2, Content(2, [("p", 8)]), 8, 8)
    assert (hit.blocks, hit.shared) == ([0], 1)
    assert b.blocks == [0, 2]
    assert L.register(b, 8) == (1, 1)
    assert L.copies(L.bhash[1]) == [1, 2]
    assert (L.dups, L.dup_registrations) == (1, 1)
    assert L.is_duplicate(2) and not L.is_duplicate(1)
    c, hit = admit(L, 3, Content(3, [("p", 8), ("r", 4)]), 13, 13)
    assert hit.blocks == [0, 1]
    assert refs(L, 0, 1, 2) == [3, 2, 1]
    ok(L, a, b, c)


def test_running_hold_registers_content_registered_meanwhile() -> None:
    # A and B ("q"x8, sessions 1 and 2) are both admitted before either registers:
    #   A: hit 0, blocks 0 1;  B: hit 0, blocks 2 3
    #   the iteration: A registers 0 1; B registers 2 3, both duplicates
    #   copies: H0 [0, 2], H1 [1, 3]; dups 2
    #   C = "q"x8 "r"x4, U 13: E = 2 -> the first copies 0 1, shared (A holds them)
    #   release A: 0, 1 go 2 -> 1 (C holds them): no entry
    #   C's size 13 is nb(13) = 4 blocks: 0 1 hit, 4 5 new
    #   release B: 2, 3 go 1 -> 0, registered: entry [2, 3]
    #   allocated 4 (0 1, C's 4 5), cached 2
    L = Ledger(8, 4)
    a, _ = admit(L, 1, Content(1, [("q", 8)]), 8, 8)
    b, hit_b = admit(L, 2, Content(2, [("q", 8)]), 8, 8)
    assert hit_b.blocks == [] and b.blocks == [2, 3]
    assert L.register(a, 8) == (2, 0)
    assert L.register(b, 8) == (2, 2)
    assert L.dups == 2
    c, hit = admit(L, 3, Content(3, [("q", 8), ("r", 4)]), 13, 13)
    assert (hit.blocks, hit.shared, hit.cached) == ([0, 1], 2, 0)
    assert c.blocks == [0, 1, 4, 5]
    assert L.release(a, 1.0) is None
    e = L.release(b, 2.0)
    assert e is not None and e.blocks == [2, 3]
    assert (L.allocated, L.cached) == (4, 2)
    # Still the first copies, though cached duplicates exist.
    assert L.lookup(Content(4, [("q", 8)]), 9).blocks == [0, 1]
    ok(L, c)


def test_evicting_copies_keeps_registration_order() -> None:
    # A, B, C ("q"x8, sessions 1 2 3) are all admitted before any registers:
    #   blocks A 0 1, B 2 3, C 4 5; each registers in turn
    #   copies: H0 [0, 2, 4], H1 [1, 3, 5]; dups 4
    # release B (t=1): 2, 3 go 1 -> 0: entry e0 = [2, 3]
    # evict e0 (2 blocks, tail first: 3, then 2): later copies leave their lists
    #   copies: H0 [0, 4], H1 [1, 5]; dups 2; cached 0, allocated 4
    # release A (t=2): entry e1 = [0, 1]; evict e1 (1, then 0): first copies leave,
    #   the next registered (C's) become first: H0 [4], H1 [5]; dups 0
    #   a lookup of "q"x8 with U 9 (at most 2 blocks) hits 4 5, held by C: shared
    L = Ledger(8, 4)
    a, _ = admit(L, 1, Content(1, [("q", 8)]), 8, 8)
    b, _ = admit(L, 2, Content(2, [("q", 8)]), 8, 8)
    c, _ = admit(L, 3, Content(3, [("q", 8)]), 8, 8)
    assert (a.blocks, b.blocks, c.blocks) == ([0, 1], [2, 3], [4, 5])
    assert [L.register(t, 8) for t in (a, b, c)] == [(2, 0), (2, 2), (2, 2)]
    h0, h1 = L.bhash[0], L.bhash[1]
    assert (L.copies(h0), L.copies(h1), L.dups) == ([0, 2, 4], [1, 3, 5], 4)
    e0 = L.release(b, 1.0)
    assert e0 is not None and e0.blocks == [2, 3]
    assert L.evict_ids(e0.order, 2) == [3, 2]
    assert (L.copies(h0), L.copies(h1), L.dups) == ([0, 4], [1, 5], 2)
    assert (L.cached, L.allocated) == (0, 4)
    ok(L, a, c)
    e1 = L.release(a, 2.0)
    assert e1 is not None and e1.blocks == [0, 1]
    assert L.evict_ids(e1.order, 2) == [1, 0]
    assert (L.copies(h0), L.copies(h1), L.dups, L.more) == ([4], [5], 0, {})
    hit = L.lookup(Content(4, [("q", 8)]), 9)
    assert (hit.blocks, hit.shared, hit.cached) == ([4, 5], 2, 0)
    assert not L.is_duplicate(4) and not L.is_duplicate(5)
    ok(L, c)


def test_hit_on_held_blocks_then_holder_preempted() -> None:
    # A = "s"x8 then p(1), size 12, computes 12: registers blocks 0 1 2 (2 is p(1)).
    # B = "s"x8 then p(2), U 10: cap 2; hit 0 1 shared; new block 3.
    # Preempt A (t=1): 0 1 go 2 -> 1 (B holds them); 2 goes 1 -> 0: entry e0 = [2]
    #   allocated 3 (0 1 3), cached 1
    # B computes 10 (block 3 = units 8..12 not full, unregistered), released (t=2):
    #   0 1 -> 0: entry e1 = [0, 1]; 3 -> 0, unregistered: freed (free stack [3])
    #   allocated 0, cached 3, fresh 12
    # A again, U 13 (12 computed + 1): cap floor(12/4) = 3: hit 0 1 2, all cached
    #   room 1 + 12 + 3 = 16, minus the hit's 3 cached = 13 >= nb(13) - 3 = 1: fits
    #   entries e0, e1 empty and gone; new block from the free stack: 3
    L = Ledger(16, 4)
    ca = Content(1, [("s", 8)])
    a, _ = admit(L, 1, ca, 12, 12)
    L.register(a, 12)
    b, hit = admit(L, 2, Content(2, [("s", 8)]), 10, 10)
    assert (hit.blocks, hit.shared) == ([0, 1], 2)
    assert b.blocks == [0, 1, 3]
    e0 = L.release(a, 1.0, {"tenant": 1})
    assert e0 is not None and (e0.order, e0.blocks, e0.sid, e0.last) == (0, [2], 1, 1.0)
    assert (L.allocated, L.cached) == (3, 1)
    assert refs(L, 0, 1, 2, 3) == [1, 1, 0, 1]
    assert L.holders(0) == [2]  # B took over as first holder
    ok(L, b)
    L.register(b, 10)
    e1 = L.release(b, 2.0)
    assert e1 is not None and (e1.order, e1.blocks, e1.sid) == (1, [0, 1], 2)
    assert (L.allocated, L.cached, L.free, L.fresh) == (0, 3, [3], 12)
    assert list(L.entries) == [0, 1]
    ok(L)
    a2 = Table(1, ca)
    hit = L.lookup(ca, 13)
    assert (hit.blocks, hit.cached, hit.shared) == ([0, 1, 2], 3, 0)
    assert L.room() == 16 and L.fits(1, hit) and not L.fits(14, hit)
    L.acquire(a2, hit)
    assert L.entries == {}
    assert L.grow(a2, 13) == [3]
    assert (L.allocated, L.cached, L.free) == (4, 0, [])
    ok(L, a2)


def test_entries_per_release_and_lru() -> None:
    # Three sessions, private content, size 8 each, computed 8: blocks 0 1 | 2 3 | 4 5.
    # Releases at t = 5, 3 (order 1), 7: entries in release order 0, 1, 2;
    # lru is the first (order 0) even though its `last` is later: `last` only moves
    # with touch(); touch(0, 9) makes order 1 the least recent.
    #   entry  sid  last  blocks  units  attrs
    #   0      1    5     0 1     8      {"x": 1}
    #   1      2    3     2 3     8      {}
    #   2      3    7     4 5     8      {}
    L = Ledger(8, 4)
    ts = []
    for s in (1, 2, 3):
        t, _ = admit(L, s, Content(s), 8, 8)
        L.register(t, 8)
        ts.append(t)
    L.release(ts[0], 5.0, {"x": 1}, serial=4)
    L.release(ts[1], 3.0)
    L.release(ts[2], 7.0)
    es = list(L.entries.values())
    assert [(e.order, e.sid, e.last, e.blocks, e.units) for e in es] == [
        (0, 1, 5.0, [0, 1], 8),
        (1, 2, 3.0, [2, 3], 8),
        (2, 3, 7.0, [4, 5], 8),
    ]
    assert (es[0].attrs, es[0].serial) == ({"x": 1}, 4)
    assert L.lru() is es[0]
    L.touch(0, 9.0)
    lru = L.lru()
    assert lru is not None and lru.order == 1
    assert list(L.entries) == [1, 2, 0]
    ok(L)


# --------------------------------------------------------------------------- eviction


def test_tail_first_eviction() -> None:
    # A = p(1), size 16 in a pool of 4 blocks, computes 16: blocks 0..3 registered.
    # Released: entry [0 1 2 3]. Evict 1: block 3 (units 12..16). A's next lookup, U 17:
    # cap 4, E = 3 (blocks 0 1 2). Evict 2 more: 2 then 1; free stack [3, 2, 1] (1 on top).
    #   step        entry      cached  free stack
    #   release     0 1 2 3    4       -
    #   evict 1     0 1 2      3       3
    #   evict 2     0          1       3 2 1
    L = Ledger(4, 4)
    c = Content(1)
    a, _ = admit(L, 1, c, 16, 16)
    L.register(a, 16)
    e = L.release(a, 1.0)
    assert e is not None and e.blocks == [0, 1, 2, 3]
    gone = L.evict(e.order, 1)
    assert [(g.block, g.lo, g.hi, g.index) for g in gone] == [(3, 12, 16, 3)]
    assert gone[0].content is c
    assert (L.cached, L.free) == (3, [3])
    assert L.lookup(c, 17).blocks == [0, 1, 2]
    gone = L.evict(e.order, 2)
    assert [g.block for g in gone] == [2, 1]
    assert (e.blocks, L.cached, L.free) == ([0], 1, [3, 2, 1])
    assert L.state_of(2) == FREE and L.bhash[2] == NONE
    ok(L)
    with pytest.raises(RuntimeError):
        L.evict(e.order, 2)
    L.evict(e.order, 1)
    assert L.entries == {} and L.table == {} and L.more == {}
    ok(L)


def test_a_remembered_lookup_forgets_what_an_eviction_took() -> None:
    # Block 4; c = "a"x6, "b"x6 (pieces not block-aligned): block 0 is [0,4) in "a",
    # block 1 [0,8) ends 2 units into "b", block 2 [0,12) at the end of "b".
    #   A: size 12, computes 12 -> blocks 0 1 2 registered; released: entry [0 1 2]
    #   B (same pieces, another session), U 13: cap 3, E = 3 -> [0 1 2] (remembered)
    #   evict 2 of the entry, tail first: 2, then 1 (both of piece "b")
    #   B again, U 13: E = 1 -> [0]; a lookup of "a"x6 alone, U 5: cap 1 -> [0]
    L = Ledger(8, 4)
    pieces: list[tuple[str | int | float | list[str | int | float], int]] = [("a", 6), ("b", 6)]
    a, _ = admit(L, 1, Content(1, pieces), 12, 12)
    L.register(a, 12)
    e = L.release(a, 1.0)
    assert e is not None and e.blocks == [0, 1, 2]
    cb = Content(2, pieces)
    assert L.lookup(cb, 13).blocks == [0, 1, 2]
    assert L.evict_ids(e.order, 2) == [2, 1]
    assert L.lookup(cb, 13).blocks == [0]
    assert L.lookup(Content(3, [("a", 6)]), 5).blocks == [0]
    ok(L)
    # The same with "b"x40 (blocks 0..10, [0,44)), U 45: cap 11, E = 11; evicting 10 of
    # them (10 down to 1, more than a few: marked by the span of pieces they cover)
    # leaves E = 1.
    L = Ledger(16, 4)
    pieces = [("a", 6), ("b", 40)]
    a, _ = admit(L, 1, Content(1, pieces), 44, 44)
    L.register(a, 44)
    e = L.release(a, 1.0)
    assert e is not None and e.blocks == list(range(11))
    cb = Content(2, pieces)
    assert L.lookup(cb, 45).blocks == list(range(11))
    assert L.evict_ids(e.order, 10) == list(range(10, 0, -1))
    assert L.lookup(cb, 45).blocks == [0]
    ok(L)


def test_block_indices_are_shared_ints() -> None:
    # `indices(lo, hi)` is range(lo, hi); below its limit the same int objects each time
    # (a grown block's index is stored without making an int), past it a plain range.
    assert list(indices(3, 6)) == [3, 4, 5] and list(indices(0, 0)) == []
    assert indices(300, 301)[0] is indices(299, 302)[1]
    assert indices(INDICES_LIMIT, INDICES_LIMIT + 2) == range(INDICES_LIMIT, INDICES_LIMIT + 2)


def test_buckets_between_cover_the_blocks_hashes() -> None:
    # What an eviction marks dirty (`Content.buckets_between`) holds the bucket of every
    # hash of the blocks it names, whatever the pieces and the block size.
    rng = random.Random(7)
    for _ in range(200):
        pieces = [(rng.randrange(50), rng.randrange(1, 40)) for _ in range(rng.randrange(6))]
        c = Content(rng.randrange(9), pieces)  # type: ignore[arg-type]
        block = rng.choice([1, 3, 4, 16])
        lo = rng.randrange(30)
        hi = lo + rng.randrange(1, 30)
        marked = set(c.buckets_between(block, lo, hi))
        assert {c.block_hash(j, block) >> BUCKET for j in range(lo, hi)} <= marked


def test_evicting_a_middle_block_leaves_unreachable_blocks() -> None:
    # A = "m"x8 p(1), size 8: blocks 0 1 registered.
    # B = "m"x8 p(2), U 16, size 16: cap 3; hit 0 1 (shared); new 2 3; registers 2 3.
    # Release B (t=1): 0 1 still held by A -> entry e0 = [2, 3].
    # Release A (t=2): entry e1 = [0, 1].
    # The caller (evict by) picks e1, evicts 1: block 1 (its tail), B's units 4..8.
    #   block  state   reachable
    #   0      cached  yes
    #   1      free    -
    #   2      cached  no (its prefix [0,8) is gone)
    #   3      cached  no
    # B's lookup, U 17: E = 1 (block 0). Evicting e0 then takes 3 first (tail first).
    L = Ledger(8, 4)
    cb = Content(2, [("m", 8)])
    a, _ = admit(L, 1, Content(1, [("m", 8)]), 8, 8)
    L.register(a, 8)
    b, hit = admit(L, 2, cb, 16, 16)
    assert (hit.blocks, b.blocks) == ([0, 1], [0, 1, 2, 3])
    L.register(b, 16)
    e0 = L.release(b, 1.0)
    e1 = L.release(a, 2.0)
    assert e0 is not None and e1 is not None
    assert (e0.blocks, e1.blocks) == ([2, 3], [0, 1])
    assert [L.reachable(x) for x in range(4)] == [True, True, True, True]
    L.evict(e1.order, 1)
    assert [L.state_of(x) for x in range(4)] == [CACHED, FREE, CACHED, CACHED]
    assert [L.reachable(x) for x in range(4)] == [True, False, False, False]
    assert L.lookup(cb, 17).blocks == [0]
    assert [g.block for g in L.evict(e0.order, 1)] == [3]
    assert L.cached == 2
    ok(L)


def test_reachable_is_false_for_a_duplicate() -> None:
    # The duplicate of test_identical_aligned_prompts: block 2 holds H1 after block 1,
    # so a lookup takes block 1; block 2 is never hit.
    L = Ledger(8, 4)
    a, _ = admit(L, 1, Content(1, [("p", 8)]), 8, 8)
    L.register(a, 8)
    b, _ = admit(L, 2, Content(2, [("p", 8)]), 8, 8)
    L.register(b, 8)
    assert [L.reachable(x) for x in range(3)] == [True, True, False]


def test_conversation_next_turn_extends_the_last_answer() -> None:
    # Turn 1 of session 5: "sys"x4 then p(5), size 12 (prompt + answer), computes 12:
    #   blocks 0 ("sys"), 1 2 (p(5) units 4..12) registered; released: entry [0 1 2].
    # Turn 2 of session 5, same content clause, U 20: cap floor(19/4) = 4, E = 3:
    #   hit 12 units, all 3 cached.
    # Session 6 with the same system prompt, U 20: E = 1 (only "sys").
    L = Ledger(16, 4)
    t1, _ = admit(L, 1, Content(5, [("sys", 4)]), 12, 12)
    L.register(t1, 12)
    L.release(t1, 1.0)
    hit = L.lookup(Content(5, [("sys", 4)]), 20)
    assert (hit.blocks, hit.units, hit.cached) == ([0, 1, 2], 12, 3)
    assert L.lookup(Content(6, [("sys", 4)]), 20).blocks == [0]
    # A hold without content is all private stream: session 5's turn with no pieces
    # shares nothing with its "sys" turn (unit 0 differs).
    assert L.lookup(Content(5), 20).blocks == []


def test_list_and_string_keys_in_lookups() -> None:
    # A: [10, 11, 12]x4 (session 1), size 12, registers 3 blocks.
    #   B = 10x4 11x4 12x4 (session 2): U 12 -> cap 2: hit 2; U 13 -> cap 3: hit 3.
    #   C = "10"x4 ...: hit 0 (a string is not a number).  D = 10.0x4 ...: hit 3 at U 13.
    L = Ledger(16, 4)
    a, _ = admit(L, 1, Content(1, [([10, 11, 12], 4)]), 12, 12)
    L.register(a, 12)
    flat = Content(2, [(10, 4), (11, 4), (12, 4)])
    assert L.lookup(flat, 12).blocks == [0, 1]
    assert L.lookup(flat, 13).blocks == [0, 1, 2]
    assert L.lookup(Content(3, [("10", 4), (11, 4), (12, 4)]), 13).blocks == []
    assert L.lookup(Content(4, [(10.0, 4), (11, 4), (12, 4)]), 13).blocks == [0, 1, 2]


def test_partial_last_piece() -> None:
    # A trace's last key for a partial block: "a"x4 "b"x2, then p(s). Block 4.
    #   A (session 1): block 0 = "a", block 1 = "b"x2 + p(1) units 6..8.
    #   B (session 2, same pieces), U 9: cap 2, E = 1 (block 1 has p(2), not p(1)).
    #   A's own readmission, U 9: E = 2.
    L = Ledger(8, 4)
    pieces = [("a", 4), ("b", 2)]
    a, _ = admit(L, 1, Content(1, pieces), 8, 8)
    L.register(a, 8)
    assert L.summary(1) == "'b', private 1"
    assert L.lookup(Content(2, pieces), 9).blocks == [0]
    assert L.lookup(Content(1, pieces), 9).blocks == [0, 1]


def test_hit_cap_never_covers_the_last_unit() -> None:
    # A registered "h"x16 (4 blocks). hit = min(E, floor((max(U, context) - 1)/4) blocks):
    #   upto  0 -> 0;  1 -> 0;  4 -> 0;  5 -> 1;  16 -> 3;  17 -> 4;  100 -> 4 (E = 4)
    L = Ledger(8, 4)
    a, _ = admit(L, 1, Content(1, [("h", 16)]), 16, 16)
    L.register(a, 16)
    c = Content(2, [("h", 16)])
    got = [len(L.lookup(c, u).blocks) for u in (0, 1, 4, 5, 16, 17, 100)]
    assert got == [0, 0, 0, 1, 3, 4, 4]


def test_infinite_pool() -> None:
    # cap inf: room inf, never short, ids still reused; entries and sharing as usual.
    #   A = "x"x8 p(1), size 1000, computes 1000: 250 blocks (0..249), all registered.
    #   B = "x"x8 p(2), U 12: hit 0 1 shared; new 250.
    #   Release A: 2..249 cached (entry of 248), 0 1 stay with B.
    L = Ledger.for_cap(float("inf"), 4)
    assert L.total == -1 and L.room() == float("inf") and L.short(10**12) == 0
    a, _ = admit(L, 1, Content(1, [("x", 8)]), 1000, 1000)
    assert L.register(a, 1000) == (250, 0)
    b, hit = admit(L, 2, Content(2, [("x", 8)]), 12, 12)
    assert (hit.shared, b.blocks) == (2, [0, 1, 250])
    e = L.release(a, 1.0)
    assert e is not None and len(e.blocks) == 248 and e.blocks[0] == 2
    assert (L.allocated, L.cached) == (3, 248)
    ok(L, b)
    L.evict(e.order, 248)
    assert L.grow(Table(3, Content(3)), 8) == [2, 3]  # the free stack first, head of chain
    # (The table of that grow is not passed to check: only the counts matter here.)


def test_room_rule_a_hits_cached_blocks_are_not_room() -> None:
    # 4 blocks of 4. A = p(1), size 12, computes 12: blocks 0 1 2; released: entry [0 1 2].
    #   free 0, fresh 1, cached 3: room 4.
    # A's next turn, U 17, size 17: cap 4, E = 3: hit 3 cached; needs nb(17) - 3 = 2 new.
    #   room 4 - 3 (the hit's cached) = 1 < 2: does not fit (4 >= 2 would be wrong).
    # U 16, size 16: cap 3, hit 3; needs 1 <= 1: fits; the new block is never-used id 3.
    # Another session's entry can be evicted for the rest: see the second part.
    L = Ledger(4, 4)
    c = Content(1)
    a, _ = admit(L, 1, c, 12, 12)
    L.register(a, 12)
    L.release(a, 1.0)
    assert (L.room(), L.fresh, L.cached) == (4, 1, 3)
    hit = L.lookup(c, 17)
    assert (hit.cached, len(hit.blocks)) == (3, 3)
    assert not L.fits(L.nb(17) - 3, hit)
    assert L.fits(L.nb(17) - 3)  # what a rule that forgot the hit would say
    t, hit = admit(L, 2, c, 16, 16)
    assert t.blocks == [0, 1, 2, 3] and (L.allocated, L.cached, L.fresh) == (4, 0, 0)
    ok(L, t)
    # Part 2: 4 blocks; session 2's entry [0 1] (t=1) and session 1's entry [2] (t=2).
    # Session 1 again, U 5, size 12: hit block 2 (cached); needs 2 new; room 4 - 1 = 3.
    # free + fresh = 1 (block 3): short(2) = 1: the caller evicts 1 block of the lru
    # entry (session 2's): its tail, block 1. New blocks: the free stack's 1, then
    # never-used 3.
    L = Ledger(4, 4)
    t2, _ = admit(L, 2, Content(2), 8, 8)
    L.register(t2, 8)
    t1, _ = admit(L, 1, Content(1), 4, 4)
    L.register(t1, 4)
    L.release(t2, 1.0)
    L.release(t1, 2.0)
    hit = L.lookup(Content(1), 5)
    assert (hit.blocks, hit.cached) == ([2], 1)
    assert L.fits(2, hit)
    t = Table(3, Content(1))
    L.acquire(t, hit)
    assert L.short(2) == 1
    lru = L.lru()
    assert lru is not None and lru.sid == 2
    assert [g.block for g in L.evict(lru.order, 1)] == [1]
    assert L.grow(t, 12) == [1, 3]
    assert t.blocks == [2, 1, 3]
    ok(L, t)


# --------------------------------------------------------------------------- spill tiers


def test_spill_ranges_in_a_tier_with_another_block_size() -> None:
    # Pool of block 4, tier of block 6. A = "d"x24 p(1), size 24, computes 24: blocks 0..5.
    # Released, then 5 blocks evicted tail first: 5 4 3 2 1 = units [4, 24), one range.
    # Tier blocks whole inside [4, 24): ceil(4/6) = 1 up to floor(24/6) = 4 excluded: 1 2 3
    #   ([6,12), [12,18), [18,24)). Block 0 of the tier ([0,6)) is not whole inside.
    # The tier already has block 1 (an earlier spill of session 2's "d"x24: its [6, 12)):
    #   write 2 3, have 1. Landing 2 3 makes one cached entry of 2 tier blocks.
    pool, tier = Ledger(8, 4), Ledger(10, 6)
    c = Content(1, [("d", 24)])
    a, _ = admit(pool, 1, c, 24, 24)
    pool.register(a, 24)
    e = pool.release(a, 1.0)
    assert e is not None
    gone = pool.evict(e.order, 5)
    assert [g.block for g in gone] == [5, 4, 3, 2, 1]
    ranges = spill_ranges(gone)
    assert [(r[1], r[2]) for r in ranges] == [(4, 24)]
    _, lo, hi = ranges[0]
    assert list(tier.whole_blocks(lo, hi)) == [1, 2, 3]
    other = Content(2, [("d", 24)])
    e1 = tier.land(other, [1], 0.5, {"k": 2})
    assert e1 is not None and e1.spilled and e1.blocks == [0]
    write, have = tier.spill_plan(ranges[0][0], lo, hi)
    assert (write, have) == ([2, 3], [1])
    assert tier.short(len(write)) == 0
    e2 = tier.land(ranges[0][0], write, 2.0)
    assert e2 is not None and e2.blocks == [1, 2] and e2.units == 12 and e2.order == 1
    assert (tier.cached, tier.allocated, tier.fresh) == (3, 0, 7)
    # In the tier, block 0 of "d" ([0,6)) is not there: its blocks 1..3 are unreachable.
    assert not tier.reachable(0)
    assert tier.land(c, [1, 2], 3.0) is None  # all registered already: nothing to write
    ok(tier)
    ok(pool)


def test_spill_ranges_split_where_chains_break() -> None:
    # Evicted blocks of two different chains (sessions 1 and 2, private) are two ranges;
    # blocks of one chain with a gap are two ranges as well.
    L = Ledger(16, 4)
    a, _ = admit(L, 1, Content(1), 12, 12)
    b, _ = admit(L, 2, Content(2), 8, 8)
    L.register(a, 12)
    L.register(b, 8)
    ea = L.release(a, 1.0)
    eb = L.release(b, 2.0)
    assert ea is not None and eb is not None
    gone = L.evict(ea.order, 3) + L.evict(eb.order, 1)
    got = [(r[0].sid, r[1], r[2]) for r in spill_ranges(gone)]
    assert got == [(1, 0, 12), (2, 4, 8)]
    gap = [g for g in gone if g.index != 1 or g.content.sid != 1]
    assert [(r[0].sid, r[1], r[2]) for r in spill_ranges(gap)] == [
        (1, 0, 4),
        (2, 4, 8),
        (1, 8, 12),
    ]


# --------------------------------------------------------------------------- memory


def test_huge_pool_keeps_free_ids_as_a_count() -> None:
    # cap 1e9, block 1: nothing per block until used.
    #   grow to 5: ids 0..4; per-block arrays 5 long; fresh 1e9 - 5
    #   drop (never registered): free stack [4 3 2 1 0] (0 on top)
    #   grow another table to 3: 0 1 2 from the stack; the arrays stay 5 long
    L = Ledger.for_cap(1e9, 1)
    assert (L.total, L.fresh, len(L.ref)) == (10**9, 10**9, 0)
    t, _ = admit(L, 1, Content(1), 5, 5)
    assert t.blocks == [0, 1, 2, 3, 4]
    assert [len(x) for x in (L.ref, L.bhash, L.bcontent, L.bidx, L.bentry, L.owner)] == [5] * 6
    assert L.fresh == L.room() == 10**9 - 5  # 5 allocated, nothing cached
    assert L.release(t, 1.0) is None
    assert L.free == [4, 3, 2, 1, 0]
    u, _ = admit(L, 2, Content(2), 3, 3)
    assert u.blocks == [0, 1, 2] and len(L.ref) == 5 and L.free == [4, 3]
    ok(L, u)
    assert len(pickle.dumps(L)) < 4000


def test_a_content_is_runs_of_pieces() -> None:
    # 100 keys of 512 units, 1e9 private units: per-piece lists only.
    c = Content(1, [(list(range(100)), 512)])
    assert len(c.keys) == len(c.hp) == len(c.ends) == 100 and c.total == 51200
    c.prefix_hash(10**9)  # O(1) past the pieces
    assert c.block_hash(0, 512) == Content(2, [(0, 512)]).block_hash(0, 512)


def test_pickle_round_trip() -> None:
    # The shared-prompt scene, pickled: the copy is equal and evolves the same way.
    # A computes 12 here, so its block 2 is cached at its release: entry [2].
    L = Ledger(16, 4)
    a, _ = admit(L, 1, Content(1, [("sys", 8)]), 12, 12)
    L.register(a, 12)
    b, _ = admit(L, 2, Content(2, [("sys", 8)]), 12, 12)
    L.release(a, 1.0, {"t": 3})
    L2, b2 = pickle.loads(pickle.dumps((L, b)))
    ok(L2, b2)
    # (compiled classes have no __slots__ to list: the names are spelled out)
    for name in ("allocated", "bentry", "bhash", "bidx", "block", "cached", "dups", "free"):
        assert getattr(L, name) == getattr(L2, name), name
    for name in ("fresh", "more", "next_order", "owner", "ref", "sharers", "table", "total"):
        assert getattr(L, name) == getattr(L2, name), name
    assert [c is None for c in L.bcontent] == [c is None for c in L2.bcontent]
    assert [(e.order, e.blocks, e.attrs, e.last) for e in L2.entries.values()] == [
        (0, [2], {"t": 3}, 1.0)
    ]
    hit = L2.lookup(Content(9, [("sys", 8)]), 12)
    assert hit.blocks == L.lookup(Content(9, [("sys", 8)]), 12).blocks == [0, 1]
    assert L2.release(b2, 2.0) is not None and L.release(b, 2.0) is not None
    assert L2.entries[1].blocks == L.entries[1].blocks == [0, 1]


# --------------------------------------------------------------------------- invariants


def scene() -> tuple[Ledger, list[Table]]:
    """Shared prompt, a duplicate, an entry, a free block:
    A "sys"x8 p(1) size 12 computes 12 (0 1 2), B "sys"x8 p(2) U 8 size 12 (hit 0; 3 4),
    B computes 8 (3 duplicates 1), C p(3) size 4 (5) computes 4 and is released (entry
    [5]), D p(4) size 4 (6) dropped (free stack [6])."""
    L = Ledger(16, 4)
    a, _ = admit(L, 1, Content(1, [("sys", 8)]), 12, 12)
    L.register(a, 12)
    b, _ = admit(L, 2, Content(2, [("sys", 8)]), 8, 12)
    L.register(b, 8)
    c, _ = admit(L, 3, Content(3), 4, 4)
    L.register(c, 4)
    L.release(c, 1.0)
    d, _ = admit(L, 4, Content(4), 4, 4)
    L.release(d, 2.0, keep=False)
    assert (b.blocks, L.dups, L.cached, L.allocated, L.free) == ([0, 3, 4], 1, 1, 5, [6])
    return L, [a, b]


def _bump_size(L: Ledger, ts: list[Table]) -> None:
    ts[0].size += 4


def _twice(L: Ledger, ts: list[Table]) -> None:
    ts[1].blocks[2] = 3
    ts[1].size = 12


def _never(L: Ledger, ts: list[Table]) -> None:
    ts[1].blocks[2] = 99


def _nreg(L: Ledger, ts: list[Table]) -> None:
    ts[1].nreg = 3  # block 4 was never registered


def _ref(L: Ledger, ts: list[Table]) -> None:
    L.ref[2] += 1


def _holders(L: Ledger, ts: list[Table]) -> None:
    L.owner[2] = 7


def _allocated(L: Ledger, ts: list[Table]) -> None:
    L.allocated += 1


def _cached(L: Ledger, ts: list[Table]) -> None:
    L.cached -= 1


def _empty_entry(L: Ledger, ts: list[Table]) -> None:
    L.entries[5] = L.entries.pop(0)


def _misfiled(L: Ledger, ts: list[Table]) -> None:
    L.bentry[5] = 8


def _lost(L: Ledger, ts: list[Table]) -> None:
    L.bhash[6] = L.bhash[5]  # a free block claims a registration
    L.more.setdefault(L.bhash[5], []).append(6)
    L.bcontent[6] = L.bcontent[5]
    L.bidx[6] = 0
    L.free.remove(6)
    L.cached += 1


def _wrong_list(L: Ledger, ts: list[Table]) -> None:
    L.more.setdefault(L.bhash[0], []).append(5)


def _empty_list(L: Ledger, ts: list[Table]) -> None:
    L.more[L.bhash[0]] = []


def _content(L: Ledger, ts: list[Table]) -> None:
    L.bidx[5] = 1  # entry block 5 now claims to be its content's block 1


def _unlisted(L: Ledger, ts: list[Table]) -> None:
    del L.table[L.bhash[5]]


def _stray_first(L: Ledger, ts: list[Table]) -> None:
    L.table[777] = 99  # a hash listing a block id never used (past the per-block arrays)


def _negative_first(L: Ledger, ts: list[Table]) -> None:
    L.table[NONE] = -1  # a negative id listed (bhash[-1], a free block's, is NONE too)


def _entry_stray(L: Ledger, ts: list[Table]) -> None:
    L.entries[0].blocks.append(99)  # an id never used (past the per-block arrays)


def _negative_index(L: Ledger, ts: list[Table]) -> None:
    L.bidx[5] = -1  # cached block 5 (its content's only block) now claims index -1


def _dups(L: Ledger, ts: list[Table]) -> None:
    L.dups = 0


def _free_twice(L: Ledger, ts: list[Table]) -> None:
    L.free.append(6)


def _free_in_use(L: Ledger, ts: list[Table]) -> None:
    L.free.append(4)


def _id_lost(L: Ledger, ts: list[Table]) -> None:
    L.free.pop()


def _fresh(L: Ledger, ts: list[Table]) -> None:
    L.fresh -= 1


def _cap(L: Ledger, ts: list[Table]) -> None:
    L.total = 5


def _arrays(L: Ledger, ts: list[Table]) -> None:
    L.bidx.append(0)


BREAKS = [
    (_arrays, "per-block arrays differ"),
    (_bump_size, "hold 1: 16 units in 3 blocks, not 4"),
    (_twice, "hold 2: a block twice"),
    (_never, "hold 2: block 99 was never allocated"),
    (_nreg, "hold 2: block 2 (#4) is not registered with its content"),
    (_ref, "block 2: count 2, but 1 tables hold it"),
    (_holders, "block 2: holders [7], but [1] hold it"),
    (_allocated, "allocated is 6 blocks but 5 have a count"),
    (_cached, "cached is 0 blocks but 1 registered blocks have count 0"),
    (_empty_entry, "entry 5: misfiled"),
    (_misfiled, "entry 0: block 5 is not a cached block of it"),
    (_lost, "entries hold 1 blocks but 2 are cached"),
    (_wrong_list, "hash table lists block [0, 5] under a hash"),
    (_empty_list, "an empty copy list"),
    (_stray_first, "hash table lists block [99] under a hash one is not registered with"),
    (_negative_first, "hash table lists block [-1] under a hash one is not registered with"),
    (_entry_stray, "entry 0: block 99 is not a cached block of it"),
    (_negative_index, "block 5: registered hash differs from its content's"),
    (_content, "block 5: registered hash differs from its content's"),
    (_unlisted, "block 5: registered but not in the hash table"),
    (_dups, "dups is 0 but the hash table has 1"),
    (_free_twice, "a block twice on the free stack"),
    (_free_in_use, "block 4 is on the free stack but in use"),
    (_id_lost, "0 free + 5 allocated + 1 cached ≠ 7 used ids"),
    (_cap, "allocated + cached = 6 > 5 blocks"),
    (_fresh, "fresh 8 + 7 used ids ≠ 16 blocks"),
]


def test_scene_is_sound() -> None:
    L, ts = scene()
    ok(L, *ts)


@pytest.mark.parametrize("brk,message", BREAKS, ids=[b[0].__name__ for b in BREAKS])
def test_each_invariant_broken_on_purpose(
    brk: Callable[[Ledger, list[Table]], None], message: str
) -> None:
    L, ts = scene()
    brk(L, ts)
    got = check(L, ts)
    assert got is not None and message in got, got


def _touch_everything(L: Ledger, ts: list[Table]) -> None:
    """Note every block, entry, hash and table as changed (as if one step had touched them
    all): the check of what changed then looks at each."""
    L.tb.update(range(len(L.ref)))
    L.te.update(L.entries)
    L.te.update(e.order for e in L.entries.values())
    L.th.update(L.table)
    L.th.update(L.more)
    for t in ts:
        L.mark_table(t, 0, len(t.blocks))


@pytest.mark.parametrize("brk,message", BREAKS, ids=[b[0].__name__ for b in BREAKS])
def test_each_invariant_broken_on_purpose_is_caught_by_the_check_of_what_changed(
    brk: Callable[[Ledger, list[Table]], None], message: str
) -> None:
    # The shadow is taken of the sound scene; the break is then noted as a change (here:
    # everything), and the check of what changed must find it too, comparing the ledger
    # with the shadow's figures (its message may differ from the full check's).
    L, ts = scene()
    sh = Shadow(L)
    tables = {t.hid: t for t in ts}
    L.track = True
    assert check_touched(L, sh, tables) is None
    brk(L, ts)
    _touch_everything(L, ts)
    assert check_touched(L, sh, tables) is not None
    assert not (L.tb or L.te or L.th or L.tt)  # what changed is forgotten once checked


def test_a_negative_id_listed_where_no_hash_has_copies_is_named() -> None:
    # A's 2 blocks (ids 0, 1), only block 0 registered: no copies anywhere, and the last
    # used id's hash is NONE. A hash table listing id -1 under NONE lists no block
    # (content-and-reload.md §4: each listed block registered with its hash), though
    # Python's bhash[-1] would read NONE back.
    L = Ledger(8, 4)
    a, _ = admit(L, 1, Content(1), 8, 8)
    L.register(a, 4)
    assert (a.blocks, L.bhash[1], L.more) == ([0, 1], NONE, {})
    ok(L, a)
    L.table[NONE] = -1
    assert check(L, [a]) == "hash table lists block [-1] under a hash one is not registered with"


def test_a_missing_table_breaks_the_counts() -> None:
    # The caller's holds are the truth: leaving B out, blocks 0 3 4 have one holder too many.
    L, ts = scene()
    assert check(L, ts[:1]) == "block 0: count 2, but 1 tables hold it"


# --------------------------------------------------------------------------- random walks


def _unit(c: Content, u: int) -> tuple[object, ...]:
    """Unit u of c spelled out, without hashes: (key, offset in its piece) or (private, u)."""
    if u >= c.total:
        return ("private", c.sid, u)
    k = bisect_right(c.ends, u)
    key = c.keys[k]
    norm = ("s", key) if isinstance(key, str) else ("n", float(key))
    return (norm, u - (c.ends[k - 1] if k else 0))


def _prefix(c: Content, n: int) -> tuple[tuple[object, ...], ...]:
    return tuple(_unit(c, u) for u in range(n))


@pytest.mark.parametrize("seed", range(6))
def test_random_walk_keeps_every_invariant(seed: int) -> None:
    # Random admissions, registrations, grows, releases, drops, evictions, spills to a tier
    # of another block size, and pickling; after every step check() holds in both pools,
    # and every lookup's hit equals a brute-force one over units spelled out (a block is
    # hit iff some registered block's prefix equals the content's, unit by unit).
    rng = random.Random(seed)
    B = rng.choice([1, 2, 3, 4])
    L, tier = Ledger(rng.choice([6, 10, 16]), B), Ledger(12, rng.choice([1, 2, 5]))
    L.track = tier.track = True  # and the check of what changed agrees with check() each step
    shadows = {id(L): Shadow(L), id(tier): Shadow(tier)}
    keys: list[int | float | str] = [0, 1, 1.0, "a", "0", "b"]
    tables: list[Table] = []
    hid = 0
    for _step in range(150):
        op = rng.random()
        if op < 0.3 or not tables:
            pieces = [(rng.choice(keys), rng.randint(1, 5)) for _ in range(rng.randint(0, 3))]
            c = Content(rng.randint(1, 3), pieces)
            size = rng.randint(1, 16)
            upto = max(size, rng.randint(0, 16))
            hit = L.lookup(c, upto)
            registered = {
                _prefix(x, (L.bidx[b] + 1) * B)
                for b in range(len(L.ref))
                if L.bhash[b] != NONE and (x := L.bcontent[b]) is not None
            }
            e = 0
            while e < (upto - 1) // B and _prefix(c, (e + 1) * B) in registered:
                e += 1
            assert len(hit.blocks) == e
            for j, b in enumerate(hit.blocks):
                x = L.bcontent[b]
                assert x is not None and _prefix(x, (j + 1) * B) == _prefix(c, (j + 1) * B)
            if not L.fits(L.nb(size) - e, hit):
                continue
            hid += 1
            t = Table(hid, c)
            L.acquire(t, hit)
            _make_room(L, L.nb(size) - len(t.blocks), tier, rng)
            L.grow(t, size)
            tables.append(t)
        elif op < 0.55:
            t = rng.choice(tables)
            L.register(t, rng.randint(0, t.size))
        elif op < 0.65:
            t = rng.choice(tables)
            size = t.size + rng.randint(1, 6)
            if L.fits(L.nb(size) - len(t.blocks)):
                _make_room(L, L.nb(size) - len(t.blocks), tier, rng)
                L.grow(t, size)
        elif op < 0.85:
            t = tables.pop(rng.randrange(len(tables)))
            L.release(t, float(_step), keep=rng.random() < 0.85)
        elif op < 0.95 and L.entries:
            order = rng.choice(list(L.entries))
            _spill(L.evict(order, rng.randint(1, len(L.entries[order].blocks))), tier, rng)
        else:
            L, tier, tables = pickle.loads(pickle.dumps((L, tier, tables)))
        assert check(L, tables) is None, (seed, _step, check(L, tables))
        assert check(tier, []) is None, (seed, _step, check(tier, []))
        for led, ts in ((L, tables), (tier, [])):
            sh = shadows.get(id(led))
            if sh is None or sh.ledger is not led:  # unpickled: a new ledger, a new shadow
                led.untouched()
                sh = shadows[id(led)] = Shadow(led)
            assert check_touched(led, sh, {t.hid: t for t in ts}) is None, (seed, _step)
            kept_as_counted(sh, f"seed {seed}, step {_step}")  # the figures kept equal a recount


def _make_room(L: Ledger, need: int, tier: Ledger, rng: random.Random) -> None:
    while L.short(need) > 0:
        e = rng.choice(list(L.entries.values()))  # any order: `evict by` may pick any
        _spill(L.evict(e.order, min(L.short(need), len(e.blocks))), tier, rng)


def _spill(gone: list[Evicted], tier: Ledger, rng: random.Random) -> None:
    for c, lo, hi in spill_ranges(gone):
        for b in gone:  # every evicted unit is inside one range of the same chain
            if c.sid == b.content.sid and lo <= b.lo < hi:
                assert _prefix(c, b.hi)[b.lo :] == _prefix(b.content, b.hi)[b.lo :]
        write, have = tier.spill_plan(c, lo, hi)
        assert sorted(write + have) == list(tier.whole_blocks(lo, hi))
        while write and tier.short(len(write)) > 0 and tier.entries:
            e = tier.lru()
            assert e is not None
            tier.evict(e.order, min(tier.short(len(write)), len(e.blocks)))
        write, _ = tier.spill_plan(c, lo, hi)  # eviction may have taken some of `have`
        if tier.short(len(write)) == 0:
            tier.land(c, write, 0.0)


def test_a_stale_hit_is_refused() -> None:
    # A hit looked up, then its block evicted before acquire: the caller's bug, caught.
    L = Ledger(4, 4)
    a, _ = admit(L, 1, Content(1), 8, 8)
    L.register(a, 8)
    e = L.release(a, 1.0)
    assert e is not None
    hit = L.lookup(Content(1), 9)
    assert hit.blocks == [0, 1]
    L.evict(e.order, 2)
    with pytest.raises(RuntimeError, match="stale hit"):
        L.acquire(Table(2, Content(1)), hit)
