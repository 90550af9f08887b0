"""`rulecheck controls`: an expected-result table of controls and mutations, each answered
by cases run through the public path of `rulecheck test` (docs/testing.md, "Controls")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.cases import run as case_run
from engine.cases.controls import control_rows, read_control_table
from engine.cases.run import Observed
from engine.cases.suite import load_groups, run_suite
from engine.report.controls_report import controls_json, controls_markdown
from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "data" / "protocol" / "controls.yaml"
SHIPPED = ROOT / "controls" / "evaluator" / "expected.yaml"
WRITTEN = len(yaml.safe_load((SMALL.parent / "eval.cases.yaml").read_text("utf-8"))["cases"])


def _rows(run: CliRun) -> dict[tuple[str, str, str], bool]:
    return {(r["kind"], r["id"], r["title"]): r["passed"] for r in run.data["rows"]}


def test_a_table_whose_cases_hold_passes_with_the_count_last() -> None:
    run = CliRun(["controls", str(SMALL)])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout
    lines = run.stdout.splitlines()
    assert lines[0] == f"CONTROLS {SMALL}"
    # the accepted run, two controls, two mutations, and each case no row names
    assert lines[-1] == f"{WRITTEN} passed, 0 failed"
    assert "PASS K1   one more token in an answer: ANSWER_TOO_LONG" in lines
    assert "PASS K2   one more token in the run: total_tokens fails" in lines


def test_json_is_canonical_and_markdown_has_both_tables() -> None:
    first = CliRun(["controls", str(SMALL), "--format", "json"])
    second = CliRun(["controls", str(SMALL), "--format", "json"])
    assert first.stdout == second.stdout
    assert first.stdout == json.dumps(first.data, sort_keys=True, indent=2) + "\n"
    assert (first.data["passed"], first.data["failed"]) == (WRITTEN, 0)
    markdown = CliRun(["controls", str(SMALL), "--format", "markdown"]).stdout
    assert "## Controls" in markdown and "## Attribution" in markdown
    assert markdown.splitlines()[-1] == f"{WRITTEN} passed, 0 failed"


def _accept_everything(*_args: Any) -> Observed:
    return Observed(passed=True, admitted=True, verdict="MEETS_BAR")


def _refuse_everything(*_args: Any) -> Observed:
    return Observed(passed=False, admitted=False, verdict="INVALID")


@pytest.mark.parametrize("broken", [_accept_everything, _refuse_everything])
def test_a_checker_that_accepts_or_refuses_everything_fails_the_table(
    broken: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.cases.suite.run_case", broken)
    assert case_run.run_case is not broken
    run = CliRun(["controls", str(SMALL), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 1
    failed = {key for key, passed in _rows(run).items() if not passed}
    if broken is _accept_everything:  # every refusing control and every mutation fails
        assert {(kind, id_) for kind, id_, _ in failed} >= {
            ("control", "K1"),
            ("control", "K2"),
            ("mutation", "K1"),
            ("mutation", "K2"),
        }
    else:  # the accepted run fails, and every mutation (no code is produced)
        assert (
            "accepted",
            "-",
            "accepted bundle, on the answer ceiling and on the pass-rate bar",
        ) in failed
        assert {key[0] for key in failed} >= {"accepted", "mutation"}


def _table(tmp_path: Path, change: Any) -> Path:
    data = yaml.safe_load(SMALL.read_text(encoding="utf-8"))
    change(data)
    data["cases"] = [str(SMALL.parent / "eval.cases.yaml")]
    path = tmp_path / "controls.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_control_without_a_case_and_a_mutation_never_applied_fail(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["controls"][1]["cases"] = []
        del data["mutations"][1]["case"]

    run = CliRun(["controls", str(_table(tmp_path, change)), "--format", "json"])
    assert run.exit_code == 1
    rows = {(r["kind"], r["id"]): r for r in run.data["rows"]}
    assert rows[("control", "K2")]["observed"] == "no specimen"
    assert rows[("mutation", "K2")]["observed"] == "not applied"
    assert not rows[("control", "K2")]["passed"] and not rows[("mutation", "K2")]["passed"]


def test_a_mutation_must_produce_its_owners_code(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["mutations"][0]["code"] = "MODEL_NOT_PINNED"

    run = CliRun(["controls", str(_table(tmp_path, change)), "--format", "json"])
    assert run.exit_code == 1
    row = next(r for r in run.data["rows"] if r["kind"] == "mutation" and r["id"] == "K1")
    assert "MODEL_NOT_PINNED is not produced" in row["reason"]


@pytest.mark.parametrize(
    ("change", "code", "pointer"),
    [
        (
            lambda d: d["controls"][0]["cases"].append("no such case"),
            "CONTROLS_UNKNOWN_NAME",
            "/controls/0/cases/1",
        ),
        (
            lambda d: d["mutations"][0].update(owner="K9"),
            "CONTROLS_UNKNOWN_NAME",
            "/mutations/0/owner",
        ),
        (lambda d: d["controls"][1].update(id="K1"), "CONTROLS_SCHEMA", "/controls/1/id"),
        (
            lambda d: d["controls"][0].update(structural="fine"),
            "CONTROLS_SCHEMA",
            "/controls/0/structural",
        ),
        (
            lambda d: d["mutations"][0].update(fails="total_tokens"),
            "CONTROLS_SCHEMA",
            "/mutations/0",
        ),
    ],
    ids=["unknown_case", "unknown_owner", "duplicate_id", "bad_structural", "code_and_fails"],
)
def test_a_malformed_table_is_a_located_usage_error(
    change: Any, code: str, pointer: str, tmp_path: Path
) -> None:
    run = CliRun(["controls", str(_table(tmp_path, change)), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    diagnostic = run.data["diagnostics"][0]
    assert diagnostic["code"] == code
    assert diagnostic["location"]["pointer"] == pointer
    assert diagnostic["location"]["line"] is not None


def test_a_missing_table_is_unreadable(tmp_path: Path) -> None:
    run = CliRun(["controls", str(tmp_path / "absent.yaml")])
    run.assert_clean()
    assert run.exit_code == 2


@dataclass(frozen=True)
class Shipped:
    data: dict[str, Any]
    markdown: str


@pytest.fixture(scope="module")
def shipped() -> Shipped:
    """The shipped table run once, as `rulecheck controls` runs it (its command is tested
    on the small table above), reported as JSON and as markdown from the same rows."""
    campaign = ROOT / "controls" / "campaign"
    before = {p: p.read_bytes() for p in sorted(campaign.rglob("*")) if p.is_file()}
    table = read_control_table(SHIPPED)
    groups = load_groups(list(table.case_files))
    run_suite(groups)
    rows = control_rows(table, groups)
    after = {p: p.read_bytes() for p in sorted(campaign.rglob("*")) if p.is_file()}
    assert after == before  # every case edits and seals a copy, never the campaign
    return Shipped(controls_json(table, rows), controls_markdown(table, rows))


def test_the_seed_table_passes_every_control_and_mutation(shipped: Shipped) -> None:
    rows = shipped.data["rows"]
    assert [(r["kind"], r["id"]) for r in rows if not r["passed"]] == []
    assert (shipped.data["passed"], shipped.data["failed"]) == (len(rows), 0)
    assert shipped.markdown.splitlines()[-1] == f"{len(rows)} passed, 0 failed"
    assert not [r for r in rows if r["kind"] == "case"]  # the table names every case
    assert [r["observed"] for r in rows if r["kind"] == "accepted"] == ["accepted: ADVANCE"]
    controls = [r["id"] for r in rows if r["kind"] == "control"]
    assert controls == [f"C{n:02d}" for n in range(1, 24)]
    mutations = [r for r in rows if r["kind"] == "mutation"]
    assert len(mutations) == 17
    # the mutation of a rule file is attributed to C21 through the rule it lets escape
    [rule_file] = [r for r in mutations if r["title"] == "make a cost/time cap an OR condition"]
    assert (rule_file["id"], rule_file["expected"]) == (
        "C21",
        "cost_time_scorecard no longer fails",
    )


def test_docs_controls_is_the_generated_report(shipped: Shipped) -> None:
    written = (ROOT / "docs" / "controls.md").read_text(encoding="utf-8")
    assert written == shipped.markdown, "regenerate: rulecheck controls --format markdown"


def test_a_case_no_row_names_is_still_shown(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["controls"] = data["controls"][:1]
        data["mutations"] = data["mutations"][:1]

    run = CliRun(["controls", str(_table(tmp_path, change)), "--format", "json"])
    shown = [r["title"] for r in run.data["rows"] if r["kind"] == "case"]
    assert "the run total exactly on its ceiling" in shown
    assert len(shown) == WRITTEN - 3  # the accepted run, K1's case and its mutation's


def _rule_mutation_table(tmp_path: Path, escapes: str) -> Path:
    """The small table with a mutation of its rule file: the answer ceiling one token
    higher, so that K1's specimen (one token over it) escapes answer_within_ceiling."""
    rules = SMALL.parent / "eval.rules"
    case = {
        "name": "the answer ceiling one token higher in the rules",
        "check": str(SMALL.parent / "accepted"),
        "rule_edits": [
            {
                "file": str(rules),
                "text": "const max_answer_tokens = 2_000 tokens",
                "replace": "const max_answer_tokens = 2_001 tokens",
            }
        ],
        "edits": [{"file": "answers.jsonl", "pointer": "/2/tokens", "value": 2001}],
        "expect": {
            "verdict": "MEETS_BAR",
            "violated": [],
            "changed": ["max_answer_tokens"],
            "rules": {"answer_within_ceiling": "pass"},
        },
    }
    cases = tmp_path / "rule.cases.yaml"
    cases.write_text(
        yaml.safe_dump({"rules": [str(rules)], "cases": [case]}, sort_keys=False), "utf-8"
    )

    def change(data: dict[str, Any]) -> None:
        data["mutations"].append(
            {
                "mutation": "a looser answer ceiling",
                "owner": "K1",
                "escapes": escapes,
                "case": case["name"],
            }
        )

    path = _table(tmp_path, change)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["cases"].append(str(cases))
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_rule_file_mutation_passes_when_its_owners_specimen_escapes_the_rule(
    tmp_path: Path,
) -> None:
    run = CliRun(["controls", str(_rule_mutation_table(tmp_path, "answer_within_ceiling"))])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout
    assert "PASS K1   a looser answer ceiling: answer_within_ceiling no longer fails" in run.stdout


def test_a_rule_file_mutation_fails_unless_the_owner_requires_the_escaped_rule_to_fail(
    tmp_path: Path,
) -> None:
    table = _rule_mutation_table(tmp_path, "total_tokens")
    run = CliRun(["controls", str(table), "--format", "json"])
    assert run.exit_code == 1
    row = next(r for r in run.data["rows"] if r["title"] == "a looser answer ceiling")
    assert not row["passed"]
    assert "no passing case of the owning control requires total_tokens to fail" in row["reason"]
