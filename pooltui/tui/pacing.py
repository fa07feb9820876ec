"""How the screen's thread and the simulation's worker share one interpreter.

No Textual here. The worker runs pure Python and the GIL serializes it with the screen's
work, so the app, through `Pacing`:

- shortens the interval after which Python hands the GIL to a waiting thread (5 ms by
  default; answering a key takes the screen's thread several such waits). It costs
  nothing while the screen's thread sleeps: nothing then waits for the GIL;
- freezes the objects there are once the debugger is on screen (the program, its trace's
  rows, the widgets) out of the garbage collector's reach: a full collection would walk
  them all, a pause of a tenth of a second in the middle of a run; and, while a run goes,
  at each of its frames what the run has made since. Once the app is idle after a run,
  `collect` makes all of it collectable again and collects once (the screen's reference
  cycles, a few thousand objects a second while a run is drawn, are not kept);
- holds the collector back while a `space` is answered, from the key until the paused frame
  is drawn (`hold`), and then freezes what the pause made, as a run's frame does: a
  collection in between, or right after, walked the young objects of the snapshot just
  made (10-25 ms, in one pause of five to eight: the slowest ones);
- measures the screen's CPU time per progress frame (showing and drawing it), which the
  worker reads (`Controller.ui_cost`) to space its frames out.
"""

from __future__ import annotations

import gc
import sys
import time

from pooltui.sim import hold_collector, release_collector

SWITCH_INTERVAL = 0.001  # seconds: how soon the screen's thread gets the GIL from the worker
# Seconds without a frame after a run before what it froze is collected (`collect`, about a
# tenth of a second on a full GPU: a key pressed then waits for it).
IDLE_COLLECT = 3.0


class Pacing:
    """One app's share of the interpreter; `start` on mount, `stop` on unmount."""

    def __init__(self) -> None:
        self._saved_interval = sys.getswitchinterval()
        self._frozen = False
        self._clock = 0.0  # this thread's CPU time when the last progress frame came
        self._costs = (0.0, 0.0)  # the last two frames' CPU seconds
        self.collect_due = False  # a run froze objects: `collect` when the app is idle
        self._frame_at = 0.0  # when the last frame came (`quiet`)
        self._held = False  # the collector is held back for a pause (`hold`)

    def start(self) -> None:
        self._saved_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)

    def stop(self) -> None:
        sys.setswitchinterval(self._saved_interval)
        self.release(freeze=False)
        if self._frozen:
            gc.unfreeze()  # collectable again once the app is gone

    def frame_arrived(self, final: bool) -> None:
        """On the screen's thread, as each frame arrives: the CPU time since the last
        progress frame is what showing and drawing that one took."""
        self._frame_at = time.monotonic()
        now = time.thread_time()
        if not final and self._clock:
            self._costs = (self._costs[1], now - self._clock)
        self._clock = 0.0 if final else now
        if not self._frozen or not final:
            # The first frame: the debugger is built and on screen. Then each frame of a
            # run: what the run has added since (the simulation's new sessions and their
            # state) would otherwise be walked again by every full collection.
            self._frozen = True
            gc.freeze()
            self.collect_due = self.collect_due or not final

    def hold(self) -> None:
        """A run is told to pause: no collection until `release` (the paused frame drawn)."""
        if not self._held:
            self._held = True
            self.collect_due = True  # what `release` freezes is collected once idle
            hold_collector()

    def release(self, freeze: bool = True) -> None:
        """The paused frame is drawn: what it made is frozen (collected by `collect`) and
        the collector may run again. freeze=False: the app stops, or no frame will come."""
        if self._held:
            self._held = False
            if freeze:
                self._frozen = True
                gc.freeze()
            release_collector()

    def quiet(self, seconds: float) -> bool:
        """No frame has come for about `seconds`."""
        return time.monotonic() - self._frame_at >= seconds * 0.99

    def collect(self) -> None:
        """After a run, once the app is idle: what the run froze is collectable again,
        collected once (the drawing's reference cycles the run left behind), and the rest
        frozen again. About a tenth of a second, at a moment nothing waits for it."""
        if not self.collect_due:
            return
        self.collect_due = False
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    def cost(self) -> float:
        """The screen's CPU seconds per frame: the smaller of the last two, so a one-off
        (the footer rebuilt as a run starts) does not slow the frames after it."""
        a, b = self._costs
        return min(a, b) if a else b
