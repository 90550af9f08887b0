"""`rulecheck import inspect` and the pack `rules/inspect/` on real inspect_ai logs.

The logs are written once per session by inspect_ai itself (`tests/inspect_logs.py`, in
its own process, offline, with the `mockllm/model` provider answering through a function
of the tests), then imported and checked through the CLI.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import REPO, CliRun

PACK = REPO / "rules" / "inspect"


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of real inspect_ai logs, one per case of `tests/inspect_logs.py`."""
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (rulecheck[inspect])")
    folder = tmp_path_factory.mktemp("inspect_logs")
    home = tmp_path_factory.mktemp("inspect_home")
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home), "NO_COLOR": "1"}
    script = REPO / "tests" / "inspect_logs.py"
    done = subprocess.run(
        [sys.executable, str(script), str(folder)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


def _import(out: Path, *paths: Path) -> CliRun:
    run = CliRun(["import", "inspect", *map(str, paths), "--out", str(out), "--format", "json"])
    run.assert_clean()
    return run


def _check(bundle: Path) -> CliRun:
    run = CliRun(["check", str(bundle), "--rules", str(PACK), "--format", "json"])
    run.assert_clean()
    return run


def _imported_check(logs: Path, tmp_path: Path, case: str) -> CliRun:
    bundle = tmp_path / case
    assert _import(bundle, logs / case).exit_code == 0
    return _check(bundle)


def _violations(run: CliRun) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for violation in run.data["violations"]:
        found.setdefault(violation["code"], []).append(violation)
    return found


@pytest.mark.parametrize("case", ["admitted.eval", "admitted.json", "retried.eval"])
def test_a_run_as_registered_is_admitted_and_meets_the_bar(
    logs: Path, tmp_path: Path, case: str
) -> None:
    run = _imported_check(logs, tmp_path, case)
    assert run.exit_code == 0, run.stdout
    assert run.data["admitted"] is True
    assert run.data["verdict"] == "MEETS_BAR"
    assert run.data["violations"] == []


def test_a_retried_sample_is_recorded_with_each_attempts_calls(logs: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "retried"
    _import(bundle, logs / "retried.eval")
    samples = [json.loads(line) for line in (bundle / "samples.jsonl").read_text().splitlines()]
    q2 = next(s for s in samples if s["sample_id"] == "q2")
    assert (q2["retries"], q2["attempts"], q2["error"]) == (1, 2, None)
    assert q2["retry_errors"] == ["RuntimeError('provider unavailable for q2')"]
    calls = [json.loads(line) for line in (bundle / "usage.jsonl").read_text().splitlines()]
    mine = sorted(
        (c["attempt"], c["sequence"], c["error"]) for c in calls if c["sample"] == q2["id"]
    )
    assert [m[:2] for m in mine] == [(1, 1), (2, 2)]
    assert mine[0][2] is not None and mine[1][2] is None


def test_an_admitted_run_below_the_bar_gets_its_verdict(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(logs, tmp_path, "below_bar.eval")
    assert run.exit_code == 0
    assert (run.data["admitted"], run.data["verdict"]) == (True, "BELOW_BAR")
    gate = next(g for g in run.data["gates"] if g["name"] == "accuracy_met")
    assert gate["observations"][0]["observed"] == "1/2"  # exact, not 0.5 as a float


@pytest.mark.parametrize(
    ("case", "code", "document", "rule"),
    [
        ("other_model.eval", "WRONG_MODEL", "runs", "run_model_pinned"),
        ("other_temperature.eval", "WRONG_TEMPERATURE", "runs", "temperature_pinned"),
        ("other_version.eval", "WRONG_TASK", "runs", "task_pinned"),
        ("missing_sample.eval", "SAMPLE_MISSING", "runs", "planned_samples_present"),
        ("missing_sample.eval", "WRONG_DATASET", "runs", "dataset_pinned"),
        ("sample_error.eval", "SAMPLE_ERROR", "samples", "sample_without_error"),
        ("sample_error.eval", "SAMPLE_NOT_SCORED_ONCE", "samples", "sample_scored_once"),
        ("other_retry_policy.eval", "RETRY_POLICY", "runs", "retry_policy_frozen"),
    ],
)
def test_each_departure_from_the_registration_is_refused_where_it_is(
    logs: Path, tmp_path: Path, case: str, code: str, document: str, rule: str
) -> None:
    run = _imported_check(logs, tmp_path, case)
    assert run.exit_code == 1
    assert (run.data["admitted"], run.data["verdict"]) == (False, "INVALID")
    found = [v for v in _violations(run)[code] if v["rule"] == rule]
    assert found, run.data["violations"]
    location = found[0]["location"]
    assert location["document"] == document
    assert location["file"].endswith(f"{document}.jsonl") and location["line"] >= 1


def test_the_other_model_is_refused_at_every_call_too(logs: Path, tmp_path: Path) -> None:
    found = _violations(_imported_check(logs, tmp_path, "other_model.eval"))["WRONG_MODEL"]
    assert sorted(v["location"]["document"] for v in found) == ["runs"] + ["usage"] * 4


def test_a_token_overrun_names_the_crossing_call(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(logs, tmp_path, "token_overrun.eval")
    assert (run.exit_code, run.data["verdict"]) == (1, "INVALID")
    budget = next(b for b in run.data["budgets"] if b["name"] == "sample_tokens")
    failed = [o for o in budget["observations"] if not o["passed"]]
    assert len(failed) == 1
    assert failed[0]["ids"][0].endswith("/q4/1")
    assert failed[0]["crossing_entry"][0].endswith("/q4/1/1/1")
    assert failed[0]["observed"] == 500


def test_the_import_is_deterministic_and_records_each_logs_sha256(
    logs: Path, tmp_path: Path
) -> None:
    paths = [logs / "admitted.eval", logs / "other_model.eval"]
    first, second = tmp_path / "a", tmp_path / "b"
    _import(first, *paths)
    _import(second, *reversed(paths))
    names = sorted(p.name for p in first.iterdir())
    assert names == [
        "rulecheck.yaml", "runs.jsonl", "samples.jsonl", "scores.jsonl", "sources.jsonl",
        "tools.jsonl", "usage.jsonl",
    ]  # fmt: skip
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    sources = [json.loads(x) for x in (first / "sources.jsonl").read_text().splitlines()]
    expected = {hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
    assert {s["sha256"] for s in sources} == expected
    assert (first / "rulecheck.yaml").read_text() == "protocol: inspect_eval\n"


def test_one_run_imported_twice_is_refused(logs: Path, tmp_path: Path) -> None:
    run = _import(tmp_path / "out", logs / "admitted.eval", logs / "admitted.eval")
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "INSPECT_LOG_DUPLICATE"


def _refusal(run: CliRun, code: str, file: Path) -> None:
    assert run.exit_code == 2, run.stdout
    diagnostic = run.data["diagnostics"][0]
    assert diagnostic["code"] == code
    assert diagnostic["location"]["file"] == str(file)
    assert "INTERNAL_ERROR" not in run.stdout


@pytest.mark.parametrize(
    "content",
    [b"not a zip at all", b"PK\x03\x04truncated", b""],
    ids=["garbage", "truncated-zip", "empty"],
)
def test_a_corrupt_eval_log_is_refused_located(logs: Path, tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_bytes(content)
    _refusal(_import(tmp_path / "out", bad), "INSPECT_LOG_UNREADABLE", bad)
    assert not (tmp_path / "out").exists()


def test_a_truncated_real_log_and_a_json_that_is_no_log_are_refused(
    logs: Path, tmp_path: Path
) -> None:
    cut = tmp_path / "cut.eval"
    data = (logs / "admitted.eval").read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    _refusal(_import(tmp_path / "o1", cut), "INSPECT_LOG_UNREADABLE", cut)
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}')
    _refusal(_import(tmp_path / "o2", other), "INSPECT_LOG_UNREADABLE", other)


def test_a_missing_log_a_fifo_and_another_file_are_refused(tmp_path: Path) -> None:
    missing = tmp_path / "missing.eval"
    _refusal(_import(tmp_path / "o1", missing), "FILE_UNREADABLE", missing)
    fifo = tmp_path / "pipe.eval"
    os.mkfifo(fifo)
    _refusal(_import(tmp_path / "o2", fifo), "INPUT_NOT_REGULAR", fifo)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    _refusal(_import(tmp_path / "o3", text), "INSPECT_LOG_FORMAT", text)


def test_out_must_be_a_new_or_empty_folder(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    _refusal(_import(out, logs / "admitted.eval"), "OUTPUT_EXISTS", out)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    log = tmp_path / "copy.eval"
    log.write_bytes((logs / "admitted.eval").read_bytes())
    run = _import(log, log)
    assert run.exit_code == 2 and run.data["diagnostics"][0]["code"] == "OUTPUT_IS_INPUT"


def test_without_inspect_ai_the_import_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # makes the import fail
    log = tmp_path / "run.eval"
    log.write_bytes(b"anything")
    run = _import(tmp_path / "out", log)
    assert run.exit_code == 2
    diagnostic = run.data["diagnostics"][0]
    assert diagnostic["code"] == "INSPECT_NOT_INSTALLED"
    assert "pip install rulecheck[inspect]" in diagnostic["hint"]


def test_the_pack_lints_clean_is_formatted_and_stays_out_of_the_default_rules() -> None:
    lint = CliRun(["lint", "--strict", str(PACK)])
    lint.assert_clean()
    assert lint.exit_code == 0, lint.stdout + lint.stderr
    assert CliRun(["fmt", "--check", str(PACK)]).exit_code == 0
    shown = CliRun(["show", "pinned_model"])  # the default rules: no subfolder is loaded
    assert shown.exit_code == 2
