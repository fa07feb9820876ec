"""The fast mode's batched steps on a pool's ledger: many block tables each growing by one
block in one call (`one_more_each`), with the evictions that makes, exactly as one `grow`
by a block after another (each after evicting one block, tail first, from the least
recently released entry) would leave the ledger (`ledger.py`); many tables' registrations
in one call (`register_each`). Owns nothing but those steps; like the ledger it never
chooses a policy, never emits, and touches no engine.
"""

from __future__ import annotations

from typing import cast

from pooltui.sim.content import BUCKET
from pooltui.sim.ledger import DIRTY_LIMIT, NONE, Ledger, Table


def one_more_each(L: Ledger, tables: list[Table]) -> list[tuple[int, int, int, int]]:
    """Each table (in order) grows by one block, exactly as one `grow` by a block
    after another would, the caller having evicted first from the least recently
    released entry (`short`, `lru`, `evict_ids`): a block from the free stack, else a
    never-used id, else the tail block of the first entry, evicted (it goes through
    the free stack, so the table takes it). The caller checked the room (`room`).
    Returns the evictions in order: (entry order, its session, the block, blocks
    left in the entry)."""
    out: list[tuple[int, int, int, int]] = []
    free, entries, block, track = L.free, L.entries, L.block, L.track
    ref, bhash, bcontent, bidx = L.ref, L.bhash, L.bcontent, L.bidx
    owner, bentry, table, dirty = L.owner, L.bentry, L.table, L.dirty
    ofree = cast("list[object]", free)  # ids moved as objects (`ledger.py`'s note by NONE)
    for t in tables:
        j = len(t.blocks)
        if free:
            bo = ofree.pop()
            b: int = bo  # type: ignore[assignment]  # (a cast, free when interpreted)
        elif L.fresh > 0 or L.total < 0:
            if L.total >= 0:
                L.fresh -= 1
            b = len(ref)
            bo = b
            ref.append(0)
            bhash.append(NONE)
            bcontent.append(None)
            bidx.append(0)
            bentry.append(NONE)
            owner.append(NONE)
        else:  # `evict_ids(order, 1)`, inline
            e = next(iter(entries.values()))
            eb: list[object] = e.blocks  # type: ignore[assignment]
            bo = eb.pop()
            b = bo  # type: ignore[assignment]
            h = bhash[b]
            L.epoch += 1
            dirty[h >> BUCKET] = L.epoch
            if L.dups:
                L.drop_copy(h, b)
            else:
                del table[h]
            bhash[b] = NONE  # (bentry goes stale, as `evict_ids` leaves it)
            if len(dirty) > DIRTY_LIMIT:
                L.dirtied()
            L.cached -= 1
            if track:  # (the block: by the span of the table taking it)
                L.th.add(h)
                L.te.add(e.order)
            if not e.blocks:
                del entries[e.order]
            out.append((e.order, e.sid, b, len(e.blocks)))
        bcontent[b] = t.content
        bidx[b] = j
        owner[b] = t.hid
        ref[b] = 1
        tb: list[object] = t.blocks  # type: ignore[assignment]
        tb.append(bo)
        if t.size < (j + 1) * block:
            t.size = (j + 1) * block
        if track:
            L.mark_table(t, j, j + 1)
    L.allocated += len(tables)
    return out


def register_each(L: Ledger, tables: list[Table], computed: list[int]) -> None:
    """`Ledger.register` for each table in turn (tables[i] to computed[i] units)."""
    block = L.block
    for t, upto in zip(tables, computed, strict=True):
        last = min(upto // block, len(t.blocks))
        content = t.content
        if last == t.nreg + 1 and last * block > content.total and not L.track:
            L.register_one(t, content.panc + last * block - content.total)
        else:
            L.register(t, upto)
