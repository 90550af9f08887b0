"""Seed 001's experiment as a protocol: `rulecheck check controls/experiment`.

`controls/experiment/` is written by `tests/experiment_builder.py`; its expected
classifications (`EXPECTED_CLASSIFICATION`) are worked by hand from seed 001's definitions.
Each rule of the protocol has an accepting and a refusing case in
`rules/tests/experiment.cases.yaml`; what a case file cannot express (a file of the bundle
that is not there) is here.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from cli_run import CliRun
from experiment_builder import CONTROLS, EXPECTED_CLASSIFICATION, TRIALS, bundle, write


def check(folder: Path) -> tuple[int, dict[str, Any]]:
    """`rulecheck check FOLDER --format json`: exit code and report."""
    run = CliRun(["check", str(folder), "--format", "json"])
    run.assert_clean()
    return run.exit_code, run.data


def test_the_builder_writes_the_shipped_controls(tmp_path: Path) -> None:
    write(tmp_path, bundle())
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in CONTROLS.iterdir())
    for name in written:
        assert (tmp_path / name).read_bytes() == (CONTROLS / name).read_bytes(), name


def test_four_arms_of_five_trials_with_indeterminate_and_false_success() -> None:
    arms = [arm for arm, _template, _outcome, _runs in TRIALS.values()]
    assert {arm: arms.count(arm) for arm in arms} == {
        "DIRECT": 5,
        "FIXED_ONE_LEVEL": 5,
        "RECURSIVE_LAZY": 5,
        "RECURSIVE_CONCURRENT": 5,
    }
    assert {"INDETERMINATE", "FALSE_SUCCESS"} <= set(EXPECTED_CLASSIFICATION.values())


def test_the_synthetic_experiment_is_comparable_and_classified_as_worked_by_hand() -> None:
    code, report = check(CONTROLS)
    assert code == 0
    assert report["protocol"]["name"] == "experiment"
    assert report["verdict"] == "COMPARABLE"
    outcomes = next(t for t in report["tables"] if t["name"] == "trial_outcomes")
    column = outcomes["columns"].index("classification")
    observed = {row["ids"][0]: row["values"][column] for row in outcomes["rows"]}
    assert observed == EXPECTED_CLASSIFICATION


def test_a_task_statement_that_is_not_there_is_not_pinned(tmp_path: Path) -> None:
    folder = tmp_path / "experiment"
    shutil.copytree(CONTROLS, folder)
    (folder / "task.md").unlink()
    code, report = check(folder)
    assert code == 1
    assert report["verdict"] == "MANIFEST_INVALID"
    assert {v["rule"] for v in report["violations"]} == {"task_pinned"}
