"""Checking one input's files against a protocol of the rules, named on the command line
or listed in an index (JSON Lines), streamed, optionally across processes.

A `FilesAlias` is a command whose options are named after a protocol's documents
(`rulecheck answer ANSWER --packet P --role R`): which document the argument names,
which options name files, which give a value of a `given` document, and which name a
folder that file builtins read. Nothing here knows any protocol; the alias only names.
Results come back in index order, so `--jobs N` output is identical to `--jobs 1`.
"""

from __future__ import annotations

import collections
import gc
import itertools
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.strictjson import loads_strict
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.alias import FilesAlias, FilesJob
from engine.evaluate.nested import FilesCheck, NestedChecker, files_missing
from engine.evaluate.program import Program, compile_program
from engine.limits import open_input
from engine.ruleset import load_ruleset
from engine.syntax import ast

_CHUNK = 64
_WINDOW = 4096


@dataclass(frozen=True, slots=True)
class FilesResult:
    """A job and what checking it found."""

    job: FilesJob
    outcome: FilesCheck


class FilesRunner:
    """Runs the jobs of one alias; documents shared by many jobs are read once."""

    def __init__(self, program: Program, alias: FilesAlias) -> None:
        self.program = program
        self.alias = alias
        self._checker = NestedChecker(program, None, unreadable_is_usage=True)
        self.protocol = _protocol(self._checker, alias.protocol)
        for graph in self.protocol.graph:  # compiled now, to be frozen with the rest
            program.link_groups_of(graph.text)
        # The compiled rules live as long as the runner and form no garbage: out of the
        # collector's sight, its passes between jobs walk only what the jobs made.
        gc.freeze()

    def run(self, job: FilesJob) -> FilesResult:
        """What the protocol finds in one job's files.

        Raises:
            RulecheckError: exit 2 when a file or the folder cannot be read.
        """
        self._require_files(job)
        given: dict[str, Any] = {}
        for option, (document, member) in self.alias.values.items():
            if option in job.values:
                given.setdefault(document, {})[member] = job.values[option]
        if job.folder is not None:
            if not job.folder.is_dir():
                where = Location(str(job.folder))
                message = f"`{job.folder}` is not a folder"
                raise RulecheckError(
                    [Diagnostic("FILE_UNREADABLE", message, where)], ExitCode.USAGE
                )
            assert self.alias.folder is not None
            given[self.alias.folder[1]] = {"folder": str(job.folder)}
        try:
            outcome = self._checker.check_files(self.protocol, job.files, given, job.folder)
        except ValueError as error:
            if job.entry is not None:  # an index entry that lacks a value: that entry's fault
                diagnostic = Diagnostic("INDEX_ENTRY", str(error), job.entry)
                raise RulecheckError([diagnostic], ExitCode.REFUSED) from None
            raise RulecheckError(
                [Diagnostic("USAGE_PROTOCOL", str(error))], ExitCode.USAGE
            ) from None
        return FilesResult(job, outcome)

    def _require_files(self, job: FilesJob) -> None:
        missing = files_missing(self.protocol, job.files)
        if missing:
            message = f"protocol `{self.alias.protocol}` needs the file of document `{missing[0]}`"
            hint = f"give `--{missing[0]} PATH`"
            raise RulecheckError([Diagnostic("USAGE_PROTOCOL", message, hint=hint)], ExitCode.USAGE)

    def schema_sha256(self) -> str | None:
        """The sha256 of the subject document's schema, if it has one."""
        for clause in self.protocol.documents:
            if clause.name.text == self.alias.subject:
                found = self._checker.schema(clause)
                return found[0] if found is not None else None
        return None


def _protocol(checker: NestedChecker, name: str) -> ast.ProtocolDecl:
    try:
        return checker.protocol(name)
    except ValueError as error:
        raise RulecheckError([Diagnostic("USAGE_PROTOCOL", str(error))], ExitCode.USAGE) from None


def _job_error(index: Path, line: int, message: str) -> Diagnostic:
    return Diagnostic("INDEX_ENTRY", message, Location(str(index), line, 1))


def _entries(index: Path, alias: FilesAlias) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, entry, problem) for every non-blank line, read as a stream."""
    options = alias.options()
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
            yield number, entry, _entry_problem(entry, alias.subject, options)


def read_index(index: Path, alias: FilesAlias) -> Iterator[FilesJob]:
    """The jobs of an index (JSON Lines, one object per job keyed by the alias's argument
    and options), paths relative to the index's folder. The index is read twice as a
    stream, never held: first every malformed line is reported, then the jobs are
    produced one by one (a line malformed only in the second reading, written meanwhile,
    ends them with its `INDEX_ENTRY`)."""
    problems = [
        _job_error(index, number, problem)
        for number, _, problem in _entries(index, alias)
        if problem is not None
    ]
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    return _jobs(index, alias)


def _jobs(index: Path, alias: FilesAlias) -> Iterator[FilesJob]:
    base = index.parent
    for number, entry, problem in _entries(index, alias):
        if problem is not None:  # the first pass found none: the file changed meanwhile
            changed = f"{problem} (the index changed while it was read)"
            raise RulecheckError([_job_error(index, number, changed)], ExitCode.REFUSED)
        present = {key: value for key, value in entry.items() if value is not None}
        files = {
            key: base / present[key] for key in (alias.subject, *alias.files) if key in present
        }
        values = {key: present[key] for key in alias.values if key in present}
        folder = (
            base / present[alias.folder[0]] if alias.folder and alias.folder[0] in present else None
        )
        yield FilesJob(files, values, folder, Location(str(index), number, 1))


def _entry_problem(entry: Any, subject: str, options: tuple[str, ...]) -> str | None:
    """What is wrong with an index entry whose keys may be `options`, `subject` required."""
    if not isinstance(entry, dict):
        return "an index entry must be a JSON object"
    unknown = sorted(entry.keys() - options)
    if unknown:
        return "unknown key(s): " + ", ".join(f"`{key}`" for key in unknown)
    if not isinstance(entry.get(subject), str):
        return f"`{subject}` must be a string"
    for key in options:
        if entry.get(key) is not None and not isinstance(entry[key], str):
            return f"`{key}` must be a string or null"
    return None


_worker: FilesRunner | None = None


def _init_worker(rule_paths: Sequence[str], alias: FilesAlias) -> None:
    global _worker
    _worker = FilesRunner(compile_program(load_ruleset([Path(p) for p in rule_paths])), alias)


def _inherit(runner: FilesRunner) -> Callable[[], None]:
    def adopt() -> None:
        global _worker
        _worker = runner

    return adopt


def _run_in_worker(job: FilesJob) -> FilesCheck | RulecheckError:
    assert _worker is not None
    try:
        return _worker.run(job).outcome  # the parent holds the job: it is not sent back
    except RulecheckError as error:
        return error


def run_jobs(
    runner: FilesRunner, jobs: Iterable[FilesJob], rule_paths: Sequence[Path], workers: int
) -> Iterator[FilesResult]:
    """Results for `jobs` in order, computed in `workers` processes (1 = this process).

    Jobs are handed to the pool a window at a time: the pool would otherwise queue the
    whole stream at once, and memory would grow with the number of jobs.
    """
    if workers <= 1:
        for job in jobs:
            yield runner.run(job)
        return
    arguments = ([str(p) for p in rule_paths], runner.alias)
    sizes = (_WINDOW, _CHUNK)
    handed: collections.deque[FilesJob] = collections.deque()  # two windows at most

    def handing() -> Iterator[FilesJob]:
        for job in jobs:
            handed.append(job)
            yield job

    outcomes = pooled(
        _init_worker, arguments, _run_in_worker, handing(), workers, sizes, _inherit(runner)
    )
    for outcome in outcomes:
        yield FilesResult(handed.popleft(), outcome)


def pooled(
    initializer: Callable[..., None],
    arguments: tuple[Any, ...],
    function: Callable[[Any], Any],
    jobs: Iterable[Any],
    workers: int,
    sizes: tuple[int, int],
    inherit: Callable[[], None] | None = None,
) -> Iterator[Any]:
    """`function` of each job, in job order, computed in `workers` processes set up by
    `initializer(*arguments)`; a worker's RulecheckError is raised here.

    With `inherit`, which sets up in this process what `initializer` would build, and
    where processes can be forked while this one runs no other thread, the workers are
    forked after calling it: they start with the state this process already built instead
    of importing and building it again (about 0.7 s each for the shipped rules). Otherwise
    they are spawned and set up by `initializer`.

    The jobs are handed over a window at a time, in chunks (`sizes`), two windows queued
    at most: the executor's `map` would otherwise submit the whole stream at once, and
    memory would grow with the number of jobs. A worker that dies (killed, out of memory)
    ends the results with `JOBS_WORKER_LOST` (exit 2), never a wait without end. When the
    results end, every worker and multiprocessing's resource tracker have exited: a
    command leaves no process behind.
    """
    # imported here: a process that checks its jobs itself (`--jobs 1`) needs neither
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    window, chunk = sizes
    if inherit is not None and _can_fork():
        inherit()
        sys.stdout.flush()  # a worker would otherwise write what is buffered again at exit
        sys.stderr.flush()
        pool = ProcessPoolExecutor(workers, multiprocessing.get_context("fork"))
    else:
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(workers, context, initializer, arguments)
    try:
        iterator = iter(jobs)
        # The next window is queued before this one's results are read, so the workers
        # never wait for the parent at a window's end.
        queued: collections.deque[Iterator[Any]] = collections.deque()
        while True:
            while len(queued) < 2 and (batch := list(itertools.islice(iterator, window))):
                queued.append(pool.map(function, batch, chunksize=chunk))
            if not queued:
                break
            for result in queued.popleft():
                if isinstance(result, RulecheckError):
                    raise result
                yield result
    except BrokenProcessPool:
        # multiprocessing.Pool would wait forever for the lost worker's results; the
        # executor notices the death, and the command ends with a typed error instead.
        raise _worker_lost() from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        del pool
        _stop_resource_tracker()


def _worker_lost() -> RulecheckError:
    message = (
        "a worker process ended before it returned its results (killed, or out of memory): "
        "nothing is judged"
    )
    hint = "run the command again, with fewer `--jobs` or more memory"
    return RulecheckError([Diagnostic("JOBS_WORKER_LOST", message, hint=hint)], ExitCode.USAGE)


def _can_fork() -> bool:
    """Forking is safe here: the platform has it and no other thread runs (a lock another
    thread holds would stay locked forever in the child)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _stop_resource_tracker() -> None:
    """Stop the process that tracks the pool's semaphores (once the pool is gone, it has
    nothing left to track); left alone it outlives the command until it sees end of file."""
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        stop()
