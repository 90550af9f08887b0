"""A protocol checked inside another: the `check(PROTOCOL, files, given)` builtin.

A bundle may hold many inputs that are each checked against a protocol of their own (a
campaign's answers, each against its packet and draft). The outer rules name the protocol
and, per check, the bundle files of its documents and the values of its `given`
documents; the result is a map the outer rules read:

    {"checked": bool, "passed": bool, "findings": [{"code", "document", "pointer", "message"}]}

`checked` is false when a document the protocol needs has no readable file (absent, or a
path that leaves the bundle); then there are no findings. Otherwise every problem is a
finding rather than a refusal: a document that does not parse (nothing else is checked),
a schema violation, a value of another type than its kind declares (only where every
schema held: otherwise it restates the schema's finding), and every violation of the
protocol's link rules (where a schema failed, without the rules' evaluation errors, which
then only say that a value is missing). Nothing here knows any protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bundle import paths
from engine.bundle.documents import Document, load_document
from engine.bundle.protocol_bundle import schema_problems, schema_validator
from engine.bundle.schemac import Validator
from engine.errors import Diagnostic, RulecheckError
from engine.evaluate.compile import Context
from engine.evaluate.facts import Facts
from engine.evaluate.links import EVALUATION_ERROR, Violation, run_link
from engine.evaluate.program import Program
from engine.freeze.canonical import canonical_json
from engine.graph.build import build_graph
from engine.syntax import ast

_SHARED_LIMIT = 256  # documents kept between checks (a packet shared by many answers)


@dataclass(slots=True)
class NestedChecker:
    """Runs nested checks for one evaluation of a bundle; documents that many checks share
    are read and schema-checked once."""

    program: Program
    root: Path
    _read: dict[tuple[str, str], tuple[Document | None, list[Diagnostic]]] = field(
        default_factory=dict
    )
    _results: dict[bytes, Any] = field(default_factory=dict)
    # each document clause's schema, read once per evaluation (not once per document)
    _schemas: dict[ast.DocumentClause, tuple[str, Validator] | None] = field(default_factory=dict)

    def check(self, protocol: str, files: Mapping[str, Any], given: Mapping[str, Any]) -> Any:
        """The result map of checking `protocol` over the bundle files and given values
        (computed once per evaluation for the same arguments: rules may ask repeatedly)."""
        try:
            key = canonical_json([protocol, dict(files), dict(given)])
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"the files and given documents must be JSON values: {error}"
            ) from None
        if key not in self._results:
            self._results[key] = self._check(protocol, files, given)
        return self._results[key]

    def _check(self, protocol: str, files: Mapping[str, Any], given: Mapping[str, Any]) -> Any:
        decl = self._protocol(protocol)
        documents: dict[str, Any] = {}
        loaded: dict[str, Document] = {}
        names: dict[str, str] = {}  # file -> document name, to name findings
        problems: list[Diagnostic] = []
        unparsed = schema_failed = False
        for clause in decl.documents:
            name = clause.name.text
            if clause.given:
                if given.get(name) is not None:
                    documents[name] = given[name]
                elif not clause.optional:
                    raise ValueError(f"protocol `{protocol}` needs the given document `{name}`")
                continue
            relative = files.get(name)
            path = paths.inside(self.root, relative, strict_segments=True) if relative else None
            if path is None or not path.is_file():
                if clause.optional:
                    continue
                return {"checked": False, "passed": False, "findings": []}
            names[str(path)] = name
            document, found = self._document(clause, path)
            problems += found
            if document is None:
                unparsed = True
                continue
            schema_failed = schema_failed or bool(found)
            loaded[name] = document
            documents[name] = document.value
        if unparsed:
            return _result(problems, names)
        return self._evaluate(decl, documents, loaded, (problems, names), schema_failed)

    def _evaluate(
        self,
        decl: ast.ProtocolDecl,
        documents: dict[str, Any],
        loaded: dict[str, Document],
        found: tuple[list[Diagnostic], dict[str, str]],
        schema_failed: bool,
    ) -> Any:
        problems, names = found
        graph_name = decl.graph[0].text
        unquoted = {n: u for n, d in loaded.items() if (u := d.member_unquoted())}
        graph = build_graph(self.program.graph(graph_name), documents, unquoted)
        if not schema_failed and graph.problems:
            return _result([*problems, *graph.problems], names)
        facts = Facts(self.program.ruleset.hashed.ruleset_hash, self.root)
        ctx = Context(graph, facts)
        measured = frozenset(c.name.text for c in decl.documents if c.measured)
        subject = measured or frozenset(documents)
        violations: list[Violation] = []
        for link in self.program.links_of(graph_name):
            failed, _bound = run_link(link, ctx, subject)
            violations += [v for v in failed if not schema_failed or v.code != EVALUATION_ERROR]
        return _result(problems, names, violations)

    def _protocol(self, name: str) -> ast.ProtocolDecl:
        protocols = self.program.ruleset.checked.symbols.of_type(ast.ProtocolDecl)
        if name not in protocols:
            raise ValueError(f"the rules declare no protocol `{name}`")
        return protocols[name]

    def _document(
        self, clause: ast.DocumentClause, path: Path
    ) -> tuple[Document | None, list[Diagnostic]]:
        """A document and its schema problems (or None and why it could not be read)."""
        key = (clause.name.text, str(path))
        if key not in self._read:
            if len(self._read) > _SHARED_LIMIT:
                self._read.clear()
            try:
                document = load_document(clause.name.text, path, clause.format.text)
            except RulecheckError as error:
                self._read[key] = (None, list(error.diagnostics))
            else:
                if clause not in self._schemas:
                    self._schemas[clause] = schema_validator(clause)
                schema = self._schemas[clause]
                found = schema_problems(document, schema[1]) if schema is not None else []
                self._read[key] = (document, found)
        return self._read[key]


def _result(
    problems: list[Diagnostic], names: Mapping[str, str], violations: Sequence[Violation] = ()
) -> dict[str, Any]:
    findings = [_finding(p, names) for p in problems]
    findings += [
        {
            "code": v.code,
            "document": v.document or "",
            "pointer": v.pointer or "",
            "message": v.message,
        }
        for v in violations
    ]
    findings.sort(key=lambda f: (f["document"], f["pointer"], f["code"], f["message"]))
    return {"checked": True, "passed": not findings, "findings": findings}


def _finding(problem: Diagnostic, by_file: Mapping[str, str]) -> dict[str, Any]:
    where = problem.location
    file = where.file if where is not None else ""
    document = by_file.get(file, file)
    return {
        "code": problem.code,
        "document": document,
        "pointer": (where.pointer if where is not None else None) or "",
        "message": problem.message,
    }
