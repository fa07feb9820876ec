"""What the check of what changed keeps between events so that it never walks the live holds
(`ledgertouched.Shadow`'s tables and their lengths, `LiveTables`), and the hold that leaves
its session still holding blocks (the accounting check's to catch, since the ledgers'
check trusts the tables it kept).

The scene is tests/sim/test_ledger.py's: a ledger of 16 blocks of 4 units; A (hold 1)
holds blocks 0 1 2, all registered; B (hold 2) hit A's block 0 and holds 0 3 4 (3
registered, a duplicate of 1); C's release left entry 0 = [5]; D's drop left block 6 free.
"""

from __future__ import annotations

from pooltui.sim import invariants
from pooltui.sim.content import Content
from pooltui.sim.ledger import Ledger, Table
from pooltui.sim.ledgercheck import LiveTables, Shadow, check, check_touched
from pooltui.sim.testing import changed_hold
from tests.sim.test_ledger import admit, scene
from tests.sim.test_watch import (
    QUEUED,
    _first_admitted,
    _halts_at_the_next_event,
    _hold_of,
    _kv,
    _started,
    _until,
)


def _tracked() -> tuple[Ledger, Shadow, Table, Table]:
    """The scene, its ledger noting what changes, and a shadow of it keeping A's and B's
    tables: (ledger, shadow, A, B)."""
    L, (a, b) = scene()
    L.track = True
    return L, Shadow(L, [a, b]), a, b


def test_a_shadow_counts_the_tables_lengths_from_the_ledgers_holders() -> None:
    # Block 0: owner 1, sharer 2; blocks 1 2: owner 1; blocks 3 4: owner 2. So hold 1
    # holds 3 blocks, hold 2 holds 3: 6 in all, the sum of the counts (2+1+1+1+1).
    L, (a, b) = scene()
    sh = Shadow(L)
    assert (sh.tlen, sh.held, sh.refs) == ({1: 3, 2: 3}, 6, 6)
    assert sh.tabs == {}  # no tables given: none kept yet
    kept = Shadow(L, [a, b])
    assert kept.tabs == {1: a, 2: b} and kept.tlen == sh.tlen


def test_a_release_while_another_hold_shares_its_blocks_moves_the_kept_sums() -> None:
    # A is released (kept): block 0 goes 2 -> 1 (B still holds it, now its owner),
    # blocks 1 and 2 go 1 -> 0 and, registered, become entry 1 = [1, 2]. The tables now
    # hold B's 3 blocks (0 3 4) and the counts add up to 3: allocated 3 (0 3 4), cached 3
    # (5 of entry 0, 1 and 2 of entry 1).
    L, sh, a, b = _tracked()
    L.release(a, 3.0)
    assert check_touched(L, sh, {2: b}) is None
    assert (sh.tlen, sh.tabs, sh.held, sh.refs) == ({2: 3}, {2: b}, 3, 3)
    assert (sh.allocated, sh.cached, sh.esum) == (3, 3, 3)
    assert sh.eblocks == {0: [5], 1: [1, 2]}  # chain order
    assert check(L, [b]) is None
    # Then B is dropped (keep=False, as a rejected session's hold): its 3 blocks go to
    # count 0 and, unregistered, to the free stack. No table holds a block.
    L.release(b, 4.0, keep=False)
    assert check_touched(L, sh, {}) is None
    assert (sh.tlen, sh.tabs, sh.held, sh.refs, sh.allocated) == ({}, {}, 0, 0, 0)
    assert check(L, []) is None


def test_a_dropped_hold_whose_blocks_another_holds_moves_the_kept_sums() -> None:
    # B is dropped while A holds block 0 too: block 0 goes 2 -> 1 (A stays its owner);
    # block 3 (registered, a duplicate) is unregistered and freed, block 4 freed. A's 3
    # blocks are all the tables hold; dups go 1 -> 0.
    L, sh, a, b = _tracked()
    L.release(b, 3.0, keep=False)
    assert check_touched(L, sh, {1: a}) is None
    assert (sh.tlen, sh.tabs, sh.held, sh.refs, L.dups) == ({1: 3}, {1: a}, 3, 3, 0)
    assert check(L, [a]) is None


def test_a_table_that_takes_blocks_but_is_no_hold_of_the_pool_is_caught() -> None:
    # Hold 9 takes one block (no hit: its private stream; 4 units = 1 block, the free
    # block 6), but the pool's holds are A and B only.
    L, sh, a, b = _tracked()
    e, _ = admit(L, 9, Content(9), 4, 4)
    assert e.blocks == [6]
    assert check_touched(L, sh, {1: a, 2: b}) == (
        "hold 9: holds 1 blocks but is no hold of this pool"
    )


def test_an_entry_that_lists_a_block_it_did_not_have_is_looked_at() -> None:
    # Entry 0 was [5] at the last check; it now lists block 1 too (A holds it: count 1),
    # and only the entry is noted as changed: block 1 is new to it, so it is looked at.
    L, sh, a, b = _tracked()
    L.entries[0].blocks.append(1)
    L.te.add(0)
    assert check_touched(L, sh, {1: a, 2: b}) == "entry 0: block 1 is not a cached block of it"


def _a_released() -> tuple[Ledger, Shadow, Table]:
    """The scene with a shadow of it, then A released (kept): entry 1 = [1, 2], block 0
    held by B alone. Returns the ledger, the shadow and B's table."""
    L, sh, a, b = _tracked()
    L.release(a, 3.0)
    assert L.entries[1].blocks == [1, 2]
    return L, sh, b


def test_a_new_entry_listing_a_block_filed_under_another_entry_is_caught() -> None:
    # Block 2 of entry 1 says it is entry 0's (which exists: [5]), so on its own it looks
    # like a cached block; entry 1, new since the last check, is looked at block by block.
    L, sh, b = _a_released()
    L.bentry[2] = 0
    assert check_touched(L, sh, {2: b}) == "entry 1: block 2 is not a cached block of it"


def test_an_entry_cut_from_its_tail_still_looks_at_its_touched_blocks() -> None:
    # Entry 1 = [1, 2] is checked and kept; evicting one block takes its tail (block 2),
    # leaving [1]: the kept list, cut, not a new one.
    L, sh, b = _a_released()
    assert check_touched(L, sh, {2: b}) is None
    assert L.evict_ids(1, 1) == [2]
    assert check_touched(L, sh, {2: b}) is None
    assert sh.eblocks == {0: [5], 1: [1]}
    # Block 1, touched in the same event as such a cut, now says it is entry 0's: the
    # entry's touched blocks are looked at again.
    L, sh, b = _a_released()
    assert check_touched(L, sh, {2: b}) is None
    L.evict_ids(1, 1)
    L.bentry[1] = 0
    L.tb.add(1)
    assert check_touched(L, sh, {2: b}) == "entry 1: block 1 is not a cached block of it"


def test_live_tables_finds_a_changed_table_through_its_session_in_its_pool_only() -> None:
    # QUEUED (tests/sim/test_watch.py): a[0] is admitted on kv (pool 0), 2 blocks; a[1]
    # waits in its queue, its table empty. Marked as changed, a[0]'s table is found by its
    # hold's key in pool 0 and not in another pool; a key the ledger never noted nor kept
    # is nobody's.
    sim = _started(QUEUED)
    _until(sim, _first_admitted)
    s, p = sim.state, _kv(sim)
    h, waiting = _hold_of(sim, "a[0]"), _hold_of(sim, "a[1]")
    sh = Shadow(p.ledger)  # nothing kept
    p.ledger.mark_table(h.table, 0, 0)
    assert LiveTables(s, 0, sh).get(h.key) is h.table
    assert LiveTables(s, 1, sh).get(h.key) is None
    assert LiveTables(s, 0, sh).get(waiting.key) is None
    p.ledger.untouched()


def test_a_hold_that_leaves_its_session_holding_blocks_halts_at_the_next_event() -> None:
    # a[0] holds blocks 0 and 1 (count 1 each) when its hold leaves the session's holds
    # behind the rules' back, its table untouched. The ledgers' check trusts the tables it
    # kept; the touched hold, no longer live yet holding 2 blocks, is the accounting
    # check's signal, and the full count then names it: block 0 has a count of 1 and no
    # live table holds it.
    sim = _started(QUEUED)
    _until(sim, _first_admitted)
    sess = next(x for x in sim.state.live.values() if x.name == "a[0]")
    h = sess.holds[0]
    assert h.table.blocks == [0, 1]
    sess.holds.remove(h)
    changed_hold(sim, h)
    assert invariants.accounting(sim.state, sim.engine.watch, None) is not None
    v = _halts_at_the_next_event(sim)
    assert (v.invariant, v.message) == ("count", "kv: block 0: count 1, but 0 tables hold it")


# --------------------------------------------------------------------------- each block once
# The ledger notes a block by what names it: the span of the table that took or registered
# it, the new entry its release cached it in, the list of evicted blocks (`Ledger.tf`). The
# check looks at each of those at its own cost and hands any block it cannot vouch for to
# the whole block check. Each fault below is made right after a step, with only the notes
# the step made (no block noted alone), and must be caught in the whole check's words.


def _b_grown() -> tuple[Ledger, Shadow, Table, Table]:
    """The scene with a shadow of it, then B grown to 16 units: block 6 (the free stack's)
    is its block 3, unregistered (B registered 2). Only B's span [3, 4) is noted."""
    L, sh, a, b = _tracked()
    assert L.grow(b, 16) == [6] and b.nreg == 2
    assert not L.tb and not L.tf and L.tt == {2: b}
    return L, sh, a, b


def test_a_block_in_a_span_with_a_count_too_high_is_caught() -> None:
    L, sh, a, b = _b_grown()
    L.ref[6] = 2
    assert check_touched(L, sh, {1: a, 2: b}) == "block 6: count 2, but 1 tables hold it"


def test_a_block_in_a_span_registered_under_another_blocks_hash_is_caught() -> None:
    # Block 6 is B's block 3, past its registered head, yet carries block 3's hash (B's
    # block 1, a duplicate of A's), listed as one more copy of it (and counted): all but
    # the hash agrees, which is not its content's hash of block 3.
    L, sh, a, b = _b_grown()
    h = L.bhash[6] = L.bhash[3]
    L.more[h].append(6)
    L.dups += 1
    message = "block 6: registered hash differs from its content's"
    assert check_touched(L, sh, {1: a, 2: b}) == message


def test_a_block_in_a_span_with_a_stray_holder_is_caught() -> None:
    L, sh, a, b = _b_grown()
    L.sharers[6] = {9: None}
    message = "block 6: count 1 names hold 9, which does not hold it"
    assert check_touched(L, sh, {1: a, 2: b}) == message


def test_a_block_registered_in_a_span_but_not_listed_is_caught() -> None:
    # B registers its block 2 (block 4, of its private stream): then the hash table loses
    # it. Only B's span [2, 3) and the hash are noted.
    L, sh, a, b = _tracked()
    assert L.register(b, 12) == (1, 0) and not L.tb
    del L.table[L.bhash[4]]
    assert check_touched(L, sh, {1: a, 2: b}) == "block 4: registered but not in the hash table"


def test_a_new_entrys_block_whose_hash_is_not_its_contents_is_caught() -> None:
    # A's release caches blocks 1 and 2 as entry 1; block 2 then says it is its content's
    # block 1, whose hash is not the one it is registered with.
    L, sh, b = _a_released()
    L.bidx[2] = 1
    assert check_touched(L, sh, {2: b}) == "block 2: registered hash differs from its content's"


def test_a_new_entrys_block_missing_from_the_hash_table_is_caught() -> None:
    L, sh, b = _a_released()
    del L.table[L.bhash[2]]
    assert check_touched(L, sh, {2: b}) == "block 2: registered but not in the hash table"


def test_a_new_entrys_block_with_a_holder_is_caught() -> None:
    # (Block 0, which B still holds, is the release's only block noted alone: sound.)
    L, sh, b = _a_released()
    L.sharers[1] = {2: None}
    assert check_touched(L, sh, {2: b}) == "block 1: count 0, but holders [2]"


def test_an_evicted_block_left_registered_is_caught() -> None:
    # Entry 1 = [1, 2] checked; evicting one block takes block 2, which keeps its hash
    # (the eviction cleared its content): registered with no content to match.
    L, sh, b = _a_released()
    assert check_touched(L, sh, {2: b}) is None
    h = L.bhash[2]
    assert L.evict_ids(1, 1) == [2] and L.tf == [2] and not L.tb
    L.bhash[2] = h
    assert check_touched(L, sh, {2: b}) == "block 2: registered hash differs from its content's"


def test_an_evicted_block_left_with_a_count_is_caught() -> None:
    # As above, block 2 keeps a count of 1; its stale owner, A (hold 1), released, holds
    # nothing.
    L, sh, b = _a_released()
    assert check_touched(L, sh, {2: b}) is None
    assert L.evict_ids(1, 1) == [2]
    L.ref[2] = 1
    message = "block 2: count 1 names hold 1, which does not hold it"
    assert check_touched(L, sh, {2: b}) == message


def test_a_block_registered_in_a_span_that_names_another_content_is_caught() -> None:
    # B registers its block 2 (block 4), whose content then says it is A's: registered
    # with B's hash of block 2, not the hash of A's block 2 that it now claims to hold.
    L, sh, a, b = _tracked()
    L.register(b, 12)
    L.bcontent[4] = a.content
    assert check_touched(L, sh, {1: a, 2: b}) == (
        "block 4: registered hash differs from its content's"
    )


def test_a_hash_listing_another_block_is_caught_among_many_noted() -> None:
    # A table registers 10 blocks of a private stream (ids 0-9), checked. A faulty step
    # then lists hash 3 under block 7 (whose own hash stays listed too) and notes the ten
    # hashes: no copies exist anywhere, so the hashes are looked up at once; one names a
    # block not registered with it.
    L = Ledger(64, 4)
    L.track = True
    a, _ = admit(L, 1, Content(1), 40, 40)
    L.register(a, 40)
    sh = Shadow(L, [a])
    assert check_touched(L, sh, {1: a}) is None
    hashes = [L.bhash[b] for b in a.blocks]
    assert a.blocks == list(range(10)) and len(set(hashes)) == 10 and not L.more
    L.table[hashes[3]] = 7
    L.th.update(hashes)
    message = "hash table lists block [7] under a hash one is not registered with"
    assert check_touched(L, sh, {1: a}) == message
