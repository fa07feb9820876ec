"""The complete examples in docs/language.md and README.md (the code blocks marked `pool`)
compile and run without a violation, a runtime error or a deadlock: the documents cannot
drift from what pooltui does. The README's two set-up commands stay what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pooltui.lang import compile_source
from pooltui.sim import Simulation

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "docs" / "language.md", ROOT / "README.md")


def examples() -> list[str]:
    out: list[str] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        out += re.findall(r"^```pool\n(.*?)^```$", text, re.M | re.S)
    return out


def test_the_documents_have_complete_examples() -> None:
    assert len(examples()) >= 6


def test_readme_opens_with_the_two_set_up_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    blocks = re.findall(r"^```\n(.*?)\n```$", readme, re.M | re.S)
    assert blocks[:2] == [
        "pip install -e . && pooltui specs/vllm_v1.pool",
        "pip install -e '.[test]' && ruff check . && ruff format --check . && mypy && pytest",
    ]
    assert blocks[1] in ci.replace("pip install -q -e", "pip install -e")


@pytest.mark.parametrize("index", range(len(examples())))
def test_example_runs(index: int) -> None:
    text = examples()[index]
    program = compile_source(text, f"example{index}.pool", str(ROOT / "specs"))
    sim = Simulation(program, history=False)
    sim.run_headless(until=600)
    assert sim.violation is None, sim.violation
    assert sim.error is None, sim.error
    assert sim.state.halted is None, sim.state.halted
    assert not sim.state.live  # every session ended


def test_readme_lists_every_bundled_spec() -> None:
    """The README's table of bundled specs names each one in specs/ (a teacher picks from it)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `specs/([\w.]+\.pool)` \|", readme, re.M))
    assert listed == {p.name for p in (ROOT / "specs").glob("*.pool")}
