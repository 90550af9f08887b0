"""`make bench`'s document: the structure of a `--quick` run, never its timings.

The quick run takes a few minutes (every section at small sizes); the other tests here
call `tests/bench/run.py`'s table and notes directly and take well under a second.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "tests" / "bench"


def _load(name: str) -> ModuleType:
    """A module of tests/bench, loaded by path (tests/bench is not a package)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


RUN = _load("run")
ANSWERS = _load("answers_bench")


def _target_rows(document: str) -> dict[str, list[str]]:
    """The cells of each row of the targets table, keyed by target id."""
    table = document.split("## Issue 12's targets", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells
    return rows


def test_quick_bench_writes_the_targets_table_with_every_row(tmp_path: Path) -> None:
    out = tmp_path / "performance.md"
    subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    document = out.read_text(encoding="utf-8")
    header = document.split("## Issue 12's targets", 1)[0]
    for label in ("- date:", "- commit:", "- OS:", "- CPU:", "- RAM:", "- Python:", "--quick"):
        assert label in header
    for name in RUN.SECTIONS:  # the load average around every section
        assert f"\n| {name} | " in header
    rows = _target_rows(document)
    assert list(rows) == [target.id for target in RUN.TARGETS]
    for target_id, cells in rows.items():
        assert len(cells) == 8, (target_id, cells)
        assert cells[2] and cells[3] and cells[4].endswith("×"), (target_id, cells)
        assert cells[7] in {"yes", "**no**"}, (target_id, cells)
    missed = [target_id for target_id, cells in rows.items() if cells[7] == "**no**"]
    for target_id in missed:
        assert f"- `{target_id}`: " in document
    assert document.index("## Issue 12's targets") < document.index("## rules:")


def _figure(holds: bool) -> object:
    return RUN.Figure("1 s", "floor: 0.5 s", 2.0, "", holds)


def test_a_reason_is_printed_only_for_a_missed_target() -> None:
    bench = RUN.Bench(RUN.QUICK)
    bench.record("lint_rules", _figure(holds=False))
    bench.record("lint_hash", _figure(holds=True))
    notes = {"lint_rules": "imports networkx", "lint_hash": "the parse"}
    table = RUN.targets_table(bench, notes)
    assert "- `lint_rules`: imports networkx" in table
    assert "the parse" not in table
    assert "| `check_cpu` |" in table and "not measured" in table


def test_a_missed_target_without_a_reason_says_so() -> None:
    bench = RUN.Bench(RUN.QUICK)
    bench.record("jobs2", _figure(holds=False))
    assert "- `jobs2`: no reason recorded yet" in RUN.targets_table(bench, {})


def test_a_target_is_recorded_once_and_only_if_it_exists() -> None:
    bench = RUN.Bench(RUN.QUICK)
    bench.record("jobs2", _figure(holds=True))
    with pytest.raises(ValueError, match="twice"):
        bench.record("jobs2", _figure(holds=True))
    with pytest.raises(ValueError, match="no target"):
        bench.record("jobs3", _figure(holds=True))


def test_the_shipped_notes_name_only_known_targets(tmp_path: Path) -> None:
    assert set(RUN.load_notes()) <= {target.id for target in RUN.TARGETS}
    unknown = tmp_path / "notes.yaml"
    unknown.write_text("answers_huge: slow\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="answers_huge"):
        RUN.load_notes(unknown)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="mapping"):
        RUN.load_notes(wrong)


def test_a_child_reports_its_own_peak_not_the_benchmarks() -> None:
    ballast = bytearray(300 * 2**20)  # this process's high-water mark above 300 MiB
    ballast[::4096] = b"\1" * len(ballast[::4096])
    small = ANSWERS.run_child([sys.executable, "-c", "pass"], ROOT)
    big = ANSWERS.run_child(
        [sys.executable, "-c", "b = bytearray(200 * 2**20); b[::4096] = b'1' * len(b[::4096])"],
        ROOT,
    )
    del ballast
    assert small.exit_code == 0 and small.max_rss < 100 * 2**20
    assert big.exit_code == 0 and big.max_rss > 200 * 2**20


def test_a_process_left_behind_is_counted_and_ended() -> None:
    run = ANSWERS.run_child(["sh", "-c", "sleep 60 & echo started"], ROOT)
    assert run.exit_code == 0 and run.stdout == b"started\n"
    assert run.left_behind == 1
    clean = ANSWERS.run_child(["sh", "-c", "sleep 0"], ROOT)
    assert clean.left_behind == 0


def _child(cpu: float, wall: float, stdout: bytes = b"{}", left: int = 0) -> object:
    return ANSWERS.ChildRun(["rulecheck"], 0, wall, cpu, 100, 100, stdout, b"", left)


def test_rounds_give_each_time_its_least_and_count_every_process_left() -> None:
    runs = [_child(5.0, 4.0, left=1), _child(4.5, 6.0), _child(4.8, 3.5, left=2)]
    best = ANSWERS.least_child(runs)
    assert (best.cpu, best.wall, best.left_behind) == (4.5, 3.5, 3)
    references = [ANSWERS.ReferenceRun(10, {}, 2.0, 3.0), ANSWERS.ReferenceRun(10, {}, 2.5, 2.8)]
    assert ANSWERS.least_reference(references) == ANSWERS.ReferenceRun(10, {}, 2.0, 2.8)


def test_rounds_whose_outputs_differ_are_an_error() -> None:
    with pytest.raises(RuntimeError, match="different outputs"):
        ANSWERS.least_child([_child(1.0, 1.0, b"a"), _child(1.0, 1.0, b"b")])


def test_rule_sizes_are_timed_in_rounds_each_step_once_per_round() -> None:
    small, large = RUN._measure_rules((200, 300), 2)
    assert small.declarations < large.declarations
    for run in (small, large):
        for step in ("lint", "lint_cached", "hashing", "parse", "check", "floor"):
            times = getattr(run, step)
            assert len(times.cpu) == len(times.wall) == 2, step
        assert len(run.hash_process.cpu) == len(run.hash_process_cached.cpu) == 1


def test_instruction_counts_give_each_checker_its_per_answer_and_fixed_cost() -> None:
    counts = ANSWERS.InstructionCounts((200, 600), (3_000, 7_000), (1_000, 3_000))
    assert counts.per_answer(counts.rulecheck) == 10
    assert counts.fixed(counts.rulecheck) == 1_000
    assert counts.per_answer(counts.reference) == 5
    assert counts.ratio(100) == (1_000 + 100 * 10) / (100 * 5)
    table = "\n".join(ANSWERS._instruction_lines(counts, [100, 1_000]))
    assert "| per answer, rulecheck / reference | 2.00× |" in table
    assert "| rulecheck `--jobs 1` | 0.00 M | 0 M | 4.00× | 2.20× |" in table


def test_instructions_not_counted_are_said_to_be(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ANSWERS.shutil, "which", lambda name: None)
    assert ANSWERS.count_instructions() is None
    assert "not counted: valgrind is not installed" in "\n".join(
        ANSWERS._instruction_lines(None, [100])
    )
