"""The command line: check | run | render | ir, and the default: open the debugger."""
