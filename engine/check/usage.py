"""Warnings for declarations that can never matter: unused, unread, or running nowhere.

None of these makes a ruleset wrong, so each is a warning; `rulecheck lint --strict`
makes them errors. A gate nothing reads decides nothing, and a rule that reads no kind
runs on no graph: its outcome would never be computed, which must not look like a pass.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.check.symbols import SymbolTable, location
from engine.check.types import DeclInfo
from engine.errors import Diagnostic
from engine.syntax import ast

_UNUSED = {
    ast.ConstDecl: ("UNUSED_CONST", "constant"),
    ast.MetricDecl: ("UNUSED_METRIC", "metric"),
    ast.CodeDecl: ("UNUSED_CODE", "reject code"),
}
_RULES = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl, ast.TableDecl, ast.DecisionDecl)


def usage_warnings(
    symbols: SymbolTable,
    infos: Mapping[str, DeclInfo],
    graphs: Mapping[str, frozenset[str]],
    disjoint: frozenset[str],
) -> list[Diagnostic]:
    """A warning for each unused constant, metric and code, each gate nothing reads, and
    each rule that runs on no graph (`disjoint` rules already have an error)."""
    used = {ref for info in infos.values() for ref in info.references}
    warnings = []
    for name, decl in symbols.declarations.items():
        unused = _UNUSED.get(type(decl))
        if unused is not None and name not in used:
            code, what = unused
            warnings.append(_warning(code, f"{what} `{name}` is never used", decl))
        elif isinstance(decl, ast.GateDecl) and name not in used:
            message = f"no decision, table or rule reads gate `{name}`: it decides nothing"
            warnings.append(_warning("GATE_UNREAD", message, decl))
        if isinstance(decl, _RULES) and graphs and not graphs.get(name) and name not in disjoint:
            message = (
                f"{ast.declaration_kind(decl)} `{name}` reads no kind, so it runs on no graph "
                "and is never evaluated"
            )
            warnings.append(_warning("RULE_RUNS_NOWHERE", message, decl))
    return warnings


def _warning(code: str, message: str, decl: ast.Declaration) -> Diagnostic:
    return Diagnostic(
        code, message, location(decl.name.span), severity="warning", rule=decl.name.text
    )
