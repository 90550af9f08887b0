"""Checking many answers: an index of jobs, streamed, optionally across processes.

Results come back in index order, so `--jobs N` output is identical to `--jobs 1`.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from engine.bundle.strictjson import loads_strict
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.answer import AnswerChecker, AnswerJob, AnswerReport
from engine.evaluate.program import compile_program
from engine.limits import open_input
from engine.ruleset import load_ruleset

_ROLES = ("D", "A", "B")
_KEYS = {"answer", "packet", "role", "draft", "source"}
_CHUNK = 64
_WINDOW = 4096
_worker_checker: AnswerChecker | None = None


def _job_error(index: Path, line: int, message: str) -> Diagnostic:
    return Diagnostic("INDEX_ENTRY", message, Location(str(index), line, 1))


def _entries(index: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, entry, problem) for every non-blank line, read as a stream."""
    stream = open_input(index)
    with stream:
        for number, raw in enumerate(stream, start=1):
            if not raw.strip():
                continue
            try:
                entry = loads_strict(raw.rstrip(b"\r\n"), f"{index}:{number}")
            except RulecheckError as error:
                yield number, None, error.diagnostics[0].message
                continue
            yield number, entry, _entry_problem(entry)


def read_index(index: Path) -> Iterator[AnswerJob]:
    """The jobs of an index (JSON Lines of {answer, packet, role[, draft, source]}), paths
    relative to the index's folder. The index is read twice as a stream, never held: first
    every malformed line is reported, then the jobs are produced one by one."""
    problems = [
        _job_error(index, number, problem)
        for number, _, problem in _entries(index)
        if problem is not None
    ]
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    return _jobs(index)


def _jobs(index: Path) -> Iterator[AnswerJob]:
    base = index.parent
    for _, entry, _ in _entries(index):

        def path(key: str, entry: dict[str, Any] = entry) -> Path | None:
            return base / entry[key] if entry.get(key) is not None else None

        yield AnswerJob(
            base / entry["answer"],
            base / entry["packet"],
            entry["role"],
            path("draft"),
            path("source"),
        )


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "an index entry must be a JSON object"
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        return "unknown key(s): " + ", ".join(f"`{key}`" for key in unknown)
    for key in ("answer", "packet", "role"):
        if not isinstance(entry.get(key), str):
            return f"`{key}` must be a string"
    if entry["role"] not in _ROLES:
        return f"`role` must be one of {', '.join(_ROLES)}"
    for key in ("draft", "source"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            return f"`{key}` must be a string or null"
    return None


def _init_worker(rule_paths: Sequence[str]) -> None:
    global _worker_checker
    _worker_checker = AnswerChecker(compile_program(load_ruleset([Path(p) for p in rule_paths])))


def _check_in_worker(job: AnswerJob) -> AnswerReport | RulecheckError:
    assert _worker_checker is not None
    try:
        return _worker_checker.check(job)
    except RulecheckError as error:
        return error


def check_answers(
    checker: AnswerChecker, jobs: Iterable[AnswerJob], rule_paths: Sequence[Path], workers: int
) -> Iterator[AnswerReport]:
    """Reports for `jobs` in order, computed in `workers` processes (1 = this process).

    Jobs are handed to the pool a window at a time: `Pool.imap` would otherwise queue the
    whole stream at once, and memory would grow with the number of answers.
    """
    if workers <= 1:
        for job in jobs:
            yield checker.check(job)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, _init_worker, ([str(p) for p in rule_paths],)) as pool:
        iterator = iter(jobs)
        while window := list(itertools.islice(iterator, _WINDOW)):
            for result in pool.imap(_check_in_worker, window, chunksize=_CHUNK):
                if isinstance(result, RulecheckError):
                    raise result
                yield result
