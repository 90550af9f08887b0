"""Evaluate a campaign bundle: admission, then scorecards and the decision.

load bundle -> campaign graph -> every rule of graph `campaign` (links, budgets, gates,
tables, decisions). Which gate means "admitted" and which decision is the verdict are
named here only as entry points; what they require lives in `rules/`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.campaign import (
    ADJUDICATION_MANIFEST,
    JSON_LINES,
    MANIFEST,
    TASKS,
    Bundle,
    Parallel,
    load_bundle,
)
from engine.bundle.strictjson import locate
from engine.bundle.yamldoc import parse_yaml, yaml_positions
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.answer import AnswerChecker
from engine.evaluate.compile import Context
from engine.evaluate.facts import Facts
from engine.evaluate.program import Evaluation, Program
from engine.graph.build import build_graph
from engine.limits import read_input

CAMPAIGN_GRAPH = "campaign"
ADMISSION_GATE = "execution_valid"
DECISION = "mechanism"
FILE_DOCUMENTS = frozenset(
    {
        "manifest",
        "tasks",
        "sessions",
        "requests",
        "receipts",
        "adjudications",
        "adjudication_manifest",
        "truth",
    }
)


@dataclass(frozen=True, slots=True)
class CampaignResult:
    """Everything `admit` and `check` report about one bundle."""

    bundle: Bundle
    evaluation: Evaluation
    ruleset_hash: str
    admission_gates: frozenset[str]

    @property
    def admitted(self) -> bool:
        """True when the admission gate passed."""
        return self.evaluation.outcomes.get(ADMISSION_GATE, False)

    @property
    def synthetic(self) -> bool:
        """True when the manifest declares a synthetic campaign."""
        manifest: dict[str, Any] = self.bundle.documents.get("manifest") or {}
        return bool(manifest.get("synthetic"))

    @property
    def verdict(self) -> str | None:
        """The verdict of the decision policy, if it was evaluated."""
        for decision in self.evaluation.decisions:
            if decision.name == DECISION:
                return decision.verdict
        return None


def evaluate_campaign(
    program: Program, root: Path, parallel: Parallel | None = None
) -> CampaignResult:
    """Load a bundle and evaluate every campaign rule on it.

    Raises:
        RulecheckError: exit 2 if `root` is not a folder; exit 1 listing every malformed
            file, or every value the bundle does not hold as the kinds declare.
    """
    bundle = load_bundle(root, AnswerChecker(program), parallel)
    graph = build_graph(program.graph(CAMPAIGN_GRAPH), bundle.documents)
    if graph.problems:
        located = [_located(problem, bundle) for problem in graph.problems]
        raise RulecheckError(located, ExitCode.REFUSED)
    facts = Facts(program.ruleset.hashed.ruleset_hash, root, bundle.record_lines)
    evaluation = program.evaluate(CAMPAIGN_GRAPH, Context(graph, facts), FILE_DOCUMENTS)
    return CampaignResult(
        bundle, evaluation, program.ruleset.hashed.ruleset_hash, _admission_gates(program)
    )


# The file of each document read from a bundle file (the others are derived by the loader).
_FILES = {
    "manifest": MANIFEST,
    "tasks": TASKS,
    "adjudication_manifest": ADJUDICATION_MANIFEST,
    **{name: file for name, (file, _schema) in JSON_LINES.items()},
}


def _located(problem: Diagnostic, bundle: Bundle) -> Diagnostic:
    """A graph problem (located by document name and pointer) at its file, line and column.

    Only computed when the bundle is refused. A JSON Lines record is located in the line
    and bytes the loader kept; a YAML file is read again for its positions; a truth
    obligation is found again in `truth/TASK.yaml`; a derived document has no file and is
    reported at the bundle folder.
    """
    where = problem.location or Location("")
    name, pointer = where.file, where.pointer or ""
    head, _, rest = pointer.lstrip("/").partition("/")
    records = bundle.documents.get(name)
    location = Location(str(bundle.root), pointer=pointer)
    if name in JSON_LINES and isinstance(records, list) and _index(head, records):
        path = bundle.root / _FILES[name]
        line, raw = bundle.record_lines[name][int(head)]
        position = locate(raw, "/" + rest if rest else "")
        column = position[1] if position else None
        location = Location(str(path), line, column, pointer=pointer)
    elif name in _FILES:
        location = _yaml_location(bundle.root / _FILES[name], pointer)
    elif name == "truth" and head == "obligations" and isinstance(records, dict):
        location = _truth_location(bundle, records.get("obligations"), rest) or location
    return dataclasses.replace(problem, location=location)


def _index(head: str, records: list[Any]) -> bool:
    return head.isdigit() and int(head) < len(records)


def _yaml_location(path: Path, pointer: str) -> Location:
    try:
        _value, root = parse_yaml(read_input(path), str(path), "BUNDLE")
    except (OSError, RulecheckError):  # pragma: no cover - the loader has just read it
        return Location(str(path), pointer=pointer)
    positions = yaml_positions(root)
    at = pointer
    while at not in positions and at:
        at = at.rsplit("/", 1)[0]  # a missing member: point at its parent
    line, column = positions.get(at, (None, None))
    return Location(str(path), line, column, pointer=pointer)


def _truth_location(bundle: Bundle, obligations: Any, rest: str) -> Location | None:
    """`/obligations/N/...` of the truth document, in the file of obligation N's task (with
    the pointer into that file)."""
    head, _, tail = rest.partition("/")
    if not isinstance(obligations, list) or not _index(head, obligations):
        return None
    task = obligations[int(head)].get("task_id")
    same = sum(1 for o in obligations[: int(head)] if o.get("task_id") == task)
    path = bundle.root / "truth" / f"{task}.yaml"
    return _yaml_location(path, f"/obligations/{same}" + (f"/{tail}" if tail else ""))


def _admission_gates(program: Program) -> frozenset[str]:
    """The admission gate and every gate it reads, directly or through other gates."""
    checked = program.ruleset.checked
    gates = set(checked.symbols.gates)
    found: set[str] = set()
    pending = [ADMISSION_GATE] if ADMISSION_GATE in gates else []
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending += [ref for ref in checked.infos[name].references if ref in gates]
    return frozenset(found)
