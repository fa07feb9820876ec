"""The debugger: a Textual app over `pooltui.sim.Simulation`.

The app never drives the simulator from the UI thread: a single worker thread owns it
(`driver.Controller`) and posts immutable snapshots back (`driver.Frame`).
`pooltui.tui.breakpoints` and `pooltui.tui.driver` import no Textual.
"""
