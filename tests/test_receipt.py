"""The evaluation receipt: `check --receipt FILE` and `verify-receipt FILE BUNDLE`.

Each file of tests/data/receipt/tamper/ changes one field of a receipt that verifies;
verifying must then fail naming exactly that field. Each file of tests/data/receipt/changes/
changes the bundle or the rules instead (or leaves out the lock); verifying must name
exactly the fields it lists.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.pointer import pointer_tokens
from tests.cli_run import REPO, CliRun

DATA = REPO / "tests" / "data"
PROTOCOL = DATA / "protocol"
TAMPER = sorted((DATA / "receipt" / "tamper").glob("*.yaml"))
CHANGES = sorted((DATA / "receipt" / "changes").glob("*.yaml"))


def _workspace(root: Path) -> dict[str, Path]:
    """The model_eval protocol's accepted bundle, rules and lock, copied under `root`."""
    (root / "rules").mkdir()
    for name in ("eval.rules", "answer.schema.json"):
        shutil.copy(PROTOCOL / name, root / "rules" / name)
    shutil.copytree(PROTOCOL / "accepted", root / "bundle")
    shutil.copy(PROTOCOL / "eval.lock", root / "eval.lock")
    return {"bundle": root / "bundle", "rules": root / "rules", "lock": root / "eval.lock"}


def _check(paths: dict[str, Path], receipt: Path) -> CliRun:
    run = CliRun(
        [
            "check",
            str(paths["bundle"]),
            "--rules",
            str(paths["rules"]),
            "--lock",
            str(paths["lock"]),
            "--receipt",
            str(receipt),
        ]
    )
    run.assert_clean()
    assert run.exit_code == 0, run.stdout + run.stderr
    return run


def _verify(receipt: Path, paths: dict[str, Path], lock: bool = True) -> CliRun:
    args = ["verify-receipt", str(receipt), str(paths["bundle"]), "--rules", str(paths["rules"])]
    run = CliRun([*args, *(["--lock", str(paths["lock"])] if lock else []), "--format", "json"])
    run.assert_clean()
    return run


def _mismatched(run: CliRun) -> list[str]:
    diagnostics = run.data["diagnostics"]
    assert all(d["code"] == "RECEIPT_MISMATCH" for d in diagnostics), diagnostics
    return sorted(d["location"]["pointer"] for d in diagnostics)


def _set(data: Any, pointer: str, value: Any) -> None:
    *parents, last = pointer_tokens(pointer)
    for token in parents:
        data = data[token]
    data[last] = value


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Path], Path]:
    root = tmp_path_factory.mktemp("receipt")
    paths = _workspace(root)
    receipt = root / "receipt.json"
    _check(paths, receipt)
    return paths, receipt


def test_receipt_is_canonical_and_binds_what_was_read(made: tuple[dict[str, Path], Path]) -> None:
    paths, receipt = made
    text = receipt.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert sorted(data["inputs"]["bundle"]) == ["answers.jsonl", "plan.yaml", "rulecheck.yaml"]
    assert sorted(data["inputs"]["rules"]) == ["answer.schema.json", "eval.rules"]
    assert data["verdict"] == "MEETS_BAR"
    assert data["outcomes"]["pass_rate_met"] is True
    inventory = CliRun(["inventory", "--rules", str(paths["rules"]), "--format", "json"]).data
    assert data["evaluator"]["grammar"] == inventory["grammar"]
    assert data["evaluator"]["dependencies"] == inventory["dependencies"]
    assert data["ruleset_hash"] == inventory["rules"]["ruleset_hash"]


def test_a_receipt_verifies_where_the_bundle_is_moved(
    made: tuple[dict[str, Path], Path], tmp_path: Path
) -> None:
    paths, receipt = made
    moved = dict(paths, bundle=tmp_path / "elsewhere")
    shutil.copytree(paths["bundle"], moved["bundle"])
    run = _verify(receipt, moved)
    assert run.exit_code == 0, run.stdout
    assert run.data == {"ok": True, "diagnostics": []}


@pytest.mark.parametrize("case", TAMPER, ids=[p.stem for p in TAMPER])
def test_a_tampered_field_is_named(
    case: Path, made: tuple[dict[str, Path], Path], tmp_path: Path
) -> None:
    paths, receipt = made
    spec = yaml.safe_load(case.read_text(encoding="utf-8"))
    data = json.loads(receipt.read_text(encoding="utf-8"))
    _set(data, spec["set"], spec["value"])
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    run = _verify(tampered, paths)
    assert run.exit_code == 1, run.stdout
    assert _mismatched(run) == [spec["set"]]
    located = run.data["diagnostics"][0]["location"]
    assert located["file"] == str(tampered) and located["line"] is not None


@pytest.mark.parametrize("case", CHANGES, ids=[p.stem for p in CHANGES])
def test_a_changed_input_is_named(case: Path, tmp_path: Path) -> None:
    spec = yaml.safe_load(case.read_text(encoding="utf-8"))
    paths = _workspace(tmp_path)
    receipt = tmp_path / "receipt.json"
    _check(paths, receipt)
    edit = spec.get("edit")
    if edit is not None:
        target = tmp_path / edit["file"]
        text = target.read_text(encoding="utf-8")
        assert text.count(edit["old"]) == 1, f"{case.name}: the edit's text is not unique"
        target.write_text(text.replace(edit["old"], edit["new"]), encoding="utf-8")
    run = _verify(receipt, paths, lock=spec.get("lock", True))
    expected = sorted(spec["expect"])
    assert run.exit_code == (1 if expected else 0), run.stdout
    assert _mismatched(run) == expected


def test_a_refused_bundle_names_the_changed_file(
    made: tuple[dict[str, Path], Path], tmp_path: Path
) -> None:
    paths, receipt = made
    broken = dict(paths, bundle=tmp_path / "broken")
    shutil.copytree(paths["bundle"], broken["bundle"])
    with (broken["bundle"] / "answers.jsonl").open("a", encoding="utf-8") as stream:
        stream.write('{"question": "Q6"}\n')  # breaks the schema: no verdict at all
    run = _verify(receipt, broken)
    assert run.exit_code == 1
    codes = [d["code"] for d in run.data["diagnostics"]]
    assert "DOCUMENT_SCHEMA" in codes
    pointers = [
        d["location"]["pointer"] for d in run.data["diagnostics"] if d["code"] == "RECEIPT_MISMATCH"
    ]
    assert sorted(pointers) == ["", "/inputs/bundle/answers.jsonl"]


def test_a_file_that_is_no_receipt_is_refused(
    made: tuple[dict[str, Path], Path], tmp_path: Path
) -> None:
    paths, _ = made
    other = tmp_path / "other.json"
    other.write_text('{"receipt": 2}\n', encoding="utf-8")
    run = _verify(other, paths)
    assert run.exit_code == 1
    assert [d["code"] for d in run.data["diagnostics"]] == ["RECEIPT_MALFORMED"]
    missing = _verify(tmp_path / "absent.json", paths)
    assert missing.exit_code == 2


def test_the_shipped_campaign_receipt_verifies(tmp_path: Path) -> None:
    receipt = tmp_path / "campaign.receipt.json"
    run = CliRun(["check", str(REPO / "controls" / "campaign"), "--receipt", str(receipt)])
    assert run.exit_code == 0, run.stdout + run.stderr
    data = json.loads(receipt.read_text(encoding="utf-8"))
    manifest = CliRun(["check", str(REPO / "controls" / "campaign"), "--format", "json"]).data
    assert data["manifest_sha256"] == manifest["documents"]["manifest"]["sha256"]
    assert data["verdict"] == manifest["verdict"]
    shipped = {"bundle": REPO / "controls" / "campaign", "rules": REPO / "rules"}
    verified = _verify(receipt, shipped, lock=False)
    assert verified.exit_code == 0, verified.stdout


def test_a_receipt_is_never_written_into_the_bundle(made: tuple[dict[str, Path], Path]) -> None:
    paths, _ = made
    inside = paths["bundle"] / "receipt.json"
    run = CliRun(
        ["check", str(paths["bundle"]), "--rules", str(paths["rules"]), "--receipt", str(inside)]
    )
    assert run.exit_code == 2
    assert "OUTPUT_IS_INPUT" in run.stderr and "--receipt" in run.stderr
    assert not inside.exists()
