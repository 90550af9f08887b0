"""Protocol bundles through `rulecheck check`: the shipped trial set, and what a hostile
bundle can do to the loader (leave the bundle, lose a document, name another protocol)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.limits import MAX_FINDINGS
from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent
TRIALS = ROOT / "controls" / "trials"


def _check(bundle: Path, *args: str) -> CliRun:
    run = CliRun(["check", str(bundle), "--format", "json", *args])
    run.assert_clean()
    return run


@pytest.fixture
def trials(tmp_path: Path) -> Path:
    copy = tmp_path / "trials"
    shutil.copytree(TRIALS, copy)
    return copy


def test_the_shipped_trial_set_is_comparable_through_its_protocol() -> None:
    run = _check(TRIALS)
    assert run.exit_code == 0, run.stdout
    assert run.data["protocol"]["name"] == "trial_set"
    assert run.data["verdict"] == "COMPARABLE"
    assert [t["name"] for t in run.data["tables"]] == [
        "trial_outcomes",
        "arm_outcomes",
        "outcome_metrics",
        "termination_reasons",
        "outcome_distributions",
        "decomposition_distributions",
        "parallelism_distributions",
        "cost_distributions",
        "cost_metrics",
        "indeterminate_trials",
        "stopping_metrics",
        "stopping_distributions",
        "routing_metrics",
        "routing_by_model_and_task",
    ]
    assert set(run.data["documents"]) == {"oracle", "trials", "results"}
    assert all(d["measured"] and len(d["sha256"]) == 64 for d in run.data["documents"].values())


def test_a_broken_trial_set_is_refused_through_its_protocol(trials: Path) -> None:
    results = (trials / "results.jsonl").read_text(encoding="utf-8").splitlines()
    (trials / "results.jsonl").write_text("\n".join(results[1:]) + "\n", encoding="utf-8")
    run = _check(trials)
    assert run.exit_code == 1
    assert run.data["passed"] is False
    assert run.data["verdict"] != "COMPARABLE"


def test_a_missing_document_is_refused(trials: Path) -> None:
    (trials / "results.jsonl").unlink()
    run = _check(trials)
    assert run.exit_code == 1
    [diagnostic] = run.data["diagnostics"]
    assert diagnostic["code"] == "BUNDLE_FILE_MISSING"
    assert diagnostic["location"]["file"].endswith("results.jsonl")


def test_a_document_linked_from_outside_the_bundle_is_refused(trials: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    shutil.move(trials / "results.jsonl", outside)
    os.symlink(outside, trials / "results.jsonl")
    run = _check(trials)
    assert run.exit_code == 1
    assert [d["code"] for d in run.data["diagnostics"]] == ["BUNDLE_PATH_OUTSIDE"]
    assert outside.exists()  # nothing the user gave is touched


def test_a_bundle_for_another_protocol_is_refused() -> None:
    run = _check(TRIALS, "--protocol", "oracle_calibration")
    assert run.exit_code == 1
    [diagnostic] = run.data["diagnostics"]
    assert diagnostic["code"] == "PROTOCOL_MISMATCH"
    where = diagnostic["location"]
    assert where["file"].endswith("rulecheck.yaml")
    assert (where["line"], where["pointer"]) == (1, "/protocol")  # where it names the other


def test_the_oracle_alone_is_checked_by_its_own_protocol(trials: Path) -> None:
    (trials / "rulecheck.yaml").write_text("protocol: oracle_calibration\n", encoding="utf-8")
    run = _check(trials)
    assert run.exit_code == 0, run.stdout
    assert run.data["verdict"] == "TRIALS_MAY_START"
    assert set(run.data["documents"]) == {"oracle"}


def test_a_malformed_protocol_file_is_a_located_refusal(trials: Path) -> None:
    (trials / "rulecheck.yaml").write_text("protocol: [trial_set]\n", encoding="utf-8")
    run = _check(trials)
    assert run.exit_code == 1
    assert [d["code"] for d in run.data["diagnostics"]] == ["PROTOCOL_FILE"]


def test_a_bundle_that_is_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    run = _check(tmp_path / "nothing", "--protocol", "trial_set")
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "FILE_UNREADABLE"


def test_derived_facts_name_the_rules_and_the_shipped_schema_of_the_run() -> None:
    facts = ROOT / "tests" / "data" / "facts"
    run = CliRun(
        ["check", str(facts / "sealed"), "--rules", str(facts / "facts.rules"), "--format", "json"]
    )
    assert run.exit_code == 0, run.stdout
    inventory = CliRun(["inventory", "--rules", str(facts / "facts.rules"), "--format", "json"])
    contract = CliRun(["inventory", "--format", "json"]).data
    row = run.data["tables"][0]["rows"][0]["values"]
    assert row[2] == run.data["ruleset_hash"] == inventory.data["rules"]["ruleset_hash"]
    assert row[3] in str(contract)


def test_a_refused_campaign_says_which_rules_its_admission_gates_lacked(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    shutil.copytree(ROOT / "controls" / "campaign", campaign)
    manifest = campaign / "manifest.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("gpt-5.6-sol", "gpt-5.6-sol-preview", 1), encoding="utf-8")
    run = CliRun(["admit", str(campaign)])
    run.assert_clean()
    assert run.exit_code == 1
    assert "REFUSED: admission gate execution_valid" in run.stdout
    assert "FAIL gate execution_valid: 1 of 1 fail" in run.stdout
    assert "these did not hold: " in run.stdout
    assert "manifest_model_is_pinned" in run.stdout


def test_an_out_inside_the_bundle_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    shutil.copytree(ROOT / "controls" / "campaign", campaign)
    manifest = campaign / "manifest.yaml"
    before = manifest.read_bytes()
    run = CliRun(["check", str(campaign), "--out", str(manifest), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    assert [d["code"] for d in run.data["diagnostics"]] == ["OUTPUT_IS_INPUT"]
    assert manifest.read_bytes() == before


def test_a_fixed_bundle_file_linked_from_outside_is_refused(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    shutil.copytree(ROOT / "controls" / "campaign", campaign)
    outside = tmp_path / "receipts.jsonl"
    shutil.move(campaign / "receipts.jsonl", outside)
    os.symlink(outside, campaign / "receipts.jsonl")
    run = CliRun(["check", str(campaign), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 1
    assert [d["code"] for d in run.data["diagnostics"]] == ["BUNDLE_PATH_OUTSIDE"]


def test_a_lock_cannot_be_frozen_over_a_rule_file(tmp_path: Path) -> None:
    rules = tmp_path / "r.rules"
    rules.write_text('ruleset r version "1"\nconst x = 1\n', encoding="utf-8")
    run = CliRun(["freeze", str(rules), "--out", str(rules), "--format", "json"])
    assert run.exit_code == 2
    assert [d["code"] for d in run.data["diagnostics"]] == ["OUTPUT_IS_INPUT"]
    assert rules.read_text(encoding="utf-8").startswith("ruleset r")


@pytest.mark.parametrize(
    ("args", "target"),
    [
        (["check", "accepted", "--rules", "eval.rules", "--out"], "answer.schema.json"),
        (["check", "accepted", "--rules", "eval.rules", "--receipt"], "answer.schema.json"),
        (["freeze", "eval.rules", "--out"], "answer.schema.json"),
        (
            ["check", "accepted", "--rules", "eval.rules", "--lock", "eval.lock", "--out"],
            "eval.lock",
        ),
        (
            ["evaluate", "answer", "--rules", "eval.rules", "--lock", "eval.lock", "--out"],
            "eval.lock",
        ),
    ],
)
def test_no_output_overwrites_a_schema_the_rules_read_or_the_lock(
    tmp_path: Path, args: list[str], target: str
) -> None:
    folder = tmp_path / "protocol"
    shutil.copytree(ROOT / "tests" / "data" / "protocol", folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    command = [str(folder / a) if (folder / a).exists() else a for a in args]
    run = CliRun([*command, str(folder / target), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    assert [d["code"] for d in run.data["diagnostics"]] == ["OUTPUT_IS_INPUT"]
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_a_document_of_many_bad_records_is_refused_with_a_bounded_list(tmp_path: Path) -> None:
    # each empty record breaks the ratings' schema two dozen times over: listing every
    # violation of 300,000 of them took minutes and gigabytes
    campaign = tmp_path / "campaign"
    shutil.copytree(ROOT / "controls" / "campaign", campaign)
    ratings = campaign / "adjudications.jsonl"
    lines = ratings.read_bytes().count(b"\n")
    with ratings.open("a", encoding="utf-8") as out:
        out.write("{}\n" * 3000)
    run = CliRun(["check", str(campaign), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 1
    found = [d for d in run.data["diagnostics"] if d["code"] == "DOCUMENT_SCHEMA"]
    assert MAX_FINDINGS < len(found) <= MAX_FINDINGS + 50
    last = found[-1]
    assert "the records from this one on are not checked" in last["message"]
    assert last["location"]["file"] == str(ratings) and last["location"]["line"] > lines


@pytest.mark.parametrize(
    "name",
    [
        "rulecheck.yaml",  # it was taken for absent, and the bundle checked as its files said
        "sessions.jsonl",  # it was exit 1, where an unreadable file is exit 2
    ],
)
@pytest.mark.parametrize(
    ("make", "code"), [(os.mkfifo, "INPUT_NOT_REGULAR"), (os.mkdir, "FILE_UNREADABLE")]
)
def test_a_bundle_file_that_cannot_be_read_is_refused_exit_2(
    tmp_path: Path, name: str, make: Any, code: str
) -> None:
    campaign = tmp_path / "campaign"
    shutil.copytree(ROOT / "controls" / "campaign", campaign)
    (campaign / name).unlink()
    make(campaign / name)
    run = CliRun(["check", str(campaign), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    found = [d for d in run.data["diagnostics"] if d["code"] == code]
    assert [d["location"]["file"] for d in found] == [str(campaign / name)]


def test_an_unknown_protocol_named_by_the_bundle_is_located_there(tmp_path: Path) -> None:
    bundle = tmp_path / "experiment"
    shutil.copytree(ROOT / "controls" / "experiment", bundle)
    (bundle / "rulecheck.yaml").write_text("# the run's protocol\nprotocol: exeeriment\n")
    run = CliRun(["check", str(bundle), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    [found] = run.data["diagnostics"]
    assert found["code"] == "USAGE_PROTOCOL"
    assert found["location"] == {
        "file": str(bundle / "rulecheck.yaml"),
        "line": 2,
        "column": 11,  # the name written
        "pointer": "/protocol",
    }
    assert found["hint"] == "did you mean `experiment`?"
