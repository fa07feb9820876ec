"""A synthetic pool view for the block map's benchmark and tests: many blocks, many
holders, cached entries with ranks, free runs. No simulator needed."""

from __future__ import annotations

import random

from pooltui.sim.snapshot import BlockMap, BlockOwner, EntryView, HoldView, PoolView


def synthetic_pool(nblocks: int, holders: int = 400, seed: int = 1, label: str = "kv") -> PoolView:
    rng = random.Random(seed)
    owners: list[BlockOwner] = []
    cells = [0] * nblocks
    holds: list[HoldView] = []
    entries: list[EntryView] = []
    i = 0
    sid = 0
    while i < nblocks and sid < holders:
        run = rng.randint(1, max(2, nblocks // holders * 2))
        kind = rng.random()
        if kind < 0.15:  # free gap
            i += run
            continue
        physical = tuple(range(i, min(i + run, nblocks)))
        if kind < 0.7:
            owners.append(BlockOwner("hold", f"chat[{sid}]", sid))
            holds.append(
                HoldView(f"chat[{sid}]", sid, label, len(physical) * 16, len(physical),
                         len(physical) * 16, len(physical) * 16, None, physical, 0.0, sid)
            )  # fmt: skip
        else:
            rank = len(entries)
            owners.append(BlockOwner("cached", f"chat[{sid}]", sid, rank))
            entries.append(
                EntryView(f"chat[{sid}]", sid, len(physical) * 16, len(physical), physical,
                          rank, (0.0, rank), 0.0, True)
            )  # fmt: skip
        for b in physical:
            cells[b] = len(owners)
        i += run
        sid += 1
    allocated = sum(h.blocks for h in holds) * 16
    cached = sum(e.blocks for e in entries) * 16
    return PoolView(
        name=label, index=None, label=label, cap=nblocks * 16, block=16,
        allocated=allocated, cached=cached, free=nblocks * 16 - allocated - cached,
        nblocks=nblocks, blocks=BlockMap(nblocks, 16, tuple(cells), tuple(owners)),
        holds=tuple(holds), entries=tuple(entries), queue=(), evict="lru",
        queue_policy="fifo", preempt="lifo", admit_via="gpu", tier_of=(),
    )  # fmt: skip
