"""The check of what changed, on long runs of blocks (a prefill's span, a release's entry,
an eviction of many): each block of the run looked at, in the same words as the oracle
(`ledgercheck.check`) where it tells the same, and the shadow kept as a count afresh.

The scene: a ledger of 64 blocks of 4 units; hold 1 (session 1, no pieces: its private
stream) admitted with 48 units takes ids 0-11, its blocks 0-11 (one span of 12). Each test
breaks one block in the middle, block 5 (its own index 5), and the check must name it;
a sound change must leave the shadow as a shadow counted afresh would be. The words are the
block-by-block check's (the oracle's where it tells the same: a block named from its table,
or from itself; the full count names what a run halts on).
"""

from __future__ import annotations

from pooltui.sim.content import Content
from pooltui.sim.ledger import Ledger, Table
from pooltui.sim.ledgercheck import check
from pooltui.sim.ledgertouched import Shadow, check_touched
from tests.sim.helpers import kept_as_counted
from tests.sim.test_ledger import admit


def _grown() -> tuple[Ledger, Shadow, Table]:
    """Hold 1 takes ids 0-11 after the shadow was made (of an empty ledger): one span."""
    L = Ledger(64, 4)
    L.track = True
    sh = Shadow(L)
    a, _ = admit(L, 1, Content(1), 48, 48)
    assert a.blocks == list(range(12)) and L.tt == {1: a} and (L.tlo[1], L.thi[1]) == (0, 12)
    return L, sh, a


def _registered() -> tuple[Ledger, Shadow, Table]:
    """`_grown`, checked, then all 12 registered (the span [0, 12) again)."""
    L, sh, a = _grown()
    assert check_touched(L, sh, {1: a}) is None
    assert L.register(a, 48) == (12, 0)
    return L, sh, a


def _released() -> tuple[Ledger, Shadow, Table]:
    """`_registered`, checked, then hold 1 released: entry 0 = ids 0-11, chain order."""
    L, sh, a = _registered()
    assert check_touched(L, sh, {1: a}) is None
    L.release(a, 1.0)
    assert L.entries[0].blocks == list(range(12))
    return L, sh, a


def _evicted() -> tuple[Ledger, Shadow, Table]:
    """`_released`, checked, then 10 blocks of entry 0 evicted, tail first: ids 11-2."""
    L, sh, a = _released()
    assert check_touched(L, sh, {}) is None
    assert L.evict_ids(0, 10) == list(range(11, 1, -1))
    return L, sh, a


def test_sound_long_runs_leave_the_shadow_as_counted_afresh() -> None:
    # grown: 12 held unregistered; registered: 12 held registered; released: 12 cached
    # in entry 0; evicted: 2 cached (ids 0 1), 10 free.
    L, sh, a = _grown()
    assert check_touched(L, sh, {1: a}) is None
    assert (sh.allocated, sh.registered, sh.refs, sh.held, sh.tlen) == (12, 0, 12, 12, {1: 12})
    kept_as_counted(sh)
    L, sh, a = _registered()
    assert check_touched(L, sh, {1: a}) is None
    assert (sh.allocated, sh.registered, sh.cached) == (12, 12, 0)
    kept_as_counted(sh)
    L, sh, a = _released()
    assert check_touched(L, sh, {}) is None
    assert (sh.allocated, sh.registered, sh.cached, sh.esum, sh.held) == (0, 12, 12, 12, 0)
    kept_as_counted(sh)
    L, sh, a = _evicted()
    assert check_touched(L, sh, {}) is None
    assert (sh.allocated, sh.registered, sh.cached, sh.esum) == (0, 2, 2, 2)
    kept_as_counted(sh)


def test_a_long_span_with_a_count_too_high_is_caught() -> None:
    L, sh, a = _grown()
    L.ref[5] = 2
    message = "block 5: count 2, but 1 tables hold it"
    assert check(L, [a]) == message and check_touched(L, sh, {1: a}) == message


def test_a_long_span_with_a_block_at_another_index_is_caught() -> None:
    L, sh, a = _grown()
    L.bidx[5] = 4
    message = "hold 1: block 5 (#5) is block 4 of its content"
    assert check(L, [a]) == message and check_touched(L, sh, {1: a}) == message


def test_a_long_span_with_a_block_of_another_holder_is_caught() -> None:
    L, sh, a = _grown()
    L.owner[5] = 9
    message = "hold 1: block 5 (#5) does not count it as a holder"
    assert check(L, [a]) is not None and check_touched(L, sh, {1: a}) == message


def test_a_long_registered_span_with_a_wrong_hash_is_caught() -> None:
    # Block 5 is registered (and listed, first) under a hash that is not its content's
    # hash of block 5, its own no longer listed: only the hash is wrong, and its table's
    # registered head says it is registered with its own.
    L, sh, a = _registered()
    h = L.bhash[5]
    del L.table[h]
    L.bhash[5] = h + 1
    L.table[h + 1] = 5
    assert h + 1 not in [L.bhash[b] for b in a.blocks if b != 5]
    message = "hold 1: block 5 (#5) is not registered with its content"
    assert check(L, [a]) == message and check_touched(L, sh, {1: a}) == message


def test_a_long_registered_span_with_a_block_not_listed_is_caught() -> None:
    L, sh, a = _registered()
    del L.table[L.bhash[5]]
    message = "block 5: registered but not in the hash table"
    assert check(L, [a]) == message and check_touched(L, sh, {1: a}) == message


def test_a_long_registered_span_with_a_block_of_another_content_is_caught() -> None:
    L, sh, a = _registered()
    L.bcontent[5] = Content(2)
    message = "block 5: registered hash differs from its content's"
    assert check(L, [a]) == message and check_touched(L, sh, {1: a}) == message


def test_a_long_new_entry_with_a_block_not_listed_is_caught() -> None:
    L, sh, _ = _released()
    del L.table[L.bhash[5]]
    message = "block 5: registered but not in the hash table"
    assert check(L, []) == message and check_touched(L, sh, {}) == message


def test_a_long_new_entry_with_a_block_at_another_index_is_caught() -> None:
    # Block 5 says it is block 4 of its content: its hash (of block 5) is not that one's.
    L, sh, _ = _released()
    L.bidx[5] = 4
    message = "block 5: registered hash differs from its content's"
    assert check(L, []) == message and check_touched(L, sh, {}) == message


def test_a_long_new_entry_with_a_block_of_another_content_is_caught() -> None:
    L, sh, _ = _released()
    L.bcontent[5] = Content(2)
    message = "block 5: registered hash differs from its content's"
    assert check(L, []) == message and check_touched(L, sh, {}) == message


def test_a_long_eviction_leaving_a_block_counted_is_caught() -> None:
    # Id 5 keeps a count of 1: its stale owner, hold 1, released, holds nothing.
    L, sh, _ = _evicted()
    L.ref[5] = 1
    message = "block 5: count 1 names hold 1, which does not hold it"
    assert check(L, []) is not None and check_touched(L, sh, {}) == message


def test_a_long_eviction_leaving_a_block_registered_is_caught() -> None:
    L, sh, _ = _evicted()
    L.bhash[5] = L.bhash[0] + 5  # (its content was cleared: registered with none)
    message = "block 5: registered hash differs from its content's"
    assert check(L, []) is not None and check_touched(L, sh, {}) == message


def test_a_block_listed_twice_as_evicted_is_counted_once() -> None:
    # One event may evict a block, take it again and evict it again: the evicted list
    # names it twice, and the shadow must count it free once.
    L, sh, _ = _evicted()
    L.tf.append(L.tf[3])
    assert check_touched(L, sh, {}) is None
    kept_as_counted(sh)


def test_a_long_span_of_blocks_the_shadow_saw_shared_is_looked_at_block_by_block() -> None:
    # Hold 2, of the same content (a hold of the same session, say), hits hold 1's 12
    # registered blocks: each has a count of 2 (a code of 5 in the shadow). Hold 1 is then
    # dropped, and hold 2's whole span noted: its blocks, each now held by it alone at its
    # index, have a count of 1 each, which the shadow must follow from 5, not from 0-3.
    L, sh, a = _registered()
    assert check_touched(L, sh, {1: a}) is None
    b, hit = admit(L, 2, a.content, 49, 48)
    assert len(hit.blocks) == 12 and b.blocks == a.blocks
    assert check_touched(L, sh, {1: a, 2: b}) is None
    assert sh.seen[:12] == [5] * 12
    L.release(a, 2.0, keep=False)
    L.mark_table(b, 0, 12)
    assert check_touched(L, sh, {2: b}) is None
    kept_as_counted(sh)
