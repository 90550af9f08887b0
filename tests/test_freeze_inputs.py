"""`rulecheck freeze-inputs BUNDLE`: the manifest's measured-input hashes, computed before
the run, and the manifest's sha256 to publish; refused once the run has started."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent
CAMPAIGN = ROOT / "controls" / "campaign"
RUN_RECORDS = ("sessions.jsonl", "requests.jsonl", "receipts.jsonl", "adjudications.jsonl")


def _before_the_run(tmp_path: Path) -> Path:
    """The shipped campaign as it stood before its first session: no run records, and a
    manifest whose inputs name their files but hold no hash yet."""
    bundle = Path(shutil.copytree(CAMPAIGN, tmp_path / "campaign"))
    for name in (*RUN_RECORDS, "adjudication_manifest.yaml", "seal.json"):
        (bundle / name).unlink()
    shutil.rmtree(bundle / "answers")
    manifest = yaml.safe_load((bundle / "manifest.yaml").read_text(encoding="utf-8"))
    for entry in manifest["inputs"]:
        entry["sha256"] = None
    text = yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True)
    (bundle / "manifest.yaml").write_text(text, encoding="utf-8")
    return bundle


def test_freezing_gives_the_shipped_manifest_and_its_sha256(tmp_path: Path) -> None:
    bundle = _before_the_run(tmp_path)
    run = CliRun(["freeze-inputs", str(bundle), "--format", "json"])
    assert run.exit_code == 0, run.stderr
    frozen = (bundle / "manifest.yaml").read_bytes()
    assert frozen == (CAMPAIGN / "manifest.yaml").read_bytes()
    assert run.data["sha256"] == hashlib.sha256(frozen).hexdigest()
    assert run.data["pointer"] == "/inputs"
    assert run.data["inputs"] == len(yaml.safe_load(frozen)["inputs"])


def test_a_bundle_whose_run_has_started_is_not_refrozen(tmp_path: Path) -> None:
    bundle = Path(shutil.copytree(CAMPAIGN, tmp_path / "campaign"))
    before = (bundle / "manifest.yaml").read_bytes()
    run = CliRun(["freeze-inputs", str(bundle), "--format", "json"])
    assert run.exit_code == 1
    assert run.data["diagnostics"][0]["code"] == "FREEZE_AFTER_RUN"
    assert run.data["diagnostics"][0]["location"]["file"].endswith("requests.jsonl")
    assert (bundle / "manifest.yaml").read_bytes() == before


def test_an_input_that_is_not_there_is_frozen_as_missing_and_then_refused(tmp_path: Path) -> None:
    bundle = _before_the_run(tmp_path)
    (bundle / "permission_policy.txt").unlink()
    assert CliRun(["freeze-inputs", str(bundle)]).exit_code == 0
    manifest = yaml.safe_load((bundle / "manifest.yaml").read_text(encoding="utf-8"))
    [entry] = [i for i in manifest["inputs"] if i["path"] == "permission_policy.txt"]
    assert entry["sha256"] is None  # said as it is; the schema refuses it at `check`
    run = CliRun(["check", str(bundle), "--format", "json"])
    assert run.exit_code == 1


@pytest.mark.parametrize(
    ("clause", "code"),
    [
        ('freeze record_files into nowhere at "/rows" before events', "UNKNOWN_NAME"),
        ('freeze record_files into events at "/rows" before events', "PROTOCOL_CLAUSE"),
        ('freeze record_files into seal at "rows" before events', "INVALID_POINTER"),
        ('freeze record_files into seal at "/rows/" before events', "INVALID_POINTER"),
        ('freeze record_files into seal at "/" before events', "INVALID_POINTER"),
    ],
)
def test_lint_checks_the_freeze_clause(clause: str, code: str, tmp_path: Path) -> None:
    text = (ROOT / "tests" / "data" / "seal" / "run.rules").read_text(encoding="utf-8")
    rules = tmp_path / "run.rules"
    marker = "  seal record_files into seal\n"
    rules.write_text(text.replace(marker, marker + f"  {clause}\n", 1), encoding="utf-8")
    run = CliRun(["lint", str(rules), "--format", "json"])
    assert run.exit_code == 1
    assert code in {d["code"] for d in run.data["diagnostics"] if d["severity"] == "error"}
