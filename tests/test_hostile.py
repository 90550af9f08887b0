"""Hostile input through the CLI: every case ends quickly with a typed, located code and
exit 1 or 2, never `INTERNAL_ERROR`, a traceback or a changed input.

The corpus is `tests/data/hostile/`: each file is named `CODE--what.ext`, CODE being the
code its command must report. `.rules` files go through `lint` (and `fmt --check` and
`hash`, which must not crash); `.json`, `.jsonl` and `.yaml` files replace one document of
the `shop` protocol (`tests/data/evaluate/`) in `rulecheck evaluate`. Cases that cannot be
files (FIFOs, devices, over-long paths, huge files) are made here.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.limits import MAX_FILE_BYTES
from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "data" / "hostile"
SHOP = ROOT / "tests" / "data" / "evaluate"
_ROLE = {".yaml": "catalogue", ".jsonl": "orders", ".json": "policy"}
_SHOP_INPUTS = {"catalogue": "catalogue.yaml", "orders": "orders.jsonl", "policy": "policy.json"}
CASES = sorted(p for p in HOSTILE.iterdir() if "--" in p.name)


def _codes(run: CliRun) -> set[str]:
    data = run.data if isinstance(run.data, dict) else {}
    return {d["code"] for d in data.get("diagnostics", [])}


def _typed(run: CliRun, code: str | None) -> None:
    """Exit 1 or 2 with `code` (when given), never INTERNAL_ERROR or a traceback."""
    run.assert_clean()
    assert "INTERNAL_ERROR" not in run.stdout + run.stderr, run.stdout + run.stderr
    assert run.exit_code in (1, 2), run.stdout + run.stderr
    if code is not None:
        assert code in _codes(run), run.stdout
        located = [d for d in run.data["diagnostics"] if d["code"] == code]
        assert all(d.get("location", {}).get("file") for d in located), located


def evaluate_args(role: str, path: Path) -> list[str]:
    """`rulecheck evaluate shop` with document `role` read from `path`."""
    args = ["evaluate", "shop", "--rules", str(SHOP / "shop.rules"), "--format", "json"]
    for name, file in _SHOP_INPUTS.items():
        args += ["--input", f"{name}={path if name == role else SHOP / file}"]
    return args


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_each_hostile_file_gets_its_typed_code(case: Path) -> None:
    code = case.name.split("--", 1)[0]
    before = _digest(case)
    started = time.monotonic()
    if case.suffix == ".rules":
        _typed(CliRun(["lint", "--format", "json", str(case)]), code)
        for command in (["fmt", "--check"], ["hash"]):
            run = CliRun([*command, "--format", "json", str(case)])
            run.assert_clean()
            assert "INTERNAL_ERROR" not in run.stdout + run.stderr, run.stdout
    else:
        _typed(CliRun(evaluate_args(_ROLE[case.suffix], case)), code)
    assert time.monotonic() - started < 10
    assert _digest(case) == before, "the input was modified"


def test_fmt_is_idempotent_on_every_line_ending(tmp_path: Path) -> None:
    texts = {
        "cr": 'ruleset r version "1"\r# note\rconst a = 1 # trailing\r\rconst b = a\r',
        "crlf": 'ruleset r version "1"\r\n# note\r\nconst a = 1\r\nconst b = a\r\n',
        "lone_cr_in_comment": 'ruleset r version "1"\n# note\rconst a = 1\nconst b = a\n',
        "mixed": 'ruleset r version "1"\r\n\rconst a = 1\n\r\nconst b = a',
    }
    for name, text in texts.items():
        path = tmp_path / f"{name}.rules"
        path.write_bytes(text.encode("utf-8"))
        first = CliRun(["fmt", str(path)])
        assert first.exit_code == 0, first.stdout + first.stderr
        once = path.read_bytes()
        assert b"\r" not in once
        assert b"const b = a" in once, name  # nothing was swallowed by a comment
        second = CliRun(["fmt", "--check", str(path)])
        assert second.exit_code == 0, (name, second.stdout)
        assert path.read_bytes() == once
        lint = CliRun(["lint", "--format", "json", str(path)])
        assert lint.exit_code == 0 and "UNUSED_CONST" in _codes(lint)


def test_cr_only_file_declares_every_rule(tmp_path: Path) -> None:
    path = tmp_path / "cr.rules"
    path.write_bytes(b'ruleset r version "1"\r# note\rconst a = 1\rconst b = a\r')
    run = CliRun(["lint", "--format", "json", str(path)])
    assert run.exit_code == 0
    lines = sorted(d["location"]["line"] for d in run.data["diagnostics"])
    assert lines == [4]  # `b` is unused, at its own line 4


# ---- inputs that cannot be files in the repository ----------------------------------------


def _rulecheck(*args: str) -> subprocess.CompletedProcess[str]:
    """A real process, for inputs that would block one (a FIFO)."""
    command = [str(Path(sys.executable).with_name("rulecheck")), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=10, cwd=ROOT)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("suffix", [".rules", ".json", ".jsonl", ".yaml"])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, suffix: str) -> None:
    fifo = tmp_path / f"input{suffix}"
    os.mkfifo(fifo)
    if suffix == ".rules":
        done = _rulecheck("lint", "--format", "json", str(fifo))
    else:
        done = _rulecheck(*evaluate_args(_ROLE[suffix], fifo))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "INPUT_NOT_REGULAR" in done.stdout
    assert "Traceback" not in done.stderr and "INTERNAL_ERROR" not in done.stdout


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_device_is_refused(tmp_path: Path, suffix: str) -> None:
    link = tmp_path / f"zero{suffix}"
    link.symlink_to("/dev/zero")
    _typed(CliRun(evaluate_args(_ROLE[suffix], link)), "INPUT_NOT_REGULAR")
    _typed(CliRun(["lint", "--format", "json", "/dev/zero"]), None)


@pytest.mark.parametrize("suffix", [".rules", ".json", ".jsonl", ".yaml"])
def test_a_path_too_long_is_unreadable_not_a_crash(tmp_path: Path, suffix: str) -> None:
    long_path = tmp_path / ("x" * 5000 + suffix)
    if suffix == ".rules":
        run = CliRun(["lint", "--format", "json", str(long_path)])
    else:
        run = CliRun(evaluate_args(_ROLE[suffix], long_path))
    _typed(run, "FILE_UNREADABLE")
    messages = [d["message"] for d in run.data["diagnostics"]]
    assert all(len(message) < 500 for message in messages)  # the path is shown cut short


@pytest.mark.parametrize("suffix", [".rules", ".json", ".jsonl", ".yaml"])
def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path, suffix: str) -> None:
    big = tmp_path / f"big{suffix}"
    with big.open("wb") as stream:  # sparse: no disk space, and never read
        stream.truncate(MAX_FILE_BYTES + 1)
    if suffix == ".rules":
        run = CliRun(["lint", "--format", "json", str(big)])
    else:
        run = CliRun(evaluate_args(_ROLE[suffix], big))
    _typed(run, "INPUT_TOO_LARGE")


def test_corpus_cases_are_named_by_a_catalogued_code() -> None:
    from engine.catalog import catalog_codes

    assert CASES
    for case in CASES:
        assert case.name.split("--", 1)[0] in catalog_codes(), case.name


# ---- deep values where a schema or a rule compares them ------------------------------------

PROTOCOL = ROOT / "tests" / "data" / "protocol"


@pytest.fixture
def eval_bundle(tmp_path: Path) -> Path:
    """The accepted `model_eval` bundle, its schema checking `model` against an enum."""
    copy = tmp_path / "protocol"
    shutil.copytree(PROTOCOL, copy)
    schema = json.loads((copy / "answer.schema.json").read_text(encoding="utf-8"))
    schema["properties"]["model"] = {"enum": ["acme-7b-2026-10", [[1]]]}
    (copy / "answer.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return copy


def _deep_answer(levels: int) -> str:
    model = "[" * levels + "]" * levels
    return f'{{"question": "Q1", "model": {model}, "tokens": 1, "passed": true}}\n'


def _check_accepted(eval_bundle: Path) -> CliRun:
    """`rulecheck check` of the copied accepted bundle under its own rules, as JSON."""
    accepted, rules = eval_bundle / "accepted", eval_bundle / "eval.rules"
    return CliRun(["check", str(accepted), "--rules", str(rules), "--format", "json"])


@pytest.mark.parametrize("levels", [490, 5_000])
def test_deep_json_in_an_enum_checked_field_is_too_deep(eval_bundle: Path, levels: int) -> None:
    answers = eval_bundle / "accepted" / "answers.jsonl"
    answers.write_text(_deep_answer(levels), encoding="utf-8")
    run = _check_accepted(eval_bundle)
    _typed(run, "INPUT_TOO_DEEP")
    [diagnostic] = [d for d in run.data["diagnostics"] if d["code"] == "INPUT_TOO_DEEP"]
    assert diagnostic["location"]["line"] == 1


def test_json_at_the_nesting_limit_is_checked_not_crashed(eval_bundle: Path) -> None:
    answers = eval_bundle / "accepted" / "answers.jsonl"
    answers.write_text(_deep_answer(199), encoding="utf-8")
    run = _check_accepted(eval_bundle)
    _typed(run, "DOCUMENT_SCHEMA")


def test_a_protocol_file_linked_from_outside_the_bundle_is_refused(
    eval_bundle: Path, tmp_path: Path
) -> None:
    bundle = eval_bundle / "accepted"
    outside = tmp_path / "elsewhere.yaml"
    outside.write_bytes((bundle / "rulecheck.yaml").read_bytes())
    (bundle / "rulecheck.yaml").unlink()
    (bundle / "rulecheck.yaml").symlink_to(outside)
    run = CliRun(
        ["check", str(bundle), "--rules", str(eval_bundle / "eval.rules"), "--format", "json"]
    )
    _typed(run, "BUNDLE_PATH_OUTSIDE")


def test_text_reports_of_hostile_rule_files_end(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.rules"
    os.mkfifo(fifo)
    done = _rulecheck("lint", str(fifo))
    assert done.returncode == 2 and "INPUT_NOT_REGULAR" in done.stderr
    cr = tmp_path / "cr.rules"
    cr.write_bytes(b'ruleset r version "1"\r# c\rconst a = missing\r')
    run = CliRun(["lint", str(cr)])
    assert run.exit_code == 1
    assert "    3 | const a = missing" in run.stderr + run.stdout


def test_a_json_lines_document_over_the_record_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.bundle.documents.MAX_RECORDS", 3)
    orders = tmp_path / "orders.jsonl"
    orders.write_bytes((SHOP / "orders.jsonl").read_bytes() * 4)
    run = CliRun(evaluate_args("orders", orders))
    _typed(run, "INPUT_TOO_MANY_RECORDS")


def test_a_yaml_string_over_the_limit_is_refused(tmp_path: Path) -> None:
    catalogue = tmp_path / "catalogue.yaml"
    catalogue.write_text("items:\n  - sku: " + "x" * 1_000_001 + "\n    price: 1\n")
    _typed(CliRun(evaluate_args("catalogue", catalogue)), "INPUT_STRING_TOO_LONG")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_the_answers_index_or_an_answer_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index.jsonl"
    os.mkfifo(index)
    done = _rulecheck("answers", str(index), "--format", "json")
    assert done.returncode == 2 and "INPUT_NOT_REGULAR" in done.stdout, done.stdout + done.stderr
    answer = tmp_path / "answer.json"
    os.mkfifo(answer)
    real_index = tmp_path / "real.jsonl"
    real_index.write_text(
        json.dumps({"answer": "answer.json", "packet": "answer.json", "role": "A"}) + "\n"
    )
    done = _rulecheck("answers", str(real_index), "--format", "json")
    assert done.returncode in (1, 2) and "INPUT_NOT_REGULAR" in done.stdout, done.stdout
    assert "INTERNAL_ERROR" not in done.stdout


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml"])
def test_a_document_with_more_values_than_the_limit_is_refused_before_parsing(
    tmp_path: Path, suffix: str
) -> None:
    from engine.limits import MAX_VALUES

    path = tmp_path / f"many{suffix}"
    if suffix == ".yaml":
        path.write_bytes(b"items: [" + b"0," * (MAX_VALUES + 1) + b"0]\n")
    elif suffix == ".jsonl":
        path.write_bytes(b'{"id": "o", "sku": "A1", "quantity": 1}\n' * (MAX_VALUES // 3 + 1))
    else:
        path.write_bytes(b"[" + b"{}," * (MAX_VALUES // 2 + 1) + b"{}]")
    started = time.monotonic()
    _typed(CliRun(evaluate_args(_ROLE[suffix], path)), "INPUT_TOO_MANY_RECORDS")
    assert time.monotonic() - started < 5
