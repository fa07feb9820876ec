"""Content-addressed blocks shared across sessions (content-and-reload.md §1, §2, §5).

Every figure here is worked out by hand from the design, not read off the program: blocks
are registered when an iteration takes the tokens that complete them (so a hold admitted
later in the same iteration hits them); a hit is the longest run of leading registered
blocks, capped at ⌊(max(U, context) − 1)/B⌋ blocks; blocks held by others are shared (no
free block), cached ones leave their entry; a release's blocks left at count zero form its
entry; eviction picks an entry (lru, or `evict by`) and takes its tail first.

Physical ids: a pool hands out its free ids last-freed first, then ids never used, lowest
first. gpu takes 1 s per iteration unless said.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pooltui.lang import compile_source
from pooltui.sim import Simulation
from tests.sim.helpers import (
    admits,
    assert_clean,
    evicts,
    of,
    one,
    releases,
    row,
    run_all,
    sim_of,
    t,
    table,
)


def shared_of(events: list[object], pool: str = "kv") -> list[tuple[object, ...]]:
    """(time, session, hit, shared, blocks) of each admission."""
    return [
        (t(e.time), e.session, e.get("hit"), e.get("shared"), tuple(e.blocks))  # type: ignore[attr-defined]
        for e in events
        if e.moment == "admit" and e.pool == pool  # type: ignore[attr-defined]
    ]


# --------------------------------------------------------------------------- 1. system prompt
# a and b share an 8-unit system prompt ("sys"), then 4 units of their own; both arrive at 0.
#  t  iteration                                 kv blocks (id: holders)
#  0  admit a: nothing registered, hit 0;       a: 0 1 2 (new)
#     a prefill 12 registers blocks 0, 1 (sys) and 2 (a's own) now;
#     admit b (same iteration): E = 2 (sys), cap ⌊11/4⌋ = 2: hit 8, shared 8 (a holds them);
#     one new block; b prefill 4                b: 0 1 3 (0, 1 shared)
#  1  a decode 1 (13: block 4), b decode 1 (13: block 5)
#  2  a releases: 0, 1 stay with b; 2 is its entry (4 cached), 4 (unregistered) is freed;
#     b releases: 0, 1, 3 at count 0: its entry (12); 5 freed
SYSTEM_PROMPT = """
stage gpu step { budget 64; time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session a { arrive at (0); hold kv (12) content ("sys" : 8) { run gpu prefill (12); run gpu decode (1); } }
session b { arrive at (0); hold kv (12) content ("sys" : 8) { run gpu prefill (12); run gpu decode (1); } }
"""


def test_a_system_prompt_is_hit_by_a_hold_admitted_later_in_the_same_iteration() -> None:
    sim = sim_of(SYSTEM_PROMPT)
    sim.run_until(lambda e: e.moment == "admit" and e.session == "b")
    kv = sim.snapshot().pool("kv")
    assert (kv.allocated, kv.cached, kv.shared) == (16, 0, 2)  # 4 physical blocks, 2 shared
    bm = kv.blocks
    assert bm is not None
    assert [bm.count(b) for b in range(5)] == [2, 2, 1, 1, 0]
    assert [o.session for o in bm.holders(0)] == ["a", "b"]
    assert bm.content(0) == "'sys'" and bm.content(2) == "private 0"  # a is session 0
    assert [bm.state(b) for b in (0, 2, 3, 4)] == ["held", "held", "held", "free"]
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("a", "prefill", 12), ("b", "prefill", 4)], ["a", "b"]),
        row(1, [("a", "decode", 1), ("b", "decode", 1)]),
    ]
    assert shared_of(events) == [(0, "a", 0, 0, (0, 1, 2)), (0, "b", 8, 8, (0, 1, 3))]
    assert releases(events) == [(2, "a", "kv", 13, 4), (2, "b", "kv", 13, 12)]
    kv = sim.snapshot().pool("kv")
    assert [(x.session, x.physical) for x in kv.entries] == [("a", (2,)), ("b", (0, 1, 3))]
    s = sim.summary()
    assert (s.hit_units, s.hit_shared, s.hit_own, s.hit_held, s.duplicates) == (8, 8, 0, 8, 0)


# --------------------------------------------------------------------------- 2. identical prompts
# a and b both hold exactly "p" : 8 (block-aligned). At t0 a registers blocks 0, 1. b: E = 2,
# but the cap ⌊(8 − 1)/4⌋ = 1 block leaves b's last block out: hit 4 (shared), and b
# computes "p" [4, 8) again into its own block 2: a duplicate of block 1 (registered first).
#  0  a prefill 8 (0 1), b prefill 4 (0 2; 2 is a duplicate)
#  1  a releases: 0 stays with b, entry a = [1]; b releases: entry b = [0, 2]
#  2  c holds 12 of "p" : 8: E = 2 with the first copies (0, then 1, not the duplicate 2),
#     cap ⌊11/4⌋ = 2: hit 8 from cache (0 leaves b's entry, 1 empties a's); 1 new block (3)
IDENTICAL = """
stage gpu step { time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session a { arrive at (0); hold kv (8) content ("p" : 8) { run gpu prefill (8); } }
session b { arrive at (0); hold kv (8) content ("p" : 8) { run gpu prefill (8); } }
session c { arrive at (2); hold kv (12) content ("p" : 8) { run gpu prefill (12); } }
"""


def test_identical_block_aligned_prompts_make_a_duplicate_and_a_later_hit_takes_the_first() -> None:
    sim = sim_of(IDENTICAL)
    sim.run_until(lambda e: e.moment == "release" and e.session == "b")
    kv = sim.snapshot().pool("kv")
    assert kv.duplicates == 1
    bm = kv.blocks
    assert bm is not None
    assert [bm.info(b).duplicate for b in range(3)] == [False, False, True]
    assert bm.content(1) == bm.content(2) == "'p'"
    assert [(x.session, x.physical) for x in kv.entries] == [("a", (1,)), ("b", (0, 2))]
    events = run_all(sim)
    assert_clean(sim)
    assert table(events)[0] == row(0, [("a", "prefill", 8), ("b", "prefill", 4)], ["a", "b"])
    assert shared_of(events) == [
        (0, "a", 0, 0, (0, 1)),
        (0, "b", 4, 4, (0, 2)),
        (2, "c", 8, 0, (0, 1, 3)),  # the first copies; nothing held: 0 shared
    ]
    assert sim.summary().duplicates == 1


# --------------------------------------------------------------------------- 3. computed meanwhile
# kv has no stage (admitted at the settle); a prefills "doc" on slow (budget 4), b on fast.
#  0    a admitted (0 1 2 3); slow [0,1]: 4 tokens, registers block 0 (id 0)
#  1    slow [1,2]: 4 tokens, registers block 1 (id 1)
#  1.5  b: E = 2 (a holds 0, 1), cap ⌊15/4⌋ = 3: hit 8 shared; new 4 5; fast [1.5,2.5]:
#       8 tokens, registers blocks 2, 3 (ids 4, 5) now
#  2    slow [2,3]: a registers block 2 (id 2): b's id 4 was first, a duplicate
#  3    slow [3,4]: a registers block 3 (id 3): a duplicate of id 5
#  2.5  b releases: entry b = [4, 5] (0, 1 stay with a); 4: a releases: entry a = [0 1 2 3]
#  5    c (20 units of "doc" : 16): E = 4 with the first copies 0 1 4 5; cap ⌊19/4⌋ = 4:
#       hit 16 from cache; 1 new block (6)
MEANWHILE = """
stage slow step { budget 4; time 1; }
stage fast step { budget 64; time 1; }
pool kv { cap 64; block 4; }
session a { arrive at (0); hold kv (16) content ("doc" : 16) { run slow prefill (16); } }
session b { arrive at (1.5); hold kv (16) content ("doc" : 16) { run fast prefill (16); } }
session c { arrive at (5); hold kv (20) content ("doc" : 16) { run fast prefill (20); } }
"""


def test_a_running_hold_computes_content_registered_meanwhile_and_a_later_hit_takes_the_first() -> (
    None
):
    sim = sim_of(MEANWHILE)
    events = run_all(sim)
    assert_clean(sim)
    assert shared_of(events) == [
        (0, "a", 0, 0, (0, 1, 2, 3)),
        (1.5, "b", 8, 8, (0, 1, 4, 5)),
        (5, "c", 16, 0, (0, 1, 4, 5, 6)),
    ]
    assert releases(events) == [
        (2.5, "b", "kv", 16, 8),
        (4, "a", "kv", 16, 16),
        (6, "c", "kv", 20, 20),
    ]
    assert sim.summary().duplicates == 2
    L = sim.state.pools[0].ledger
    assert (L.is_duplicate(2), L.is_duplicate(3), L.is_duplicate(4)) == (True, True, False)


# --------------------------------------------------------------------------- 4. held by another
# kv: 4 blocks. a holds 12 (sys 8 + own 4) and sleeps holding them; b arrives at 1 wanting
# 12 of the same prompt: hit 8 on blocks a still holds (shared, no free block), so it needs
# one block only, and 1 is free: it fits in a full pool where a private 12 would not.
#  0  a admitted (0 1 2), prefill 12 registers them; run-done at 1, sleeps until 4
#  1  b: hit 8 shared (0 1), 1 new block (3): kv full; prefill 4; sleeps until 7
#  4  a releases 12: 0, 1 stay allocated with b; its entry is [2] alone (4 cached)
#  5  d holds 4 (private): 0 free, 1 cached block: lru evicts a's entry, [2] (4, left 0):
#     the shared blocks 0, 1 are not in any entry, so eviction cannot touch them
#  6  d releases (entry d = [2]); 7: b releases: entry b = [0 1 3]
HELD = """
stage gpu step { time 1; }
pool kv { cap 16; block 4; evict lru; admit via gpu; }
session a { arrive at (0); hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (3); } }
session b { arrive at (1); hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (5); } }
session d { arrive at (5); hold kv (4) { run gpu prefill (4); } }
"""


def test_a_hit_on_blocks_another_still_holds_costs_no_free_block_and_outlives_its_release() -> None:
    sim = sim_of(HELD)
    sim.run_until(lambda e: e.moment == "admit" and e.session == "b")
    kv = sim.snapshot().pool("kv")
    assert (kv.allocated, kv.cached, kv.free) == (16, 0, 0)
    assert sorted(h.shared for h in kv.holds) == [2, 2]
    sim.run_until(lambda e: e.moment == "release" and e.session == "a")
    kv = sim.snapshot().pool("kv")
    assert (kv.allocated, kv.cached, kv.free) == (12, 4, 0)
    bm = kv.blocks
    assert bm is not None
    assert [(bm.state(b), bm.count(b)) for b in range(4)] == [
        ("held", 1),
        ("held", 1),
        ("cached", 0),
        ("held", 1),
    ]
    assert [o.session for o in bm.holders(0)] == ["b"]
    events = run_all(sim)
    assert_clean(sim)
    assert shared_of(events) == [
        (0, "a", 0, 0, (0, 1, 2)),
        (1, "b", 8, 8, (0, 1, 3)),
        (5, "d", 0, 0, (2,)),
    ]
    assert releases(events) == [(4, "a", "kv", 12, 4), (6, "d", "kv", 4, 4), (7, "b", "kv", 12, 12)]
    assert evicts(events) == [(5, "a", "kv", 4, 0)]
    assert [e.blocks for e in of(events, "evict")] == [(2,)]


# --------------------------------------------------------------------------- 4b. holder preempted
# kv: 5 blocks, lifo. a and b share "sys" 8. a holds max(12, context): prefill 12, then 6
# decode steps, growing a block at unit 13 and at 17; b (arrives 0.5) holds 12, prefills
# and sleeps 5 s holding its blocks (not a resident while it sleeps).
#  t  iteration (residents first, then admissions)        kv blocks (id: holders)
#  0  a admitted: hit 0; prefill 12 registers 0 1 (sys) 2 (a's own)   0 1 2: a
#  1  a decode 1 (13: new block 3); b admitted: E = 2 (held by a), cap ⌊11/4⌋ = 2: hit 8,
#     shared 8; 1 block past the hit, 1 free (a private 12 would need 3): 4; b prefill 4
#     registers 4 (b's own)                          0 1: a b · 2 3: a · 4: b · 0 free
#  2  a decode 1 (14); b's run is done: it sleeps until 7, holding 0 1 4
#  3-4  a decode 1 (15, 16: block 3 registered at 16)
#  5  a needs unit 17, a 5th block: 0 free, no cache; lifo victim: a itself (b is no
#     resident). a's 0 1 go to count 1 and stay allocated with b; 2 3 (registered) are its
#     entry (cached 8); 0 tokens.       0 1 4: b · 2 3: cached (a)
#     a's retry: E = 4 (0 1 held by b, 2 3 cached), header max(12, 16) = 16, cap ⌊15/4⌋
#     = 3: hit 12; its step recomputes 12-16 and takes a token (5 tokens): 17 units = 5
#     blocks, 2 past the hit; room 0 free + 2 cached − 1 (the hit's cached 2) = 1: waits
#  7  b releases: 0 1 4 reach count 0: entry b = [0 1 4]. a: room 0 + 5 − 3 = 2: admitted,
#     hit 12 (0 1 from b's entry, 2 from its own; shared 0: nobody holds them); size 16
#     takes 1 block: lru evicts a's entry [3] (released at 5; 4, left 0), a takes 3; its
#     recompute step grows to 17: lru evicts b's entry, now [4] (the hit took 0 1 out of
#     it; 4, left 0), a takes 4
#  8  a decode 1 (18): its 6th step (t1-t4, t7, t8); released at 9: 4 blocks registered
#     (16 cached), block 4 (units 16-20, computed 18) freed
PREEMPTED_HOLDER = """
stage gpu step { time 1; }
pool kv { cap 20; block 4; preempt lifo; admit via gpu; }
session a { arrive at (0); hold kv (max(12, context)) content ("sys" : 8) { run gpu prefill (12); run gpu decode (6); } }
session b { arrive at (0.5); hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (5); } }
"""


def test_a_holder_preempted_leaves_the_shared_blocks_allocated_with_the_other() -> None:
    sim = sim_of(PREEMPTED_HOLDER)
    sim.run_until(lambda e: e.moment == "admit" and e.session == "b")
    kv = sim.snapshot().pool("kv")
    assert (kv.allocated, kv.cached, kv.free, kv.shared) == (20, 0, 0, 2)
    sim.run_until(lambda e: e.moment == "preempt")
    kv = sim.snapshot().pool("kv")
    assert (kv.allocated, kv.cached, kv.free, kv.shared) == (12, 8, 0, 0)
    bm = kv.blocks
    assert bm is not None
    assert [(bm.state(b), bm.count(b)) for b in range(5)] == [
        ("held", 1),
        ("held", 1),
        ("cached", 0),
        ("cached", 0),
        ("held", 1),
    ]
    assert [o.session for o in bm.holders(0)] == ["b"]
    assert [(x.session, x.physical) for x in kv.entries] == [("a", (2, 3))]
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("a", "prefill", 12)], ["a"]),
        row(1, [("a", "decode", 1), ("b", "prefill", 4)], ["b"]),
        row(2, [("a", "decode", 1)]),
        row(3, [("a", "decode", 1)]),
        row(4, [("a", "decode", 1)]),
        row(5, [], [], True),
        row(7, [("a", "recompute", 5)], ["a"]),
        row(8, [("a", "decode", 1)]),
    ]
    p = one(events, "preempt")
    assert (t(p.time), p.session, p.get("cached")) == (5, "a", 8)
    assert shared_of(events) == [
        (0, "a", 0, 0, (0, 1, 2)),
        (1, "b", 8, 8, (0, 1, 4)),
        (7, "a", 12, 0, (0, 1, 2, 3)),
    ]
    assert evicts(events) == [(7, "a", "kv", 4, 0), (7, "b", "kv", 4, 0)]
    assert [e.blocks for e in of(events, "evict")] == [(3,), (4,)]
    assert releases(events) == [(7, "b", "kv", 12, 12), (9, "a", "kv", 18, 16)]
    s = sim.summary()
    # b's 8 on blocks a computed (shared, held); a's 12 on its own blocks (0 1 are a's
    # content: a computed them first), though b's release had them in its entry.
    assert (s.hit_units, s.hit_shared, s.hit_own, s.hit_held, s.duplicates) == (20, 8, 12, 8, 0)


# --------------------------------------------------------------------------- 4c. eviction skips
# kv: 6 blocks, lru. A hit takes a cached block out of its entry (held blocks are in no
# entry), so evicting that entry later takes only the rest of it.
#  t  iteration                                          kv blocks
#  0  a admitted (0 1 2 3), prefill 16 registers them; released at 1: entry a = [0 1 2 3]
#  2  b holds 5 of "doc": E = 4, cap ⌊4/4⌋ = 1: hit 4 from the cache: 0 leaves a's entry
#     (a = [1 2 3]); 1 new block (4, never used); prefill 1 (unit 4: b's block 1 is not
#     complete, nothing registered); b sleeps until 13, holding 0 4
#  4  c holds 16 (private, 4 blocks): 1 never used (5), 3 to evict: a's entry, tail first:
#     3 2 1 (12, left 0); block 0 is b's and in no entry: it stays. c takes 1 2 3 (last
#     freed first) then 5; released at 5: entry c = [1 2 3 5]
# 13  b releases: 0 (registered) reaches count 0 and joins this release's entry, b = [0];
#     4 (unregistered) is freed
EVICT_SKIPS = """
stage gpu step { time 1; }
pool kv { cap 24; block 4; evict lru; admit via gpu; }
session a { arrive at (0); hold kv (16) content ("doc" : 16) { run gpu prefill (16); } }
session b { arrive at (2); hold kv (5) content ("doc" : 16) { run gpu prefill (5); wait (10); } }
session c { arrive at (4); hold kv (16) { run gpu prefill (16); } }
"""


def test_eviction_skips_blocks_a_hit_took_out_of_the_entry() -> None:
    sim = sim_of(EVICT_SKIPS)
    sim.run_until(lambda e: e.moment == "admit" and e.session == "b")
    kv = sim.snapshot().pool("kv")
    assert [(x.session, x.physical) for x in kv.entries] == [("a", (1, 2, 3))]
    bm = kv.blocks
    assert bm is not None
    assert (bm.state(0), [o.session for o in bm.holders(0)]) == ("held", ["b"])
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("a", "prefill", 16)], ["a"]),
        row(2, [("b", "prefill", 1)], ["b"]),
        row(4, [("c", "prefill", 16)], ["c"]),
    ]
    assert shared_of(events) == [
        (0, "a", 0, 0, (0, 1, 2, 3)),
        (2, "b", 4, 0, (0, 4)),
        (4, "c", 0, 0, (1, 2, 3, 5)),
    ]
    assert evicts(events) == [(4, "a", "kv", 12, 0)]
    assert [e.blocks for e in of(events, "evict")] == [(3, 2, 1)]
    assert releases(events) == [
        (1, "a", "kv", 16, 16),
        (5, "c", "kv", 16, 16),
        (13, "b", "kv", 5, 4),
    ]
    kv = sim.snapshot().pool("kv")
    assert [(x.session, x.physical) for x in kv.entries] == [("c", (1, 2, 3, 5)), ("b", (0,))]


# --------------------------------------------------------------------------- 4d. shared, kept
# kv: 4 blocks, lru. Blocks a hold still holds are in no entry, so eviction cannot make
# room from them even once their first holder has released: d waits for the last holder.
#  t  iteration / event                                   kv blocks (id: holders)  free
#  0  a admitted: hit 0, 0 1 2; prefill 12 registers them  0 1 2: a                 1
#     (its run done at 1; it sleeps holding them until 4)
#  1  b ("sys" 8 + 4 own): E = 2 (a holds them), cap ⌊11/4⌋ = 2: hit 8, shared 8; 1 new
#     block (3); prefill 4 registers it; run done at 2, b sleeps until 7
#                                                         0 1: a b · 2: a · 3: b   0
#  4  a releases 12: 0 1 stay with b (count 1); entry a = [2] (4 cached)
#  5  d (8, private: 2 blocks): 0 free + 1 cached block (a's [2]) = 1 < 2: it waits and
#     nothing is evicted; 0 1 (cached by nobody, held by b) are not room
#  7  b releases: 0 1 3 reach 0: entry b = [0 1 3] (12 cached). d: lru evicts a's [2]
#     (4, left 0), then b's tail 3 (4, left 8); d takes 3 2 (last freed first); prefill 8
#  8  d releases (entry d = [3 2]); "sys" (0 1) is still cached, in b's entry
KEPT = """
stage gpu step { time 1; }
pool kv { cap 16; block 4; evict lru; admit via gpu; }
session a { arrive at (0); hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (3); } }
session b { arrive at (1); hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (5); } }
session d { arrive at (5); hold kv (8) { run gpu prefill (8); } }
"""


def test_eviction_cannot_take_blocks_another_hold_still_shares() -> None:
    sim = sim_of(KEPT)
    sim.run_until(lambda e: e.moment == "enqueue" and e.session == "d")  # d attempted at 5
    kv = sim.snapshot().pool("kv")
    assert (kv.allocated, kv.cached, kv.free) == (12, 4, 0)
    assert [q.session for q in kv.queue] == ["d"]
    assert [(x.session, x.physical) for x in kv.entries] == [("a", (2,))]
    bm = kv.blocks
    assert bm is not None
    assert [(bm.state(b), bm.count(b)) for b in range(4)] == [
        ("held", 1),
        ("held", 1),
        ("cached", 0),
        ("held", 1),
    ]
    events = run_all(sim)
    assert_clean(sim)
    assert table(events) == [
        row(0, [("a", "prefill", 12)], ["a"]),
        row(1, [("b", "prefill", 4)], ["b"]),
        row(7, [("d", "prefill", 8)], ["d"]),
    ]
    assert shared_of(events) == [
        (0, "a", 0, 0, (0, 1, 2)),
        (1, "b", 8, 8, (0, 1, 3)),
        (7, "d", 0, 0, (3, 2)),
    ]
    assert evicts(events) == [(7, "a", "kv", 4, 0), (7, "b", "kv", 4, 8)]
    assert [e.blocks for e in of(events, "evict")] == [(2,), (3,)]
    assert releases(events) == [(4, "a", "kv", 12, 4), (7, "b", "kv", 12, 12), (8, "d", "kv", 8, 8)]
    kv = sim.snapshot().pool("kv")
    assert [(x.session, x.physical) for x in kv.entries] == [("b", (0, 1)), ("d", (3, 2))]


# --------------------------------------------------------------------------- 5. middle eviction
# kv: 8 blocks, `evict by (0 - last)`: the most recent release goes first.
#  0  a prefills "doc" 16 (0 1 2 3); releases at 1: entry a = [0 1 2 3] (last 1)
#  2  c holds 8 of "doc": E = 4, cap ⌊7/4⌋ = 1: hit 4 (0 leaves a's entry); new block 4,
#     prefill 4 registers "doc" [0, 8) in 4: a duplicate of 1; releases at 3: entry c = [0 4]
#  4  d holds 24 (private, 6 blocks): 3 never used (5 6 7), 3 to evict. Keys: a −1, c −3:
#     c first, tail first: 4 then 0 (8, left 0); then a's tail: 3 (4, left 8).
#     Block 0 was "doc"'s only first block: a's 1 and 2 stay cached but nothing reaches
#     them any more (unreachable). d takes 3 0 4 (last freed first), then 5 6 7.
#  6  e holds 16 of "doc": E = 0 (block 0 of "doc" is gone): hit 0 although 1, 2 are cached
MIDDLE = """
stage gpu step { time 1; }
pool kv { cap 32; block 4; evict by (0 - last); admit via gpu; }
session a { arrive at (0); hold kv (16) content ("doc" : 16) { run gpu prefill (16); } }
session c { arrive at (2); hold kv (8) content ("doc" : 16) { run gpu prefill (8); } }
session d { arrive at (4); hold kv (24) { run gpu prefill (24); } }
session e { arrive at (6); hold kv (4) content ("doc" : 16) { run gpu prefill (4); } }
"""


def test_a_middle_eviction_leaves_cached_blocks_nothing_reaches() -> None:
    sim = sim_of(MIDDLE)
    sim.run_until(lambda e: e.moment == "release" and e.session == "d")
    L = sim.state.pools[0].ledger
    kv = sim.snapshot().pool("kv")
    assert [(x.session, x.physical) for x in kv.entries] == [
        ("d", (3, 0, 4, 5, 6, 7)),
        ("a", (1, 2)),
    ]
    assert [L.reachable(b) for b in (1, 2)] == [False, False]
    assert kv.blocks is not None and kv.blocks.state(1) == "cached"
    events = run_all(sim)
    assert_clean(sim)
    assert shared_of(events) == [
        (0, "a", 0, 0, (0, 1, 2, 3)),
        (2, "c", 4, 0, (0, 4)),
        (4, "d", 0, 0, (3, 0, 4, 5, 6, 7)),
        (6, "e", 0, 0, (7,)),
    ]
    # e (1 block): nothing free; keys d −5, a −1: d's tail (7) goes
    assert evicts(events) == [
        (4, "c", "kv", 8, 0),
        (4, "a", "kv", 4, 8),
        (6, "d", "kv", 4, 20),
    ]
    assert [e.blocks for e in of(events, "evict")] == [(4, 0), (3,), (7,)]


# --------------------------------------------------------------------------- 6. next turn
# One conversation, two turns; its content is all private stream (the same in both
# turns: a later turn hits its own earlier one).
#  t    iteration              turn 1 computed   registered (s's private stream)
#  0    admit turn 1 (11 = 6 + 5), hit 0; prefill 6     6   block 0 (units 0-4)
#  1    decode 1                                         7
#  2    decode 1                                         8   block 1 (units 4-8: 2 prompt
#                                                            units, 2 answer units)
#  3-5  decode 1 each                               9 10 11  (block 2 never full)
#  6    turn 1 released: 0 1 cached (entry 8), 2 freed. Turn 2 holds 11 + 6 + 5 = 22, its
#       prompt 17 extends the last answer: E = 2, cap ⌊21/4⌋ = 5 blocks: hit 8 (own);
#       prefill 17 − 8 = 9
NEXT_TURN = """
stage gpu step { time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session s {
  history = 0;
  repeat (2) {
    hold kv (history + 6 + 5) { run gpu prefill (history + 6); run gpu decode (5); }
    history = history + 6 + 5;
  }
}
"""


def test_a_conversations_next_turn_hits_the_last_answer() -> None:
    sim = sim_of(NEXT_TURN)
    events = run_all(sim)
    assert_clean(sim)
    assert admits(events) == [(0, "s", "kv", 11, 0), (6, "s", "kv", 22, 8)]
    assert table(events)[5:7] == [
        row(5, [("s", "decode", 1)]),
        row(6, [("s", "prefill", 9)], ["s"]),
    ]
    s = sim.summary()
    assert (s.hit_own, s.hit_shared) == (8, 0)  # its own earlier turn


# --------------------------------------------------------------------------- 7. spill, known
# kv (4 blocks) spills every eviction to cpu over pcie (rate 4: 8 units take 2 s).
#  0  a prefills "doc" 8 (0 1); entry a at 1
#  3  b (16, private): 2 never used + evict a's entry (tail 1, 0; 8, left 0) -> spill
#     "doc" [0, 8): cpu has nothing: 8 units, pcie [3, 5]; b takes 0 1 2 3, released at 4
#  5  the spill lands (cpu: "doc" 0, 1); c (8 of "doc"): kv has no "doc" any more, hit 0;
#     evicts b's tail (3, 2; 8, left 8) -> spill b [8, 16): 8 units, pcie [5, 7]; c takes
#     2 3 and registers "doc" again; released at 6: entry c = [2 3]
#  7  b's [8, 16) lands in cpu
#  8  d (16, private): evict lru b's [0 1] (8, left 0) -> spill b [0, 8), pcie [8, 10];
#     then c's [2 3] (8, left 0) -> "doc" [0, 8): cpu already has both blocks: nothing is
#     written (a `spill` of 0 units, have 8, no job, not counted)
KNOWN = """
stage gpu step { time 1; }
stage pcie link { rate 4; lanes 1; }
pool kv { cap 16; block 4; evict lru; spill cpu via pcie (size) when (1); admit via gpu; }
pool cpu { cap 64; block 4; evict lru; }
session a { arrive at (0); hold kv (8) content ("doc" : 8) { run gpu prefill (8); } }
session b { arrive at (3); hold kv (16) { run gpu prefill (16); } }
session c { arrive at (5); hold kv (8) content ("doc" : 8) { run gpu prefill (8); } }
session d { arrive at (8); hold kv (16) { run gpu prefill (16); } }
"""


def test_a_spill_of_content_the_tier_already_has_writes_nothing() -> None:
    sim = sim_of(KNOWN)
    events = run_all(sim)
    assert_clean(sim)
    spills = [
        (t(e.time), e.session, e.units, e.get("work"), e.get("have")) for e in of(events, "spill")
    ]
    assert spills == [
        (3, "a", 8, 8, None),
        (5, "b", 8, 8, None),
        (8, "b", 8, 8, None),
        (8, "c", 0, 0, 8),
    ]
    landed = [(t(e.time), e.session, e.units) for e in of(events, "spilled")]
    assert landed == [(5, "a", 8), (7, "b", 8), (10, "b", 8)]
    assert sim.summary().spills == 3
    assert evicts(events, "kv") == [
        (3, "a", "kv", 8, 0),
        (5, "b", "kv", 8, 8),
        (8, "b", "kv", 8, 0),
        (8, "c", "kv", 8, 0),
    ]


# --------------------------------------------------------------------------- 8. evict by, shared
# kv: 6 blocks, `evict by (pri)`. x (pri 1) and y (pri 5) share "sys" 8, each 4 of its own.
#  0  x (0 1 2), y hits 8 shared (0 1) + 3; both prefill
#  1  x releases: 0 1 stay with y; entry x = [2] (x's attributes: pri 1)
#  2  y releases: entry y = [0 1 3] (pri 5): the shared blocks are in the entry of the
#     release that left them at zero, and go by its key
#  3  z (16, private): 2 never used (4 5), evict 2: x's entry first (key 1): [2] (4, left 0),
#     then y's tail: 3 (4, left 8); "sys" (0 1) stays cached with y's key. z takes 3, 2
#     (last freed first), then 4, 5
EVICT_BY = """
stage gpu step { time 1; }
pool kv { cap 24; block 4; evict by (pri); admit via gpu; }
session x { arrive at (0); pri = 1; hold kv (12) content ("sys" : 8) { run gpu prefill (12); } }
session y { arrive at (0); pri = 5; hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (1); } }
session z { arrive at (3); pri = 0; hold kv (16) { run gpu prefill (16); } }
"""


def test_evict_by_ranks_shared_blocks_with_the_release_that_left_them() -> None:
    sim = sim_of(EVICT_BY)
    sim.run_until(lambda e: e.moment == "release" and e.session == "y")
    kv = sim.snapshot().pool("kv")
    assert [(x.session, x.physical, x.keys) for x in kv.entries] == [
        ("x", (2,), (1,)),
        ("y", (0, 1, 3), (5,)),
    ]
    events = run_all(sim)
    assert_clean(sim)
    assert evicts(events) == [(3, "x", "kv", 4, 0), (3, "y", "kv", 4, 8)]
    assert [e.blocks for e in of(events, "evict")] == [(2,), (3,)]
    kv = sim.snapshot().pool("kv")
    # z took the freed ids last-freed first (3, 2), then the never-used 4, 5; z's entry
    # (key 0) now goes before y's (key 5)
    assert [(x.session, x.physical) for x in kv.entries] == [("z", (3, 2, 4, 5)), ("y", (0, 1))]


# --------------------------------------------------------------------------- 9-11. sources
# Two rows at 0: ids [7, 8] with 6 units, ids [7, 9] with 10 units; `content (ids : 4)`.
#  0  r[0]: hit 0, 2 blocks (0 1); prefill 6 registers block 0 ("7") only (6 < 8)
#     r[1]: E = 1 ("7"; its block 1 is "7, 9"), cap ⌊9/4⌋ = 2: hit 4, shared 4; 2 new (2 3);
#     its prefill of 6 reaches unit 10, completing its block 1 (units 4-8) only
ROWS_EXPECTED = [(0, "r[0]", 0, 0, (0, 1)), (0, "r[1]", 4, 4, (0, 2, 3))]


def _source_spec(source: str, key: str = "ids", arrive: str = "t", units: str = "p") -> str:
    return f"""
stage gpu step {{ time 1; }}
pool kv {{ cap 64; block 4; admit via gpu; }}
session r from "{source}" {{
  arrive at ({arrive});
  hold kv ({units}) content ({key} : 4) {{ run gpu prefill ({units}); }}
}}
"""


def _run_source(tmp_path: Path, spec: str) -> list[object]:
    sim = sim_of(spec, tmp_path)
    events = run_all(sim)
    assert_clean(sim)
    return events


def test_a_jsonl_source_with_lists_shares_by_its_keys(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(
        '{"t": 0, "p": 6, "ids": [7, 8]}\n{"t": 0, "p": 10, "ids": [7, 9]}\n'
    )
    events = _run_source(tmp_path, _source_spec("t.jsonl"))
    assert shared_of(events) == ROWS_EXPECTED


def test_a_csv_list_cell_is_read_as_a_list(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text('t,p,ids\n0,6,"[7, 8]"\n0,10,"[7, 9]"\n')
    events = _run_source(tmp_path, _source_spec("t.csv"))
    assert shared_of(events) == ROWS_EXPECTED


def test_a_keyword_column_is_read_through_row_name(tmp_path: Path) -> None:
    # `time` and `block` are words of the language: row.time, row.block.
    (tmp_path / "t.jsonl").write_text(
        '{"time": 0, "size": 6, "block": [7, 8]}\n{"time": 0, "size": 10, "block": [7, 9]}\n'
    )
    spec = _source_spec("t.jsonl", key="row.block", arrive="row.time", units="row.size")
    events = _run_source(tmp_path, spec)
    assert shared_of(events) == ROWS_EXPECTED


# A conditional key (language.md §8.6): rows at 0 are "fresh" (one 4-unit piece, the same
# key for both), later rows key by their ids. Same rows as above otherwise, and r[2], r[3]
# at 1 with 10 units each. The two groups never share: r[2]'s block 0 is "7", not "fresh".
#  0  r[0]: hit 0, 2 blocks (0 1); prefill 6 registers block 0 ("fresh"); 1 stays partial
#     r[1]: E = 1 ("fresh"), cap ⌊5/4⌋ = 1: hit 4, shared 4 (r[0] holds it); 1 new (2)
#  1  both end: r[0] releases (0 stays with r[1]; 1 freed), r[1] releases (0 cached; 2 freed)
#     r[2]: its block 0 is "7": nothing registered (the cached 0 is "fresh"): hit 0;
#     3 blocks, last-freed first: 2, 1, then the never-used 3; prefill 10 registers its
#     blocks 0 ("7", id 2) and 1 ("7, 8", id 1)
#     r[3]: E = 1 ("7"; its block 1 is "7, 9"), cap ⌊9/4⌋ = 2: hit 4, shared 4; 2 new (4 5)
CONDITIONAL = """
stage gpu step { time 1; }
pool kv { cap 64; block 4; admit via gpu; }
session r from "t.jsonl" {
  arrive at (t);
  hold kv (p) content (t > 0 ? ids : "fresh" : 4) { run gpu prefill (p); }
}
"""


def test_a_conditional_key_shares_a_string_among_some_rows_and_ids_among_the_others(
    tmp_path: Path,
) -> None:
    (tmp_path / "t.jsonl").write_text(
        '{"t": 0, "p": 6, "ids": [7, 8]}\n{"t": 0, "p": 6, "ids": [7, 9]}\n'
        '{"t": 1, "p": 10, "ids": [7, 8]}\n{"t": 1, "p": 10, "ids": [7, 9]}\n'
    )
    events = _run_source(tmp_path, CONDITIONAL)
    assert shared_of(events) == [
        (0, "r[0]", 0, 0, (0, 1)),
        (0, "r[1]", 4, 4, (0, 2)),
        (1, "r[2]", 0, 0, (2, 1, 3)),
        (1, "r[3]", 4, 4, (2, 4, 5)),
    ]


# --------------------------------------------------------------------------- §4 invariants
# Each invariant of content-and-reload.md §4, broken on purpose in a running simulation (the
# state right after b's admission in SYSTEM_PROMPT: blocks 0, 1 shared by a and b), halts it
# at the next event with a message naming what broke.
BROKEN = {
    "count": ("count", "block 0: count 3, but 2 tables hold it"),
    "allocated": ("allocated", "allocated is 5 blocks but 4 have a count"),
    "cached": ("cached", "cached is 1 blocks but 0 registered blocks have count 0"),
    "table": ("table", "12 units in 2 blocks, not 3"),
    "hit": ("content", "block 0 (#0) is not registered with its content"),
    # block 0 now says it holds its content's block 1: the tables holding it at index 0
    # are checked first, so the check names the first of them (a at 0, hold 1)
    "content": ("content", "hold 1: block 0 (#0) is block 1 of its content"),
}


def test_each_ledger_invariant_broken_on_purpose_halts_the_run() -> None:
    import pytest

    from pooltui.sim.testing import break_ledger

    for what, (invariant, words) in BROKEN.items():
        sim = sim_of(SYSTEM_PROMPT)
        sim.run_until(lambda e: e.moment == "admit" and e.session == "b")
        assert sim.violation is None
        break_ledger(sim, "kv", what)
        for _ in range(5):
            if sim.step() is None or sim.violation is not None:
                break
        v = sim.violation
        assert v is not None, what
        assert (v.invariant, v.pool) == (invariant, "kv"), (what, v)
        assert words in v.message, (what, v.message)
        assert sim.halted is not None and "invariant broken" in sim.halted
    with pytest.raises(ValueError):
        break_ledger(sim_of(SYSTEM_PROMPT), "kv", "nothing")


# A release whose blocks other holds still hold (content-and-reload.md §2: a release lowers
# each block's count; only those reaching 0 are cached or freed, the rest stay allocated
# with their holders): its why says how many stay, and with how many other holds. gpu takes
# 0.01 s an iteration here; a waits 0.05 s after its prefill, b and c 1 s.
#  0     a admitted, hit 0: blocks 0 1 ('sys') 2 (a's own); iteration 1 takes its 12 tokens,
#        registering all three
#  0.005 b and c arrive and queue (the stage is busy)
#  0.01  iteration 1 ends, a waits; b admitted: E = 2, cap ⌊11/4⌋ = 2: hit 8, shared 8 (a
#        holds them), new block 3; c likewise, new block 4: blocks 0 1 count 3
#  0.06  a releases: 0 1 count 2, they stay with b's and c's holds; its block 2 goes to 0,
#        registered: cached, 4 units
#  1.02  b releases: 0 1 count 1, with c's hold; its block 3 cached (4 units); then c: 0 1
#        and 4 reach 0, all cached (12 units), nothing stays
RELEASE_SHARED = """
stage gpu step { budget 64; seats 4; time 0.01; }
pool kv { cap 64; block 4; evict lru; admit via gpu; }
session a { arrive at (0);
  hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (0.05); } }
session b[2] { arrive at (0.005);
  hold kv (12) content ("sys" : 8) { run gpu prefill (12); wait (1); } }
"""


@pytest.mark.parametrize("fast", [False, True])
def test_a_release_says_how_many_blocks_stay_with_other_holds(fast: bool) -> None:
    program = compile_source(RELEASE_SHARED, "release_shared.pool")
    events: list[Any] = []
    Simulation(program, fast=fast, history=False).run_headless(on_event=events.append)
    assert [(t(e.time), e.session, e.get("hit"), e.get("shared")) for e in events
            if e.moment == "admit"] == [(0, "a", 0, 0), (0.01, "b[0]", 8, 8), (0.01, "b[1]", 8, 8)]  # fmt: skip
    assert [(t(e.time), e.why) for e in events if e.moment == "release"] == [
        (0.06, "a released 12 units of kv; 4 stay cached as its prefix; "
               "2 blocks stay allocated with 2 other holds holding them"),
        (1.02, "b[0] released 12 units of kv; 4 stay cached as its prefix; "
               "2 blocks stay allocated with 1 other hold holding them"),
        (1.02, "b[1] released 12 units of kv; 12 stay cached as its prefix"),
    ]  # fmt: skip


# A preemption lowers its hold's counts as a release does (content-and-reload.md §2): the
# blocks other holds hold stay allocated with them, and its why says so. kv has 7 blocks of
# 4; a (admitted at 0: 'sys' blocks 0 1, its own 2) and b (admitted at 0.01: hit 8, shared
# with a, its own block 3) decode 20 tokens each, a block every 4: at 17 units each wants
# its fifth block and kv has 7; under preempt lifo b, admitted last, is preempted, and the
# 2 'sys' blocks it shared stay allocated with a, its one other holder.
PREEMPT_SHARED = """
stage gpu step { budget 64; seats 4; time 0.01; }
pool kv { cap 28; block 4; evict lru; admit via gpu; preempt lifo; }
session a { arrive at (0);
  hold kv (12) content ("sys" : 8) { run gpu prefill (12); run gpu decode (20); } }
session b { arrive at (0.005);
  hold kv (12) content ("sys" : 8) { run gpu prefill (12); run gpu decode (20); } }
"""


@pytest.mark.parametrize("fast", [False, True])
def test_a_preemption_says_how_many_blocks_stay_with_other_holds(fast: bool) -> None:
    program = compile_source(PREEMPT_SHARED, "preempt_shared.pool")
    events: list[Any] = []
    Simulation(program, fast=fast, history=False).run_headless(on_event=events.append)
    assert [(t(e.time), e.session, e.get("hit"), e.get("shared")) for e in events
            if e.moment == "admit"][:2] == [(0, "a", 0, 0), (0.01, "b", 8, 8)]  # fmt: skip
    first = next(e for e in events if e.moment == "preempt")
    assert first.session == "b", first.why
    assert first.why.startswith("preempted b: kv had no room for "), first.why
    assert first.why.endswith(
        " units stay cached; 2 blocks stay allocated with 1 other hold holding them"
    ), first.why
