"""CLI behaviour as data: each `tests/data/*/cases/*.yaml` is one run of `rulecheck`.

A case names its arguments (run in the folder above `cases/`, with `--rules` from the
folder's `cases/defaults.yaml` and `--format json` unless it gives a format), the exit
code, and what the report must hold: `expect` maps JSON pointers into the report to
values, `absent` lists pointers that must find nothing, `stdout_contains` lists texts of a
text report. No case may show Python's own error text. Adding a case is adding a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli_run import CliRun

DATA = Path(__file__).resolve().parent / "data"
CASES = sorted(p for p in DATA.glob("*/cases/*.yaml") if p.name != "defaults.yaml")
_MISSING = object()
_PYTHON_TEXT = ("Traceback", "NoneType", "unsupported operand", "object is not", "INTERNAL_ERROR")


def _at(document: Any, pointer: str) -> Any:
    value = document
    for token in pointer.lstrip("/").split("/") if pointer else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return _MISSING
    return value


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.parent.name}/{c.stem}" for c in CASES])
def test_case(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = yaml.safe_load(case.read_text(encoding="utf-8"))
    defaults = yaml.safe_load((case.parent / "defaults.yaml").read_text(encoding="utf-8"))
    args = [str(a) for a in spec["args"]] + ["--rules", defaults["rules"]]
    if "--format" not in args:
        args += ["--format", "json"]
    monkeypatch.chdir(case.parent.parent)
    run = CliRun(args)
    run.assert_clean()
    output = run.stdout + run.stderr
    assert not [text for text in _PYTHON_TEXT if text in output], output
    assert run.exit_code == spec["exit"], output
    for pointer, expected in (spec.get("expect") or {}).items():
        assert _at(run.data, pointer) == expected, f"{pointer} in\n{output}"
    for pointer in spec.get("absent") or []:
        assert _at(run.data, pointer) is _MISSING, f"{pointer} in\n{output}"
    for text in spec.get("stdout_contains") or []:
        assert text in run.stdout, f"{text!r} not in\n{run.stdout}"


def test_cases_exist() -> None:
    assert {case.parent.parent.name for case in CASES} >= {"engine", "protocol"}


def test_readme_shows_the_protocol_the_cases_check() -> None:
    readme = (DATA.parent.parent / "README.md").read_text(encoding="utf-8")
    rules = (DATA / "protocol" / "eval.rules").read_text(encoding="utf-8")
    assert f"```\n{rules}```" in readme
