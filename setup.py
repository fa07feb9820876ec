"""Everything is in pyproject.toml except the optional compiled build (POOLTUI_COMPILE=1):
the simulator's hot modules compiled with mypyc. See pooltui/sim/compiled.py."""

import importlib.util
import os
from pathlib import Path

from setuptools import setup

# Read the module list without importing pooltui (its dependencies are not installed yet).
_spec = importlib.util.spec_from_file_location(
    "_pooltui_compiled", Path(__file__).parent / "pooltui" / "sim" / "compiled.py"
)
assert _spec is not None and _spec.loader is not None
compiled = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compiled)

ext_modules = []
if compiled.wanted() and not os.environ.get("POOLTUI_ASKING_REQUIRES"):
    from mypyc.build import mypycify

    # Optimised (-O3, one C file): the test builds the same C quicker (compiled.QUICK).
    ext_modules = mypycify(list(compiled.MODULES), **compiled.OPTIMISED._asdict())

setup(ext_modules=ext_modules)
