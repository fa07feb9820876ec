"""`pooltui check` and `pooltui ir`, through the real dispatcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pooltui.cli.main import main

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"


def test_check_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "fam.pool"
    spec.write_text(
        "stage gpu[4] step { }\npool kv[4] { admit via gpu; }\npool host { }\n"
        "session chat[2000] { hold kv[serial % 4] (1) { run gpu decode (1); } }\n"
    )
    assert main(["check", str(spec)]) == 0
    out = capsys.readouterr().out
    assert (
        out
        == f"{spec}: ok — 2 pools (5 members), 1 stage (4 members), 1 session class, 2,000 sessions\n"
    )


def test_check_examples(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(HERE / "specs" / "lang_examples.pool")
    assert main(["check", spec]) == 0
    assert (
        capsys.readouterr().out
        == f"{spec}: ok — 2 pools, 2 stages, 3 session classes, 2,210 sessions\n"
    )


def test_check_errors(capsys: pytest.CaptureFixture[str]) -> None:
    spec = GOLDEN / "multiple_errors.pool"
    assert main(["check", str(spec)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    expected = (
        (GOLDEN / "multiple_errors.err").read_text().replace("multiple_errors.pool:", f"{spec}:")
    )
    assert captured.err == expected + "3 errors\n"


def test_check_one_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(GOLDEN / "duplicate_pool.pool")]) == 1
    assert capsys.readouterr().err.endswith("\n1 error\n")


def test_check_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "no/such.pool"]) == 1
    assert (
        capsys.readouterr().err
        == "pooltui: cannot read 'no/such.pool': No such file or directory\n"
    )


def test_ir_json(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(HERE / "specs" / "lang_examples.pool")
    assert main(["ir", spec]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["node"] == "Program" and data["seed"] == 7
    assert "source" not in data
    kv = data["pools"][0]
    assert kv["node"] == "CPool" and kv["cap"] == 131056 and kv["span"] == "20:6"
    assert data["pools"][1]["cap"] == "inf"
    req = data["sessions"][1]["source"]
    assert req["node"] == "CSource" and req["row_count"] == 2000 and "rows" not in req
    assert req["columns"] == ["TIMESTAMP", "ContextTokens", "GeneratedTokens"]
    assert main(["ir", spec, "--rows"]) == 0
    with_rows = json.loads(capsys.readouterr().out)
    assert with_rows["sessions"][1]["source"]["rows"][0] == [0, 374, 44]


def test_ir_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(HERE / "specs" / "lang_examples.pool")
    main(["ir", spec])
    first = capsys.readouterr().out
    main(["ir", spec])
    assert capsys.readouterr().out == first


def test_ir_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ir", str(GOLDEN / "const_cycle.pool")]) == 1
    assert "depends on itself" in capsys.readouterr().err
