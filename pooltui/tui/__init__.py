"""The debugger: a Textual app over `pooltui.sim.Simulation`.

The app never drives the simulator from the UI thread: a single worker thread owns it
(`driver.Controller`) and posts immutable snapshots back (`commands.Frame`).
`pooltui.tui.breakpoints`, `breakpoint_text`, `commands`, `driver` and `goto` import no
Textual.
"""

import os

# Textual draws on a timer of its frame rate, read once when it is first imported: a
# frame that arrives just after a tick waits for the next one, up to 17 ms at its default
# 60 Hz, twice in a pause that re-lays the screen out. 120 Hz halves that; the screen
# still draws only what changed (a run's frames are paced by the driver, not by this).
# A TEXTUAL_FPS the user set wins.
os.environ.setdefault("TEXTUAL_FPS", "120")
