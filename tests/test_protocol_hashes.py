"""A protocol's hash covers what it binds: its documents (in any order), their schemas'
bytes and its entry points; layout and document order do not change it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_run import CliRun

PROTOCOL = Path(__file__).resolve().parent / "data" / "protocol"


def _protocol_hash(folder: Path) -> str:
    run = CliRun(["hash", str(folder / "eval.rules"), "--format", "json"])
    assert run.exit_code == 0, run.stdout + run.stderr
    [entry] = [d for d in run.data["declarations"] if d["kind"] == "protocol"]
    return str(entry["hash"])


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "protocol"
    shutil.copytree(PROTOCOL, target)
    return target


def _edit(folder: Path, old: str, new: str) -> None:
    path = folder / "eval.rules"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_document_order_and_layout_do_not_change_the_hash(copy: Path) -> None:
    before = _protocol_hash(copy)
    plan = '  document plan path "plan.yaml" format yaml measured\n'
    _edit(copy, plan, "")
    _edit(
        copy,
        "  admission admitted\n",
        plan.replace("  document", "  document  ") + "  admission admitted\n",
    )
    assert _protocol_hash(copy) == before


def test_a_schema_byte_changes_the_hash(copy: Path) -> None:
    before = _protocol_hash(copy)
    schema = copy / "answer.schema.json"
    schema.write_text(schema.read_text(encoding="utf-8").replace('"minimum": 0', '"minimum": 1'))
    assert _protocol_hash(copy) != before


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('path "plan.yaml"', 'path "plans.yaml"'),
        ("format jsonl", "format json"),
        (
            'answers.jsonl" format jsonl schema "answer.schema.json" measured',
            'answers.jsonl" format jsonl schema "answer.schema.json"',
        ),
        ("  verdict verdict\n", ""),
        ("  report answers", ""),
    ],
)
def test_each_semantic_edit_changes_the_hash(copy: Path, old: str, new: str) -> None:
    before = _protocol_hash(copy)
    _edit(copy, old, new)
    assert _protocol_hash(copy) != before


def test_an_edit_of_a_rule_it_reports_changes_the_hash(copy: Path) -> None:
    before = _protocol_hash(copy)
    _edit(copy, "const min_pass_rate = 80 %", "const min_pass_rate = 81 %")
    assert _protocol_hash(copy) != before
