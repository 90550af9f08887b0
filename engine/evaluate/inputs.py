"""Evaluate the rules of one graph over documents the user names: `rulecheck evaluate`.

The general form of what `answer` and `check` do for their protocols: the kinds of graph
GRAPH say which documents it reads; each is a file given on the command line; every link
rule, budget, gate, table and decision of the graph runs over the graph built from them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bundle.documents import Document, RecordLines
from engine.check.symbols import did_you_mean
from engine.errors import Diagnostic, ExitCode, RulecheckError
from engine.evaluate.compile import Context
from engine.evaluate.facts import BundleFiles, Facts
from engine.evaluate.gates import TableResult
from engine.evaluate.program import Evaluation, Program
from engine.gcpolicy import collector_paused
from engine.graph.build import Graph, GraphSpec, Proofs, build_graph, misspelt_members


@dataclass(frozen=True, slots=True)
class GraphResult:
    """What the rules of one graph concluded about the documents given."""

    graph: str
    documents: dict[str, Document]
    evaluation: Evaluation
    ruleset_hash: str
    # the graph evaluated (for a table's nodes written as their ids)
    nodes: Graph | None = field(default=None, compare=False, repr=False)

    @property
    def passed(self) -> bool:
        """No link rule violated, every budget and gate holds, every decision decided."""
        evaluation = self.evaluation
        rules = (*evaluation.budgets, *evaluation.gates)
        return (
            not evaluation.violations
            and not evaluation.undecided
            and all(rule.passed for rule in rules)
        )


def declared_graphs(program: Program) -> frozenset[str]:
    """The graphs the kinds of the ruleset declare (`kind NAME of GRAPH`)."""
    kinds = program.ruleset.checked.symbols.kinds.values()
    return frozenset(graph.text for kind in kinds for graph in kind.graphs)


def check_inputs(
    program: Program, graph: str, names: Collection[str], optional: Collection[str] = ()
) -> None:
    """Refuse (exit 2) an unknown graph, and input names the graph does not read or lacks
    (an `optional` document may be absent)."""
    graphs = declared_graphs(program)
    if graph not in graphs:
        hint = did_you_mean(graph, graphs) or f"the rules declare: {', '.join(sorted(graphs))}"
        raise _usage(f"no kind of the rules belongs to graph `{graph}`", hint)
    reads = program.graph(graph).documents
    listed = ", ".join(f"`{name}`" for name in sorted(reads))
    for name in sorted(set(names) - reads):
        hint = did_you_mean(name, reads) or f"graph `{graph}` reads {listed}"
        raise _usage(f"graph `{graph}` reads no document `{name}`", hint)
    missing = sorted(reads - set(names) - set(optional))
    if missing:
        raise _usage(
            f"graph `{graph}` also reads {', '.join(f'`{m}`' for m in missing)}",
            "give each with `--input NAME=FILE`",
        )


def evaluate_documents(
    program: Program,
    graph: str,
    documents: dict[str, Document],
    optional: Collection[str] = (),
    root: Path | None = None,
    nested: Callable[[str, Mapping[str, Any], Mapping[str, Any]], Any] | None = None,
    done: Mapping[str, TableResult] | None = None,
    tables: Collection[str] | None = None,
    files: BundleFiles | None = None,
    proven: Proofs | None = None,
) -> GraphResult:
    """Build graph `graph` from the documents and run every rule of it (of its tables,
    only those in `tables` when given); file builtins read the folder `root` through
    `files` when given (shared with `nested`). `proven`: the type tests the documents'
    schemas, which they passed, make redundant (`build_graph`).

    Raises:
        RulecheckError: exit 1 with every located problem when the documents do not hold
            what the kinds declare (a value of another type, records that are not there).
    """
    check_inputs(program, graph, documents.keys(), optional)
    with collector_paused():  # see engine/gcpolicy.py
        ctx = documents_context(
            program.graph(graph), program, documents, root, nested, files, proven
        )
        evaluation = program.evaluate(graph, ctx, frozenset(documents), done, tables)
    return GraphResult(graph, documents, evaluation, program.ruleset.hashed.ruleset_hash, ctx.graph)


def documents_context(
    spec: GraphSpec,
    program: Program,
    documents: Mapping[str, Document],
    root: Path | None = None,
    nested: Callable[[str, Mapping[str, Any], Mapping[str, Any]], Any] | None = None,
    files: BundleFiles | None = None,
    proven: Proofs | None = None,
) -> Context:
    """The evaluation context of the graph `spec` built from the documents, with the facts
    of the files they were read from (the bundle's `files`, when shared); the type tests
    `proven` names are left out (`build_graph`).

    Raises:
        RulecheckError: exit 1 with every located problem when the documents do not hold
            what the kinds declare.
    """
    built = build_graph(
        spec,
        {n: d.value for n, d in documents.items()},
        {n: unquoted for n, d in documents.items() if (unquoted := d.member_unquoted())},
        proven,
    )
    if built.problems:
        raise RulecheckError(located_problems(built.problems, documents), ExitCode.REFUSED)
    records = {
        name: lines
        for name, d in documents.items()
        if isinstance(lines := d.record_lines, RecordLines)
    }
    members = {n: tuple(m.sha256 for m in d.members) for n, d in documents.items() if d.members}
    facts = Facts(program.ruleset.hashed.ruleset_hash, root, records, members, nested, files)
    warnings = tuple(located_problems(misspelt_members(spec, built), documents))
    return Context(built, facts, warnings=warnings)


def located_problems(
    problems: Iterable[Diagnostic], documents: Mapping[str, Document]
) -> list[Diagnostic]:
    """Graph problems (located by document name and pointer) in their documents' files."""
    return [_located(problem, documents) for problem in problems]


def _located(problem: Diagnostic, documents: Mapping[str, Document]) -> Diagnostic:
    """A graph problem, located in its document's file (the builder names the document)."""
    where = problem.location
    if where is None or where.file not in documents:  # pragma: no cover - always named
        return problem
    location = documents[where.file].locate(where.pointer or "")
    return dataclasses.replace(problem, location=location)


def _usage(message: str, hint: str | None) -> RulecheckError:
    return RulecheckError([Diagnostic("USAGE_GRAPH", message, hint=hint)], ExitCode.USAGE)
