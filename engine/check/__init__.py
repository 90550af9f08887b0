"""Static checks of a set of rule files. All problems are collected, then sorted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.check.decisions import check_decision, gates_read
from engine.check.graphs import rule_graphs
from engine.check.protocols import derived_problems, entries_off_graph
from engine.check.symbols import SymbolTable, build_symbols, location, names_in
from engine.check.transitions import check_transitions
from engine.check.types import DeclInfo, TypeChecker
from engine.check.usage import scan_warnings, ungated_warnings, usage_warnings
from engine.errors import Diagnostic, sorted_diagnostics
from engine.order import strong_components
from engine.syntax import ast


@dataclass(frozen=True, slots=True)
class CheckedRuleset:
    """Rule files with their symbol table, per-declaration facts and every diagnostic.

    `graphs` names, for each declaration, the graphs it runs on (see `check.graphs`).
    """

    files: tuple[ast.RuleFile, ...]
    symbols: SymbolTable
    infos: Mapping[str, DeclInfo]
    diagnostics: tuple[Diagnostic, ...]
    graphs: Mapping[str, frozenset[str]]

    @property
    def ok(self) -> bool:
        """True when no diagnostic is an error."""
        return not any(d.severity == "error" for d in self.diagnostics)

    def declarations(self) -> list[ast.Declaration]:
        """All declarations, in file and source order."""
        return [decl for rule_file in self.files for decl in rule_file.declarations]


def check_rules(
    files: Iterable[ast.RuleFile], recorded: Mapping[str, Mapping[str, str]] | None = None
) -> CheckedRuleset:
    """Run every static check over `files` (which share one namespace).

    `recorded` gives, by declaration, the sha256 of files it depends on as a rules lock
    recorded them: those files are not read (a lock verifies on its own).
    """
    files = tuple(files)
    symbols, diagnostics = build_symbols(files)
    checker = TypeChecker(symbols, recorded or {})
    # Constants and metrics first, each after what it uses: the checker memoises their types
    # recursively, and a long chain of derived constants written users-first would
    # otherwise recurse once per link (a RecursionError at a few hundred).
    for decl in _definition_order(symbols):
        checker.check(decl)
    infos: dict[str, DeclInfo] = {}
    for rule_file in files:
        for decl in rule_file.declarations:
            info = checker.check(decl)
            if isinstance(decl, ast.DecisionDecl):
                diagnostics += check_decision(decl, symbols)
                info.references.update(
                    n.id for row in decl.rows if row.condition for n in gates_read(row.condition)
                )
                info.references &= set(symbols.declarations)
            elif isinstance(decl, ast.TransitionsDecl):
                diagnostics += check_transitions(decl)
            infos.setdefault(decl.name.text, info)
    diagnostics += checker.diagnostics
    diagnostics += scan_warnings(symbols)
    dependencies = {
        name: [ref for ref in info.references if ref in infos] for name, info in infos.items()
    }
    components = strong_components(dependencies)
    cycles = _cycles(symbols, dependencies, components)
    diagnostics += cycles
    graphs: dict[str, frozenset[str]] = {}
    if not cycles:  # which graphs a rule runs on follows its dependencies
        used_first = [name for (name,) in components]
        graphs, disjoint = rule_graphs(symbols, infos, dependencies, used_first)
        diagnostics += disjoint
        failed = frozenset(d.rule for d in disjoint if d.rule)
        diagnostics += usage_warnings(symbols, infos, graphs, failed)
        diagnostics += ungated_warnings(symbols, infos, graphs)
        for protocol in symbols.of_type(ast.ProtocolDecl).values():
            diagnostics += entries_off_graph(protocol, graphs)
            diagnostics += derived_problems(protocol, symbols, infos)
    unique = list(dict.fromkeys(diagnostics))
    return CheckedRuleset(files, symbols, infos, tuple(sorted_diagnostics(unique)), graphs)


def _definition_order(symbols: SymbolTable) -> list[ast.Declaration]:
    """Constants and metrics, each after the ones it uses (members of a cycle in any order)."""
    derived = {
        name: decl
        for name, decl in symbols.declarations.items()
        if isinstance(decl, ast.ConstDecl | ast.MetricDecl)
    }
    # Each points to what it uses, so every component comes after the ones it uses.
    uses = {
        name: [used for used in names_in(decl, calls=True) if used in derived]
        for name, decl in derived.items()
    }
    return [derived[name] for component in strong_components(uses) for name in sorted(component)]


def _cycles(
    symbols: SymbolTable,
    dependencies: Mapping[str, list[str]],
    components: list[list[str]],
) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    for component in components:
        members = sorted(component)
        if len(members) == 1 and members[0] not in dependencies[members[0]]:
            continue
        first = symbols.declarations[members[0]]
        diagnostics.append(
            Diagnostic(
                "CYCLIC_DEFINITION",
                "these declarations depend on each other: "
                + " -> ".join(f"`{m}`" for m in [*members, members[0]]),
                location(first.name.span),
                rule=members[0],
            )
        )
    return diagnostics
