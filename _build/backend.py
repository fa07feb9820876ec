"""The build backend: setuptools', plus mypy as a build requirement when the install asks
for the compiled build (POOLTUI_COMPILE=1; see pooltui/sim/compiled.py)."""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (the whole PEP 517/660 interface)

_MYPYC = ["mypy>=1.10"]


def _compiling() -> bool:
    # pooltui.sim.compiled.wanted(), which cannot be imported here (nothing is installed).
    return os.environ.get("POOLTUI_COMPILE", "").strip() in {"1", "true", "yes"}


def _requires(hook: Any, config_settings: Any) -> list[str]:
    # setuptools runs setup.py to answer this, before mypy is installed: tell it not to
    # compile yet.
    os.environ["POOLTUI_ASKING_REQUIRES"] = "1"
    try:
        base: list[str] = hook(config_settings)
    finally:
        del os.environ["POOLTUI_ASKING_REQUIRES"]
    return [*base, *(_MYPYC if _compiling() else [])]


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    return _requires(_setuptools.get_requires_for_build_wheel, config_settings)


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    return _requires(_setuptools.get_requires_for_build_editable, config_settings)
