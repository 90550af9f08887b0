"""Derived tables computed together, node by node (`gates.run_tables`): each gives the rows
it gives alone, and a file that an earlier table's check parsed is not read or parsed
again by a later table about the same node (`tests/data/paced/paced.rules`)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from engine.bundle import documents
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate import facts, gates
from tests.cli_run import CliRun

RULES = Path(__file__).resolve().parent / "data" / "paced" / "paced.rules"
# More reports than the file layer keeps (64 files read, 16 parsed), the nested check 4:
# read one after the other, every report would be let go before the view asked again.
_REPORTS = 80
_SEED = "seed-7"


def _bundle(root: Path, empty_summary: int | None = None, reports: int = _REPORTS) -> Path:
    (root / "reports").mkdir(parents=True)
    (root / "settings.yaml").write_text(f"seed: {_SEED}\n", encoding="utf-8")
    lines = []
    for number in range(reports):
        summary = "" if number == empty_summary else f"summary {number}"
        report = {"summary": summary, "detail": list(range(number))}
        (root / "reports" / f"r{number}.json").write_text(json.dumps(report), encoding="utf-8")
        lines.append(json.dumps({"id": f"S{number}", "report": f"reports/r{number}.json"}))
    (root / "submissions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "rulecheck.yaml").write_text("protocol: pack\n", encoding="utf-8")
    return root


def _digest(number: int, summary: str) -> str:
    value = {"seed": _SEED, "summary": summary}
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode() + b"\n").hexdigest()


def _check(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[CliRun, Counter[str]]:
    """The CLI's check of `root`, and how many times each file was read or parsed (as
    `read:NAME` and `parsed:NAME`; `parsed again`, of any file)."""
    seen: Counter[str] = Counter()

    def counting(module: object, name: str, what: str) -> None:
        function = getattr(module, name)

        def counted(data: object, *args: object, **kwargs: object) -> object:
            shown = args[0] if what == "parsed" and args else data
            seen[what if what == "parsed again" else f"{what}:{Path(str(shown)).name}"] += 1
            return function(data, *args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    counting(facts, "read_input", "read")
    counting(documents, "loads_strict", "parsed")  # a nested check's document
    counting(facts, "loads_strict", "parsed")  # `json_at`'s file, first parsed there
    counting(facts, "loads_verified", "parsed again")  # its bytes known to be strict JSON
    run = CliRun(["check", str(root), "--rules", str(RULES), "--format", "json"])
    run.assert_clean()
    return run, seen


def test_each_report_is_read_once_for_its_check_and_its_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, reads = _check(_bundle(tmp_path / "bundle"), monkeypatch)
    assert run.exit_code == 0, run.stdout
    assert run.data["admitted"] is True
    rows = run.data["tables"][0]["rows"]
    assert [row["values"] for row in rows] == [
        [f"S{n}", _digest(n, f"summary {n}")] for n in range(_REPORTS)
    ]
    assert {name: reads[name] for name in reads if ":r" in name} == {
        f"{what}:r{n}.json": 1 for n in range(_REPORTS) for what in ("read", "parsed")
    }
    assert reads["parsed again"] == 0


def test_a_refused_report_is_still_hashed_in_the_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, reads = _check(_bundle(tmp_path / "bundle", empty_summary=30), monkeypatch)
    assert run.exit_code == 1, run.stdout
    assert run.data["admitted"] is False
    [violation] = run.data["violations"]
    assert (violation["code"], violation["ids"]) == ("REPORT_FAILED", ["S30"])
    assert run.data["tables"][0]["rows"][30]["values"] == ["S30", _digest(30, "")]
    assert max(reads[f"read:r{n}.json"] for n in range(_REPORTS)) == 1


def test_tables_computed_together_give_the_rows_they_give_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _bundle(tmp_path / "bundle", empty_summary=3)
    together, _reads = _check(root, monkeypatch)

    def one_after_the_other(
        tables: list[tuple[gates.CompiledTable, gates.PacedRun]], ctx: gates.Context
    ) -> list[gates.TableResult]:
        return [gates.run_table(table, ctx) for table, _paced in tables]

    monkeypatch.setattr("engine.evaluate.protocol.run_tables", one_after_the_other)
    alone, reads = _check(root, monkeypatch)
    assert together.stdout == alone.stdout
    # the view read and parsed each report again: what computing them together spares
    assert reads["read:r3.json"] == 2
    assert reads["parsed again"] == _REPORTS


def test_a_file_changed_while_tables_run_together_stops_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error that stops the evaluation (here `INPUT_CHANGED`, raised for the 31st
    report as the view reads it) leaves the tables run together as it leaves one table:
    exit 2, the typed diagnostic, no traceback."""
    root = _bundle(tmp_path / "bundle")
    json_document = facts.BundleFiles.json

    def changed(self: facts.BundleFiles, relative: str) -> object:
        if relative == "reports/r30.json":
            where = Location(str(root / relative))
            diagnostic = Diagnostic("INPUT_CHANGED", "changed while it was checked", where)
            raise RulecheckError([diagnostic], ExitCode.USAGE)
        return json_document(self, relative)

    monkeypatch.setattr(facts.BundleFiles, "json", changed)
    run = CliRun(["check", str(root), "--rules", str(RULES), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2, run.stdout
    assert [d["code"] for d in run.data["diagnostics"]] == ["INPUT_CHANGED"]


@pytest.mark.parametrize(("strict", "exit_code"), [([], 0), (["--strict"], 1)])
def test_no_submission_binds_nothing_and_says_so(
    tmp_path: Path, strict: list[str], exit_code: int
) -> None:
    """No submission: both tables computed together are empty and the link over their
    rows says it binds nothing (`VACUOUS`), which `--strict` refuses; never a silent pass."""
    root = _bundle(tmp_path / "bundle", reports=0)
    run = CliRun(["check", str(root), "--rules", str(RULES), "--format", "json", *strict])
    run.assert_clean()
    assert run.exit_code == exit_code, run.stdout
    assert run.data["tables"][0]["rows"] == []
    assert [(w["code"], w["rule"]) for w in run.data["warnings"]] == [("VACUOUS", "reports_pass")]
