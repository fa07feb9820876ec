"""What the Details tab says about the inspected block or session: who holds the block and
what it holds, and a session's phase, holds, entries and place in the queues."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from pooltui.lang.words import number, value_text
from pooltui.sim.snapshot import Snapshot
from pooltui.tui.colors import rank_glyph
from pooltui.tui.widgets import sharing
from pooltui.tui.widgets.legend import session_text
from pooltui.tui.widgets.panels import phase_word, waited


def inspect_block_text(snap: Snapshot, pool_label: str, block: int) -> Text:
    text = Text()
    try:
        pool = snap.pool(pool_label)
    except KeyError:
        return Text(f"no pool {pool_label} at this event", "dim")
    text.append(f"block {block} of {pool_label}", Style(bold=True))
    if pool.blocks is not None:
        text.append(f"  ({pool.blocks.unit} units)", "dim")
    text.append("\n")
    owner = pool.block_owner(block)
    text.append_text(sharing.block_sharing_text(pool, block))
    if owner is None:
        text.append("free\n", "dim")
        return text
    if owner.kind == "hold":
        text.append("allocated to ")
        text.append_text(session_text(owner.session, owner.session_id))
        text.append("\n")
        if pool.blocks is not None and block in pool.blocks.landing:
            text.append("landing: a reload in flight loads it; nobody can hit it yet\n", "bold")
        hold = next((h for h in pool.holds if h.session_id == owner.session_id), None)
        if hold is not None:
            text.append(
                f"hold: size {number(hold.size, 4)} units ({hold.blocks} blocks), computed {number(hold.computed, 4)}, "
                f"context {number(hold.context, 4)}, reserve {number(hold.reserve, 4)}\n"
                f"admitted at {number(hold.admitted_at, 4)}s (order {hold.admit_order}); "
                f"this is block {hold.physical.index(block) if block in hold.physical else '?'} of the hold\n"
            )
    else:
        text.append("cached: entry of ")
        text.append_text(session_text(owner.session, owner.session_id))
        text.append(f", eviction rank {owner.rank} ({rank_glyph(owner.rank)})\n")
    # The entry that holds this block: a session can have several (one per release or
    # landing), and a held block is in none.
    entry = next((e for e in pool.entries if block in e.physical), None)
    if owner.kind == "cached" and entry is not None:
        keys = ", ".join(number(k, 4) for k in entry.keys)
        text.append(
            f"cache entry: {number(entry.units, 4)} units ({entry.blocks} blocks), rank {entry.rank} "
            f"(0 goes first), keys ({keys}), last release {number(entry.last, 4)}s"
            f"{', spilled here' if entry.spilled else ''}{'' if entry.alive else ', session ended'}\n"
        )
    text.append("\n")
    text.append_text(inspect_session_text(snap, owner.session_id, owner.session))
    return text


def inspect_session_text(
    snap: Snapshot,
    session_id: int | None,
    name: str | None = None,
    arrived: float | None = None,
) -> Text:
    """A session's view; one not live at this event by its `name` and, from when it
    `arrived` (both as seen while it was live), whether it has not arrived yet or ended."""
    text = Text()
    view = next((s for s in snap.sessions if s.session_id == session_id), None)
    if view is None:
        label = name or f"session #{session_id}"
        text.append_text(session_text(label, session_id))
        if session_id is not None and not snap.covers(session_id):  # a frame brings it
            text.append(" …\n", "dim")
            return text
        if arrived is not None and snap.time < arrived:
            said = f" has not arrived yet (it arrives at {number(arrived, 4)}s)"
        elif arrived is not None and snap.time > arrived:
            said = " has ended (it is not live at this event)"
        else:
            said = " is not live at this event (not arrived yet, or ended)"
        text.append(said + "\n", "dim")
        for pool in snap.pools:
            for e in pool.entries:
                if e.session_id == session_id:
                    text.append(
                        f"cache entry in {pool.label}: {number(e.units, 4)} units, rank {e.rank}, "
                        f"last release {number(e.last, 4)}s\n"
                    )
        return text
    text.append_text(session_text(view.name, view.session_id))
    text.append(f"  class {view.session_class}, index {view.index}, serial {view.serial}\n", "dim")
    text.append(f"state: {view.state}; arrived {number(view.arrived, 4)}s\n")
    if view.attrs:
        text.append("attributes: ")
        text.append("  ".join(f"{k}={value_text(v)}" for k, v in view.attrs))
        text.append("\n")
    for hold in view.holds:
        text.append(
            f"hold {hold.pool}: size {number(hold.size, 4)} ({hold.blocks} blocks), computed {number(hold.computed, 4)}, "
            f"context {number(hold.context, 4)}, reserve {number(hold.reserve, 4)}\n"
        )
    for pool in snap.pools:
        for item in pool.queue:
            if item.session_id == session_id:
                figures = (
                    f"units {number(item.units, 4)}, hit {number(item.hit, 4)}"
                    if item.planned
                    else f"units and hit worked out for the first {snap.queue_planned} only"
                )
                text.append(
                    f"queued on {pool.label} at position {item.position}: {figures}, "
                    f"waited {waited(item.waited)}{', preempted' if item.preempted else ''}\n"
                )
        for e in pool.entries:
            if e.session_id == session_id:
                text.append(
                    f"cache entry in {pool.label}: {number(e.units, 4)} units ({e.blocks} blocks), "
                    f"eviction rank {e.rank}, last release {number(e.last, 4)}s\n"
                )
    for stage in snap.stages:
        for r in stage.residents:
            if r.session_id == session_id:
                text.append(
                    f"resident of {stage.label}: {phase_word(r.phase)}, {r.tokens} tokens this iteration\n"
                )
    if view.span is not None:
        text.append(f"at {view.span.file}:{view.span.line}:{view.span.col}\n", "dim")
    return text
