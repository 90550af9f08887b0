"""Golden reports: each `tests/golden/NAME.args` (one CLI argument per line, run from the
repository root) must print exactly `tests/golden/NAME.json`.

The reports are byte-stable, so any change to them is a change of behaviour to review.
`RULECHECK_UPDATE_GOLDEN=1 pytest tests/test_golden.py` rewrites them after an intended
change; the diff then shows what changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(GOLDEN.glob("*.args"))


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_report_is_byte_identical(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = CliRun(case.read_text(encoding="utf-8").splitlines())
    run.assert_clean()
    expected = case.with_suffix(".json")
    if os.environ.get("RULECHECK_UPDATE_GOLDEN") == "1":
        expected.write_text(run.stdout, encoding="utf-8")
    assert run.stdout == expected.read_text(encoding="utf-8")


def test_every_golden_case_has_a_report() -> None:
    assert CASES
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == [c.stem for c in CASES]
