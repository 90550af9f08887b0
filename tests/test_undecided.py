"""A gate that could not be evaluated is neither true nor false: a decision that must read
it gives no verdict (`DECISION_UNDECIDED`), instead of turning the error into `true` under
`not`."""

from __future__ import annotations

from pathlib import Path

from tests.cli_run import CliRun

DATA = Path(__file__).resolve().parent / "data" / "undecided"
RULES = str(DATA / "cost.rules")


def test_a_computed_cost_decides() -> None:
    run = CliRun(["check", str(DATA / "priced"), "--rules", RULES, "--format", "json"])
    run.assert_clean()
    assert run.data["verdict"] == "ADVANCE"
    assert "undecided" not in run.data


def test_a_cost_that_cannot_be_computed_gives_no_verdict() -> None:
    run = CliRun(["check", str(DATA / "unpriced"), "--rules", RULES, "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 1
    assert run.data["verdict"] is None and run.data["passed"] is False
    [undecided] = run.data["undecided"]
    assert undecided["code"] == "DECISION_UNDECIDED"
    assert undecided["location"]["file"].endswith("cost.rules")
    assert undecided["location"]["line"] == 22  # the row `when not over_cap => ADVANCE`
    assert (
        "`over_cap` could not be evaluated (the map has no entry `model-z`)"
        in (undecided["message"])
    )


def test_the_text_report_says_so_first() -> None:
    run = CliRun(["check", str(DATA / "unpriced"), "--rules", RULES])
    assert run.exit_code == 1
    assert run.stdout.splitlines()[0] == "UNDECIDED: decision verdict gives no verdict"


def test_the_cases_beside_the_rules_pass() -> None:
    run = CliRun(["test", str(DATA)])
    assert run.exit_code == 0, run.stdout
    assert run.stdout.splitlines()[-1] == "3 passed, 0 failed"
