"""The debugger's commands in the command palette (ctrl+p): its main actions, and the next
and previous event of each moment, each run on the screen that opened the palette; and the
moves' keys where a move does not apply (`nowhere_bindings`), which say why as the palette does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider

from pooltui.sim.events import MOMENTS

# The moves, by the way they go: where one does not apply (forward at the end, back at the
# start) the screen's `nowhere` says why, for its keys and for the palette alike.
WAYS = {"step": 1, "step_iteration": 1, "continue": 1, "run": 1, "back": -1, "reverse_continue": -1}


def nowhere_bindings(bindings: list[BindingType]) -> list[BindingType]:
    """A move that does not apply (the footer leaves it out) still answers its keys: a binding
    after it, enabled only then, says why (`action_nowhere`); the help lists the move only."""
    return [
        Binding(
            b.key,
            f"nowhere({WAYS[b.action]})",
            "",
            False,
            priority=b.priority,
            id=f"{b.id}.nowhere",
        )
        for b in bindings
        if isinstance(b, Binding) and b.action in WAYS
    ]


class DebuggerCommands(Provider):
    """The main actions in the command palette."""

    COMMANDS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("Step one event", "step", "apply the next event (n, →)"),
        ("Step one iteration", "step_iteration", "run to the next iteration-end (i)"),
        ("Step back", "back", "go back one event (p, ←)"),
        ("Continue", "continue", "run to a breakpoint, a violation, a deadlock or the end (c)"),
        ("Reverse continue", "reverse_continue", "step back to a breakpoint or event 0 (C)"),
        ("Go to event or time", "goto", "jump to an event index or a simulated time (g)"),
        ("Run at speed", "run", "play events at the chosen speed (r)"),
        ("Pause", "pause", "stop a run (space)"),
        ("Breakpoints", "breakpoints", "add, disable, delete breakpoints (b)"),
        ("Watches", "watches", "expressions shown at every step (w)"),
        ("Help: keys", "app.help", "every binding (?, F1)"),
        ("Filter the event log", "filter", "only some moments and/or sessions (/)"),
        ("Reload the spec", "reload", "compile it again, keep breakpoints and watches (ctrl+r)"),
        ("Teaching mode", "teach", "the spec's notes take the right side (t)"),
        ("Next event of this session", "find(1, None, '.')", "the current event's session (] .)"),
        ("Previous event of this session", "find(-1, None, '.')", "([ .)"),
        *(
            (f"Next {moment}", f"find(1, '{moment}')", f"the next {moment} event (] then a key)")
            for moment in MOMENTS
        ),
        *(
            (f"Previous {moment}", f"find(-1, '{moment}')", f"the previous {moment} event ([)")
            for moment in MOMENTS
        ),
    )

    def _callback(self, action: str) -> Callable[[], Any]:
        screen = self.screen

        def run() -> None:
            if action.startswith("app."):
                self.app.call_later(self.app.run_action, action[4:])
            else:
                self.app.call_later(self._run_on, screen, action)

        return run

    @staticmethod
    async def _run_on(screen: Any, action: str) -> None:
        if not await screen.run_action(action) and action in WAYS:  # it does not apply
            await screen.run_action(f"nowhere({WAYS[action]})")

    async def discover(self) -> Hits:
        for name, action, help_text in self.COMMANDS:
            yield DiscoveryHit(name, self._callback(action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_text in self.COMMANDS:
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), self._callback(action), help=help_text)
