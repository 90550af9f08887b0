"""Check one review answer against the response contract and its evidence packet.

load (strict JSON) -> schema (compiled) -> claim graph -> every link rule -> findings.
The result is structural only: it never says an answer is correct, complete or ready.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.jsonschemas import schema_digest, schema_errors
from engine.bundle.sources import source_document
from engine.bundle.strictjson import load_strict_file, locate
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.compile import Context
from engine.evaluate.facts import Facts
from engine.evaluate.links import EVALUATION_ERROR, Violation, run_link
from engine.evaluate.program import Program
from engine.graph.build import build_graph

ANSWER_GRAPH = "answer"
RESPONSE_SCHEMA = "response_contract"
PACKET_SCHEMA = "evidence_packet"
_SHARED_CACHE = 256


@dataclass(frozen=True, slots=True)
class JsonInput:
    """A JSON input file: where it came from, its exact bytes and its parsed value."""

    name: str
    path: str
    raw: bytes
    value: Any


@dataclass(frozen=True, slots=True)
class Finding:
    """One structural problem, located in an input file."""

    code: str
    message: str
    file: str | None
    pointer: str | None
    line: int | None
    column: int | None
    rule: str | None = None
    rule_hash: str | None = None
    ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AnswerReport:
    """The structural verdict on one answer, with every finding."""

    answer: str
    packet: str
    role: str
    findings: tuple[Finding, ...]
    rules_evaluated: int
    ruleset_hash: str
    schema_sha256: str

    @property
    def structural_ok(self) -> bool:
        """True when the answer satisfies the contract's structure (and nothing more)."""
        return not self.findings


def read_json(name: str, path: Path) -> tuple[JsonInput | None, list[Finding]]:
    """Read a JSON input strictly; malformed content becomes findings, unreadable raises."""
    try:
        value, raw = load_strict_file(path)
    except RulecheckError as error:
        if error.exit_code == ExitCode.USAGE:
            raise
        return None, [_from_diagnostic(d) for d in error.diagnostics]
    return JsonInput(name, str(path), raw, value), []


def _from_diagnostic(diagnostic: Diagnostic) -> Finding:
    loc = diagnostic.location or Location("")
    return Finding(
        diagnostic.code,
        diagnostic.message,
        loc.file or None,
        loc.pointer,
        loc.line,
        loc.column,
        diagnostic.rule,
        diagnostic.rule_hash,
        diagnostic.ids,
    )


def _located(
    code: str,
    message: str,
    document: str | None,
    pointer: str | None,
    inputs: dict[str, JsonInput],
    rule: tuple[str | None, str | None] = (None, None),
    ids: tuple[str, ...] = (),
) -> Finding:
    """A finding about `pointer` of input `document`, at its file's line and column."""
    source = inputs.get(document or "")
    position = locate(source.raw, pointer) if source is not None and pointer is not None else None
    line, column = position if position else (None, None)
    path = source.path if source else document or None
    return Finding(code, message, path, pointer, line, column, rule[0], rule[1], ids)


def _locate_violation(violation: Violation, inputs: dict[str, JsonInput]) -> Finding:
    rule = (violation.rule, violation.rule_hash)
    return _located(
        violation.code,
        violation.message,
        violation.document,
        violation.pointer,
        inputs,
        rule,
        violation.ids,
    )


def _locate_problem(problem: Diagnostic, inputs: dict[str, JsonInput]) -> Finding:
    """A graph problem (located by document name and pointer) as a finding in its file."""
    where = problem.location or Location("")
    return _located(
        problem.code, problem.message, where.file, where.pointer, inputs, ids=problem.ids
    )


@dataclass(frozen=True, slots=True)
class AnswerJob:
    """One answer to check, with the inputs it is checked against."""

    answer: Path
    packet: Path
    role: str
    draft: Path | None = None
    source: Path | None = None


class AnswerChecker:
    """Checks answers one at a time; packets shared by many answers are read once."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.spec = program.graph(ANSWER_GRAPH)
        self.links = program.links_of(ANSWER_GRAPH)
        self._facts = Facts(program.ruleset.hashed.ruleset_hash)
        self._cache: dict[tuple[str, str], tuple[JsonInput | None, list[Finding]]] = {}

    def _shared(
        self, name: str, path: Path, schema: str, code: str
    ) -> tuple[JsonInput | None, list[Finding]]:
        """A packet or draft, read and schema-checked once for all answers that share it."""
        key = (name, str(path))
        if key not in self._cache:
            document, findings = read_json(name, path)
            if document is not None:
                findings = findings + _schema_findings(schema, document, code)
            if len(self._cache) > _SHARED_CACHE:
                self._cache.clear()
            self._cache[key] = (document, findings)
        return self._cache[key]

    def _packet(self, path: Path) -> tuple[JsonInput | None, list[Finding]]:
        return self._shared("packet", path, PACKET_SCHEMA, "PACKET_SCHEMA")

    def check(self, job: AnswerJob) -> AnswerReport:
        """Every structural finding for one answer; RulecheckError(exit 2) if unreadable."""
        if job.source is not None and not job.source.is_dir():
            raise RulecheckError(
                [
                    Diagnostic(
                        "FILE_UNREADABLE",
                        f"`{job.source}` is not a folder",
                        Location(str(job.source)),
                    )
                ],
                ExitCode.USAGE,
            )
        packet, packet_findings = self._packet(job.packet)
        findings = list(packet_findings)
        answer, problems = read_json("answer", job.answer)
        findings += problems
        draft = None
        if job.draft is not None:
            draft, problems = self._shared("draft", job.draft, RESPONSE_SCHEMA, "DRAFT_SCHEMA")
            findings += problems
        report = _report_for(self.program, str(job.answer), str(job.packet), job.role)
        if packet is None or answer is None or (job.draft is not None and draft is None):
            return report(findings, 0)
        findings += _schema_findings(RESPONSE_SCHEMA, answer, "RESPONSE_SCHEMA")
        shape_ok = not findings
        inputs = {doc.name: doc for doc in (packet, answer, draft) if doc is not None}
        documents: dict[str, Any] = {name: doc.value for name, doc in inputs.items()}
        documents["review"] = {"role": job.role}
        if job.source is not None:
            documents["source"] = source_document(packet.value, job.source)
        graph = build_graph(self.spec, documents)
        if shape_ok and graph.problems:
            # The inputs passed their schemas but do not hold what the kinds declare: the
            # link rules would read values of other types than they were written for. Where
            # a schema failed, the problems restate it and are left out, as are the link
            # rules' evaluation errors.
            findings += [_locate_problem(problem, inputs) for problem in graph.problems]
            return report(findings, 0)
        ctx = Context(graph, self._facts)
        for link in self.links:
            for violation in run_link(link, ctx, "answer")[0]:
                if shape_ok or violation.code != EVALUATION_ERROR:
                    findings.append(_locate_violation(violation, inputs))
        return report(findings, len(self.links))


def check_answer(
    program: Program,
    answer_path: Path,
    packet_path: Path,
    role: str,
    draft_path: Path | None = None,
    source_dir: Path | None = None,
) -> AnswerReport:
    """Every structural finding for one answer; raises RulecheckError(exit 2) if unreadable."""
    job = AnswerJob(answer_path, packet_path, role, draft_path, source_dir)
    return AnswerChecker(program).check(job)


def _schema_findings(schema: str, document: JsonInput, code: str) -> list[Finding]:
    diagnostics = schema_errors(schema, document.value, document.raw, document.path, code)
    return [_from_diagnostic(d) for d in diagnostics]


def _report_for(
    program: Program, answer: str, packet: str, role: str
) -> Callable[[list[Finding], int], AnswerReport]:
    def build(findings: list[Finding], evaluated: int) -> AnswerReport:
        ordered = sorted(
            findings,
            key=lambda f: (f.file or "", f.line or 0, f.column or 0, f.code, f.rule or "", f.ids),
        )
        return AnswerReport(
            answer,
            packet,
            role,
            tuple(ordered),
            evaluated,
            program.ruleset.hashed.ruleset_hash,
            schema_digest(RESPONSE_SCHEMA),
        )

    return build
