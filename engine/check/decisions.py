"""Decision policies: which gates a table reads, and proof that it is complete and unambiguous.

A decision row may read only gate outcomes, so the whole input space is the set of
pass/fail combinations of the gates the table reads. The linter enumerates it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from engine.check.symbols import SymbolTable, did_you_mean, location
from engine.errors import Diagnostic
from engine.syntax import ast

MAX_GATES_READ = 16
_SHOWN_COMBINATIONS = 3


def gates_read(condition: ast.Expr, bound: frozenset[str] = frozenset()) -> list[ast.Name]:
    """Every gate name a row condition reads, in source order (bound variables excluded)."""
    match condition:
        case ast.Name():
            return [] if condition.id in bound else [condition]
        case ast.Unary():
            return gates_read(condition.operand, bound)
        case ast.BoolOp():
            return [name for op in condition.operands for name in gates_read(op, bound)]
        case ast.Quantifier():
            inner = bound | {condition.var}
            names = gates_read(condition.source, bound)
            for part in (condition.where, condition.body):
                if part is not None:
                    names += gates_read(part, inner)
            return names
        case ast.SetLiteral():
            return [name for item in condition.items for name in gates_read(item, bound)]
        case _:
            return []


def row_matches(condition: ast.Expr, outcomes: Mapping[str, bool]) -> bool:
    """Whether a row condition holds for the given gate outcomes (True = passed)."""
    match condition:
        case ast.Bool():
            return condition.value
        case ast.Name():
            return outcomes[condition.id]
        case ast.Unary(op="not"):
            return not row_matches(condition.operand, outcomes)
        case ast.BoolOp(op="and"):
            return all(row_matches(op, outcomes) for op in condition.operands)
        case ast.BoolOp(op="or"):
            return any(row_matches(op, outcomes) for op in condition.operands)
        case ast.Quantifier(source=ast.SetLiteral() as members):
            values = [row_matches(item, outcomes) for item in members.items]
            body = condition.body or condition.where
            if body is not None and not (isinstance(body, ast.Name) and body.id == condition.var):
                raise ValueError("a decision quantifier must read its gates directly")
            if condition.op == "all":
                return all(values)
            return any(values) if condition.op == "exists" else not any(values)
    raise ValueError(f"a decision condition cannot use {_what(condition)}")


def _what(node: ast.Expr) -> str:
    """A short description of an expression a decision condition may not contain."""
    match node:
        case ast.Binary():
            return f"the `{node.op}` operator"
        case ast.Unary():
            return f"the `{node.op}` operator"
        case ast.Call():
            return f"a call of `{node.func}`"
        case ast.Quantifier():
            return f"`{node.op}` over anything but a `{{...}}` set of gates"
        case ast.Aggregate():
            return f"the aggregate `{node.op}`"
        case ast.Count():
            return "`count`"
        case ast.Select():
            return "`select`"
        case ast.Attribute():
            return f"the attribute `.{node.name}`"
        case ast.Navigate():
            return f"the navigation `{'->' if node.outgoing else '<-'} {node.label}`"
    names = {
        ast.Number: "a number",
        ast.String: "a string",
        ast.Null: "`null`",
        ast.SetLiteral: "a set",
        ast.MapLiteral: "a map",
    }
    return names.get(type(node), type(node).__name__)


def decide(decl: ast.DecisionDecl, outcomes: Mapping[str, bool]) -> ast.DecisionRow:
    """The row that decides, for gate outcomes (a checked table has exactly one)."""
    for row in decl.rows:
        if row.condition is not None and row_matches(row.condition, outcomes):
            return row
    for row in decl.rows:
        if row.condition is None:
            return row
    raise ValueError(f"decision `{decl.name.text}` has no row for {dict(outcomes)}")


def _shape_errors(decl: ast.DecisionDecl, symbols: SymbolTable) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    for row in decl.rows:
        if row.condition is None:
            continue
        for name in gates_read(row.condition):
            if name.id in symbols.gates:
                continue
            known = symbols.declarations.get(name.id)
            code, message = (
                (
                    "DECISION_READS_NON_GATE",
                    f"a decision row may read only gates; `{name.id}` "
                    f"is a {ast.declaration_kind(known)}",
                )
                if known is not None
                else ("UNKNOWN_NAME", f"unknown gate `{name.id}`")
            )
            errors.append(
                Diagnostic(
                    code,
                    message,
                    location(name.span),
                    hint=did_you_mean(name.id, symbols.gates),
                    rule=decl.name.text,
                )
            )
        try:
            row_matches(row.condition, _AllTrue())
        except ValueError as error:
            errors.append(
                Diagnostic(
                    "DECISION_CONDITION",
                    str(error),
                    location(row.condition.span),
                    hint="use gate names with `and`, `or`, `not` and all/exists/none over {...}",
                    rule=decl.name.text,
                )
            )
    return errors


class _AllTrue(dict[str, bool]):
    def __missing__(self, key: str) -> bool:
        return True


def _render(outcomes: Mapping[str, bool]) -> str:
    return ", ".join(f"{name}={'pass' if ok else 'fail'}" for name, ok in outcomes.items())


def check_decision(decl: ast.DecisionDecl, symbols: SymbolTable) -> list[Diagnostic]:
    """Unknown or non-gate reads, then completeness, overlaps and unreachable rows."""
    errors = _shape_errors(decl, symbols)
    if errors:
        return errors
    names = sorted({n.id for row in decl.rows if row.condition for n in gates_read(row.condition)})
    if len(names) > MAX_GATES_READ:
        return [
            Diagnostic(
                "DECISION_TOO_WIDE",
                f"decision `{decl.name.text}` reads {len(names)} gates; at most "
                f"{MAX_GATES_READ} can be proved complete",
                location(decl.name.span),
                rule=decl.name.text,
            )
        ]
    reached: set[int] = set()
    missing: list[str] = []
    overlaps: dict[tuple[int, int], str] = {}
    otherwise = [i for i, row in enumerate(decl.rows) if row.condition is None]
    for values in itertools.product((True, False), repeat=len(names)):
        outcomes = dict(zip(names, values, strict=True))
        matched = [
            i
            for i, row in enumerate(decl.rows)
            if row.condition is not None and row_matches(row.condition, outcomes)
        ]
        for first, second in itertools.combinations(matched, 2):
            overlaps.setdefault((first, second), _render(outcomes))
        if matched:
            reached.update(matched)
        elif otherwise:
            reached.add(otherwise[0])
        else:
            missing.append(_render(outcomes))
    return _completeness_errors(decl, missing, overlaps, reached)


def _completeness_errors(
    decl: ast.DecisionDecl,
    missing: list[str],
    overlaps: dict[tuple[int, int], str],
    reached: set[int],
) -> list[Diagnostic]:
    name = decl.name.text
    errors: list[Diagnostic] = []
    if missing:
        shown = "; ".join(missing[:_SHOWN_COMBINATIONS])
        more = f" and {len(missing) - _SHOWN_COMBINATIONS} more" if len(missing) > 3 else ""
        errors.append(
            Diagnostic(
                "DECISION_INCOMPLETE",
                f"decision `{name}` gives no verdict for {len(missing)} combination(s) of "
                f"gate outcomes: {shown}{more}",
                location(decl.name.span),
                hint="add a row for them or an `otherwise` row",
                rule=name,
            )
        )
    for (first, second), example in sorted(overlaps.items()):
        row = decl.rows[second]
        errors.append(
            Diagnostic(
                "DECISION_OVERLAP",
                f"rows {first + 1} (`{decl.rows[first].verdict.text}`) and {second + 1} "
                f"(`{row.verdict.text}`) of decision `{name}` both match {example}",
                location(row.span),
                hint="make the conditions exclusive so every combination has one verdict",
                rule=name,
            )
        )
    for index, row in enumerate(decl.rows):
        if index not in reached:
            errors.append(
                Diagnostic(
                    "DECISION_UNREACHABLE_ROW",
                    f"row {index + 1} (`{row.verdict.text}`) of decision `{name}` is never "
                    "reached by any combination of gate outcomes",
                    location(row.span),
                    rule=name,
                )
            )
    return errors
