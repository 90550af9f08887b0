"""Which graphs each rule runs on.

A kind belongs to one or more graphs (`kind check of oracle, trials`). A declaration runs
on every graph that holds all the kinds it reads, directly or through the metrics, gates
and rules it uses; a declaration that reads no kind runs on none. One whose kinds share no
graph could never run, which is an error.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.check.symbols import SymbolTable, location
from engine.check.types import DeclInfo
from engine.errors import Diagnostic
from engine.syntax import ast


def rule_graphs(
    symbols: SymbolTable,
    infos: Mapping[str, DeclInfo],
    dependencies: Mapping[str, list[str]],
    used_first: list[str],
) -> tuple[dict[str, frozenset[str]], list[Diagnostic]]:
    """The graphs of every declaration, and a diagnostic for each that can run on none.

    `dependencies` names, for each declaration of `infos`, the ones it uses; they must be
    acyclic (`check_rules` reports cycles and skips this), and `used_first` orders every
    declaration after all it uses (for a file that uses what it declared before, source
    order: the walks below then read the declarations in the order they sit in memory).
    """
    kinds = symbols.kinds
    # The kinds each declaration reads, its dependencies' included: every dependency comes
    # before its users in this order, so each set is built once from finished ones.
    reads: dict[str, set[str]] = {}
    for name in used_first:
        reads[name] = {kind for kind in infos[name].kinds if kind in kinds}
        for ref in dependencies[name]:
            reads[name] |= reads[ref]
    graphs: dict[str, frozenset[str]] = {}
    diagnostics: list[Diagnostic] = []
    for name in infos:
        decl = symbols.declarations.get(name)
        if isinstance(decl, ast.KindDecl):
            graphs[name] = frozenset(graph.text for graph in decl.graphs)
            continue
        if isinstance(decl, ast.ProtocolDecl):  # it names its graph; the checker checks it
            graphs[name] = frozenset(graph.text for graph in decl.graph)
            continue
        read = reads[name]
        if not read:
            graphs[name] = frozenset()
            continue
        shared = frozenset.intersection(
            *(frozenset(graph.text for graph in kinds[kind].graphs) for kind in read)
        )
        graphs[name] = shared
        if not shared and decl is not None:
            listed = ", ".join(
                f"`{kind}` ({', '.join(g.text for g in kinds[kind].graphs)})"
                for kind in sorted(read)
            )
            diagnostics.append(
                Diagnostic(
                    "GRAPHS_DISJOINT",
                    f"`{name}` reads kinds that no graph holds together: {listed}",
                    location(decl.name.span),
                    hint="a rule runs on a graph that holds every kind it reads; "
                    "declare a shared kind `of` both graphs",
                    rule=name,
                )
            )
    _kindless_rules_run_where_read(symbols, dependencies, used_first[::-1], graphs)
    return graphs, diagnostics


_RULES = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl, ast.TableDecl)


def _kindless_rules_run_where_read(
    symbols: SymbolTable,
    dependencies: Mapping[str, list[str]],
    order: list[str],
    graphs: dict[str, frozenset[str]],
) -> None:
    """A rule that reads no kind (it reads only files, through builtins, or constants) runs
    on every graph of the rules that read it, so `passed(RULE)` always has an outcome."""
    readers_of: dict[str, list[str]] = {name: [] for name in dependencies}
    for user, refs in dependencies.items():
        for ref in dict.fromkeys(refs):
            readers_of[ref].append(user)
    for name in order:  # readers before what they read
        decl = symbols.declarations.get(name)
        if not isinstance(decl, _RULES) or graphs.get(name):
            continue
        readers = [graphs.get(user, frozenset()) for user in readers_of[name]]
        graphs[name] = frozenset().union(*readers)
