"""Gates and budgets: pass/fail criteria that report what they observed.

A gate passes when its condition holds for every binding; when the condition is a
comparison, each binding records the observed value and the bound it was held to. A
budget is a ledger: entries in order, a running total, and the first entry that breaks
the ceiling is named with the running total at that point.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from engine.evaluate.bindings import binding_ids
from engine.evaluate.compile import (
    Compiled,
    Compiler,
    Context,
    Env,
    Failures,
    PacedRun,
    RuleRun,
)
from engine.evaluate.runtime import (
    FAILURES,
    EvaluationError,
    add,
    condition,
    eq,
    failure,
    ge,
    gt,
    le,
    lt,
    sub,
)
from engine.graph.build import NodeKey
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
    failed_rules: tuple[str, ...] = ()  # of the rules a failing binding read, those that failed
    # a budget's ledger up to the entry that breaks the ceiling: each entry in order, the
    # running total once its amount is added and, with `reserving`, the total it was
    # admitted on (the entries before it plus its reservation)
    totals: tuple[tuple[tuple[str, ...], Any, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class RuleResult:
    """The outcome of one gate or budget."""

    name: str
    kind: str
    hash: str
    note: str | None
    passed: bool
    observations: tuple[Observation, ...]
    bound: int = 1

    @property
    def vacuous(self) -> bool:
        """True when the rule's `for` clauses bound nothing: its outcome is not evidence."""
        return self.bound == 0

    @property
    def error(self) -> str | None:
        """The evaluation error the outcome rests on, if any: none failed cleanly and one
        could not be evaluated (one binding that fails cleanly settles the outcome)."""
        if self.passed or any(not o.passed and o.error is None for o in self.observations):
            return None
        return next((o.error for o in self.observations if o.error is not None), None)


@dataclass(frozen=True, slots=True)
class CompiledGate:
    """A gate ready to evaluate."""

    decl: ast.GateDecl
    hash: str
    bindings: RuleRun
    require: Compiled
    sides: tuple[Compiled, Compiled, str] | None
    reads: tuple[str, ...] = ()  # the link rules, budgets and gates its condition reads


@dataclass(frozen=True, slots=True)
class CompiledBudget:
    """A budget ready to evaluate."""

    decl: ast.BudgetDecl
    hash: str
    bindings: RuleRun
    ledger: RuleRun
    ledger_var: str
    order: Compiled
    total: Compiled
    reserve: Compiled | None
    ceiling: Compiled


def _bound(bindings: tuple[ast.Binding, ...]) -> tuple[str, ...]:
    """The variables a rule's `for` clauses bind (they shadow declarations' names)."""
    return tuple(binding.var.text for binding in bindings)


def compile_gate(compiler: Compiler, decl: ast.GateDecl, rule_hash: str) -> CompiledGate:
    """Compile a gate; a top-level comparison is also compiled side by side."""
    require = decl.require
    bound = _bound(decl.bindings)
    sides = None
    if isinstance(require, ast.Binary) and require.op in _COMPARE:
        left, right = compiler.expr(require.left, bound), compiler.expr(require.right, bound)
        sides = (left, right, require.op)
    bindings = compiler.rule_function(f"gate_{decl.name.text}", decl.bindings)
    rules = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl)
    declarations = compiler.symbols.declarations
    reads = tuple(
        sorted(
            ref
            for ref in compiler.checked.infos[decl.name.text].references
            if isinstance(declarations.get(ref), rules)
        )
    )
    return CompiledGate(decl, rule_hash, bindings, compiler.expr(require, bound), sides, reads)


def compile_budget(compiler: Compiler, decl: ast.BudgetDecl, rule_hash: str) -> CompiledBudget:
    """Compile a budget's bindings, ledger, total, reservation and ceiling."""
    ledger = decl.ledger
    name = decl.name.text
    entries = (ast.Binding(ledger.var, ledger.source, ledger.where),)
    bound = _bound((*decl.bindings, *entries))
    return CompiledBudget(
        decl,
        rule_hash,
        compiler.rule_function(f"budget_{name}", decl.bindings),
        compiler.rule_function(f"ledger_{name}", entries, bound=_bound(decl.bindings)),
        ledger.var.text,
        compiler.expr(ledger.order, bound),
        compiler.expr(decl.total, bound),
        compiler.expr(decl.reserve, bound) if decl.reserve is not None else None,
        compiler.expr(decl.ceiling, bound),
    )


def _observe(gate: CompiledGate, ctx: Context, env: Env) -> Observation:
    ids = binding_ids(env, ctx)
    try:
        if gate.sides is not None:
            left, right, op = gate.sides
            observed, bound = left(ctx, env), right(ctx, env)
            return Observation(ids, _COMPARE[op](observed, bound), observed, bound, op)
        if condition(gate.require(ctx, env)):  # a number or a text is an error, not false
            return Observation(ids, True)
        failed = tuple(name for name in gate.reads if ctx.gates.get(name) is False)
        return Observation(ids, False, failed_rules=failed)
    except FAILURES as error:
        return Observation(ids, False, error=failure(error))


def _rule_result(
    kind: str,
    decl: ast.GateDecl | ast.BudgetDecl,
    rule_hash: str,
    bindings: RuleRun,
    observe: Callable[[Env], Observation],
    ctx: Context,
) -> RuleResult:
    """Observe every binding of a gate or budget; it passes when every observation does.

    A binding whose `for` source or filter fails is a failed observation of its own.
    """
    observations: list[Observation] = []
    errors: Failures = []
    bound = bindings(ctx, {}, lambda env: observations.append(observe(env)), [], errors)
    for env, message in errors:
        observations.append(Observation(binding_ids(env, ctx), False, error=message))
    passed = all(o.passed for o in observations)
    bound = bound + len(errors) if decl.bindings else 1  # a failed binding is not vacuity
    return RuleResult(
        decl.name.text, kind, rule_hash, decl.note, passed, tuple(observations), bound
    )


def run_gate(gate: CompiledGate, ctx: Context) -> RuleResult:
    """Evaluate a gate on every binding."""
    return _rule_result(
        "gate", gate.decl, gate.hash, gate.bindings, lambda env: _observe(gate, ctx, env), ctx
    )


def _entry_ids(env: Env, ctx: Context, var: str) -> tuple[str, ...]:
    return binding_ids({var: env[var]}, ctx)


def _ledger(budget: CompiledBudget, ctx: Context, env: Env, entries: list[Env]) -> Observation:
    """One binding's ledger; its entries are appended to `entries` (the caller counts them)."""
    ids = binding_ids(env, ctx)
    var = budget.ledger_var
    start = len(entries)
    errors: Failures = []
    budget.ledger(ctx, env, entries.append, [], errors)
    if errors:
        partial, message = errors[0]
        where = _entry_ids(partial, ctx, var) if var in partial else ()
        return Observation(ids, False, error=message, entry=where)
    entry: tuple[str, ...] = ()
    try:
        ceiling = budget.ceiling(ctx, env)
        keyed = []
        for inner in entries[start:]:
            entry = _entry_ids(inner, ctx, var)
            keyed.append((_sort_key(budget.order(ctx, inner)), entry, inner))
        keyed.sort(key=lambda item: (item[0], item[1]))
        running: Any = 0
        compare = _COMPARE[budget.decl.op]
        totals: list[tuple[tuple[str, ...], Any, Any]] = []
        for _, entry, inner in keyed:
            amount = budget.total(ctx, inner)
            charged = budget.reserve(ctx, inner) if budget.reserve is not None else amount
            admitted_on = add(running, charged) if budget.reserve is not None else None
            totals.append((entry, add(running, amount), admitted_on))
            if not compare(add(running, charged), ceiling):
                return Observation(
                    ids,
                    False,
                    add(running, charged),
                    ceiling,
                    budget.decl.op,
                    entry=entry,
                    totals=tuple(totals),
                )
            running = add(running, amount)
        return Observation(ids, True, running, ceiling, budget.decl.op, totals=tuple(totals))
    except FAILURES as error:
        return Observation(ids, False, error=failure(error), entry=entry)


def ledger_excess(budget: CompiledBudget, ctx: Context, env: Env) -> tuple[Any, tuple[str, ...]]:
    """How far one binding's ledger goes past its ceiling: the largest excess of a running
    total (with the entry's reservation) over the ceiling, and the entry where it is
    largest. Lowering the amounts, at or before the first entry that breaks the ceiling,
    by the excess makes every entry hold (for `<`, by more than it); no smaller lowering
    does. Non-positive when the ledger holds.

    Raises:
        EvaluationError: when an entry cannot be evaluated (the budget reports it).
    """
    entries: list[Env] = []
    budget.ledger(ctx, env, entries.append, [], [])
    ceiling = budget.ceiling(ctx, env)
    var = budget.ledger_var
    keyed = sorted(
        ((_sort_key(budget.order(ctx, e)), _entry_ids(e, ctx, var), e) for e in entries),
        key=lambda item: (item[0], item[1]),
    )
    running: Any = 0
    worst: tuple[Any, tuple[str, ...]] | None = None
    for _, entry, inner in keyed:
        amount = budget.total(ctx, inner)
        charged = budget.reserve(ctx, inner) if budget.reserve is not None else amount
        excess = sub(add(running, charged), ceiling)
        if worst is None or gt(excess, worst[0]):
            worst = (excess, entry)
        running = add(running, amount)
    return worst if worst is not None else (sub(0, ceiling), ())


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        raise EvaluationError("a ledger entry has no order key")
    return (0, value) if not isinstance(value, str) else (1, value)


def run_budget(budget: CompiledBudget, ctx: Context) -> RuleResult:
    """Evaluate a budget's ledger for every binding; it binds what its ledgers hold."""
    entries: list[Env] = []
    result = _rule_result(
        "budget",
        budget.decl,
        budget.hash,
        budget.bindings,
        lambda env: _ledger(budget, ctx, env, entries),
        ctx,
    )
    return dataclasses.replace(result, bound=len(entries))


@dataclass(frozen=True, slots=True)
class CompiledTable:
    """A report table ready to evaluate."""

    decl: ast.TableDecl
    hash: str
    bindings: RuleRun
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
    bound = _bound(decl.bindings)
    columns = tuple((c.name.text, compiler.expr(c.expr, bound)) for c in decl.columns)
    bindings = compiler.rule_function(f"table_{decl.name.text}", decl.bindings)
    return CompiledTable(decl, rule_hash, bindings, columns)


def _cell(column: Compiled, ctx: Context, env: Env) -> Any:
    try:
        return column(ctx, env)
    except FAILURES as error:
        return CellError(failure(error))


def run_table(table: CompiledTable, ctx: Context) -> TableResult:
    """Evaluate every row of a table; a binding that fails is a row of errors."""
    rows = _Rows(table, ctx)
    table.bindings(ctx, {}, rows.add, [], rows.errors)
    return rows.result()


def run_tables(tables: Sequence[tuple[CompiledTable, PacedRun]], ctx: Context) -> list[TableResult]:
    """Tables that read nothing of each other (`protocol.derivation_runs`), each with its
    bindings as `Compiler.paced_function` runs them, computed on one graph: those that
    loop over kinds together, node by node, no table binding a node of a kind that an
    earlier one loops over before that one has; a table that loops over none after the
    tables before it, as one after the other would be. Each gives the rows `run_table`
    gives, in its order; only when each row is computed differs. What a row of one table
    reads is then what the row of an earlier one about the same node read a moment
    before: a campaign's raters' view hashes each answer its check has just parsed, and
    the answer is read and parsed once."""
    done: dict[int, TableResult] = {}
    pacers: list[tuple[int, _Pacer]] = []
    for index, (table, paced) in enumerate(tables):
        if inspect.isgeneratorfunction(paced):
            earlier = tuple(pacer for _index, pacer in pacers)
            pacers.append((index, _Pacer(_Rows(table, ctx), paced, ctx, earlier)))
        else:
            _finish(pacers, done)
            done[index] = run_table(table, ctx)
    _finish(pacers, done)
    return [done[index] for index in range(len(tables))]


def _finish(pacers: list[tuple[int, _Pacer]], done: dict[int, TableResult]) -> None:
    """Run paced tables to their end, the last first (it pulls the earlier ones along)."""
    for _index, pacer in reversed(pacers):
        pacer.finish()
    done.update((index, pacer.rows.result()) for index, pacer in pacers)
    pacers.clear()


class _Rows:
    """The rows of one table as its bindings reach them."""

    def __init__(self, table: CompiledTable, ctx: Context) -> None:
        self.table, self.ctx = table, ctx
        self.rows: list[tuple[tuple[str, ...], tuple[Any, ...]]] = []
        self.errors: Failures = []

    def add(self, env: Env) -> None:
        ids = binding_ids(env, self.ctx)
        columns = self.table.columns
        self.rows.append((ids, tuple(_cell(column, self.ctx, env) for _, column in columns)))

    def result(self) -> TableResult:
        rows = list(self.rows)
        for env, message in self.errors:
            ids = binding_ids(env, self.ctx) or ("error",)
            rows.append((ids, tuple(CellError(message) for _ in self.table.columns)))
        decl = self.table.decl
        names = tuple(name for name, _ in self.table.columns)
        return TableResult(decl.name.text, self.table.hash, decl.note, names, tuple(rows))


class _Pacer:
    """One table of `run_tables`, run a node at a time."""

    def __init__(
        self, rows: _Rows, paced: PacedRun, ctx: Context, earlier: tuple[_Pacer, ...]
    ) -> None:
        self.earlier = earlier
        self.reached: set[NodeKey] = set()
        self.kinds = _kinds_looped(rows.table.decl)
        steps = paced(ctx, {}, rows.add, [], rows.errors)
        assert not isinstance(steps, int)  # a generator function (`run_tables`)
        self.steps: Iterator[NodeKey] | None = steps
        self.rows = rows

    def reach(self, node: NodeKey) -> None:
        """Run on until this table has bound `node`, when it loops over the node's kind
        and has not yet (else until it is done)."""
        if self.steps is None or node[0] not in self.kinds or node in self.reached:
            return
        for bound in self.steps:
            self._bind(bound)
            if bound == node:
                return
        self.steps = None

    def finish(self) -> None:
        """Run to the end."""
        if self.steps is not None:
            for bound in self.steps:
                self._bind(bound)
            self.steps = None

    def _bind(self, node: NodeKey) -> None:
        self.reached.add(node)
        for pacer in self.earlier:
            pacer.reach(node)


def _kinds_looped(decl: ast.TableDecl) -> frozenset[str]:
    """The names a table's clauses loop over: among them the kinds whose nodes its paced
    bindings yield (a name that is not a kind there yields nothing to wait for)."""
    return frozenset(b.source.id for b in decl.bindings if isinstance(b.source, ast.Name))
