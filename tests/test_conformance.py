"""Seed 001's conformance suites over controller traces, through `rulecheck conformance`.

`controls/conformance/expected.yaml` lists every fixture trace with what it must give: a
conforming trace per suite, and per bullet a violating trace with exactly the rules it
breaks. The traces are written by `tests/conformance_builder.py`; adding a case is adding
a trace there (and its line in `TRACES`).
"""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from engine.evaluate.runtime import json_sha256
from engine.ruleset import load_ruleset
from tests import conformance_builder, trials_builder
from tests.cli_run import REPO, CliRun

FIXTURES = REPO / "controls" / "conformance"
EXPECTED = yaml.safe_load((FIXTURES / "expected.yaml").read_text())["traces"]
SUITES = ("Transition Completeness", "Event and Replay", "Attempt and Accounting", "Recovery")
SUITES += ("Isolation",)


def _conformance_rules() -> dict[str, str]:
    """Each link rule of the conformance protocol's file, with its source note."""
    ruleset = load_ruleset([REPO / "rules"])
    (rule_file,) = [f for f in ruleset.checked.files if f.path.endswith("001_conformance.rules")]
    return {
        decl.name.text: decl.note or ""
        for decl in rule_file.declarations
        if type(decl).__name__ == "LinkDecl"
    }


def test_every_fixture_trace_gives_its_expected_result() -> None:
    run = CliRun(["conformance", str(FIXTURES)])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout
    assert run.stdout.splitlines()[-1] == f"{len(EXPECTED)} passed, 0 failed"


def test_every_suite_has_a_conforming_trace_and_every_rule_a_violating_one() -> None:
    rules = _conformance_rules()
    conforming = {e["suite"] for e in EXPECTED if e["conforms"]}
    assert set(SUITES) <= conforming
    violated = {rule for e in EXPECTED for rule in e.get("violated", [])}
    assert set(rules) <= violated, sorted(set(rules) - violated)
    for entry in EXPECTED:
        if entry["conforms"]:
            continue
        # The rule of the trace's own bullet is among those it breaks.
        assert any(rules[rule].startswith(f"001 {entry['suite']}") for rule in entry["violated"])


def _check(bundle: Path) -> dict[str, Any]:
    run = CliRun(["check", str(bundle), "--format", "json"])
    run.assert_clean()
    data: dict[str, Any] = run.data
    return data


def test_a_conforming_trace_exercises_every_rule_of_its_suite() -> None:
    """A suite's conforming trace binds each of the suite's rules: its pass is evidence."""
    rules = _conformance_rules()
    for entry in EXPECTED:
        if not entry["conforms"] or entry["suite"] not in SUITES:
            continue
        report = _check(FIXTURES / entry["trace"])
        assert report["passed"] is True
        vacuous = {w["rule"] for w in report["warnings"] if w["code"] == "VACUOUS"}
        own = {r for r, note in rules.items() if note.startswith(f"001 {entry['suite']}")}
        assert own and not own & vacuous, (entry["trace"], sorted(own & vacuous))


def test_a_violation_names_the_rule_the_suite_and_the_record() -> None:
    trace = FIXTURES / "event_replay" / "duplicate_applied"
    run = CliRun(["conformance", str(trace)])
    run.assert_clean()
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("DOES NOT CONFORM: ")
    assert "DUPLICATE_NOT_IDEMPOTENT: Event and Replay:" in lines[1]
    assert lines[2].strip() == (
        "rule duplicate_events_idempotent; suite: 001 Event and Replay: duplicate events are "
        "idempotent"
    )
    record = json.loads(lines[3].split(": ", 1)[1])
    assert (record["seq"], record["entity"], record["event"]) == (8, "A1", "start")


def test_a_conforming_trace_exits_0_and_the_report_hash_does_not_depend_on_the_path(
    tmp_path: Path,
) -> None:
    trace = FIXTURES / "reference"
    first = CliRun(["conformance", str(trace), "--format", "json"])
    assert first.exit_code == 0
    shutil.copytree(trace, tmp_path / "elsewhere")
    second = CliRun(["conformance", str(tmp_path / "elsewhere"), "--format", "json"])
    (one,), (two,) = first.data["reports"], second.data["reports"]
    assert one["report"]["conforms"] is True and one["report"]["findings"] == []
    assert one["report_sha256"] == two["report_sha256"]
    assert one["trace"] != two["trace"]
    # The hash is what `json_sha256` of the report gives in the rules.
    assert one["report_sha256"] == json_sha256(one["report"])


def test_a_trace_whose_expectation_differs_fails_with_what_differs(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "reference", tmp_path / "reference")
    shutil.copytree(FIXTURES / "isolation", tmp_path / "isolation")
    (tmp_path / "expected.yaml").write_text(
        "traces:\n"
        "  - {trace: reference, conforms: true}\n"
        "  - {trace: isolation/network_outside_policy, conforms: true}\n"
    )
    run = CliRun(["conformance", str(tmp_path)])
    assert run.exit_code == 1
    assert run.stdout.splitlines() == [
        "PASS reference",
        "FAIL isolation/network_outside_policy",
        "  - expected conforms",
        "  + observed violates network_within_policy",
        run.stdout.splitlines()[4],
        "1 passed, 1 failed",
    ]


def test_a_malformed_expectation_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "expected.yaml").write_text("traces:\n  - {trace: reference}\n")
    run = CliRun(["conformance", str(tmp_path), "--format", "json"])
    assert run.exit_code == 2
    (diagnostic,) = run.data["diagnostics"]
    assert diagnostic["code"] == "CONFORMANCE_EXPECTED"


def test_a_trace_file_stands_for_its_folder() -> None:
    run = CliRun(["conformance", str(FIXTURES / "recovery" / "conforming" / "trace.jsonl")])
    assert run.exit_code == 0, run.stdout
    assert run.stdout.startswith("CONFORMS: ")


def test_a_folder_without_a_trace_is_a_usage_error(tmp_path: Path) -> None:
    run = CliRun(["conformance", str(tmp_path)])
    run.assert_clean()
    assert run.exit_code == 2


def test_the_fixtures_are_what_the_builder_writes(tmp_path: Path) -> None:
    conformance_builder.main(tmp_path)
    comparison = filecmp.dircmp(tmp_path, FIXTURES)
    pending = [comparison]
    while pending:
        current = pending.pop()
        assert not current.left_only and not current.right_only, current.left
        _, mismatch, errors = filecmp.cmpfiles(
            current.left, current.right, current.common_files, shallow=False
        )
        assert not mismatch and not errors, (current.left, mismatch)
        pending += current.subdirs.values()


def test_measured_trials_need_the_passing_report_the_manifest_names(tmp_path: Path) -> None:
    """Seed 001's gate through the real flow: `rulecheck conformance --format json` on a
    trace, its report and hash embedded in the trial set's manifest, `rulecheck check`."""
    for trace, verdict in (
        ("reference", "COMPARABLE"),
        ("event_replay/duplicate_applied", "CONTROLLER_NOT_CONFORMANT"),
    ):
        run = CliRun(["conformance", str(FIXTURES / trace), "--format", "json"])
        (report,) = run.data["reports"]
        documents = trials_builder.bundle()
        documents["oracle"]["controller"] = {
            "version": "controller-under-test-2.1",
            "conformance_report": report["report"],
            "conformance_report_sha256": report["report_sha256"],
        }
        folder = tmp_path / trace.replace("/", "_")
        trials_builder.write(folder, documents)
        checked = _check(folder)
        assert checked["verdict"] == verdict, trace
        assert checked["passed"] is (verdict == "COMPARABLE")


def test_a_malformed_trace_is_refused_where_it_is_malformed(tmp_path: Path) -> None:
    (tmp_path / "trace.jsonl").write_text('{"id": "r1", "seq": "one", "type": "event"}\n')
    run = CliRun(["conformance", str(tmp_path), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 1
    (diagnostic,) = run.data["diagnostics"]
    assert (diagnostic["code"], diagnostic["location"]["pointer"]) == ("ATTR_TYPE", "/0/seq")
