"""Gates and budgets: pass/fail criteria that report what they observed.

A gate passes when its condition holds for every binding; when the condition is a
comparison, each binding records the observed value and the bound it was held to. A
budget is a ledger: entries in order, a running total, and the first entry that breaks
the ceiling is named with the running total at that point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.evaluate.bindings import (
    CompiledBinding,
    compile_bindings,
    describe_binding,
    enumerate_bindings,
)
from engine.evaluate.compile import Compiled, Compiler, Context, Env, EvaluationError
from engine.evaluate.runtime import eq, ge, gt, le, lt
from engine.syntax import ast


def _differ(a: Any, b: Any) -> bool:
    return not eq(a, b)


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": lt,
    "<=": le,
    ">": gt,
    ">=": ge,
    "==": eq,
    "!=": _differ,
}


@dataclass(frozen=True, slots=True)
class Observation:
    """One binding of a gate or budget: what was compared, and whether it held."""

    ids: tuple[str, ...]
    passed: bool
    observed: Any = None
    bound: Any = None
    op: str | None = None
    error: str | None = None
    entry: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleResult:
    """The outcome of one gate or budget."""

    name: str
    kind: str
    hash: str
    note: str | None
    passed: bool
    observations: tuple[Observation, ...]


@dataclass(frozen=True, slots=True)
class CompiledGate:
    """A gate ready to evaluate."""

    decl: ast.GateDecl
    hash: str
    bindings: tuple[CompiledBinding, ...]
    require: Compiled
    sides: tuple[Compiled, Compiled, str] | None


@dataclass(frozen=True, slots=True)
class CompiledBudget:
    """A budget ready to evaluate."""

    decl: ast.BudgetDecl
    hash: str
    bindings: tuple[CompiledBinding, ...]
    ledger: CompiledBinding
    order: Compiled
    total: Compiled
    reserve: Compiled | None
    ceiling: Compiled


def compile_gate(compiler: Compiler, decl: ast.GateDecl, rule_hash: str) -> CompiledGate:
    """Compile a gate; a top-level comparison is also compiled side by side."""
    require = decl.require
    sides = None
    if isinstance(require, ast.Binary) and require.op in _COMPARE:
        sides = (compiler.expr(require.left), compiler.expr(require.right), require.op)
    return CompiledGate(
        decl, rule_hash, compile_bindings(compiler, decl.bindings), compiler.expr(require), sides
    )


def compile_budget(compiler: Compiler, decl: ast.BudgetDecl, rule_hash: str) -> CompiledBudget:
    """Compile a budget's bindings, ledger, total, reservation and ceiling."""
    ledger = decl.ledger
    entries = compile_bindings(compiler, (ast.Binding(ledger.var, ledger.source, ledger.where),))
    return CompiledBudget(
        decl,
        rule_hash,
        compile_bindings(compiler, decl.bindings),
        entries[0],
        compiler.expr(ledger.order),
        compiler.expr(decl.total),
        compiler.expr(decl.reserve) if decl.reserve is not None else None,
        compiler.expr(decl.ceiling),
    )


def _observe(gate: CompiledGate, ctx: Context, env: Env) -> Observation:
    ids, _, _ = describe_binding(env, ctx)
    try:
        if gate.sides is not None:
            left, right, op = gate.sides
            observed, bound = left(ctx, env), right(ctx, env)
            return Observation(ids, _COMPARE[op](observed, bound), observed, bound, op)
        return Observation(ids, gate.require(ctx, env) is True)
    except (EvaluationError, TypeError) as error:
        return Observation(ids, False, error=str(error))


def _rule_result(
    kind: str,
    decl: ast.GateDecl | ast.BudgetDecl,
    rule_hash: str,
    bindings: tuple[CompiledBinding, ...],
    observe: Callable[[Env], Observation],
    ctx: Context,
) -> RuleResult:
    """Observe every binding of a gate or budget; it passes when every observation does."""
    try:
        observations = tuple(observe(env) for env in enumerate_bindings(bindings, ctx))
    except (EvaluationError, TypeError) as error:
        observations = (Observation((), False, error=str(error)),)
    passed = all(o.passed for o in observations)
    return RuleResult(decl.name.text, kind, rule_hash, decl.note, passed, observations)


def run_gate(gate: CompiledGate, ctx: Context) -> RuleResult:
    """Evaluate a gate on every binding."""
    return _rule_result(
        "gate", gate.decl, gate.hash, gate.bindings, lambda env: _observe(gate, ctx, env), ctx
    )


def _entry_ids(env: Env, ctx: Context, var: str) -> tuple[str, ...]:
    ids, _, _ = describe_binding({var: env[var]}, ctx)
    return ids


def _ledger(budget: CompiledBudget, ctx: Context, env: Env) -> Observation:
    ids, _, _ = describe_binding(env, ctx)
    var = budget.ledger.var
    try:
        ceiling = budget.ceiling(ctx, env)
        entries = list(enumerate_bindings((budget.ledger,), ctx, env))
        keyed = [
            (budget.order(ctx, inner), _entry_ids(inner, ctx, var), inner) for inner in entries
        ]
        keyed.sort(key=lambda item: (_sort_key(item[0]), item[1]))
        running: Any = 0
        compare = _COMPARE[budget.decl.op]
        for _, entry_ids, inner in keyed:
            amount = budget.total(ctx, inner)
            charged = budget.reserve(ctx, inner) if budget.reserve is not None else amount
            if not compare(running + charged, ceiling):
                return Observation(
                    ids, False, running + charged, ceiling, budget.decl.op, entry=entry_ids
                )
            running = running + amount
        return Observation(ids, True, running, ceiling, budget.decl.op)
    except (EvaluationError, TypeError) as error:
        return Observation(ids, False, error=str(error))


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        raise EvaluationError("a ledger entry has no order key")
    return (0, value) if not isinstance(value, str) else (1, value)


def run_budget(budget: CompiledBudget, ctx: Context) -> RuleResult:
    """Evaluate a budget's ledger for every binding."""
    return _rule_result(
        "budget",
        budget.decl,
        budget.hash,
        budget.bindings,
        lambda env: _ledger(budget, ctx, env),
        ctx,
    )


@dataclass(frozen=True, slots=True)
class CompiledTable:
    """A report table ready to evaluate."""

    decl: ast.TableDecl
    hash: str
    bindings: tuple[CompiledBinding, ...]
    columns: tuple[tuple[str, Compiled], ...]


@dataclass(frozen=True, slots=True)
class TableResult:
    """The rows of a report table: the binding's IDs and each column's value (or error)."""

    name: str
    hash: str
    note: str | None
    columns: tuple[str, ...]
    rows: tuple[tuple[tuple[str, ...], tuple[Any, ...]], ...]


class CellError:
    """A cell whose expression could not be evaluated."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"CellError({self.message!r})"


def compile_table(compiler: Compiler, decl: ast.TableDecl, rule_hash: str) -> CompiledTable:
    """Compile a table's bindings and columns."""
    columns = tuple((c.name.text, compiler.expr(c.expr)) for c in decl.columns)
    return CompiledTable(decl, rule_hash, compile_bindings(compiler, decl.bindings), columns)


def _cell(column: Compiled, ctx: Context, env: Env) -> Any:
    try:
        return column(ctx, env)
    except (EvaluationError, TypeError) as error:
        return CellError(str(error))


def run_table(table: CompiledTable, ctx: Context) -> TableResult:
    """Evaluate every row of a table."""
    rows = []
    try:
        for env in enumerate_bindings(table.bindings, ctx):
            ids, _, _ = describe_binding(env, ctx)
            rows.append((ids, tuple(_cell(column, ctx, env) for _, column in table.columns)))
    except (EvaluationError, TypeError) as error:
        rows.append((("error",), tuple(CellError(str(error)) for _ in table.columns)))
    decl = table.decl
    names = tuple(name for name, _ in table.columns)
    return TableResult(decl.name.text, table.hash, decl.note, names, tuple(rows))
