"""Seams found by an exploratory pass (a new user, a teacher in front of a class): keys at
the edges of a run, of a dialog opening, of a reload; each pinned by what the user should see."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from tests.tui.conftest import SIZE, make_app, settle
from tests.tui.test_defects import typed_at_once


async def test_keys_typed_as_the_palette_opens_go_into_it() -> None:
    """`ctrl+p` then `next evict` typed at once: the palette takes the keys (none of them
    steps the debugger: `n` did, `e`, `x`, `t`, the space too), and its "Next evict" goes
    to the fake's first evict, #43."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def listed() -> bool:
            if not isinstance(app.screen, CommandPalette):
                return False
            options = app.screen.query_one(CommandList)
            first = options.get_option_at_index(0) if options.option_count else None
            return first is not None and str(first.prompt).startswith("Next evict")

        await typed_at_once(app, pilot, "ctrl+p", *"next", "space", *"evict", done=listed)
        assert isinstance(app.screen, CommandPalette)
        assert app.screen.query_one(Input).value == "next evict"
        assert app.snapshot is None or app.snapshot.event_index == -1  # no step
        await typed_at_once(
            app,
            pilot,
            "enter",
            done=lambda: app.snapshot is not None and app.snapshot.event_index == 43,
        )
        assert not isinstance(app.screen, CommandPalette)
        assert app.snapshot is not None and app.snapshot.event_index == 43
