"""The evaluation receipt: `check --receipt FILE` and `verify-receipt FILE BUNDLE`.

A receipt is a small canonical JSON document that binds one verdict to everything it was
computed from: the sha256 of every file the check read (the bundle's files by their path
inside the bundle, the rule and schema files by their path from the rule folder), the
manifest hash (the document the protocol's `freeze` clause writes, as published before the
run), the ruleset hash and the lock's sha256, the evaluator's identity (`inventory`
without the machine), the verdict, every rule outcome, and the sha256 of the full JSON
report. Paths inside the report are written as `$BUNDLE/...` and `$RULES/...` before it is
hashed, so a reader who stores the bundle elsewhere recomputes the same hash.

Verifying re-runs the check offline on the reader's copy and compares every field; each
field that differs is one `RECEIPT_MISMATCH`, located at that field of the receipt.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.strictjson import loads_strict, locate
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.program import portable_path as _portable
from engine.evaluate.protocol import ProtocolResult
from engine.limits import read_input, recording_reads
from engine.pointer import pointer_of
from engine.report.output import to_json

RECEIPT_FORMAT = 1
BUNDLE_MARK = "$BUNDLE"
RULES_MARK = "$RULES"
_FIELDS = (
    "receipt",
    "protocol",
    "strict",
    "inputs",
    "manifest_sha256",
    "ruleset_hash",
    "lock_sha256",
    "evaluator",
    "admitted",
    "verdict",
    "passed",
    "outcomes",
    "decisions",
    "report_sha256",
)


@dataclass(frozen=True, slots=True)
class Invocation:
    """What a receipt run checks: the bundle, the rule locations, the optional lock, the
    protocol (None: as `check` finds it) and `--strict`."""

    bundle: Path
    rules: tuple[Path, ...]
    lock: Path | None
    protocol: str | None
    strict: bool


@dataclass(frozen=True, slots=True)
class ReceiptRun:
    """A check run with its receipt: the protocol result, its JSON report and the receipt."""

    result: ProtocolResult
    report: dict[str, Any]
    receipt: dict[str, Any]


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def run_with_receipt(invocation: Invocation) -> ReceiptRun:
    """Load the rules (pinned to the lock, if any), evaluate the bundle as `check` does
    and build the receipt from every file read meanwhile. Paths are made absolute first,
    so that the report's paths can be written relative to the bundle and rule folders.

    Raises:
        RulecheckError: as `check` (the rules, the lock or the bundle refused).
    """
    from engine.evaluate.program import compile_program
    from engine.evaluate.protocol import bundle_protocol, evaluate_protocol, reported_tables
    from engine.freeze.diff import refuse_unlocked
    from engine.report.protocol_report import protocol_json
    from engine.ruleset import load_ruleset

    roots = _roots(invocation)
    bundle = roots.bundle
    with recording_reads() as reads:
        ruleset = load_ruleset([_absolute(path) for path in invocation.rules])
        if invocation.lock is not None:
            refuse_unlocked(invocation.lock, ruleset.hashed)
        program = compile_program(ruleset)
        protocol = bundle_protocol(program, bundle, invocation.protocol)
        found = evaluate_protocol(program, bundle, protocol, reported_tables(protocol))
    report = protocol_json(found, invocation.strict)
    lock_path = _lock_path(invocation)
    receipt = {
        "receipt": RECEIPT_FORMAT,
        "protocol": {"name": protocol.name.text, "hash": found.protocol_hash},
        "strict": invocation.strict,
        "inputs": _inputs(reads, roots, lock_path),
        "manifest_sha256": _manifest_sha256(found),
        "ruleset_hash": ruleset.hashed.ruleset_hash,
        "lock_sha256": None if lock_path is None else reads.get(lock_path),
        "evaluator": _evaluator(),
        "admitted": found.admitted,
        "verdict": report["verdict"],
        "passed": report["passed"],
        "outcomes": dict(sorted(found.graph.evaluation.outcomes.items())),
        "decisions": {
            d.name: {"verdict": d.verdict, "row": d.row} for d in found.graph.evaluation.decisions
        },
        "report_sha256": report_sha256(report, roots, reads),
    }
    return ReceiptRun(found, report, receipt)


def _roots(invocation: Invocation) -> _Roots:
    rules = [_absolute(path) for path in invocation.rules]
    return _Roots(_absolute(invocation.bundle), _rules_root(rules))


def _lock_path(invocation: Invocation) -> str | None:
    return None if invocation.lock is None else os.path.abspath(invocation.lock)


def _evaluator() -> dict[str, Any]:
    from engine.inventory import evaluator_identity

    return evaluator_identity()


@dataclass(frozen=True, slots=True)
class _Roots:
    """The absolute bundle folder and the folder rule and schema paths are written from."""

    bundle: Path
    rules: Path

    def marks(self) -> list[tuple[str, str]]:
        """Each absolute folder and the mark it is written as, the longest first (one may
        hold the other)."""
        pairs = [(str(self.bundle), BUNDLE_MARK), (str(self.rules), RULES_MARK)]
        return sorted(pairs, key=lambda pair: -len(pair[0]))

    def portable(self, files: Iterable[str]) -> dict[str, str]:
        """Each file of the working folder as a report names it (relative to that folder:
        see `engine.evaluate.program`), with its absolute path written with the marks."""
        marks = self.marks()
        named: dict[str, str] = {}
        for file in files:
            shown = _portable(file)
            if shown != file:
                named[shown] = _replaced(file, marks)
        return named


def _rules_root(rules: Sequence[Path]) -> Path:
    """The folder every rule location lies in: a folder itself, a file's parent; for
    several, their common folder."""
    folders = [str(path if path.is_dir() else path.parent) for path in rules]
    return Path(os.path.commonpath(folders)) if folders else Path(os.getcwd())


def _inputs(reads: Mapping[str, str], roots: _Roots, lock: str | None) -> dict[str, Any]:
    """Every file read, by its path inside the bundle or from the rule folder (the lock
    has a field of its own)."""
    bundle: dict[str, str] = {}
    rules: dict[str, str] = {}
    for path, digest in reads.items():
        if path == lock:
            continue
        inside = os.path.relpath(path, roots.bundle)
        if not inside.startswith(os.pardir + os.sep) and inside != os.pardir:
            bundle[Path(inside).as_posix()] = digest
        else:
            rules[Path(os.path.relpath(path, roots.rules)).as_posix()] = digest
    return {"bundle": dict(sorted(bundle.items())), "rules": dict(sorted(rules.items()))}


def _manifest_sha256(found: ProtocolResult) -> str | None:
    """The sha256 of the document the protocol's `freeze` clause writes (the manifest a
    pre-registration publishes); None when the protocol freezes nothing."""
    if not found.protocol.freezes:
        return None
    document = found.bundle.documents.get(found.protocol.freezes[0].document.text)
    return None if document is None else document.sha256


def report_sha256(report: Any, roots: _Roots, files: Iterable[str]) -> str:
    """The sha256 of the canonical JSON report, its paths written with the marks: the
    absolute folders wherever they occur, and each of `files` (the files read) where the
    report names it relative to the working folder."""
    text = to_json(_marked(report, roots.marks(), roots.portable(files)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _replaced(text: str, marks: Sequence[tuple[str, str]]) -> str:
    for folder, mark in marks:
        text = text.replace(folder, mark)
    return text


def _marked(value: Any, marks: Sequence[tuple[str, str]], named: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return named.get(value) or _replaced(value, marks)
    if isinstance(value, dict):
        return {_marked(k, marks, named): _marked(v, marks, named) for k, v in value.items()}
    if isinstance(value, list):
        return [_marked(item, marks, named) for item in value]
    return value


def receipt_text(receipt: Mapping[str, Any]) -> str:
    """The receipt as written to its file: canonical JSON."""
    return to_json(receipt)


# -- verify-receipt


def read_receipt(path: Path) -> tuple[dict[str, Any], bytes]:
    """A receipt file's data and bytes.

    Raises:
        RulecheckError: exit 2 when it cannot be read; exit 1 (`RECEIPT_MALFORMED`) when
            it is not a receipt of this format.
    """
    raw = read_input(path)
    data = loads_strict(raw, str(path))
    problems = []
    if not isinstance(data, dict):
        problems.append("a receipt is a JSON object")
    else:
        missing = [name for name in _FIELDS if name not in data]
        extra = sorted(set(data) - set(_FIELDS))
        if missing:
            problems.append(f"it lacks {', '.join(f'`{m}`' for m in missing)}")
        if extra:
            problems.append(f"it holds unknown fields {', '.join(f'`{e}`' for e in extra)}")
        if data.get("receipt") != RECEIPT_FORMAT:
            problems.append(f"`receipt` is not {RECEIPT_FORMAT}, the one format known")
        protocol = data.get("protocol")
        if not isinstance(protocol, dict) or not isinstance(protocol.get("name"), str):
            problems.append("`protocol` holds no `name`")
        if not isinstance(data.get("strict"), bool):
            problems.append("`strict` is not true or false")
    if problems:
        message = f"`{path}` is not an evaluation receipt: " + "; ".join(problems)
        diagnostic = Diagnostic("RECEIPT_MALFORMED", message, Location(str(path)))
        raise RulecheckError([diagnostic], ExitCode.REFUSED)
    return data, raw


def verify_receipt(
    path: Path, bundle: Path, rules: Sequence[Path], lock: Path | None
) -> list[Diagnostic]:
    """Re-run the check a receipt records (its protocol, `--strict` as recorded) on
    `bundle` with `rules` and `lock`, and compare every field: one `RECEIPT_MISMATCH` per
    field that differs, located at the field in the receipt; none when all match.

    Raises:
        RulecheckError: as `read_receipt`; exit 1 with the check's own diagnostics and a
            `RECEIPT_MISMATCH` when the bundle is refused before any verdict, exit 2 when
            it cannot be read.
    """
    recorded, raw = read_receipt(path)
    invocation = Invocation(
        bundle, tuple(rules), lock, recorded["protocol"]["name"], recorded["strict"]
    )
    with recording_reads() as reads:
        try:
            recomputed = run_with_receipt(invocation).receipt
        except RulecheckError as error:
            if error.exit_code == ExitCode.USAGE:
                raise
            # what was read before the refusal still shows which input changed
            inputs = _inputs(reads, _roots(invocation), _lock_path(invocation))
            changed = [
                _mismatch(path, raw, pointer, old, new)
                for pointer, old, new in _differences(recorded["inputs"], inputs, ("inputs",))
                if new is not _ABSENT
            ]
            message = (
                f"the check of `{bundle}` is refused before any verdict: no verdict to compare"
            )
            refused = Diagnostic("RECEIPT_MISMATCH", message, Location(str(path), pointer=""))
            raise RulecheckError(
                [*error.diagnostics, *changed, refused], ExitCode.REFUSED
            ) from None
    return [
        _mismatch(path, raw, pointer, old, new)
        for pointer, old, new in _differences(recorded, recomputed, ())
    ]


_ABSENT = object()


def _differences(old: Any, new: Any, parts: tuple[object, ...]) -> Iterator[tuple[str, Any, Any]]:
    """Every leaf (pointer, recorded, recomputed) where the two differ; an object is
    compared member by member, anything else as a whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            yield from _differences(old.get(key, _ABSENT), new.get(key, _ABSENT), (*parts, key))
    elif type(old) is not type(new) or old != new:
        yield pointer_of(parts), old, new


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "nothing"
    text = to_json(value).strip().replace("\n", " ")
    return f"`{text[:120]}{'...' if len(text) > 120 else ''}`"


def _mismatch(path: Path, raw: bytes, pointer: str, old: Any, new: Any) -> Diagnostic:
    """A field that differs, located at the field in the receipt (its nearest recorded
    parent when the receipt lacks it)."""
    field = pointer
    position = locate(raw, field)
    while position is None and field:
        field = field.rsplit("/", 1)[0]
        position = locate(raw, field)
    line, column = position if position is not None else (None, None)
    if old is _ABSENT:
        what = f"the receipt lacks it; the check now gives {_shown(new)}"
    elif new is _ABSENT:
        what = f"the receipt has {_shown(old)}; the check now gives nothing"
    else:
        what = f"the receipt has {_shown(old)}; the check now gives {_shown(new)}"
    message = f"`{pointer}` does not match: {what}"
    return Diagnostic(
        "RECEIPT_MISMATCH", message, Location(str(path), line, column, pointer=pointer)
    )
