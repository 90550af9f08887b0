"""`rulecheck export` (one file per row of a table) and `rulecheck order` (a seeded order by
hand), through the CLI, on the shipped synthetic campaign and on hand-made bundles."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from campaign_builder import task_order
from cli_run import CliRun

REPO = Path(__file__).resolve().parent.parent
CAMPAIGN = REPO / "controls" / "campaign"
NESTED = REPO / "tests" / "data" / "nested"


def run(*args: str) -> CliRun:
    found = CliRun(list(args))
    found.assert_clean()
    return found


def test_the_blinded_view_is_what_the_ratings_name(tmp_path: Path) -> None:
    out = tmp_path / "blind"
    result = run("export", str(CAMPAIGN), "blind_files", "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    index = json.loads((out / "index.json").read_text())
    assert index["files"] == sorted(index["files"]) == result.data["files"]
    rated = {}
    for line in (CAMPAIGN / "adjudications.jsonl").read_text().splitlines():
        record = json.loads(line)
        rated[record["answer_id"]] = record["answer_sha256"]
    assert {name.removesuffix(".json") for name in index["files"]} == set(rated)
    for name in index["files"]:
        data = (out / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == rated[name.removesuffix(".json")]
        shown = json.loads(data)
        assert set(shown) == {"answer_id", "final"}  # no arm, cost, ledger or score


def test_export_refuses_a_folder_that_holds_files(tmp_path: Path) -> None:
    out = tmp_path / "blind"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = run("export", str(CAMPAIGN), "blind_files", "--out", str(out), "--format", "json")
    assert result.exit_code == 2
    assert result.data["diagnostics"][0]["code"] == "OUTPUT_EXISTS"
    assert (out / "keep.txt").read_text() == "mine"


def test_export_never_writes_into_the_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "campaign"
    shutil.copytree(CAMPAIGN, bundle)
    result = run("export", str(bundle), "blind_files", "--out", str(bundle / "blind"))
    assert result.exit_code == 2
    assert not (bundle / "blind").exists()


def test_export_needs_a_file_and_a_content_column(tmp_path: Path) -> None:
    rules = str(NESTED / "review.rules")
    args = ("export", str(NESTED / "accepted"), "report_checks", "--out", str(tmp_path / "x"))
    result = run(*args, "--rules", rules, "--format", "json")
    assert result.exit_code == 2
    assert result.data["diagnostics"][0]["code"] == "EXPORT_TABLE"


def test_export_names_an_unknown_table(tmp_path: Path) -> None:
    args = ("export", str(CAMPAIGN), "blind_file", "--out", str(tmp_path / "x"), "--format", "json")
    result = run(*args)
    assert result.exit_code == 2
    assert result.data["diagnostics"][0]["code"] == "UNKNOWN_NAME"
    assert "blind_files" in result.data["diagnostics"][0]["hint"]


def test_order_re_derives_the_task_order_of_the_manifest() -> None:
    tasks = ["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8"]
    seed = "741-v1.0-synthetic"
    result = run("order", seed, *tasks, "--label", "task-order", "--format", "json")
    assert result.exit_code == 0
    assert result.data["order"] == task_order(seed, tasks)
    assert result.data["label"] == "task-order"


def test_order_needs_its_label() -> None:
    assert run("order", "seed", "T1", "T2").exit_code == 2


def test_a_campaign_without_rulecheck_yaml_is_found_by_its_files(tmp_path: Path) -> None:
    bundle = tmp_path / "campaign"
    shutil.copytree(CAMPAIGN, bundle)
    (bundle / "rulecheck.yaml").unlink()
    result = run("check", str(bundle), "--format", "json")
    assert result.exit_code == 0, result.stdout
    assert result.data["protocol"]["name"] == "campaign"
    assert result.data["verdict"] == "ADVANCE"
