"""`rulecheck seal BUNDLE`: what it writes, what it prints, and what it refuses to touch.

The read-only behaviours are data cases (tests/data/seal/cases); these runs write, so each
works on a copy of a fixture bundle.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.cli_run import CliRun

DATA = Path(__file__).resolve().parent / "data" / "seal"
RULES = str(DATA / "run.rules")


def _copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(DATA / name, tmp_path / name))


def test_seal_writes_the_table_and_prints_its_sha256(tmp_path: Path) -> None:
    bundle = _copy("unsealed", tmp_path)
    run = CliRun(["seal", str(bundle), "--rules", RULES, "--format", "json"])
    assert run.exit_code == 0, run.stderr
    written = (bundle / "seal.json").read_bytes()
    assert run.data["sha256"] == hashlib.sha256(written).hexdigest()
    assert written == (DATA / "sealed" / "seal.json").read_bytes()
    rows = json.loads(written)
    assert [row["path"] for row in rows] == ["events.jsonl", "outputs/e1.txt", "outputs/e2.txt"]
    assert CliRun(["check", str(bundle), "--rules", RULES]).exit_code == 0


def test_force_reseals_after_a_deliberate_change(tmp_path: Path) -> None:
    bundle = _copy("edited", tmp_path)
    before = (bundle / "seal.json").read_bytes()
    assert CliRun(["seal", str(bundle), "--rules", RULES]).exit_code == 1
    assert (bundle / "seal.json").read_bytes() == before  # refused: nothing written
    run = CliRun(["seal", str(bundle), "--rules", RULES, "--force"])
    assert run.exit_code == 0
    assert (bundle / "seal.json").read_bytes() != before
    assert "sha256" in run.stdout
    assert CliRun(["check", str(bundle), "--rules", RULES]).exit_code == 0


def test_a_seal_that_links_out_of_the_bundle_is_never_written(tmp_path: Path) -> None:
    bundle = _copy("unsealed", tmp_path)
    outside = tmp_path / "outside.json"
    (bundle / "seal.json").symlink_to(outside)
    run = CliRun(["seal", str(bundle), "--rules", RULES, "--force", "--format", "json"])
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "BUNDLE_PATH_OUTSIDE"
    assert not outside.exists()


@pytest.mark.parametrize(
    ("clause", "code"),
    [
        ("seal record_files into missing", "UNKNOWN_NAME"),
        ("seal sealed into seal", "TYPE_MISMATCH"),
        ("seal record_files into events", "PROTOCOL_CLAUSE"),
    ],
)
def test_lint_checks_the_seal_clause(clause: str, code: str, tmp_path: Path) -> None:
    text = (DATA / "run.rules").read_text(encoding="utf-8")
    rules = tmp_path / "run.rules"
    rules.write_text(text.replace("seal record_files into seal", clause, 1), encoding="utf-8")
    run = CliRun(["lint", str(rules), "--format", "json"])
    assert run.exit_code == 1
    assert code in {d["code"] for d in run.data["diagnostics"] if d["severity"] == "error"}
