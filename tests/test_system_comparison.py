"""The conditional system comparison of seed 000 §6 through `rulecheck check` and `rulecheck
test`: the synthetic bundle as tests/system_comparison_builder.py writes it, its report, and
the case file beside it that gives every rule of the protocol an accepting and a refusing
case (docs/system-comparison-format.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from tests.cli_run import CliRun
from tests.system_comparison_builder import BUNDLE, build, write

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "controls" / "system-comparison.cases.yaml"


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _table(data: dict[str, object], name: str) -> dict[str, dict[str, object]]:
    """A report table as {row ids joined by ", ": {column: value}}."""
    tables = data["tables"]
    assert isinstance(tables, list)
    [table] = [t for t in tables if t["name"] == name]
    return {
        ", ".join(row["ids"]): dict(zip(table["columns"], row["values"], strict=True))
        for row in table["rows"]
    }


def test_the_shipped_bundle_is_what_the_builder_writes(tmp_path: Path) -> None:
    write(build(), tmp_path / "bundle")
    assert _digests(tmp_path / "bundle") == _digests(BUNDLE)


def test_the_synthetic_comparison_is_admitted_and_decides() -> None:
    run = CliRun(["check", str(BUNDLE), "--format", "json", "--strict"])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout
    assert run.data["protocol"]["name"] == "system_comparison"
    assert run.data["admitted"] is True
    assert run.data["verdict"] == "MADAR_SYSTEM_ADVANTAGE"
    assert run.data["banners"] == [
        "SYNTHETIC SYSTEM COMPARISON: synthetic inputs; no result about real systems"
    ]
    assert run.data["warnings"] == []
    assert set(run.data["documents"]) == {
        "design",
        "preflight",
        "truth",
        "sessions",
        "operations",
        "setup",
        "packets",
        "scores",
    }
    assert [t["name"] for t in run.data["tables"]] == [
        "sys_identity",
        "sys_runs",
        "sys_provider_costs",
        "sys_task_costs",
        "sys_aggregate_ratios",
        "sys_task_ratios",
        "sys_pair_ratios",
        "sys_capability_outcomes",
    ]


def test_the_report_shows_cold_first_task_each_task_and_suite_totals_per_provider() -> None:
    # Worked by hand from the builder's profiles: a workflow costs its investigation
    # (uncached at US$4, 5,000 cached at US$0.40, 3,000 output at US$20 per million), its
    # review (US$0.102) and its setup; the first task of each repository, repetition 1,
    # carries the cold setup (Native 5 s US$0, Madar 60 s US$0.02, Serena 90 s US$0.03).
    data = CliRun(["check", str(BUNDLE), "--format", "json"]).data
    costs = _table(data, "sys_provider_costs")
    assert costs["native"]["cold_first_task_cost"] == "303/250"  # 3 x 0.404
    assert costs["madar"]["cold_first_task_cost"] == "24/25"  # 3 x (0.198 + 0.102 + 0.02)
    assert costs["serena"]["cold_first_task_cost"] == "507/500"  # 3 x (0.206 + 0.102 + 0.03)
    assert costs["madar"]["cold_first_task_seconds"] == 1065  # 3 x (60 + 5 + 190 + 100)
    assert costs["native"]["suite_total_cost"] == "2373/500"  # 11 x 0.404 + 0.302 (W36)
    assert costs["madar"]["suite_total_cost"] == "183/50"  # 3 x 0.32 + 9 x 0.30
    assert costs["serena"]["suite_total_cost"] == "1893/500"  # 3 x 0.338 + 9 x 0.308
    assert costs["native"]["suite_total_seconds"] == 4895  # 3 x 405 + 8 x 400 + 480
    assert (
        costs["madar"]["cold_setup_seconds"] == 180 and costs["madar"]["warm_setup_seconds"] == 60
    )
    tasks = _table(data, "sys_task_costs")
    assert len(tasks) == 18  # six tasks, three providers
    assert tasks["K1, madar"]["median_cost"] == "31/100"  # (0.32 + 0.30) / 2
    assert tasks["K1, madar"]["cold_setup_cost"] == "1/50"
    assert tasks["K2, madar"]["cold_setup_cost"] == 0
    assert tasks["K6, native"]["median_seconds"] == 440  # (400 + 480) / 2


def test_the_report_shows_paired_ratios_with_the_gate_that_judged_them() -> None:
    data = CliRun(["check", str(BUNDLE), "--format", "json"]).data
    aggregate = _table(data, "sys_aggregate_ratios")
    assert aggregate["native"]["cost_ratio"] == "610/791"  # 1.83 / 2.373
    assert aggregate["native"]["time_ratio"] == "744/979"  # 1860 / 2447.5
    assert aggregate["native"]["judged_by"] == "sys_beats_native"
    assert aggregate["serena"]["judged_by"] == "sys_holds_against_serena"
    tasks = _table(data, "sys_task_ratios")
    assert len(tasks) == 12
    assert tasks["K1, serena"]["judged_by"] == "sys_task_regression_vs_serena"
    pairs = _table(data, "sys_pair_ratios")
    assert len(pairs) == 24  # Madar's twelve workflows against each comparator
    assert pairs["W02, native"]["partner"] == "W01"
    assert pairs["W02, native"]["cost_ratio"] == "80/101"  # 0.32 / 0.404
    assert pairs["W02, serena"]["judged_by"] == "sys_pair_regression_vs_serena"
    assert all(row["passed"] is True for row in pairs.values())


def test_failures_and_capability_outcomes_are_reported_as_such() -> None:
    data = CliRun(["check", str(BUNDLE), "--format", "json"]).data
    runs = _table(data, "sys_runs")
    assert runs["W36"]["failure"] == "investigation_failed"
    assert runs["W36"]["critical_completion_failed"] is True
    assert runs["W36"]["R_sys"] == 0 and runs["W36"]["U"] == 0
    assert runs["W36"]["cost"] == "151/500"  # the investigation's charges are kept
    assert runs["W01"]["R_sys"] == "2/3"  # the shared denominator, never shrunk
    assert runs["W03"]["operations"] == 60
    capability = _table(data, "sys_capability_outcomes")
    assert capability["serena"]["unsupported"] == 12  # C19: outcomes, not evidence
    assert capability["serena"]["setup_observations"] == 12
    # Issue 13: truncated, setup-error and readiness-timeout records are outcomes too.
    assert capability["serena"]["truncated"] == 1
    assert capability["serena"]["readiness_timeout"] == 1
    assert capability["madar"]["setup_error"] == 1
    assert runs["W25"]["capability_outcomes"] == 1  # Madar's setup error
    assert runs["W31"]["capability_outcomes"] == 2  # its readiness timeout and unsupported


def test_every_case_beside_the_bundle_holds_and_every_rule_has_both_outcomes() -> None:
    before = _digests(BUNDLE)
    written = len(yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"])
    run = CliRun(["test", str(CASES), "--coverage", "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 0, json.dumps(
        [c for c in run.data["cases"] if not c["passed"]], indent=1
    )[:4000]
    assert run.data["passed"] == written and run.data["failed"] == 0
    [coverage] = run.data["coverage"]
    ours = [r for r in coverage["rule_outcomes"] if r["name"].startswith("sys_")]
    assert len(ours) == 88
    missing = [r["name"] for r in ours if not {"pass", "fail"} <= set(r["reached"])]
    assert missing == []
    rows = [r for r in coverage["decision_rows"] if r["decision"] == "sys_recommendation"]
    assert [r["reached"] for r in rows] == [True] * 5
    assert _digests(BUNDLE) == before  # edits are made in copies, never in the bundle


def test_the_json_report_is_canonical_and_byte_stable() -> None:
    first = CliRun(["check", str(BUNDLE), "--format", "json"])
    second = CliRun(["check", str(BUNDLE), "--format", "json"])
    assert first.stdout == second.stdout
    assert (
        first.stdout == json.dumps(first.data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    )
