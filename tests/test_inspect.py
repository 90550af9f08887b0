"""`rulecheck import inspect` and the pack `rules/inspect/` on real inspect_ai logs.

The logs are written once per session by inspect_ai itself (`tests/inspect_logs.py`, in
its own process, offline, with the `mockllm/model` provider answering through a function
of the tests), then imported and checked through the CLI.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

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


def _import(out: Path, *paths: Path, arms: dict[str, Path] | None = None) -> CliRun:
    arm_options = [f"--arm={arm}={path}" for arm, path in (arms or {}).items()]
    run = CliRun(
        ["import", "inspect", *map(str, paths), *arm_options, "--out", str(out), "--format", "json"]
    )
    run.assert_clean()
    return run


def _check(bundle: Path, rules: Path = PACK) -> CliRun:
    run = CliRun(["check", str(bundle), "--rules", str(rules), "--format", "json"])
    run.assert_clean()
    return run


def _imported_check(logs: Path, tmp_path: Path, case: str, rules: Path = PACK) -> CliRun:
    bundle = tmp_path / case
    assert _import(bundle, logs / case).exit_code == 0
    return _check(bundle, rules)


def _pack(tmp_path: Path, **constants: str) -> Path:
    """A copy of the pack with some constants set, as a user edits them."""
    folder = tmp_path / "pack"
    shutil.copytree(PACK, folder, dirs_exist_ok=True)
    for path in folder.glob("*.rules"):
        text = path.read_text()
        for name, value in constants.items():
            text = re.sub(rf"^const {name} = .*$", f"const {name} = {value}", text, flags=re.M)
        path.write_text(text)
    for name in constants:
        assert any(f"const {name} = " in p.read_text() for p in folder.glob("*.rules")), name
    return folder


def _records(bundle: Path, document: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (bundle / f"{document}.jsonl").read_text().splitlines()]


def _verdict(run: CliRun) -> tuple[int, bool, str]:
    return run.exit_code, run.data["admitted"], run.data["verdict"]


def _located(
    run: CliRun, code: str, document: str, rule: str | None = None
) -> list[dict[str, Any]]:
    """The violations of `code` (by `rule`), each located at a line of `document`."""
    found = [v for v in _violations(run).get(code, []) if rule in (None, v["rule"])]
    assert found, run.data["violations"]
    for violation in found:
        location = violation["location"]
        assert location["document"] == document, violation
        assert location["file"].endswith(f"{document}.jsonl") and location["line"] >= 1
    return found


def _gate(run: CliRun, name: str) -> list[tuple[list[str], Any, bool]]:
    gate = next(g for g in run.data["gates"] if g["name"] == name)
    return [(o["ids"], o.get("observed"), o["passed"]) for o in gate["observations"]]


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
    gate = next(g for g in run.data["gates"] if g["name"] == "score_met")
    assert gate["observations"][0]["observed"] == "1/2"  # exact, not 0.5 as a float


@pytest.mark.parametrize(
    ("case", "code", "document", "rule"),
    [
        ("other_model.eval", "WRONG_MODEL", "runs", "run_model_pinned"),
        ("other_temperature.eval", "WRONG_TEMPERATURE", "runs", "temperature_pinned"),
        ("other_version.eval", "WRONG_TASK", "runs", "task_planned"),
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
        "metrics.jsonl", "rulecheck.yaml", "runs.jsonl", "samples.jsonl", "scores.jsonl",
        "sources.jsonl", "tools.jsonl", "usage.jsonl",
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


# ---- what users produce: epochs, scorers, errors, partial runs, limits, tools, graders ----

WITH_TOOLS = {"pinned_solver": '"use_tools, generate"', "allowed_tools": '{"add"}'}


def test_several_epochs_are_each_a_sample_and_count_in_the_mean(logs: Path, tmp_path: Path) -> None:
    refused = _imported_check(logs, tmp_path, "epochs.eval")
    assert _verdict(refused) == (1, False, "INVALID")  # the pack plans one epoch
    _located(refused, "EPOCHS_NOT_PLANNED", "runs")
    assert len(_located(refused, "SAMPLE_NOT_PLANNED", "samples")) == 4  # every epoch 2
    run = _check(tmp_path / "epochs.eval", _pack(tmp_path, planned_epochs="2"))
    assert _verdict(run) == (0, True, "MEETS_BAR")
    assert _gate(run, "score_met") == [(["arith"], "7/8", True)]  # q1 wrong in epoch 2
    samples = _records(tmp_path / "epochs.eval", "samples")
    assert sorted((s["sample_id"], s["epoch"]) for s in samples)[:2] == [("q1", 1), ("q1", 2)]


def test_a_sample_and_epoch_listed_twice_is_refused_not_counted_twice(
    logs: Path, tmp_path: Path
) -> None:
    # q2's second epoch replaced by a copy of its first: two epochs of q2 are still there,
    # so only the copy's score (read by its first record alone) tells them apart
    pack = _pack(tmp_path, planned_epochs="2")
    run = _imported_check(logs, tmp_path, "repeated_sample.json", pack)
    assert _verdict(run) == (1, False, "INVALID")
    repeated = _located(run, "SAMPLE_NOT_SCORED_ONCE", "samples")
    assert len(repeated) == 2 and all(v["ids"][0].endswith("/q2/1") for v in repeated)
    assert set(_violations(run)) == {"SAMPLE_NOT_SCORED_ONCE"}


def test_several_scorers_each_keep_their_value_and_the_pack_reads_the_one_registered(
    logs: Path, tmp_path: Path
) -> None:
    run = _imported_check(logs, tmp_path, "scorers.eval")
    assert _verdict(run) == (0, True, "MEETS_BAR")
    assert _gate(run, "score_met") == [(["arith"], "3/4", True)]
    scores = {
        (s["sample"].split("/")[1], s["scorer"]): s
        for s in _records(tmp_path / "scorers.eval", "scores")
    }
    assert scores[("q2", "match")]["value_text"] == "I"
    assert scores[("q2", "closeness")]["value_number"] == "0.5"
    assert scores[("q2", "parts")]["value"] == {"exact": 0, "length": 1}
    assert scores[("q2", "parts")]["value_number"] is scores[("q2", "parts")]["value_text"] is None
    numeric_pack = _pack(tmp_path, scorer='"closeness"', checked_metric='"mean"')
    numeric = _check(tmp_path / "scorers.eval", numeric_pack)
    assert _verdict(numeric) == (0, True, "MEETS_BAR")  # inspect_ai's `mean` agrees
    assert _gate(numeric, "score_met") == [(["arith"], "7/8", True)]  # 1 + 1/2 + 1 + 1, exact


def test_a_score_the_pack_cannot_count_is_refused_never_passed(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(logs, tmp_path, "scorers.eval", _pack(tmp_path, scorer='"parts"'))
    assert _verdict(run) == (1, False, "INVALID")
    assert len(_located(run, "SCORE_UNREADABLE", "scores")) == 4


def test_a_call_without_a_token_count_is_refused_not_counted_as_zero(
    logs: Path, tmp_path: Path
) -> None:
    run = _imported_check(logs, tmp_path, "no_usage.eval")
    assert _verdict(run) == (1, False, "INVALID")
    assert len(_located(run, "TOKENS_NOT_REPORTED", "usage")) == 1


@pytest.mark.parametrize("case", ["run_error.eval", "run_error.json"])
def test_a_run_that_stopped_on_an_error_is_refused_with_what_it_holds(
    logs: Path, tmp_path: Path, case: str
) -> None:
    run = _imported_check(logs, tmp_path, case)
    assert _verdict(run) == (1, False, "INVALID")
    _located(run, "RUN_ERROR", "runs", "run_without_error")
    assert "RUN_NOT_COMPLETE" not in _violations(run)  # it finished, on an error
    _located(run, "SAMPLE_ERROR", "samples")
    (record,) = _records(tmp_path / case, "runs")
    assert (record["status"], record["error"]) == (
        "error",
        "RuntimeError('provider unavailable for q3')",
    )
    assert record["completed_samples"] is None  # inspect_ai wrote no results
    assert len(_records(tmp_path / case, "samples")) == 4  # nothing it holds is dropped


def test_an_interrupted_run_is_refused_and_its_missing_samples_named(
    logs: Path, tmp_path: Path
) -> None:
    run = _imported_check(logs, tmp_path, "interrupted.eval")
    assert _verdict(run) == (1, False, "INVALID")
    _located(run, "RUN_NOT_COMPLETE", "runs")
    assert "RUN_ERROR" not in _violations(run)
    missing = _located(run, "SAMPLE_MISSING", "runs")
    assert len(missing) == 2  # q3 and q4 never ran
    assert [s["sample_id"] for s in _records(tmp_path / "interrupted.eval", "samples")] == [
        "q1",
        "q2",
    ]


def test_a_run_cancelled_from_outside_is_refused_as_incomplete_not_as_an_error(
    logs: Path, tmp_path: Path
) -> None:
    run = _imported_check(logs, tmp_path, "cancelled.eval")
    assert _verdict(run) == (1, False, "INVALID")
    (record,) = _records(tmp_path / "cancelled.eval", "runs")
    assert (record["status"], record["error"]) == ("cancelled", None)  # written by inspect_ai
    (incomplete,) = _located(run, "RUN_NOT_COMPLETE", "runs", "run_complete")
    assert incomplete["ids"] == [record["id"]]
    assert "RUN_ERROR" not in _violations(run)
    (missing,) = _located(run, "SAMPLE_MISSING", "runs")  # q4 never started
    assert missing["ids"][-1] == "q4"
    (stopped,) = _located(run, "SAMPLE_NOT_SCORED_ONCE", "samples")  # q3 was cut short
    assert stopped["ids"][0].endswith("/q3/1")
    samples = {s["sample_id"]: s for s in _records(tmp_path / "cancelled.eval", "samples")}
    assert sorted(samples) == ["q1", "q2", "q3"] and "Cancelled" in samples["q3"]["error"]
    # the partial results inspect_ai wrote (two samples) still agree with their scores
    assert "METRIC_MISMATCH" not in _violations(run)


@pytest.mark.parametrize(
    ("case", "kind", "sample"),
    [("token_limit.eval", "token", "q1"), ("message_limit.eval", "message", "q1"),
     ("time_limit.eval", "time", "q4")],
)  # fmt: skip
def test_a_sample_that_hit_a_limit_is_refused_unless_the_pack_allows_that_limit(
    logs: Path, tmp_path: Path, case: str, kind: str, sample: str
) -> None:
    run = _imported_check(logs, tmp_path, case, _pack(tmp_path, **WITH_TOOLS))
    assert _verdict(run) == (1, False, "INVALID")
    (hit,) = _located(run, "SAMPLE_LIMIT", "samples")
    assert hit["ids"][0].endswith(f"/{sample}/1")
    record = next(s for s in _records(tmp_path / case, "samples") if s["sample_id"] == sample)
    assert record["limit_type"] == kind and record["limit"]["type"] == kind
    allowed = _pack(tmp_path, **WITH_TOOLS, allowed_limits=f'{{"{kind}"}}')
    run = _check(tmp_path / case, allowed)
    assert _verdict(run) == (0, True, "MEETS_BAR")  # the sample scored as it stood: 3/4
    assert _gate(run, "score_met") == [(["arith"], "3/4", True)]


def test_tool_calls_and_their_errors_are_imported_and_judged(logs: Path, tmp_path: Path) -> None:
    refused = _imported_check(logs, tmp_path, "tools.eval")
    assert _verdict(refused) == (1, False, "INVALID")
    _located(refused, "WRONG_SOLVER", "runs")
    assert len(_located(refused, "TOOL_NOT_ALLOWED", "samples")) == 4
    tools = _records(tmp_path / "tools.eval", "tools")
    assert [(t["function"], t["error_type"]) for t in tools].count(("add", None)) == 3
    failed = next(t for t in tools if t["error"] is not None)
    assert (failed["error_type"], failed["error"]) == ("unknown", "the adder refuses 2")
    samples = {s["sample_id"]: s for s in _records(tmp_path / "tools.eval", "samples")}
    assert (samples["q2"]["tool_calls"], samples["q2"]["tool_errors"]) == (1, 1)
    assert samples["q2"]["events"]["tool"] == 1 and samples["q2"]["events"]["model"] == 2
    run = _check(tmp_path / "tools.eval", _pack(tmp_path, **WITH_TOOLS))
    assert _verdict(run) == (0, True, "MEETS_BAR")
    strict = _check(
        tmp_path / "tools.eval", _pack(tmp_path, **WITH_TOOLS, max_tool_errors_per_sample="0")
    )
    assert _verdict(strict) == (1, False, "INVALID")
    (error,) = _located(strict, "TOOL_ERRORS", "samples")
    assert error["ids"][0].endswith("/q2/1")


def test_a_grader_model_is_pinned_by_its_role(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(logs, tmp_path, "grader.eval")
    assert _verdict(run) == (0, True, "MEETS_BAR")
    calls = _records(tmp_path / "grader.eval", "usage")
    assert sorted({(c["model"], c["role"]) for c in calls}, key=str) == [
        ("mockllm/grader", "grader"),
        ("mockllm/model", None),
    ]
    (record,) = _records(tmp_path / "grader.eval", "runs")
    assert record["model_roles"] == {"grader": "mockllm/grader"}
    other = _imported_check(logs, tmp_path, "other_grader.eval")
    assert _verdict(other) == (1, False, "INVALID")
    assert len(_located(other, "WRONG_MODEL", "usage")) == 4  # each grader call, not the run
    unpinned = _check(
        tmp_path / "grader.eval", _pack(tmp_path, pinned_roles='{"judge": "mockllm/grader"}')
    )
    assert len(_located(unpinned, "WRONG_MODEL", "usage")) == 4


# ---- a run of several tasks: one gate per task -------------------------------------------


def _two_task_pack(logs: Path, tmp_path: Path, hard_bar: str = "50 %") -> tuple[Path, Path]:
    bundle = tmp_path / "two_tasks"
    _import(bundle, logs / "two_tasks-arith.eval", logs / "two_tasks-hard.eval")
    hashes = {r["task"]: r["dataset_sha256"] for r in _records(bundle, "runs")}  # a pilot
    pack = _pack(
        tmp_path,
        planned_tasks='{"arith": "1", "hard": "1"}',
        pinned_dataset_sha256=f'{{"arith": "{hashes["arith"]}", "hard": "{hashes["hard"]}"}}',
        planned_samples='{"arith": {"q1", "q2", "q3", "q4"}, "hard": {"h1", "h2"}}',
        min_mean_score=f'{{"arith": 75 %, "hard": {hard_bar}}}',
    )
    return bundle, pack


def test_each_task_of_a_run_of_many_has_its_own_gate(logs: Path, tmp_path: Path) -> None:
    bundle, pack = _two_task_pack(logs, tmp_path)
    run = _check(bundle, pack)
    assert _verdict(run) == (0, True, "MEETS_BAR")
    assert _gate(run, "score_met") == [(["arith"], 1, True), (["hard"], "1/2", True)]
    bundle, pack = _two_task_pack(logs, tmp_path / "strict", hard_bar="51 %")
    run = _check(bundle, pack)
    assert _verdict(run) == (0, True, "BELOW_BAR")
    assert _gate(run, "score_met") == [(["arith"], 1, True), (["hard"], "1/2", False)]


def test_a_planned_task_that_was_not_run_and_a_task_not_planned_are_refused(
    logs: Path, tmp_path: Path
) -> None:
    _, pack = _two_task_pack(logs, tmp_path)
    run = _imported_check(logs, tmp_path, "two_tasks-arith.eval", pack)
    assert _verdict(run) == (1, False, "INVALID")
    (missing,) = _violations(run)["TASK_MISSING"]
    assert missing["ids"] == ["hard"]
    extra = _imported_check(logs, tmp_path, "two_tasks-hard.eval")  # the pack plans arith only
    assert _located(extra, "WRONG_TASK", "runs")


# ---- two arms on the same samples --------------------------------------------------------


def _paired(
    logs: Path, tmp_path: Path, baseline: str, candidate: str, rules: Path = PACK
) -> CliRun:
    bundle = tmp_path / f"{baseline}-{candidate}"
    arms = {"baseline": logs / f"{baseline}.eval", "candidate": logs / f"{candidate}.eval"}
    imported = _import(bundle, arms=arms)
    assert imported.exit_code == 0, imported.stdout
    assert (bundle / "rulecheck.yaml").read_text() == "protocol: inspect_paired\n"
    return _check(bundle, rules)


def test_two_arms_are_paired_and_the_mean_difference_is_gated_exactly(
    logs: Path, tmp_path: Path
) -> None:
    run = _paired(logs, tmp_path, "arm_base", "arm_cand")
    assert _verdict(run) == (0, True, "MEETS_BAR")  # +1, 0, 0, 0
    assert _gate(run, "difference_met") == [(["arith", "candidate", "baseline"], "1/4", True)]
    pairs = next(t for t in run.data["tables"] if t["name"] == "pairs")
    assert [r["values"][1:] for r in pairs["rows"]] == [
        ["q1", 1, "candidate", 1, "baseline", 0, 1], ["q2", 1, "candidate", 0, "baseline", 0, 0],
        ["q3", 1, "candidate", 1, "baseline", 1, 0], ["q4", 1, "candidate", 1, "baseline", 1, 0],
    ]  # fmt: skip
    samples = _records(tmp_path / "arm_base-arm_cand", "samples")
    assert {s["arm"] for s in samples} == {"baseline", "candidate"}
    higher = _pack(tmp_path, min_mean_difference='{"arith": 0.5}')
    run = _paired(logs, tmp_path / "higher", "arm_base", "arm_cand", higher)
    assert _verdict(run) == (0, True, "BELOW_BAR")
    assert _gate(run, "difference_met") == [(["arith", "candidate", "baseline"], "1/4", False)]


@pytest.mark.parametrize(
    ("candidate", "arm", "sample"),
    [("arm_cand_missing", "baseline", "q4"), ("arm_cand_extra", "candidate", "q5")],
)
def test_a_missing_or_extra_pair_is_refused_at_the_sample_without_partner(
    logs: Path, tmp_path: Path, candidate: str, arm: str, sample: str
) -> None:
    run = _paired(logs, tmp_path, "arm_base", candidate)
    assert _verdict(run) == (1, False, "INVALID")
    (unpaired,) = _located(run, "PAIR_MISSING", "samples")
    bundle = tmp_path / f"arm_base-{candidate}"
    record = next(s for s in _records(bundle, "samples") if s["id"] == unpaired["ids"][0])
    assert (record["arm"], record["sample_id"]) == (arm, sample)


def test_arms_swapped_or_undeclared_are_refused(logs: Path, tmp_path: Path) -> None:
    swapped = _paired(logs, tmp_path, "arm_cand", "arm_base")
    assert _verdict(swapped) == (1, False, "INVALID")
    assert len(_located(swapped, "WRONG_MODEL", "runs", "run_model_pinned")) == 2
    assert len(_located(swapped, "WRONG_MODEL", "usage", "call_model_pinned")) == 8
    bundle = tmp_path / "no_arms"
    logs_without_arms = [str(logs / "arm_base.eval"), str(logs / "arm_cand.eval")]
    imported = CliRun(
        ["import", "inspect", *logs_without_arms, "--protocol", "inspect_paired", "--out",
         str(bundle)]
    )  # fmt: skip
    assert imported.exit_code == 0
    run = _check(bundle)
    assert _verdict(run) == (1, False, "INVALID")
    assert len(_located(run, "ARM_UNDECLARED", "runs")) == 2
    assert sorted(v["ids"][0] for v in _violations(run)["ARM_MISSING"]) == [
        "baseline",
        "candidate",
    ]


@pytest.mark.parametrize("option", ["baseline", "=x.eval", "b a=x.eval", "baseline="])
def test_a_malformed_arm_option_is_refused(tmp_path: Path, option: str) -> None:
    out = tmp_path / "out"
    run = CliRun(["import", "inspect", "--arm", option, "--out", str(out), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "INSPECT_ARM"
    assert not out.exists()


def test_one_log_given_two_arms_is_refused(logs: Path, tmp_path: Path) -> None:
    log = logs / "arm_base.eval"
    arms = ["--arm", f"baseline={log}", "--arm", f"candidate={log}"]
    run = CliRun(["import", "inspect", *arms, "--out", str(tmp_path / "out"), "--format", "json"])
    run.assert_clean()
    _refusal(run, "INSPECT_ARM", log)


# ---- more than two arms ------------------------------------------------------------------

THREE_ARMS = {
    "arm_models": '{"baseline": "mockllm/base", "candidate": "mockllm/cand", '
    '"third": "mockllm/third"}',
    "arm_solvers": '{"baseline": "generate", "candidate": "generate", "third": "generate"}',
}


def _three_arms(logs: Path, tmp_path: Path, **constants: str) -> CliRun:
    bundle = tmp_path / "three"
    names = {"baseline": "arm_base", "candidate": "arm_cand", "third": "arm_third"}
    _import(bundle, arms={arm: logs / f"{name}.eval" for arm, name in names.items()})
    return _check(bundle, _pack(tmp_path, **THREE_ARMS, **constants))


def test_every_arm_is_compared_with_the_baseline(logs: Path, tmp_path: Path) -> None:
    run = _three_arms(logs, tmp_path)
    assert _verdict(run) == (0, True, "MEETS_BAR")
    assert _gate(run, "difference_met") == [
        (["arith", "candidate", "baseline"], "1/4", True),  # 1, 0, 1, 1 against 0, 0, 1, 1
        (["arith", "third", "baseline"], "1/4", True),  # 0, 1, 1, 1
    ]
    comparisons = next(t for t in run.data["tables"] if t["name"] == "comparisons")
    assert [r["values"][:4] for r in comparisons["rows"]] == [
        ["arith", "candidate", "baseline", 4], ["arith", "third", "baseline", 4],
    ]  # fmt: skip


def test_all_pairs_compares_every_two_arms_and_each_is_gated(logs: Path, tmp_path: Path) -> None:
    run = _three_arms(logs, tmp_path, comparison='"all_pairs"')
    assert _verdict(run) == (0, True, "BELOW_BAR")
    assert _gate(run, "difference_met") == [
        (["arith", "candidate", "baseline"], "1/4", True),
        (["arith", "third", "baseline"], "1/4", True),
        (["arith", "third", "candidate"], 0, False),  # 0, 1, 1, 1 against 1, 0, 1, 1
    ]


def test_an_arm_declared_but_not_imported_is_missing_and_its_pairs_too(
    logs: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "two"
    _import(bundle, arms={"baseline": logs / "arm_base.eval", "candidate": logs / "arm_cand.eval"})
    run = _check(bundle, _pack(tmp_path, **THREE_ARMS))
    assert _verdict(run) == (1, False, "INVALID")
    (missing,) = _violations(run)["ARM_MISSING"]
    assert missing["ids"] == ["third", "arith"]
    assert len(_located(run, "PAIR_MISSING", "samples")) == 8  # each sample, for `third`
    unknown = _check(bundle, _pack(tmp_path, baseline_arm='"control"'))
    assert _verdict(unknown) == (1, False, "INVALID")
    assert _violations(unknown)["PACK_INCOMPLETE"][0]["rule"] == "arm_pack_complete"


def test_each_arm_is_checked_by_the_single_run_rules_themselves(logs: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "shared"
    arms = {"baseline": logs / "arm_base.eval", "candidate": logs / "sample_error.eval"}
    _import(bundle, arms=arms)
    run = _check(bundle, _pack(tmp_path, arm_models=
        '{"baseline": "mockllm/base", "candidate": "mockllm/model"}'))  # fmt: skip
    assert _verdict(run) == (1, False, "INVALID")
    (error,) = _located(run, "SAMPLE_ERROR", "samples", "sample_without_error")
    assert error["ids"][0].endswith("/q3/1")
    assert "WRONG_MODEL" not in _violations(run)  # the candidate's model is its arm's
    single = _imported_check(logs, tmp_path, "sample_error.eval")
    assert [v["rule"] for v in _violations(single)["SAMPLE_ERROR"]] == ["sample_without_error"]


def test_a_run_imported_with_an_arm_is_refused_by_the_single_run_protocol(
    logs: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "armed"
    arm = f"--arm=baseline={logs / 'arm_base.eval'}"
    imported = CliRun(
        ["import", "inspect", arm, "--protocol", "inspect_eval", "--out", str(bundle)]
    )
    assert imported.exit_code == 0, imported.stdout
    run = _check(bundle)
    assert _verdict(run) == (1, False, "INVALID")
    assert len(_located(run, "ARM_UNDECLARED", "runs", "eval_run_without_arm")) == 1
    assert "WRONG_MODEL" not in _violations(run)  # judged as its arm, refused for having one


# ---- inspect_ai's own metrics ------------------------------------------------------------


def test_inspect_ais_metrics_are_imported_and_agree_with_the_recomputed_mean(
    logs: Path, tmp_path: Path
) -> None:
    run = _imported_check(logs, tmp_path, "below_bar.eval")
    metrics = {m["name"]: m for m in _records(tmp_path / "below_bar.eval", "metrics")}
    assert sorted(metrics) == ["accuracy", "stderr"]
    accuracy = metrics["accuracy"]
    assert (accuracy["score"], accuracy["scorer"], accuracy["value"]) == ("match", "match", "0.5")
    assert (accuracy["scored_samples"], accuracy["unscored_samples"]) == (4, 0)
    assert decimal.Decimal(metrics["stderr"]["value"]) > 0
    assert "METRIC_MISMATCH" not in _violations(run) and run.data["verdict"] == "BELOW_BAR"


def test_an_edited_results_block_is_refused_at_the_metric(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(logs, tmp_path, "tampered_results.eval")
    assert _verdict(run) == (1, False, "INVALID")
    (edited,) = _located(run, "METRIC_MISMATCH", "metrics", "metric_agrees")
    assert edited["ids"][0].endswith("/match/accuracy")
    assert _gate(run, "score_met") == [(["arith"], 1, True)]  # the scores say 4 of 4


def test_a_run_whose_results_lack_the_checked_metric_is_refused(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(logs, tmp_path, "admitted.eval", _pack(tmp_path, checked_metric='"f1"'))
    assert _verdict(run) == (1, False, "INVALID")
    _located(run, "METRIC_NOT_REPORTED", "runs", "metric_reported")


# ---- money -------------------------------------------------------------------------------


def test_the_cost_of_each_sample_and_the_total_are_exact(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(logs, tmp_path, "admitted.eval")
    assert _verdict(run) == (0, True, "MEETS_BAR")
    # each call: 20 input at 3 USD/Mtokens, 3 cache reads at 0.3, 5 output at 15: 135.9 µUSD
    samples = next(t for t in run.data["tables"] if t["name"] == "samples")
    assert {r["values"][-1] for r in samples["rows"]} == {"1359/10000000"}
    (total,) = next(t for t in run.data["tables"] if t["name"] == "cost")["rows"]
    assert total["values"] == [4, 4, "1359/2500000", "1/20"]  # 0.0005436 USD of 0.05


def test_a_cost_ceiling_names_the_crossing_call(logs: Path, tmp_path: Path) -> None:
    run = _imported_check(
        logs, tmp_path, "admitted.eval", _pack(tmp_path, max_total_cost="0.0005 USD")
    )
    assert _verdict(run) == (1, False, "INVALID")
    budget = next(b for b in run.data["budgets"] if b["name"] == "total_cost")
    (crossed,) = [o for o in budget["observations"] if not o["passed"]]
    calls = sorted(c["id"] for c in _records(tmp_path / "admitted.eval", "usage"))
    assert crossed["crossing_entry"] == [calls[3]]  # the fourth call: 4 x 135.9 µUSD
    assert crossed["observed"] == "1359/2500000"


def test_a_model_without_a_price_is_refused_never_counted_free(logs: Path, tmp_path: Path) -> None:
    pack = _pack(tmp_path, model_prices='{"mockllm/model": {"input": 3 USD/Mtokens, '
                 '"cache_read": 0.3 USD/Mtokens, "cache_write": 3.75 USD/Mtokens, '
                 '"output": 15 USD/Mtokens, "reasoning": 0 USD/Mtokens}}')  # fmt: skip
    run = _imported_check(logs, tmp_path, "grader.eval", pack)
    assert _verdict(run) == (1, False, "INVALID")
    unpriced = _located(run, "PRICE_MISSING", "usage", "call_priced")
    assert len(unpriced) == 4  # each grader call
    budget = next(b for b in run.data["budgets"] if b["name"] == "total_cost")
    assert not budget["passed"]  # its ledger stops at the first unpriced call


def test_a_sample_over_its_money_ceiling_names_its_crossing_call(
    logs: Path, tmp_path: Path
) -> None:
    pack = _pack(tmp_path, max_sample_tokens="1_000 tokens", max_sample_cost="0.001 USD")
    run = _imported_check(logs, tmp_path, "token_overrun.eval", pack)
    assert _verdict(run) == (1, False, "INVALID")
    budget = next(b for b in run.data["budgets"] if b["name"] == "sample_cost")
    (crossed,) = [o for o in budget["observations"] if not o["passed"]]
    assert crossed["ids"][0].endswith("/q4/1")
    assert crossed["crossing_entry"][0].endswith("/q4/1/1/1")
    assert crossed["observed"] == "15609/10000000"  # 495 x 3 + 3 x 0.3 + 5 x 15 µUSD
    assert [b["name"] for b in run.data["budgets"] if not b["passed"]] == ["sample_cost"]


def test_each_arm_has_its_own_token_and_money_ceiling(logs: Path, tmp_path: Path) -> None:
    pack = _pack(tmp_path, max_arm_tokens="99 tokens", max_arm_cost="0.0005 USD")
    run = _paired(logs, tmp_path, "arm_base", "arm_cand", pack)
    assert _verdict(run) == (1, False, "INVALID")
    for name, observed in (("arm_tokens", 100), ("arm_cost", "1359/2500000")):
        budget = next(b for b in run.data["budgets"] if b["name"] == name)
        crossed = {o["ids"][0]: o for o in budget["observations"] if not o["passed"]}
        assert sorted(crossed) == ["baseline", "candidate"], name
        assert {o["observed"] for o in crossed.values()} == {observed}
        assert all(o["crossing_entry"][0].endswith("/q4/1/1/1") for o in crossed.values())


# ---- the pack's case files, on folders imported once ------------------------------------

CASES = PACK / "tests"


def test_the_packs_case_files_pass_without_inspect_ai() -> None:
    written = sum(
        len(yaml.safe_load(path.read_text(encoding="utf-8"))["cases"])
        for path in CASES.glob("*.cases.yaml")
    )
    run = CliRun(["test", str(CASES)])
    assert run.exit_code == 0, run.stdout
    assert run.stdout.splitlines()[-1] == f"{written} passed, 0 failed"


def test_the_case_folders_have_the_layout_of_a_fresh_import(logs: Path, tmp_path: Path) -> None:
    """When the import's layout changes, `python tests/inspect_bundles.py` rewrites them."""
    fresh = tmp_path / "fresh"
    _import(fresh, logs / "admitted.eval")
    for bundle in ("single", "arms"):
        folder = CASES / bundle
        assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in fresh.iterdir())
        for path in fresh.glob("*.jsonl"):
            kept, now = _records(folder, path.stem), _records(fresh, path.stem)
            if kept and now:
                assert sorted(kept[0]) == sorted(now[0]), (bundle, path.name)
