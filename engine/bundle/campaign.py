"""Load a campaign bundle folder into the documents of the `campaign` graph.

Every file is read strictly and validated by its schema; every problem is located. The
records are kept as the user wrote them; each JSON Lines record's line and bytes are kept
beside them, for the `record_sha256`/`record_line` builtins and for locating findings.
Facts the rules compute themselves through builtins (the ruleset hash, schema digests, file
hashes, seeded orders) are not derived here. Still derived here, until the language can
say them:

* `answers`: the structural check of each session's answer (final and ledger separately);
* `blind`: the anonymous ID and sha256 of the raters' view of each answered review.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle import paths
from engine.bundle.blind import blind_bytes
from engine.bundle.jsonschemas import compiled_schema
from engine.bundle.ordering import blind_answer_id
from engine.bundle.strictjson import loads_strict
from engine.bundle.yamldoc import load_yaml_document
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.answer import AnswerChecker, AnswerJob, AnswerReport
from engine.evaluate.batch import check_answers
from engine.limits import read_input, too_many_values

MANIFEST = "manifest.yaml"
TASKS = "tasks.yaml"
ADJUDICATION_MANIFEST = "adjudication_manifest.yaml"
JSON_LINES = {
    "sessions": ("sessions.jsonl", "session"),
    "requests": ("requests.jsonl", "request"),
    "receipts": ("receipts.jsonl", "receipt"),
    "adjudications": ("adjudications.jsonl", "adjudication"),
}


@dataclass(frozen=True, slots=True)
class Bundle:
    """A loaded bundle: the documents of the campaign graph, and the answer reports."""

    root: Path
    documents: dict[str, Any]
    answer_reports: dict[str, AnswerReport]
    record_lines: dict[str, tuple[tuple[int, bytes], ...]]


def _refuse(diagnostics: list[Diagnostic]) -> RulecheckError:
    return RulecheckError(diagnostics, ExitCode.REFUSED)


def inside(root: Path, relative: Any) -> Path | None:
    """`root/relative` for a bundle path: relative, exact segments, inside the bundle."""
    return paths.inside(root, relative, strict_segments=True)


def _bundle_file(root: Path, name: str, problems: list[Diagnostic]) -> Path | None:
    """A file the bundle must hold, inside it (a link out of the bundle is refused)."""
    shown = root / name
    path = inside(root, name)
    if path is None:
        message = f"`{name}` leads outside the bundle"
        problems.append(Diagnostic("BUNDLE_PATH_OUTSIDE", message, Location(str(shown))))
        return None
    if not path.is_file():
        message = f"the bundle has no `{name}`"
        problems.append(Diagnostic("BUNDLE_FILE_MISSING", message, Location(str(shown))))
        return None
    return path


def _json_lines(
    root: Path, name: str, schema: str, problems: list[Diagnostic]
) -> tuple[list[Any], tuple[tuple[int, bytes], ...]]:
    """The valid records of a JSON Lines file, and each one's physical line and bytes."""
    path = _bundle_file(root, name, problems)
    if path is None:
        return [], ()
    try:
        raw_file = read_input(path)
    except RulecheckError as error:
        problems += error.diagnostics
        return [], ()
    crowded = too_many_values(raw_file, str(path))
    if crowded is not None:
        problems += crowded.diagnostics
        return [], ()
    records: list[Any] = []
    lines: list[tuple[int, bytes]] = []
    validate = compiled_schema(schema)
    for number, raw in enumerate(raw_file.split(b"\n"), start=1):
        if not raw.strip():
            continue
        source = f"{path}:{number}"
        try:
            record = loads_strict(raw, source)
        except RulecheckError as error:
            problems += [
                Diagnostic(
                    d.code,
                    d.message,
                    Location(str(path), number, pointer=d.location.pointer if d.location else None),
                )
                for d in error.diagnostics
            ]
            continue
        errors = validate(record)
        for pointer, _keyword, message in errors:
            problems.append(
                Diagnostic(
                    f"{schema.upper()}_SCHEMA",
                    message,
                    Location(str(path), number, pointer=pointer),
                )
            )
        if not errors:
            records.append(record)
            lines.append((number, raw))
    return records, tuple(lines)


def _yaml(root: Path, name: str, schema: str, code: str, problems: list[Diagnostic]) -> Any:
    path = _bundle_file(root, name, problems)
    if path is None:
        return None
    try:
        return load_yaml_document(path, schema, code)
    except RulecheckError as error:
        problems += error.diagnostics
        return None


def _truth(root: Path, tasks: Any, problems: list[Diagnostic]) -> dict[str, Any]:
    obligations: list[dict[str, Any]] = []
    for task in (tasks or {}).get("tasks", []):
        path = inside(root, f"truth/{task['task_id']}.yaml") or root / "truth" / "?"
        if not path.is_file():
            problems.append(
                Diagnostic(
                    "BUNDLE_FILE_MISSING",
                    f"task `{task['task_id']}` has no frozen truth `truth/{task['task_id']}.yaml`",
                    Location(str(path)),
                )
            )
            continue
        try:
            truth = load_yaml_document(path, "truth", "TRUTH")
        except RulecheckError as error:
            problems += error.diagnostics
            continue
        for obligation in truth["obligations"]:
            obligations.append(
                {**obligation, "task_id": truth["task_id"], "version": truth["version"]}
            )
    return {"obligations": obligations}


@dataclass(frozen=True, slots=True)
class Parallel:
    """How to spread the answer checks: worker processes and the rule paths they load."""

    workers: int = 1
    rule_paths: tuple[Path, ...] = ()


def _answer_jobs(
    root: Path, tasks: Any, manifest: Any, sessions: list[Any]
) -> list[tuple[str, AnswerJob | None]]:
    task_packets = {t["task_id"]: t["packet_id"] for t in (tasks or {}).get("tasks", [])}
    triplet_tasks = {t["triplet_id"]: t["task_id"] for t in (manifest or {}).get("triplets", [])}
    drafts = {s["triplet_id"]: s.get("answer") for s in sessions if s["role"] == "D"}
    jobs: list[tuple[str, AnswerJob | None]] = []
    for session in sessions:
        answer = inside(root, session.get("answer"))
        packet_id = task_packets.get(triplet_tasks.get(session["triplet_id"], ""), "")
        packet = inside(root, f"packets/{packet_id}.json") if packet_id else None
        if answer is None or packet is None or not answer.is_file() or not packet.is_file():
            jobs.append((session["session_id"], None))
            continue
        draft = None
        if session["role"] != "D":
            draft_path = inside(root, drafts.get(session["triplet_id"]))
            draft = draft_path if draft_path is not None and draft_path.is_file() else None
        jobs.append((session["session_id"], AnswerJob(answer, packet, session["role"], draft)))
    return jobs


def _answers(
    root: Path,
    checker: AnswerChecker,
    documents: tuple[Any, Any, list[Any]],
    parallel: Parallel,
) -> tuple[list[dict[str, Any]], dict[str, AnswerReport]]:
    jobs = _answer_jobs(root, *documents)
    runnable = [job for _, job in jobs if job is not None]
    results = iter(check_answers(checker, runnable, parallel.rule_paths, parallel.workers))
    summaries, reports = [], {}
    for session_id, job in jobs:
        if job is None:
            summaries.append({"session_id": session_id, "checked": False})
            continue
        report = next(results)
        reports[session_id] = report
        inputs = {str(job.packet): "packet", str(job.answer): "answer", str(job.draft): "draft"}
        findings = [
            {
                "code": f.code,
                "pointer": f.pointer or "",
                "input": inputs.get(f.file or "", "answer"),
            }
            for f in report.findings
        ]
        summaries.append({"session_id": session_id, "checked": True, "findings": findings})
    return summaries, reports


def answer_final(root: Path, answer: Any) -> Any:
    """The `final` object of an answer file, or None if there is none to show raters."""
    path = inside(root, answer)
    try:
        document = loads_strict(read_input(path), str(path)) if path is not None else None
    except (OSError, RulecheckError):
        return None
    final = document.get("final") if isinstance(document, dict) else None
    return final if isinstance(final, dict) else None


def _blind(root: Path, seed: str, sessions: list[Any], summaries: list[Any]) -> list[Any]:
    checked = {s["session_id"] for s in summaries if s.get("checked")}
    view = []
    for session in sessions:
        if session["role"] == "D" or session["session_id"] not in checked:
            continue
        final = answer_final(root, session["answer"])
        if final is None:
            continue
        answer_id = blind_answer_id(seed, session["session_id"])
        digest = hashlib.sha256(blind_bytes(answer_id, final)).hexdigest()
        view.append({"answer_id": answer_id, "session_id": session["session_id"], "sha256": digest})
    return view


def load_bundle(root: Path, checker: AnswerChecker, parallel: Parallel | None = None) -> Bundle:
    """Read every file of a bundle and derive the computed documents.

    Raises:
        RulecheckError: exit 2 if `root` is not a folder; exit 1 listing every malformed file.
    """
    if not root.is_dir():
        raise RulecheckError(
            [
                Diagnostic(
                    "FILE_UNREADABLE", f"`{root}` is not a bundle folder", Location(str(root))
                )
            ],
            ExitCode.USAGE,
        )
    problems: list[Diagnostic] = []
    manifest = _yaml(root, MANIFEST, "execution_manifest", "MANIFEST", problems)
    tasks = _yaml(root, TASKS, "task_registry", "TASKS", problems)
    adjudication_manifest = _yaml(
        root, ADJUDICATION_MANIFEST, "adjudication_manifest", "ADJUDICATION_MANIFEST", problems
    )
    read = {
        name: _json_lines(root, file, schema, problems)
        for name, (file, schema) in JSON_LINES.items()
    }
    lines = {name: records for name, (records, _) in read.items()}
    truth = _truth(root, tasks, problems)
    if problems:
        raise _refuse(problems)
    registry = (tasks, manifest, lines["sessions"])
    summaries, reports = _answers(root, checker, registry, parallel or Parallel())
    documents: dict[str, Any] = {
        "manifest": manifest,
        "tasks": tasks,
        "adjudication_manifest": adjudication_manifest,
        **lines,
        "truth": truth,
        "answers": summaries,
        "blind": _blind(root, manifest["trial_seed"], lines["sessions"], summaries),
    }
    record_lines = {name: positions for name, (_, positions) in read.items()}
    return Bundle(root, documents, reports, record_lines)
