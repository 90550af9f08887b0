"""Decision policies: which gates a table reads, and proof that it is complete and unambiguous.

A decision row may read only gate outcomes, so the whole input space is the set of
pass/fail combinations of the gates the table reads. The linter decides every row over
all of them at once (`truth_table`).
"""

from __future__ import annotations

import functools
import itertools
import operator
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


def truth_table(condition: ast.Expr, columns: Mapping[str, int], every: int) -> int:
    """The combinations of gate outcomes for which a row condition holds, as the bits of an
    int: `columns` gives each gate's own table (the bits of the combinations where it
    passed) and `every` all of them. One pass over the condition decides all 2^n
    combinations at once, where evaluating it once per combination cost most of checking a
    decision.

    Raises:
        ValueError: the condition reads something other than gates.
    """
    match condition:
        case ast.Bool():
            return every if condition.value else 0
        case ast.Name():
            return columns[condition.id]
        case ast.Unary(op="not"):
            return every ^ truth_table(condition.operand, columns, every)
        case ast.BoolOp(op="and"):
            return functools.reduce(
                operator.and_, (truth_table(op, columns, every) for op in condition.operands)
            )
        case ast.BoolOp(op="or"):
            return functools.reduce(
                operator.or_, (truth_table(op, columns, every) for op in condition.operands)
            )
        case ast.Quantifier(source=ast.SetLiteral() as members):
            tables = [truth_table(item, columns, every) for item in members.items]
            body = condition.body or condition.where
            if body is not None and not (isinstance(body, ast.Name) and body.id == condition.var):
                raise ValueError("a decision quantifier must read its gates directly")
            if condition.op == "all":
                return functools.reduce(operator.and_, tables, every)
            passed = functools.reduce(operator.or_, tables, 0)
            return passed if condition.op == "exists" else every ^ passed
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
            truth_table(row.condition, _AllPassed(), 1)  # one combination: every gate passed
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


class _AllPassed(dict[str, int]):
    def __missing__(self, key: str) -> int:
        return 1


def _render(names: list[str], combination: int) -> str:
    """The `combination`-th of `itertools.product((True, False), repeat=len(names))`: the
    first gate's outcome is its highest bit, 0 for passed."""
    last = len(names) - 1
    return ", ".join(
        f"{name}={'fail' if combination >> (last - index) & 1 else 'pass'}"
        for index, name in enumerate(names)
    )


def _columns(names: list[str]) -> tuple[dict[str, int], int]:
    """Each gate's truth table over every combination of the gates' outcomes (numbered in
    the order of `itertools.product((True, False), ...)`), and the table of all of them.
    Gate i of n passes where bit n-1-i of the combination's number is 0: runs of 2^(n-1-i)
    ones and zeros in turn."""
    size = 1 << len(names)
    every = (1 << size) - 1
    columns = {}
    for index, name in enumerate(names):
        run = 1 << (len(names) - 1 - index)
        columns[name] = ((1 << run) - 1) * (every // ((1 << (2 * run)) - 1))
    return columns, every


def _first(table: int, count: int) -> list[int]:
    """The numbers of the first `count` combinations in `table`."""
    found: list[int] = []
    while table and len(found) < count:
        lowest = table & -table
        found.append(lowest.bit_length() - 1)
        table ^= lowest
    return found


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
    columns, every = _columns(names)
    tables = {
        index: truth_table(row.condition, columns, every)
        for index, row in enumerate(decl.rows)
        if row.condition is not None
    }
    overlaps = {
        (first, second): _render(names, _first(tables[first] & tables[second], 1)[0])
        for first, second in itertools.combinations(tables, 2)
        if tables[first] & tables[second]
    }
    reached = {index for index, table in tables.items() if table}
    unmatched = every & ~functools.reduce(operator.or_, tables.values(), 0)
    otherwise = [i for i, row in enumerate(decl.rows) if row.condition is None]
    missing: tuple[int, list[str]] = (0, [])
    if unmatched and otherwise:
        reached.add(otherwise[0])
    elif unmatched:
        shown = _first(unmatched, _SHOWN_COMBINATIONS)
        missing = (unmatched.bit_count(), [_render(names, number) for number in shown])
    return _completeness_errors(decl, missing, overlaps, reached)


def _completeness_errors(
    decl: ast.DecisionDecl,
    missing: tuple[int, list[str]],
    overlaps: dict[tuple[int, int], str],
    reached: set[int],
) -> list[Diagnostic]:
    name = decl.name.text
    errors: list[Diagnostic] = []
    count, examples = missing
    if count:
        shown = "; ".join(examples)
        more = f" and {count - _SHOWN_COMBINATIONS} more" if count > _SHOWN_COMBINATIONS else ""
        errors.append(
            Diagnostic(
                "DECISION_INCOMPLETE",
                f"decision `{name}` gives no verdict for {count} combination(s) of "
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
