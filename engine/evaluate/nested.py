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

`NestedChecker.check_files` is the same check over files named one by one, as a command
that checks a single input (`rulecheck answer`) runs it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bundle.documents import Document, load_document
from engine.bundle.protocol_bundle import schema_code, schema_problems, schema_validator
from engine.bundle.schemac import Validator
from engine.check.protocols import json_schema, schema_path
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.compile import Context
from engine.evaluate.facts import BundleFiles, Facts
from engine.evaluate.links import EVALUATION_ERROR, Violation, link_violations
from engine.evaluate.program import Program
from engine.freeze.canonical import canonical_json
from engine.gcpolicy import collector_paused
from engine.graph.build import GraphSpec, Proofs, build_graph, graph_proofs
from engine.pickling import by_fields
from engine.syntax import ast

_SHARED_LIMIT = 256  # shared documents kept between checks (a packet read by many answers)
_RECENT_FILES = 4  # files kept a moment as parsed, whatever document they were loaded as


@by_fields
@dataclass(frozen=True, slots=True)
class FilesCheck:
    """What checking one set of input files against a protocol found.

    `checked` is false when a document the protocol needs has no file; then there are no
    findings. Each finding is located in the file it is about (line, column and pointer
    where known); `documents` names the file each document was read from."""

    checked: bool
    findings: tuple[Diagnostic, ...] = ()
    documents: Mapping[str, str] = field(default_factory=dict)
    rules_evaluated: int = 0

    @property
    def passed(self) -> bool:
        """True when every document was there and nothing was found."""
        return self.checked and not self.findings


_NOT_CHECKED = FilesCheck(False)


def files_missing(decl: ast.ProtocolDecl, files: Mapping[str, object]) -> list[str]:
    """The documents of protocol `decl` read from a file that is required and not given."""
    return [
        clause.name.text
        for clause in decl.documents
        if clause.from_file and not clause.optional and clause.name.text not in files
    ]


@dataclass(slots=True)
class NestedChecker:
    """Checks sets of files against protocols: inside a bundle, for `check(...)`, or named
    one by one on the command line. Documents that many checks share are read and
    schema-checked once."""

    program: Program
    root: Path | None
    # a file that cannot be read at all (absent, a FIFO): a usage error (exit 2) rather
    # than a finding, for files a user named on the command line
    unreadable_is_usage: bool = False
    _read: dict[tuple[str, str], tuple[Document | None, list[Diagnostic]]] = field(
        default_factory=dict
    )
    _results: dict[bytes, Any] = field(default_factory=dict)
    # each document clause's schema, read once per evaluation (not once per document)
    # by the clause's identity: hashing a frozen AST node hashes its whole tree, every time
    _schemas: dict[int, tuple[ast.DocumentClause, tuple[str, Validator] | None]] = field(
        default_factory=dict
    )
    # the bundle's files, shared with the rules that asked for the checks (see BundleFiles)
    files: BundleFiles | None = None
    # per protocol, the attribute type tests its documents' schemas make redundant
    _proofs: dict[str, Proofs] = field(default_factory=dict)
    # the last files of the bundle loaded, whatever document they were: by path and
    # format, the document, the sha256 of the schema it was checked against, its problems
    _recent: dict[tuple[str, str], tuple[Document, str | None, list[Diagnostic]]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        if self.files is None or self.files.root != self.root:
            self.files = BundleFiles(self.root)

    def check(self, protocol: str, files: Mapping[str, Any], given: Mapping[str, Any]) -> Any:
        """The result map of checking `protocol` over the bundle files and given values
        (computed once per evaluation for the same arguments: rules may ask repeatedly)."""
        try:  # by digest: a campaign holds one result per session, its key with it
            key = hashlib.sha256(canonical_json([protocol, dict(files), dict(given)])).digest()
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"the files and given documents must be JSON values: {error}"
            ) from None
        if key not in self._results:
            self._results[key] = _result(self._check_in_bundle(protocol, files, given))
        return self._results[key]

    def _check_in_bundle(
        self, protocol: str, files: Mapping[str, Any], given: Mapping[str, Any]
    ) -> FilesCheck:
        decl = self.protocol(protocol)
        found: dict[str, str] = {}  # each document's file, as text (see `path_text`)
        read: dict[str, str] = {}  # each file's name in the bundle, to read it through files
        for clause in (c for c in decl.documents if c.from_file):
            relative = files.get(clause.name.text)
            if self.root is None:
                raise ValueError("`check(...)` reads the files of a bundle: there is none")
            if not isinstance(relative, str) or (path := self._files.path_text(relative)) is None:
                if not clause.optional:
                    return _NOT_CHECKED
                continue
            found[clause.name.text] = path
            read[path] = relative
        return self.check_files(decl, found, given, self.root, read)

    @property
    def _files(self) -> BundleFiles:
        assert self.files is not None  # set in __post_init__
        return self.files

    @collector_paused()  # see engine/gcpolicy.py
    def check_files(
        self,
        decl: ast.ProtocolDecl,
        files: Mapping[str, Path | str],
        given: Mapping[str, Any],
        root: Path | None,
        in_bundle: Mapping[str, str] | None = None,
    ) -> FilesCheck:
        """Every finding of protocol `decl` over the files of its documents and the values
        of its `given` ones, file builtins reading the folder `root`; a required document
        without a file is not checked. A file `in_bundle` names is read through the
        bundle's `files` (once for every rule that reads it), by the file's path as text.

        Raises:
            ValueError: a required `given` document has no value.
            RulecheckError: exit 2 for a file that cannot be read, when
                `unreadable_is_usage`.
        """
        if files_missing(decl, files):
            return _NOT_CHECKED
        documents: dict[str, Any] = {}
        loaded: dict[str, Document] = {}
        problems: list[Diagnostic] = []
        unparsed = schema_failed = False
        for clause in decl.documents:
            name = clause.name.text
            if clause.given:
                if given.get(name) is not None:
                    documents[name] = given[name]
                elif not clause.optional:
                    raise ValueError(
                        f"protocol `{decl.name.text}` needs the given document `{name}`"
                    )
                continue
            if not clause.from_file:
                continue
            if name not in files:
                continue  # optional (files_missing said so)
            path = files[name]
            relative = None if in_bundle is None else in_bundle.get(str(path))
            document, found = self._document(clause, path, relative)
            problems += found
            if document is None:
                unparsed = True
                continue
            schema_failed = schema_failed or bool(found)
            loaded[name] = document
            documents[name] = document.value
        if unparsed:
            shown = {name: str(path) for name, path in files.items()}
            return FilesCheck(True, tuple(problems), shown)
        return self._evaluate(decl, (documents, loaded), problems, schema_failed, root)

    def _evaluate(
        self,
        decl: ast.ProtocolDecl,
        inputs: tuple[dict[str, Any], dict[str, Document]],
        problems: list[Diagnostic],
        schema_failed: bool,
        root: Path | None,
    ) -> FilesCheck:
        documents, loaded = inputs
        graph_name = decl.graph[0].text
        shown = {name: document.file for name, document in loaded.items()}
        unquoted = {n: u for n, d in loaded.items() if (u := d.member_unquoted())}
        proven = None if schema_failed else self._proven(decl, graph_name)
        graph = build_graph(self.program.graph(graph_name), documents, unquoted, proven)
        if not schema_failed and graph.problems:
            located = [_in_file(p, loaded) for p in graph.problems]
            return FilesCheck(True, tuple(problems + located), shown)
        facts = Facts(self.program.ruleset.hashed.ruleset_hash, root, files=self.files)
        ctx = Context(graph, facts)
        measured = frozenset(c.name.text for c in decl.documents if c.measured)
        subject = measured or frozenset(documents)
        links = self.program.links_of(graph_name)  # found once per program
        groups = self.program.link_groups_of(graph_name)
        found = list(problems)
        found += [
            _violation(v, loaded)
            for v in link_violations(groups, ctx, subject)
            if not schema_failed or v.code != EVALUATION_ERROR
        ]
        return FilesCheck(True, tuple(found), shown, len(links))

    def protocol(self, name: str) -> ast.ProtocolDecl:
        """The protocol the rules declare under `name`.

        Raises:
            ValueError: the rules declare none.
        """
        protocols = self.program.ruleset.checked.symbols.of_type(ast.ProtocolDecl)
        if name not in protocols:
            raise ValueError(f"the rules declare no protocol `{name}`")
        return protocols[name]

    def schema(self, clause: ast.DocumentClause) -> tuple[str, Validator] | None:
        """The sha256 and validator of a document clause's schema (read once), if any."""
        kept = self._schemas.get(id(clause))
        if kept is None:  # the clause is kept too, so that its identity is never reused
            kept = self._schemas[id(clause)] = (clause, schema_validator(clause))
        return kept[1]

    def _proven(self, decl: ast.ProtocolDecl, graph_name: str) -> Proofs:
        """The type tests of graph `graph_name` that the JSON Schemas of `decl`'s documents
        make redundant once every document passed its schema (see `graph_proofs`)."""
        name = decl.name.text
        if name not in self._proofs:
            digests = {}
            for clause in decl.documents:
                found = self.schema(clause)
                if found is not None:
                    digests[clause.name.text] = found[0]
            self._proofs[name] = schema_proofs(self.program.graph(graph_name), decl, digests)
        return self._proofs[name]

    def _document(
        self, clause: ast.DocumentClause, path: Path | str, relative: str | None
    ) -> tuple[Document | None, list[Diagnostic]]:
        """A document and its schema problems (or None and why it could not be read).

        A measured document is the subject of one check and is not kept: keeping every
        answer until the memo is full only gave the cyclic collector more to walk."""
        if clause.measured:
            return self._load(clause, path, relative)
        key = (clause.name.text, str(path))
        if key not in self._read:
            if len(self._read) > _SHARED_LIMIT:
                self._read.clear()
            self._read[key] = self._load(clause, path, relative)
        return self._read[key]

    def _load(
        self, clause: ast.DocumentClause, path: Path | str, relative: str | None
    ) -> tuple[Document | None, list[Diagnostic]]:
        """A document and its schema problems. A file of the bundle loaded a moment ago
        as another document (a triplet's common draft is its first session's answer) is
        parsed once: the bundle's file layer gives one file the same bytes all run."""
        schema = self.schema(clause)
        checked_against = None if schema is None else schema[0]
        code = schema_code(clause)
        key = None if relative is None else (relative, clause.format.text)
        recent = None if key is None else self._recent.get(key)
        if recent is not None:
            document = dataclasses.replace(recent[0], name=clause.name.text)
            if recent[1] == checked_against:
                return document, [dataclasses.replace(p, code=code) for p in recent[2]]
        else:
            raw = None if relative is None else self._files.read(relative)
            try:
                document = load_document(clause.name.text, path, clause.format.text, raw)
            except RulecheckError as error:
                if self.unreadable_is_usage and error.exit_code == ExitCode.USAGE:
                    raise
                return None, list(error.diagnostics)
            if relative is not None and raw is not None and document.format == "json":
                self._files.parsed_strictly(relative, document.value)
        found = schema_problems(document, schema[1], code) if schema is not None else []
        if key is not None:
            if len(self._recent) >= _RECENT_FILES:
                self._recent.pop(next(iter(self._recent)))
            self._recent[key] = (document, checked_against, found)
        return document, found


def schema_proofs(spec: GraphSpec, decl: ast.ProtocolDecl, digests: Mapping[str, str]) -> Proofs:
    """The type tests of graph `spec` that the JSON Schemas of `decl`'s documents make
    redundant (`graph_proofs`), for the documents that passed the schema whose sha256
    `digests` gives by document name. A document of many files is left out: its schema
    is each file's, not the whole document's."""
    schemas = {}
    for clause in decl.documents:
        digest, path = digests.get(clause.name.text), schema_path(clause)
        if digest is None or path is None or clause.glob:
            continue
        schema = json_schema(path, digest)  # the bytes the validator checked
        if schema is not None:
            schemas[clause.name.text] = schema
    return graph_proofs(spec, schemas)


def _in_file(problem: Diagnostic, loaded: Mapping[str, Document]) -> Diagnostic:
    """A graph problem (located by document name and pointer), located in its file."""
    where = problem.location
    if where is None or where.file not in loaded:
        return problem
    located = loaded[where.file].locate(where.pointer or "")
    if where.pointer is None:
        located = Location(located.file)
    return dataclasses.replace(problem, location=located)


def _violation(violation: Violation, loaded: Mapping[str, Document]) -> Diagnostic:
    """A link rule's violation as a diagnostic in the file of the record it is about."""
    document = loaded.get(violation.document or "")
    if document is None:
        where = Location(violation.document or "", pointer=violation.pointer)
    elif violation.pointer is None:
        where = Location(document.file)
    else:
        where = document.locate(violation.pointer)
    return Diagnostic(
        violation.code,
        violation.message,
        where,
        rule=violation.rule,
        rule_hash=violation.rule_hash,
        ids=violation.ids,
    )


def _result(outcome: FilesCheck) -> dict[str, Any]:
    """A files check as the map `check(...)` returns: findings named by document."""
    by_file = {file: name for name, file in outcome.documents.items()}
    findings = [_finding(d, by_file) for d in outcome.findings]
    findings.sort(key=lambda f: (f["document"], f["pointer"], f["code"], f["message"]))
    return {"checked": outcome.checked, "passed": outcome.passed, "findings": findings}


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
