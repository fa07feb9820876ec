"""What the ledger's checks say when something is wrong: the words both checks give a hash's
copies (`copies_broken`), and those the check of what changed gives a touched table, as a
whole (`table_words`) or at one of its blocks (`span_block`), in the full check's words.

Only read on a path that found something (or, for `copies_broken`, a hash with copies):
pure functions of a ledger and a table; it imports nothing of the engine and writes nothing.
"""

from __future__ import annotations

from pooltui.sim.ledger import Ledger, Table


def copies_broken(
    bhash: list[int], h: int, first: int | None, later: list[int] | None
) -> str | None:
    """What is wrong with the copies listed under hash h (the first, the later ones), if
    anything: each registered with h, none twice, a first copy before any later one."""
    if later is not None and not later:
        return "an empty copy list in the hash table"
    copies = ([] if first is None else [first]) + (later or [])
    fine = all(0 <= b < len(bhash) and bhash[b] == h for b in copies)  # (past bhash: no block)
    if not copies or (first is not None and fine and len(set(copies)) == len(copies)):
        return None
    return f"hash table lists block {copies} under a hash one is not registered with"


def table_words(L: Ledger, t: Table, nt: int) -> str:
    """What is wrong with touched table t as a whole, in the full check's words."""
    if nt != L.nb(t.size):
        return f"hold {t.hid}: {t.size} units in {nt} blocks, not {L.nb(t.size)}"
    if t.nreg > nt:
        return f"hold {t.hid}: {t.nreg} blocks registered of {nt}"
    # (one kept is its hold's: checked when it came to hold blocks, and a hold that leaves
    # holding blocks is the accounting check's to catch)
    return f"hold {t.hid}: holds {nt} blocks but is no hold of this pool"


def span_block(L: Ledger, t: Table, j: int, b: int, n: int) -> str | None:
    """What is wrong with table t's block j, b, from the table's side (as `check`), or
    None when nothing is: the block is then the whole block check's (shared, say)."""
    hid = t.hid
    if not 0 <= b < n:
        return f"hold {hid}: block {b} was never allocated"
    if j < t.nreg and L.bhash[b] != t.content.block_hash(j, L.block):
        return f"hold {hid}: block {j} (#{b}) is not registered with its content"
    if L.bidx[b] != j:  # a block sits at its own index in every table holding it
        return f"hold {hid}: block {j} (#{b}) is block {L.bidx[b]} of its content"
    if L.owner[b] != hid and hid not in L.sharers.get(b, ()):
        return f"hold {hid}: block {j} (#{b}) does not count it as a holder"
    return None
