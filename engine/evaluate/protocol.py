"""Check a bundle against a protocol the rules declare: `rulecheck check BUNDLE`.

find the protocol (`--protocol`, or the bundle's `rulecheck.yaml`) -> load its documents
-> the graph it names -> every rule of that graph -> its entry points: the admission gate,
the verdict decision and the report tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from engine.bundle.documents import DERIVED_FORMAT, Document, SourceBytes
from engine.bundle.protocol_bundle import (
    ProtocolBundle,
    bundle_has,
    load_protocol_bundle,
    read_protocol_file,
)
from engine.check.symbols import did_you_mean
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.facts import BundleFiles
from engine.evaluate.gates import CellError, TableResult, run_table, run_tables
from engine.evaluate.inputs import GraphResult, documents_context, evaluate_documents
from engine.evaluate.nested import NestedChecker, schema_proofs
from engine.evaluate.program import DecisionResult, Program
from engine.evaluate.runtime import json_data
from engine.freeze.canonical import canonical_json
from engine.gcpolicy import collector_paused
from engine.graph.build import Graph, Proofs
from engine.records import record_maker
from engine.syntax import ast


@dataclass(frozen=True, slots=True)
class ProtocolResult:
    """What the rules concluded about one bundle under one protocol."""

    bundle: ProtocolBundle
    graph: GraphResult
    protocol_hash: str

    @property
    def protocol(self) -> ast.ProtocolDecl:
        """The protocol the bundle was checked against."""
        return self.bundle.protocol

    @property
    def admitted(self) -> bool | None:
        """The admission gate's outcome; None when the protocol declares none."""
        if not self.protocol.admission:
            return None
        return self.graph.evaluation.outcomes.get(self.protocol.admission[0].text, False)

    @property
    def verdict(self) -> DecisionResult | None:
        """The verdict decision's result; None when the protocol declares none."""
        if not self.protocol.verdict:
            return None
        name = self.protocol.verdict[0].text
        return next((d for d in self.graph.evaluation.decisions if d.name == name), None)

    @property
    def passed(self) -> bool:
        """Admitted (where the protocol has an admission gate; else every rule holds), and
        every decision decided."""
        admitted = self.admitted
        if self.graph.evaluation.undecided:
            return False
        return self.graph.passed if admitted is None else admitted


def declared_protocols(program: Program) -> dict[str, ast.ProtocolDecl]:
    """The protocols the rules declare, by name."""
    return program.ruleset.checked.symbols.of_type(ast.ProtocolDecl)


def find_protocol(program: Program, root: Path, name: str | None) -> ast.ProtocolDecl | None:
    """The protocol to check `root` against: `name`, else the one `rulecheck.yaml` names;
    None when neither is given.

    Raises:
        RulecheckError: exit 2 for an unknown protocol; exit 1 when the bundle names
            another protocol than `name`, or pins another ruleset than the one loaded.
    """
    pinning = read_protocol_file(root) if root.is_dir() else None
    pinned: dict[str, str] | None = pinning.value if pinning is not None else None
    chosen = name or (pinned["protocol"] if pinned else None)
    protocols = declared_protocols(program)
    if chosen is None:
        return protocol_by_documents(protocols, root) if root.is_dir() else None
    if chosen not in protocols:
        hint = did_you_mean(chosen, protocols) or (
            f"the rules declare: {', '.join(sorted(protocols)) or 'no protocol'}"
        )
        message = f"the rules declare no protocol `{chosen}`"
        # named on the command line, or where the bundle names it
        where = None if name or pinning is None else pinning.locate("/protocol")
        raise RulecheckError(
            [Diagnostic("USAGE_PROTOCOL", message, where, hint=hint)], ExitCode.USAGE
        )
    if pinning is not None:
        _check_pin(program, chosen, pinning)
    return protocols[chosen]


def bundle_protocol(program: Program, root: Path, name: str | None) -> ast.ProtocolDecl:
    """The protocol `rulecheck check` checks `root` against: `name`, else the one its
    `rulecheck.yaml` names, else the one protocol whose files it holds.

    Raises:
        RulecheckError: exit 2 when none is known (as `find_protocol` otherwise).
    """
    protocol = find_protocol(program, root, name)
    if protocol is not None:
        return protocol
    if not root.is_dir():
        message = f"`{root}` is not a bundle folder"
        diagnostic = Diagnostic("FILE_UNREADABLE", message, Location(str(root)))
        raise RulecheckError([diagnostic], ExitCode.USAGE)
    names = ", ".join(sorted(declared_protocols(program))) or "none"
    message = f"`{root}` names no protocol, and its files fit no single protocol of the rules"
    hint = f"give `--protocol NAME` or write `protocol: NAME` in its rulecheck.yaml ({names})"
    where = Location(str(root))
    raise RulecheckError([Diagnostic("USAGE_PROTOCOL", message, where, hint=hint)], ExitCode.USAGE)


def protocol_by_documents(
    protocols: Mapping[str, ast.ProtocolDecl], root: Path
) -> ast.ProtocolDecl | None:
    """For a bundle that names no protocol: the one protocol whose required files the
    bundle holds, the one requiring most of them where several do; None when no protocol
    or more than one fits equally well."""
    fits: list[tuple[int, str]] = []
    for name, decl in protocols.items():
        required = [d for d in decl.documents if not d.optional and not d.derived]
        if any(d.given for d in required) or not required:
            continue
        if all(bundle_has(root, d.path) for d in required):
            fits.append((len(required), name))
    if not fits:
        return None
    best = max(size for size, _ in fits)
    chosen = [name for size, name in fits if size == best]
    return protocols[chosen[0]] if len(chosen) == 1 else None


def _check_pin(program: Program, chosen: str, pinning: Document) -> None:
    """The bundle's `rulecheck.yaml` agrees with the protocol chosen and the rules loaded;
    each disagreement located at the line that says otherwise."""
    pinned: dict[str, str] = pinning.value
    problems = []
    if pinned["protocol"] != chosen:
        message = f"the bundle is for protocol `{pinned['protocol']}`, not `{chosen}`"
        where = pinning.locate("/protocol")
        problems.append(Diagnostic("PROTOCOL_MISMATCH", message, where))
    expected = pinned.get("ruleset_hash")
    actual = program.ruleset.hashed.ruleset_hash
    if expected is not None and expected != actual:
        message = f"the bundle pins ruleset `{expected}`; the rules loaded are `{actual}`"
        where = pinning.locate("/ruleset_hash")
        problems.append(Diagnostic("PROTOCOL_RULESET_MISMATCH", message, where))
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)


def evaluate_protocol(
    program: Program,
    root: Path,
    protocol: ast.ProtocolDecl,
    tables: Collection[str] | None = None,
) -> ProtocolResult:
    """Load the bundle's documents, derive the derived ones in order, and evaluate the
    protocol's graph over them all (the cyclic collector paused: see engine/gcpolicy.py).
    With `tables`, of the graph's tables only those named there (and the ones derived
    documents are made from) are computed: see `reported_tables`."""
    _refuse_given(protocol)
    with collector_paused():
        return _evaluate_protocol(program, root, protocol, tables)


def reported_tables(protocol: ast.ProtocolDecl) -> frozenset[str] | None:
    """The tables a protocol's report shows: those its `report` clause names, else (None)
    every table of its graph."""
    return frozenset(i.text for i in protocol.report) or None


def _evaluate_protocol(
    program: Program,
    root: Path,
    protocol: ast.ProtocolDecl,
    tables: Collection[str] | None,
) -> ProtocolResult:
    bundle = load_protocol_bundle(root, protocol)
    optional = frozenset(d.name.text for d in protocol.documents if d.optional)
    graph_name = protocol.graph[0].text
    documents = dict(bundle.documents)
    files = BundleFiles(root)  # read once for every rule and every nested check
    nested = NestedChecker(program, root, files=files).check
    # every document passed its schema (else the bundle was refused): what that proves
    proven = schema_proofs(program.graph(graph_name), protocol, bundle.schemas)
    where = (root, nested, files, proven)
    done: dict[str, TableResult] = {}
    for run in derivation_runs(program, graph_name, protocol.documents):
        done.update(_derive(program, graph_name, run, documents, where))
    bundle = dataclasses.replace(bundle, documents=documents)
    graph = evaluate_documents(
        program, graph_name, documents, optional, root, nested, done, tables, files, proven
    )
    hashes = program.ruleset.hashed.by_name()
    return ProtocolResult(bundle, graph, hashes[protocol.name.text].hash)


def _refuse_given(protocol: ast.ProtocolDecl) -> None:
    """A protocol with a `given` document runs only inside another (`check(...)`)."""
    given = [d.name.text for d in protocol.documents if d.given and not d.optional]
    if given:
        message = (
            f"protocol `{protocol.name.text}` is given the document `{given[0]}` by the rules "
            "that check it: it runs inside another protocol's bundle, through `check(...)`"
        )
        raise RulecheckError([Diagnostic("USAGE_PROTOCOL", message)], ExitCode.USAGE)


def derivation_runs(
    program: Program, graph: str, clauses: Iterable[ast.DocumentClause]
) -> list[tuple[ast.DocumentClause, ...]]:
    """The derived documents (`document NAME from table T`) in their order, cut into runs
    whose tables are computed on one graph, built once from the documents before the run:
    a run ends before a table that reads a kind whose records come from a document the
    run derives, which that table must see. Tables that read nothing of each other share
    their graph and what their metrics computed on it (a campaign's raters' view asks for
    each answer's check again, and its packet and draft)."""
    fed_by = {kind.name: {r.document for r in kind.records} for kind in program.graph(graph).kinds}
    runs: list[tuple[ast.DocumentClause, ...]] = []
    run: list[ast.DocumentClause] = []
    for clause in clauses:
        if clause.table is None:
            continue
        derived = {c.name.text for c in run}
        if any(fed_by.get(kind, set()) & derived for kind in program.kinds_read(clause.table.text)):
            runs.append(tuple(run))
            run = []
        run.append(clause)
    return [*runs, tuple(run)] if run else runs


def _derive(
    program: Program,
    graph: str,
    run: tuple[ast.DocumentClause, ...],
    documents: dict[str, Document],
    where: tuple[
        Path, Callable[[str, Mapping[str, Any], Mapping[str, Any]], Any], BundleFiles, Proofs
    ],
) -> dict[str, TableResult]:
    """The documents of one derivation run, added to `documents`, and their tables by
    name. The run's graph and what its metrics kept go when it returns, before the
    protocol's whole graph is built."""
    names = [clause.table.text for clause in run if clause.table is not None]
    ctx = documents_context(program.graph_reading(graph, *names), program, documents, *where)
    if len(names) == 1:
        computed = [run_table(program.table(names[0]), ctx)]
    else:
        computed = run_tables([(program.table(n), program.paced_table(n)) for n in names], ctx)
    for clause, table in zip(run, computed, strict=True):
        documents[clause.name.text] = derived_document(clause, table, ctx.graph)
    return {table.name: table for table in computed}


def derived_document(clause: ast.DocumentClause, table: TableResult, graph: Graph) -> Document:
    """`document NAME from table T`: the rows of T, computed on `graph`, the graph of the
    kinds it reads (and those the other tables of its run read: see `derivation_runs`),
    built from the documents so far (the checker makes sure it reads nothing else); each
    row becomes a record whose members are the columns, as JSON values (a node as its id).

    Raises:
        RulecheckError: exit 1 when a cell of the table has no value (the record would be
            wrong).
    """
    assert clause.table is not None
    records, missing = table_records(table, graph)
    problems = [
        _cell_problem(clause, table.hash, cell.ids, cell.column, cell.why) for cell in missing
    ]
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    shown = f"table {clause.table.text}"
    source = SourceBytes(canonical_json(records), shown, held=True)
    return Document(clause.name.text, shown, DERIVED_FORMAT, records, source)


def _cell_problem(
    clause: ast.DocumentClause, rule_hash: str, ids: tuple[str, ...], column: str, why: str
) -> Diagnostic:
    assert clause.table is not None
    message = (
        f"derived document `{clause.name.text}`: column `{column}` of table "
        f"`{clause.table.text}` has no value: {why}"
    )
    where = Location(clause.span.file, clause.span.line, clause.span.column)
    return Diagnostic(
        "DERIVED_VALUE", message, where, rule=clause.table.text, rule_hash=rule_hash, ids=ids
    )


@dataclass(frozen=True, slots=True)
class MissingCell:
    """A table cell that has no JSON value: its row (index and ids), column and why."""

    row: int
    ids: tuple[str, ...]
    column: str
    why: str


def table_records(
    table: TableResult, nodes: Graph | None
) -> tuple[list[dict[str, Any]], list[MissingCell]]:
    """Each row of a table as an object of its columns' JSON values (a node as its id),
    and every cell that has none (its record then lacks that column)."""
    records: list[dict[str, Any]] = []
    missing: list[MissingCell] = []
    new_record = record_maker(("table", table.name))  # a row per session, say
    for row, (ids, values) in enumerate(table.rows):
        record = new_record()
        for column, value in zip(table.columns, values, strict=True):
            try:
                record[column] = cell_data(value, nodes)
            except ValueError as error:
                missing.append(MissingCell(row, ids, column, str(error)))
        records.append(record)
    return records, missing


def first_per_row(missing: list[MissingCell]) -> list[MissingCell]:
    """The first missing cell of each row (a refusal that names a row once)."""
    first: dict[int, MissingCell] = {}
    for cell in missing:
        first.setdefault(cell.row, cell)
    return list(first.values())


def cell_data(value: Any, nodes: Graph | None) -> Any:
    """A table cell as JSON data (a node as its id); an error cell raises ValueError."""
    if isinstance(value, CellError):
        raise ValueError(value.message)
    return json_data(value, nodes)


def freeze_rows(
    program: Program, root: Path, protocol: ast.ProtocolDecl, freeze: ast.Freeze
) -> list[dict[str, Any]]:
    """The rows of a `freeze` clause's table, each an object of its columns, evaluated on
    only the documents its kinds read (a bundle is frozen before the run's records exist).

    Raises:
        RulecheckError: exit 1 when those documents are missing or malformed, or a cell
            has no value.
    """
    spec = program.graph_reading(protocol.graph[0].text, freeze.table.text)
    needed = {records.document for kind in spec.kinds for records in kind.records}
    # the document being frozen is incomplete until it is (its hashes are what is written)
    clauses = tuple(
        dataclasses.replace(c, schema=None) if c.name.text == freeze.document.text else c
        for c in protocol.documents
        if c.from_file and c.name.text in needed
    )
    bundle = load_protocol_bundle(root, dataclasses.replace(protocol, documents=clauses))
    ctx = documents_context(spec, program, bundle.documents, root)
    table = run_table(program.table(freeze.table.text), ctx)
    rows, missing = table_records(table, ctx.graph)
    if missing:
        where = Location(freeze.span.file, freeze.span.line, freeze.span.column)
        problems = [
            Diagnostic(
                "DERIVED_VALUE",
                f"table `{table.name}` has a row without a value: {cell.why}",
                where,
                rule=table.name,
                rule_hash=table.hash,
                ids=cell.ids,
            )
            for cell in first_per_row(missing)
        ]
        raise RulecheckError(problems, ExitCode.REFUSED)
    return rows


FREEZE_CLAUSE = "freeze TABLE into DOCUMENT at POINTER"
Clause = TypeVar("Clause")


def protocol_clause(protocol: ast.ProtocolDecl, declared: tuple[Clause, ...], shown: str) -> Clause:
    """The one clause of a kind a command runs (`protocol.seals`, `protocol.freezes`).

    Raises:
        RulecheckError: exit 2 when the protocol declares none.
    """
    if not declared:
        message = f"protocol `{protocol.name.text}` declares no `{shown}`"
        raise RulecheckError([Diagnostic("USAGE_PROTOCOL", message)], ExitCode.USAGE)
    return declared[0]


@dataclass(frozen=True, slots=True)
class Seal:
    """What `seal TABLE into DOCUMENT` writes: the file inside the bundle, its bytes, and
    the table's name and row count."""

    target: Path
    path: str
    data: bytes
    table: str
    rows: int


def protocol_seal(
    program: Program, root: Path, protocol: ast.ProtocolDecl, *, replace: bool
) -> Seal:
    """The seal of bundle `root` now: the rows of the protocol's `seal` table over the
    bundle as it is, as the bytes of the seal's document.

    Raises:
        RulecheckError: exit 2 when the protocol declares no seal or its file would leave
            the bundle; exit 1 when the bundle is sealed already (unless `replace`) or a
            row has no value.
    """
    from engine.bundle import paths
    from engine.report.export import seal_bytes

    declared = protocol_clause(protocol, protocol.seals, "seal TABLE into DOCUMENT")
    clause = next(d for d in protocol.documents if d.name.text == declared.document.text)
    target = paths.inside(root, clause.path, strict_segments=True)
    if target is None:
        message = f"the seal `{clause.path}` would leave the bundle"
        where = Location(str(root / clause.path))
        raise RulecheckError([Diagnostic("BUNDLE_PATH_OUTSIDE", message, where)], ExitCode.USAGE)
    if (target.exists() or target.is_symlink()) and not replace:
        message = f"`{root / clause.path}` already seals this bundle"
        where = Location(str(root / clause.path))
        hint = "a seal is written once, when the run ends; `--force` replaces it"
        raise RulecheckError(
            [Diagnostic("SEAL_EXISTS", message, where, hint=hint)], ExitCode.REFUSED
        )
    found = evaluate_protocol(program, root, protocol)
    table = next(t for t in found.graph.evaluation.tables if t.name == declared.table.text)
    data = seal_bytes(table, found.graph.nodes)
    return Seal(target, clause.path, data, table.name, len(table.rows))


@dataclass(frozen=True, slots=True)
class Frozen:
    """What `freeze TABLE into DOCUMENT at POINTER` writes: the document's file, its new
    bytes, the pointer written and the number of rows."""

    target: Path
    data: bytes
    pointer: str
    rows: int


def protocol_freeze(program: Program, root: Path, protocol: ast.ProtocolDecl) -> Frozen:
    """The protocol's freeze table over bundle `root`, written into its document at its
    pointer (whether or not the run has begun: the caller decides that).

    Raises:
        RulecheckError: exit 2 when the protocol declares no freeze; exit 1 when the
            document's file is missing, malformed or cannot hold the rows.
    """
    from engine.bundle import paths
    from engine.bundle.documents import load_document
    from engine.report.export import document_bytes, replaced_at

    declared = protocol_clause(protocol, protocol.freezes, FREEZE_CLAUSE)
    target = next(d for d in protocol.documents if d.name.text == declared.document.text)
    path = paths.inside(root, target.path, strict_segments=True)
    if path is None or not path.is_file():
        message = f"the bundle has no `{target.path}` to freeze (document `{target.name.text}`)"
        where = Location(str(root / target.path))
        raise RulecheckError([Diagnostic("BUNDLE_FILE_MISSING", message, where)], ExitCode.REFUSED)
    rows = freeze_rows(program, root, protocol, declared)
    document = load_document(target.name.text, path, target.format.text)
    data = document_bytes(
        replaced_at(document.value, declared.pointer, rows, str(path)), target.format.text
    )
    return Frozen(path, data, declared.pointer, len(rows))
