"""`--jobs N`: the same output as one process, and no worker left once the command exits."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine.cli import ANSWER_ALIAS
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate import batch
from engine.evaluate.alias import FilesJob
from engine.evaluate.nested import FilesCheck
from engine.pickling import by_fields

REPO = Path(__file__).resolve().parent.parent
INDEX = REPO / "tests" / "data" / "answers" / "index.jsonl"


def _in_group(group: int) -> list[int]:
    """The processes still alive in process group `group`."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # after the name: state, ppid, pgrp
            alive.append(int(entry.name))
    return alive


def _answers(jobs: int) -> tuple[subprocess.CompletedProcess[str], int]:
    command = [sys.executable, "-c", "from engine.cli import main; main()", "answers", str(INDEX)]
    command += ["--format", "json"]
    process = subprocess.Popen(
        [*command, "--jobs", str(jobs)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: its workers are in it too
    )
    stdout, stderr = process.communicate(timeout=600)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), process.pid


def test_two_jobs_give_one_process_output_and_leave_no_worker() -> None:
    if not Path("/proc/self/stat").exists():  # pragma: no cover
        pytest.skip("no /proc to list a process group's members on this system")
    one, _ = _answers(1)
    two, group = _answers(2)
    assert (two.returncode, two.stdout) == (one.returncode, one.stdout), two.stderr
    assert _in_group(group) == [], "workers outlived the command"
    assert os.getpgrp() != group


def test_workers_are_forked_only_while_no_other_thread_runs() -> None:
    if "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover
        pytest.skip("no fork on this platform: workers are always spawned")
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not batch._can_fork()  # a lock that thread holds would stay held in a child
    finally:
        release.set()
        other.join()
    assert batch._can_fork()


def _no_setup() -> None:
    return None


def _doubled(job: int) -> int | RulecheckError:
    if job == 40:
        return RulecheckError([Diagnostic("INDEX_ENTRY", "job 40 is refused")], ExitCode.USAGE)
    return 2 * job


def test_results_keep_job_order_across_windows_and_a_worker_error_is_raised() -> None:
    # Windows of 7 jobs in chunks of 3, two windows queued at a time.
    results = batch.pooled(_no_setup, (), _doubled, range(40), 2, (7, 3), _no_setup)
    assert list(results) == [2 * job for job in range(40)]
    with pytest.raises(RulecheckError, match="job 40 is refused"):
        list(batch.pooled(_no_setup, (), _doubled, range(60), 2, (7, 3), _no_setup))


def _killed_at_job_5(job: int) -> int:
    if job == 5:
        os.kill(os.getpid(), signal.SIGKILL)  # what the kernel does to a worker out of memory
    return job


def _results_with_a_killed_worker() -> None:
    """In a process of its own (run by the test below): pool jobs whose fifth kills its
    worker, and print the code that ends them."""
    try:
        list(batch.pooled(_no_setup, (), _killed_at_job_5, range(40), 2, (7, 3), _no_setup))
    except RulecheckError as error:
        print(error.diagnostics[0].code, int(error.exit_code))


def test_a_worker_killed_by_a_signal_ends_the_results_with_a_typed_error() -> None:
    if not Path("/proc/self/stat").exists():  # pragma: no cover
        pytest.skip("no /proc to list a process group's members on this system")
    code = "import sys; sys.path.insert(0, 'tests'); import test_jobs; "
    code += "test_jobs._results_with_a_killed_worker()"
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=120)  # multiprocessing.Pool: forever
    finally:
        if process.poll() is None:  # pragma: no cover - only when the run hangs
            os.killpg(process.pid, signal.SIGKILL)
    assert stdout.split() == ["JOBS_WORKER_LOST", "2"], stderr
    assert _in_group(process.pid) == [], "workers outlived the run"


def test_an_index_line_broken_between_its_two_readings_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index.jsonl"
    index.write_text('{"answer": "a.json", "packet": "p.json", "role": "A"}\n', encoding="utf-8")
    jobs = batch.read_index(index, ANSWER_ALIAS)  # every line checked: all well-formed
    index.write_text('{"answer": "a.json", "packet": 7}\n', encoding="utf-8")
    with pytest.raises(RulecheckError) as raised:
        list(jobs)
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "INDEX_ENTRY"
    assert diagnostic.location is not None
    assert (diagnostic.location.file, diagnostic.location.line) == (str(index), 1)
    assert "changed while it was read" in diagnostic.message


def test_an_index_read_twice_unchanged_gives_its_jobs(tmp_path: Path) -> None:
    index = tmp_path / "index.jsonl"
    index.write_text('{"answer": "a.json", "packet": "p.json", "role": "A"}\n', encoding="utf-8")
    [job] = list(batch.read_index(index, ANSWER_ALIAS))
    assert job.files == {"answer": tmp_path / "a.json", "packet": tmp_path / "p.json"}
    assert job.values == {"role": "A"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_index_entry_without_a_required_value_is_located_at_its_line(
    tmp_path: Path, jobs: str
) -> None:
    from tests.cli_run import CliRun

    answers = Path(__file__).resolve().parents[1] / "controls" / "answer"
    index = tmp_path / "index.jsonl"
    entry = f'"answer": "{answers / "answer_A.json"}", "packet": "{answers / "packet.json"}"'
    index.write_text(f'{{{entry}, "role": "A"}}\n{{{entry}, "role": null}}\n', encoding="utf-8")
    run = CliRun(["answers", str(index), "--jobs", jobs, "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 1
    [found] = run.data["diagnostics"]
    assert found["code"] == "INDEX_ENTRY"
    assert found["location"] == {"file": str(index), "line": 2, "column": 1}
    assert "needs the given document `review`" in found["message"]


def test_a_job_and_its_outcome_cross_to_a_worker_and_back_unchanged() -> None:
    """What `--jobs N` pickles is exactly what the worker and the parent rebuild."""
    job = FilesJob(
        {"answer": Path("/data/answers/a 1.json"), "packet": Path("packets/P1.json")},
        {"role": "B"},
        Path("/data/tree"),
        Location("/data/index.jsonl", 7, 1),
    )
    finding = Diagnostic(
        "LINK_DANGLING",
        "a link names an ID that is not in the revised answer",
        Location("/data/answers/a 1.json", 3, 5, 3, 9, "/final/claims/0"),
        "error",
        "expected C1",
        "uncertainty_links_resolve",
        "ab" * 32,
        ("C1", "U2"),
    )
    outcome = FilesCheck(True, (finding,), {"answer": "/data/answers/a 1.json"}, 57)
    for value in (job, FilesJob({"answer": Path("a.json")}), outcome, FilesCheck(False)):
        back = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        assert back == value and type(back) is type(value)
    assert type(pickle.loads(pickle.dumps(job)).files["packet"]) is type(job.files["packet"])


def test_pickling_by_fields_refuses_a_class_it_cannot_rebuild() -> None:
    @dataclasses.dataclass(frozen=True)
    class KeywordOnly:
        first: int
        second: int = dataclasses.field(kw_only=True)

    with pytest.raises(TypeError, match="positional fields"):
        by_fields(KeywordOnly)
