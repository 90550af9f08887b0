"""Checking many answers: an index of jobs, streamed, optionally across processes.

Results come back in index order, so `--jobs N` output is identical to `--jobs 1`.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from engine.bundle.strictjson import loads_strict
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError, unreadable
from engine.evaluate.answer import AnswerChecker, AnswerJob, AnswerReport
from engine.evaluate.program import compile_program
from engine.ruleset import load_ruleset

_ROLES = ("D", "A", "B")
_KEYS = {"answer", "packet", "role", "draft", "source"}
_CHUNK = 64
_worker_checker: AnswerChecker | None = None


def _job_error(index: Path, line: int, message: str) -> Diagnostic:
    return Diagnostic("INDEX_ENTRY", message, Location(str(index), line, 1))


def read_index(index: Path) -> list[AnswerJob]:
    """Parse an index (JSON Lines of {answer, packet, role[, draft, source]}); paths are
    relative to the index's folder. Every malformed line is reported."""
    try:
        lines = index.read_bytes().splitlines()
    except OSError as error:
        raise unreadable(str(index), error.strerror or type(error).__name__) from None
    base = index.parent
    jobs: list[AnswerJob] = []
    problems: list[Diagnostic] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = loads_strict(raw, f"{index}:{number}")
        except RulecheckError as error:
            problems.append(_job_error(index, number, error.diagnostics[0].message))
            continue
        message = _entry_problem(entry)
        if message:
            problems.append(_job_error(index, number, message))
            continue

        def path(key: str, entry: dict[str, Any] = entry) -> Path | None:
            return base / entry[key] if entry.get(key) is not None else None

        jobs.append(
            AnswerJob(
                base / entry["answer"],
                base / entry["packet"],
                entry["role"],
                path("draft"),
                path("source"),
            )
        )
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    return jobs


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
    checker: AnswerChecker, jobs: Sequence[AnswerJob], rule_paths: Sequence[Path], workers: int
) -> Iterator[AnswerReport]:
    """Reports for `jobs` in order, computed in `workers` processes (1 = this process)."""
    if workers <= 1:
        for job in jobs:
            yield checker.check(job)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, _init_worker, ([str(p) for p in rule_paths],)) as pool:
        for result in pool.imap(_check_in_worker, jobs, chunksize=_CHUNK):
            if isinstance(result, RulecheckError):
                raise result
            yield result
