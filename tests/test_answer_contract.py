"""`rulecheck answer` against the exact response contract of seed 000 (PROMPTS) and the
evaluator controls C09, C11, C12, C13, through the public entry point.

The table lives in tests/answer_cases.py: every row is a valid specimen with one named change
and the exact multiset of (code, rule) findings it must produce. Each row runs in-process
through `engine.cli.main` (click's CliRunner, `--format json`); a few representative rows
also run through a real subprocess of the installed `rulecheck` script.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from answer_cases import (
    CASES,
    Case,
    case_argv,
    memoized_rules,
    parse_output,
    run_case,
)
from click.testing import CliRunner

from engine.cli import main
from engine.evaluate.program import compile_program
from engine.ruleset import load_ruleset

ROOT = Path(__file__).resolve().parents[1]
RULECHECK = Path(sys.executable).parent / "rulecheck"
BY_ID = {case.id: case for case in CASES}


@pytest.fixture(autouse=True, scope="module")
def _rules_parsed_once() -> Iterator[None]:
    with memoized_rules():
        yield


# ---- the table ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", [case.param() for case in CASES])
def test_case(case: Case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert "Traceback" not in outcome.output
    assert outcome.exit_code == case.expected_exit, outcome.output
    assert outcome.findings == Counter(case.findings), outcome.stdout
    for located in case.located:
        assert located in outcome.located, sorted(outcome.located, key=str)
    for text in case.output_has:
        assert text in outcome.output
    if outcome.exit_code in (0, 1):
        assert outcome.data is not None
        assert outcome.data["structural_ok"] is (outcome.exit_code == 0)
        assert outcome.data["scope"] == "structural"
        for finding in outcome.data["findings"]:
            assert finding["code"] and finding["message"]
            assert set(finding) <= {
                "code",
                "message",
                "file",
                "pointer",
                "line",
                "column",
                "rule",
                "rule_hash",
                "ids",
            }
            assert bool(finding.get("rule")) == bool(finding.get("rule_hash"))


def test_table_names_only_real_link_rules() -> None:
    """A typo in an expected rule name would make a row unsatisfiable for the wrong reason."""
    ruleset = load_ruleset([ROOT / "rules"])
    program = compile_program(ruleset)
    links = {link.name: link.code for link in program.links_of("answer")}
    for case in CASES:
        for code, rule in case.findings:
            if rule is not None:
                assert rule in links, f"{case.id}: no link rule {rule}"
                assert links[rule] == code, f"{case.id}: {rule} rejects {links[rule]}, not {code}"


def test_table_has_accepting_and_rejecting_rows() -> None:
    accepted = [case for case in CASES if case.expected_exit == 0]
    rejected = [case for case in CASES if case.expected_exit == 1]
    assert len(accepted) >= 40 and len(rejected) >= 150
    assert {"D", "A", "B"} <= {case.role for case in accepted}


# ---- seed C11: a structural pass never claims correctness, completeness or readiness -------

CLAIM_WORDS = re.compile(r"\b(correct|correctness|complete|completeness|ready|readiness)\b", re.I)


def _claims_nothing_semantic(text: str) -> None:
    for line in text.splitlines():
        for sentence in re.split(r"(?<=[.;])\s+", line):
            if CLAIM_WORDS.search(sentence):
                assert "says nothing about whether" in sentence, sentence


@pytest.mark.parametrize(
    "case_id",
    [
        "valid D answer accepted",
        "valid A answer accepted",
        "valid B answer accepted",
        "C13: missing disposition of E5",
    ],
)
def test_text_report_is_structural_only(case_id: str, tmp_path: Path) -> None:
    case = BY_ID[case_id]
    result = CliRunner().invoke(main, case_argv(case, tmp_path, output_format="text"))
    assert result.exit_code == case.expected_exit
    assert "structural" in result.output
    _claims_nothing_semantic(result.output)
    if case.expected_exit == 0:
        assert "structural check passed" in result.output
    else:
        assert "structural check failed" in result.output
        assert "passed" not in result.output
    data = run_case(case, tmp_path / "json").data
    assert data is not None
    _claims_nothing_semantic(data["note"])
    assert not {"correct", "complete", "ready"} & set(data)


# ---- determinism ---------------------------------------------------------------------------


def test_json_output_byte_identical_across_runs(tmp_path: Path) -> None:
    case = BY_ID["every finding reported: five independent violations give five findings"]
    argv = case_argv(case, tmp_path)
    first = CliRunner().invoke(main, argv)
    second = CliRunner().invoke(main, argv)
    assert first.exit_code == second.exit_code == 1
    assert first.stdout_bytes == second.stdout_bytes
    assert len(json.loads(first.stdout)["findings"]) == 5


# ---- the installed entry point, in a real process ------------------------------------------

SUBPROCESS_CASES = [
    "valid B answer with --draft and --source accepted",
    "C12: citation supports -> draft-only A3 (deleted action), with --draft -> LINK_STALE_DRAFT",
    "C13: substituted E6 -> E9 (E6 missing, E9 unknown, X1 does not name E9)",
    "json: NaN as a citation line",
    "every finding reported: five independent violations give five findings",
    "source: one byte of the snapshot inside E5 altered (hash E5, E6; text E5)",
    "usage: answer file missing",
    "role: --role X is not a session role",
]


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_installed_entry_point(case_id: str, tmp_path: Path) -> None:
    """Same result as in-process, and byte-identical JSON from a fresh interpreter (another
    hash seed), so nothing depends on set or dict iteration order."""
    case = BY_ID[case_id]
    argv = case_argv(case, tmp_path)
    process = subprocess.run(
        [str(RULECHECK), *argv], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert "Traceback" not in process.stdout + process.stderr
    outcome = parse_output(process.returncode, process.stdout, process.stdout + process.stderr)
    assert outcome.exit_code == case.expected_exit, process.stderr
    assert outcome.findings == Counter(case.findings)
    for text in case.output_has:
        assert text in outcome.output
    in_process = CliRunner().invoke(main, argv)
    assert in_process.exit_code == process.returncode
    assert in_process.stdout == process.stdout
