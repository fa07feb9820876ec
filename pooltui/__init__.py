"""pooltui: a terminal visualizer and step debugger for LLM-serving memory pools."""

__version__ = "0.1.0"
