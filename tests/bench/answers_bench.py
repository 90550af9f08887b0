"""Benchmark of `rulecheck answers` against the hand-written reference checker.

`section(sizes)` returns the markdown section of `docs/performance.md` on checking answer
campaigns; `.venv/bin/python tests/bench/answers_bench.py [--sizes 1000]` prints it
(progress goes to stderr). Not a test: a full run (10,000 and 50,000 answers) takes tens of
minutes on the 2-core reference machine and needs ~1 GB of free space under /tmp.

For each size N it generates a synthetic campaign of valid B answers
(`tests/bench/generate.py`, timed but not counted) into a temporary folder under /tmp,
then, in the same run over the same files:

* runs `rulecheck answers INDEX --jobs 1 --format json` and the same with `--jobs 2` as
  child processes, measuring wall time, the child's CPU time and its peak RSS;
* runs the reference checker (`tests/bench/reference_checker.py`) over the same index in
  this process, measuring wall and CPU time;
* checks that the run was real: rulecheck's JSON summary must report N answers, all
  structurally valid, and so must the reference.

Peak RSS method: the child is forked from the small `tests/bench/spawn.py` (not from this
process, whose high-water mark a child forked from it would inherit) and reaped there with
`os.wait4`, which returns the kernel's resource usage for that child alone (the same figure
GNU `/usr/bin/time -v` prints, without depending on that tool): `ru_maxrss` is the peak RSS
of the largest single process among the child and the descendants it reaped, i.e. for
`--jobs 2` the larger of the parent and either worker. For `--jobs 2` the table also gives
the peak of the *summed* RSS of the whole process tree, sampled from /proc every 0.2 s
(a sample can miss a short spike; it is a lower bound of the true peak sum).

Separately, a 1,000-answer campaign in which every 10th answer is mutated to be invalid
(cycling through `reference_checker.MUTATIONS`) is checked by both; both must flag
exactly the mutated answers, each with the mutation's expected code.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_checker as reference  # tests/bench/reference_checker.py
from generate import generate  # tests/bench/generate.py

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024
GIB = 1024 * MIB
# Each generated answer is ~14 KB (one 4 KiB-block file system: 16 KiB); keep a margin.
BYTES_PER_ANSWER = 24 * 1024
DISK_MARGIN = 256 * MIB
MUTATED_ANSWERS = 1000
MUTATE_EVERY = 10
SAMPLE_SECONDS = 0.2


def _log(message: str) -> None:
    print(f"[answers_bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---- the machine ---------------------------------------------------------------------------


def machine() -> dict[str, str]:
    """CPU model, cores, RAM, Python and kernel of this machine, and its load right now."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "CPU": cpu,
        "cores": str(os.cpu_count()),
        "RAM": ram,
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "OS": f"{platform.system()} {platform.release()}",
        "load average at start (1/5/15 min)": load,
    }


# ---- measuring a child process -------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """`pid` and every process below it (via /proc/PID/task/TID/children)."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as stream:
                    stack.extend(int(child) for child in stream.read().split())
            except OSError:
                continue
    return found


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as stream:
            return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


class TreeRssSampler(threading.Thread):
    """Samples the summed RSS of a process tree until stopped; keeps the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            # the root is the spawner (tests/bench/spawn.py), not the measured command
            total = sum(_rss_bytes(pid) for pid in _descendants(self.pid)[1:])
            self.peak = max(self.peak, total)
            self._stop_event.wait(SAMPLE_SECONDS)

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return self.peak


@dataclass(frozen=True)
class ChildRun:
    """One measured child process."""

    command: list[str]
    exit_code: int
    wall: float
    cpu: float  # user + system seconds of the child and the descendants it reaped
    max_rss: int  # bytes; largest single process (ru_maxrss)
    tree_rss: int  # bytes; sampled peak of the summed RSS of the process tree
    stdout: bytes
    stderr: bytes
    left_behind: int  # processes of the child's own process group alive after it exited


def _group_members(group: int) -> list[int]:
    """Live (not zombie) processes whose process group is `group`, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stream:
                fields = stream.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry))
    return found


def run_child(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> ChildRun:
    """Run `command` to completion; wall time, CPU time and peak RSS of exactly that command.

    The command is forked from `tests/bench/spawn.py`, not from this (large) process, so its
    peak RSS is its own. The spawner leads a session and process group of its own, so that
    whatever the command starts can be found after it exits: any live member of that group
    then was left behind (counted, then killed so that it does not disturb what follows).
    """
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory(prefix="bench-spawn-") as scratch,
    ):
        result = Path(scratch) / "result.json"
        spawner = [sys.executable, str(Path(__file__).resolve().parent / "spawn.py"), str(result)]
        process = subprocess.Popen(
            [*spawner, *command], cwd=cwd, stdout=out, stderr=err, env=env, start_new_session=True
        )
        sampler = TreeRssSampler(process.pid)
        sampler.start()
        try:
            process.wait()
        except BaseException:
            os.killpg(process.pid, signal.SIGKILL)
            raise
        left_behind = _group_members(process.pid)
        if left_behind:
            os.killpg(process.pid, signal.SIGKILL)
        tree_rss = sampler.stop()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        if not result.exists():
            raise RuntimeError(f"spawn.py failed ({process.returncode}): {stderr.decode()[-2000:]}")
        measured = json.loads(result.read_text(encoding="utf-8"))
    return ChildRun(
        command,
        measured["exit_code"],
        measured["wall"],
        measured["cpu"],
        measured["max_rss"],
        tree_rss,
        stdout,
        stderr,
        len(left_behind),
    )


def rulecheck_command() -> list[str]:
    """`rulecheck` of this interpreter's environment (.venv/bin/rulecheck)."""
    script = Path(sys.executable).parent / "rulecheck"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from engine.cli import main; main()"]


def _shown(command: Sequence[str]) -> str:
    parts = [str(Path(p).relative_to(ROOT)) if p.startswith(str(ROOT)) else p for p in command]
    return " ".join(parts)


def run_rulecheck(index: Path, jobs: int) -> ChildRun:
    command = [*rulecheck_command(), "answers", str(index), "--jobs", str(jobs), "--format", "json"]
    return run_child(command, ROOT)


def _summary(run: ChildRun) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(run.stdout)
    except ValueError:
        raise RuntimeError(
            f"`{_shown(run.command)}` exited {run.exit_code} without a JSON summary:\n"
            + run.stderr.decode(errors="replace")[-2000:]
        ) from None
    return data


# ---- measuring the reference checker -------------------------------------------------------


@dataclass(frozen=True)
class ReferenceRun:
    answers: int
    flagged: dict[str, list[str]]
    wall: float
    cpu: float


def run_reference(index: Path) -> ReferenceRun:
    cpu = time.process_time()
    started = time.perf_counter()
    answers, flagged, _ = reference.run_index(index)
    wall = time.perf_counter() - started
    return ReferenceRun(answers, flagged, wall, time.process_time() - cpu)


# ---- one size ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SizeResult:
    size: int
    generate_seconds: float
    jobs1: ChildRun
    jobs2: ChildRun
    reference: ReferenceRun
    rounds: int = 1


def least_child(runs: Sequence[ChildRun]) -> ChildRun:
    """The least disturbed of several runs of one command: the run of least CPU, with the
    least wall time of them all, and the processes every run left behind.

    Raises:
        RuntimeError: the runs did not all write the same output.
    """
    best = min(runs, key=lambda run: run.cpu)
    if any(run.stdout != best.stdout for run in runs):
        raise RuntimeError(f"`{_shown(best.command)}` wrote different outputs in its runs")
    return dataclasses.replace(
        best,
        wall=min(run.wall for run in runs),
        left_behind=sum(run.left_behind for run in runs),
    )


def least_reference(runs: Sequence[ReferenceRun]) -> ReferenceRun:
    """The least wall and CPU time of several runs of the reference."""
    return dataclasses.replace(
        runs[0], wall=min(run.wall for run in runs), cpu=min(run.cpu for run in runs)
    )


def _workdir(answers: int) -> Path:
    needed = answers * BYTES_PER_ANSWER + DISK_MARGIN
    free = shutil.disk_usage("/tmp").free
    if free < needed:
        raise RuntimeError(
            f"{answers:,} answers need ~{needed / GIB:.2f} GiB under /tmp; "
            f"{free / GIB:.2f} GiB free"
        )
    return Path(tempfile.mkdtemp(prefix="answers-bench-", dir="/tmp"))


def _require_all_valid(run: ChildRun, size: int) -> None:
    data = _summary(run)
    if data.get("answers") != size or data.get("structural_ok") != size or run.exit_code != 0:
        raise RuntimeError(
            f"`{_shown(run.command)}` (exit {run.exit_code}) did not report {size} valid answers: "
            f"answers={data.get('answers')}, structural_ok={data.get('structural_ok')}"
        )


def measure_startup() -> ChildRun:
    """rulecheck over an empty index: the fixed cost of every run."""
    with tempfile.TemporaryDirectory(prefix="answers-bench-", dir="/tmp") as folder:
        index = Path(folder) / "index.jsonl"
        index.write_bytes(b"")
        run = run_rulecheck(index, 1)
        _require_all_valid(run, 0)
    _log(f"start-up: {run.wall:.1f} s wall, {run.cpu:.1f} s CPU")
    return run


def measure_size(size: int, rounds: int = 1) -> SizeResult:
    """Generate a campaign of `size` valid answers and time both checkers over it, in
    `rounds` alternating rounds (`--jobs 1`, `--jobs 2`, the reference), each figure the
    least of its rounds: the run least disturbed by whatever else the machine does."""
    root = _workdir(size)
    try:
        _log(f"{size:,} answers: generating into {root}")
        started = time.perf_counter()
        index = generate(root, size)
        generate_seconds = time.perf_counter() - started
        _log(f"{size:,} answers: generated in {generate_seconds:.1f} s")
        jobs1, jobs2, ref = [], [], []
        for number in range(1, rounds + 1):
            jobs1.append(run_rulecheck(index, 1))
            _require_all_valid(jobs1[-1], size)
            jobs2.append(run_rulecheck(index, 2))
            _require_all_valid(jobs2[-1], size)
            ref.append(run_reference(index))
            if ref[-1].answers != size or ref[-1].flagged:
                raise RuntimeError(
                    f"the reference read {ref[-1].answers} answers "
                    f"and flagged {len(ref[-1].flagged)}"
                )
            _log(
                f"{size:,} answers, round {number}/{rounds}: --jobs 1 {jobs1[-1].cpu:.1f} s CPU, "
                f"--jobs 2 {jobs2[-1].wall:.1f} s wall against {jobs1[-1].wall:.1f}, "
                f"reference {ref[-1].cpu:.1f} s CPU"
            )
        return SizeResult(
            size,
            generate_seconds,
            least_child(jobs1),
            least_child(jobs2),
            least_reference(ref),
            rounds,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---- instructions, a count the machine's other work does not change ----------------------------

# `valgrind --tool=cachegrind` runs a command on a simulated CPU and counts the machine
# instructions it executes: two runs of one build agree within 0.3 % (string hashing is
# randomised per process), where this machine's timings spread by 10 % and more.
_INSTRUCTIONS = re.compile(rb"I\s+refs:\s+([0-9,]+)")


@dataclass(frozen=True)
class InstructionCounts:
    """Instructions executed by each checker over the first `sizes[0]` and `sizes[1]`
    answers of one generated campaign (each checker in a process of its own)."""

    sizes: tuple[int, int]
    rulecheck: tuple[int, int]
    reference: tuple[int, int]

    def per_answer(self, counts: tuple[int, int]) -> float:
        """Instructions per answer: the difference between the two sizes, per answer."""
        return (counts[1] - counts[0]) / (self.sizes[1] - self.sizes[0])

    def fixed(self, counts: tuple[int, int]) -> float:
        """Instructions of the run that no answer adds: start-up, imports, the rules."""
        return counts[0] - self.sizes[0] * self.per_answer(counts)

    def ratio(self, answers: int) -> float:
        """rulecheck's instructions for `answers` answers (its start-up included) over the
        reference's per-answer instructions times `answers` (the reference is timed in the
        benchmark's own process, so its start-up is not counted there either)."""
        total = self.fixed(self.rulecheck) + answers * self.per_answer(self.rulecheck)
        return total / (answers * self.per_answer(self.reference))


def _instructions(command: list[str]) -> int:
    """The instructions `command` executes, as cachegrind counts them."""
    counter = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    run = subprocess.run(
        [*counter, *command],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    found = _INSTRUCTIONS.findall(run.stderr)
    if run.returncode != 0 or not found:
        raise RuntimeError(
            f"cachegrind on `{_shown(command)}` exited {run.returncode}:\n"
            + run.stderr.decode(errors="replace")[-2000:]
        )
    return int(found[-1].replace(b",", b""))


def count_instructions(sizes: tuple[int, int] = (200, 600)) -> InstructionCounts | None:
    """Count both checkers' instructions over the first `sizes` answers of a generated
    campaign; None when valgrind is not installed."""
    if shutil.which("valgrind") is None:
        _log("instructions: valgrind is not installed; not counted")
        return None
    root = _workdir(sizes[1])
    try:
        index = generate(root, sizes[1])
        lines = index.read_bytes().splitlines(keepends=True)
        indexes = []
        for size in sizes:
            indexes.append(root / f"index-{size}.jsonl")
            indexes[-1].write_bytes(b"".join(lines[:size]))
        _require_all_valid(run_rulecheck(indexes[0], 1), sizes[0])  # the parse cache warm
        reference_script = str(Path(__file__).resolve().parent / "reference_checker.py")
        counted: dict[str, list[int]] = {"rulecheck": [], "reference": []}
        for size, path in zip(sizes, indexes, strict=True):
            answers = [*rulecheck_command(), "answers", str(path), "--jobs", "1"]
            counted["rulecheck"].append(_instructions([*answers, "--format", "json"]))
            by_hand = [sys.executable, reference_script, str(path)]
            counted["reference"].append(_instructions(by_hand))
            _log(f"instructions, {size} answers: {counted}")
        return InstructionCounts(
            sizes,
            (counted["rulecheck"][0], counted["rulecheck"][1]),
            (counted["reference"][0], counted["reference"][1]),
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---- the mutated campaign --------------------------------------------------------------------


@dataclass(frozen=True)
class AgreementResult:
    answers: int
    mutated: int
    rulecheck_flagged: int
    reference_flagged: int
    rulecheck_exact: bool  # flags exactly the mutated answers
    reference_exact: bool
    expected_codes: int  # mutated answers whose expected code both reported
    codes_equal: int  # flagged answers whose code multisets are identical
    codes_subset: int  # ... whose reference codes are a strict subset of rulecheck's
    rulecheck: ChildRun
    reference: ReferenceRun


def measure_agreement(answers: int = MUTATED_ANSWERS) -> AgreementResult:
    """Every 10th answer mutated: do rulecheck and the reference flag exactly those?"""
    root = _workdir(answers)
    try:
        _log(f"agreement: {answers:,} answers, every {MUTATE_EVERY}th mutated")
        index = generate(root, answers)
        expected: dict[str, str] = {}
        for number in range(0, answers, MUTATE_EVERY):
            path = root / f"answers/a{number:06d}.json"
            raw, _, code = reference.mutate(path.read_bytes(), number // MUTATE_EVERY)
            path.write_bytes(raw)
            expected[str(path.resolve())] = code
        run = run_rulecheck(index, 1)
        data = _summary(run)
        if data.get("answers") != answers:
            raise RuntimeError(f"rulecheck checked {data.get('answers')} of {answers} answers")
        engine_codes = {
            str(Path(report["answer"]).resolve()): [f["code"] for f in report["findings"]]
            for report in data["with_findings"]
        }
        ref = run_reference(index)
        ref_codes = {str(Path(path).resolve()): codes for path, codes in ref.flagged.items()}
        both = engine_codes.keys() & ref_codes.keys()
        equal = sum(Counter(engine_codes[p]) == Counter(ref_codes[p]) for p in both)
        subset = sum(
            Counter(engine_codes[p]) != Counter(ref_codes[p])
            and set(ref_codes[p]) <= set(engine_codes[p])
            for p in both
        )
        hit = sum(
            code in engine_codes.get(p, ()) and code in ref_codes.get(p, ())
            for p, code in expected.items()
        )
        _log(
            f"agreement: rulecheck flagged {len(engine_codes)}, reference {len(ref_codes)}, "
            f"mutated {len(expected)}"
        )
        return AgreementResult(
            answers,
            len(expected),
            len(engine_codes),
            len(ref_codes),
            engine_codes.keys() == expected.keys(),
            ref_codes.keys() == expected.keys(),
            hit,
            equal,
            subset,
            run,
            ref,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---- the markdown section ------------------------------------------------------------------


def _mib(value: int) -> str:
    return f"{value / MIB:,.0f}"


def _rate(size: int, seconds: float) -> str:
    return f"{size / seconds:,.0f}"


def _ms(size: int, seconds: float) -> str:
    return f"{seconds / size * 1000:.2f}"


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def render(
    results: list[SizeResult],
    agreement: AgreementResult,
    startup: ChildRun,
    info: dict[str, str],
    when: str,
    counts: InstructionCounts | None = None,
) -> str:
    """The markdown section for the measured results."""
    sizes = " ".join(str(r.size) for r in results)
    lines = [
        "## Checking answer campaigns: `rulecheck answers` against a hand-written reference",
        "",
        f"Measured {when} by `.venv/bin/python tests/bench/answers_bench.py --sizes {sizes}`. "
        "Each campaign is generated by `tests/bench/generate.py` (valid B answers of 75 "
        "records and 24 citations, ~14 KB each, over 8 packets of 12 items) into a "
        "temporary folder under /tmp; generation is timed but not counted. All runs read "
        "the same files, already in the page cache. The *reference* is "
        "`tests/bench/reference_checker.py`: the same strict JSON, schema and link-rule "
        "checks written by hand in plain Python (dict/set look-ups, compiled regexes), run "
        "in the benchmark's own process. The three are run in turn, "
        f"{_rounds(results)}; each time (wall, CPU) is the least of its runs, the "
        "least disturbed by whatever else the machine does, and peak RSS is that of the "
        "run of least CPU.",
        "",
        "| machine | |",
        "| --- | --- |",
        *(f"| {key} | {value} |" for key, value in info.items()),
        "",
        "Commands (INDEX is the campaign's `index.jsonl`):",
        "",
        f"- `{_shown(rulecheck_command())} answers INDEX --jobs 1 --format json`",
        f"- `{_shown(rulecheck_command())} answers INDEX --jobs 2 --format json`",
        "- reference: `reference_checker.run_index(INDEX)` (in-process; includes reading "
        "the index, the packets and every answer file)",
        "",
        "| answers | checker | wall s | answers/s | ms/answer | CPU s | CPU ms/answer "
        "| peak RSS MiB |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| 0 | rulecheck start-up (empty index) | {startup.wall:.1f} | | | {startup.cpu:.1f} | "
        f"| {_mib(startup.max_rss)} |",
    ]
    for r in results:
        n = r.size
        lines += [
            f"| {n:,} | generate (not counted) | {r.generate_seconds:.1f} | | | | | |",
            f"| {n:,} | rulecheck `--jobs 1` | {r.jobs1.wall:.1f} | {_rate(n, r.jobs1.wall)} "
            f"| {_ms(n, r.jobs1.wall)} | {r.jobs1.cpu:.1f} | {_ms(n, r.jobs1.cpu)} "
            f"| {_mib(r.jobs1.max_rss)} |",
            f"| {n:,} | rulecheck `--jobs 2` | {r.jobs2.wall:.1f} | {_rate(n, r.jobs2.wall)} "
            f"| {_ms(n, r.jobs2.wall)} | {r.jobs2.cpu:.1f} | {_ms(n, r.jobs2.cpu)} "
            f"| {_mib(r.jobs2.max_rss)} per process, {_mib(r.jobs2.tree_rss)} summed |",
            f"| {n:,} | reference (in-process) | {r.reference.wall:.1f} "
            f"| {_rate(n, r.reference.wall)} | {_ms(n, r.reference.wall)} "
            f"| {r.reference.cpu:.1f} | {_ms(n, r.reference.cpu)} | |",
        ]
    lines += _instruction_lines(counts, [r.size for r in results])
    a = agreement
    lines += [
        "",
        f"Agreement on invalid answers: a {a.answers:,}-answer campaign with every "
        f"{MUTATE_EVERY}th answer mutated (cycling through the {len(reference.MUTATIONS)} "
        "mutations of `reference_checker.MUTATIONS`: missing/duplicate disposition, dangling "
        "link, 33rd claim, duplicate key, `1.0` as a line, NaN, trailing data, invalid UTF-8, "
        "unknown E ID, a line past the final newline, ...).",
        "",
        "| | rulecheck `--jobs 1` | reference |",
        "| --- | ---: | ---: |",
        f"| answers flagged (of {a.mutated} mutated) | {a.rulecheck_flagged} "
        f"| {a.reference_flagged} |",
        f"| flags exactly the mutated answers | {_yes(a.rulecheck_exact)} "
        f"| {_yes(a.reference_exact)} |",
        f"| wall s | {a.rulecheck.wall:.2f} | {a.reference.wall:.2f} |",
        "",
        f"Both report the mutation's expected code for {a.expected_codes} of {a.mutated} "
        f"mutated answers; their code lists are identical for {a.codes_equal} and the "
        f"reference's is a subset of rulecheck's for {a.codes_subset} (after a schema "
        "problem the reference stops, while rulecheck still runs the link rules).",
        "",
        "How it is measured: wall time is `time.perf_counter` around the child process, so "
        "it includes the fixed start-up (imports, loading and compiling the rules) shown by "
        "the empty-index row, which `--jobs 2` pays again in each worker; CPU s is the "
        "child's user+system time, workers included. The reference's figures are this "
        "process's wall and CPU time around `run_index`. Peak RSS is `ru_maxrss` from "
        "`os.wait4` on the child (forked from the small `tests/bench/spawn.py`, so that it "
        "does not inherit the benchmark's own peak), the figure GNU `time -v` prints: the "
        "largest single "
        "process of the child's tree. For `--jobs 2` the summed RSS of the parent and its "
        f"workers is sampled from /proc every {SAMPLE_SECONDS:g} s. The machine is shared: "
        "a load average near or above the core count means other work competed for the "
        "cores, which inflates wall times; CPU times are the steadier figure.",
        "",
    ]
    return "\n".join(lines)


def _instruction_lines(counts: InstructionCounts | None, sizes: Sequence[int]) -> list[str]:
    """The instruction counts as a paragraph and a table (a sentence when not counted)."""
    if counts is None:
        return ["", "Instructions were not counted: valgrind is not installed."]
    small, large = counts.sizes
    mine, theirs = counts.per_answer(counts.rulecheck), counts.per_answer(counts.reference)
    fixed_mine, fixed_theirs = counts.fixed(counts.rulecheck), counts.fixed(counts.reference)
    return [
        "",
        "Instructions executed, counted by cachegrind (`valgrind --tool=cachegrind "
        "--cache-sim=no`) on the first "
        f"{small:,} and {large:,} answers of one generated campaign, each checker in a "
        "process of its own (the reference as `python tests/bench/reference_checker.py "
        f"INDEX`): per answer, the difference between the two runs over {large - small:,} "
        "answers; fixed, the rest of the smaller run. Two counts of one build differ by "
        "less than 0.3 % (string hashing is randomised per process), where the times "
        "above move by 10 % and more between benches on this shared machine, so a count "
        "shows where the engine stands apart from that spread. At N "
        "answers the ratio is rulecheck's fixed and per-answer instructions over the "
        "reference's per-answer instructions (the reference's own start-up is not timed "
        "above either). Instructions are not time: a dict look-up that misses the cache "
        "costs more than one that does not.",
        "",
        "| checker | per answer | fixed (start-up) | "
        + " | ".join(f"ratio at {n:,}" for n in sizes)
        + " |",
        "| --- | ---: | ---: | " + " | ".join("---:" for _ in sizes) + " |",
        f"| rulecheck `--jobs 1` | {mine / 1e6:.2f} M | {fixed_mine / 1e6:,.0f} M | "
        + " | ".join(f"{counts.ratio(n):.2f}×" for n in sizes)
        + " |",
        f"| reference | {theirs / 1e6:.2f} M | {fixed_theirs / 1e6:,.0f} M | "
        + " | ".join("" for _ in sizes)
        + " |",
        f"| per answer, rulecheck / reference | {mine / theirs:.2f}× | | "
        + " | ".join("" for _ in sizes)
        + " |",
    ]


def _rounds(results: Sequence[SizeResult]) -> str:
    counts = sorted({r.rounds for r in results})
    return "once" if counts == [1] else f"{'/'.join(map(str, counts))} rounds at each size"


def section(sizes: tuple[int, ...] = (10_000, 50_000)) -> str:
    """Measure every size and the mutated campaign; return the markdown section."""
    info = machine()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    startup = measure_startup()
    results = [measure_size(size) for size in sorted(sizes)]
    agreement = measure_agreement()
    if not (agreement.rulecheck_exact and agreement.reference_exact):
        _log("WARNING: the checkers do not flag exactly the mutated answers")
    return render(results, agreement, startup, info, when, count_instructions())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10_000, 50_000], help="campaign sizes"
    )
    args = parser.parse_args(argv)
    print(section(tuple(args.sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
