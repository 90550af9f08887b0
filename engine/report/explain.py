"""`rulecheck explain BUNDLE [NAME]`: why a verdict or a rule outcome came out, and the
smallest change of the counted data that would flip each failing bound.

The chain starts at the decision (the protocol's verdict, or NAME): the row chosen and the
gates it read; then, for each rule in the chain, its failing bindings (the closest one to
its bound when it holds), the values compared, and the input records they came from, with
their file locations; then the rules a failing rule reads that failed too. Nothing here
knows a protocol: every value is recomputed from the rules' own expressions.

A counterfactual is computed exactly for a failing comparison `LEFT op BOUND`:
- `ratio(A, B) op BOUND`: the fewest more (for `>=`, `>`) or fewer (`<=`, `<`) items
  counted by `A`, with `B` unchanged, for which the comparison holds;
- any other number: how far LEFT must move (for a `count(...)`, how many items).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from engine.check.symbols import did_you_mean
from engine.errors import Diagnostic, ExitCode, RulecheckError
from engine.evaluate.bindings import value_text
from engine.evaluate.gates import CompiledBudget, CompiledGate, Observation, RuleResult
from engine.evaluate.program import DecisionResult, Program
from engine.evaluate.protocol import ProtocolResult
from engine.evaluate.runtime import Context
from engine.report.evaluation_report import exact, shown
from engine.syntax import ast
from engine.syntax.format import format_expr

_SHOWN_BINDINGS = 5
_RAISE = {">=", ">"}
_LOWER = {"<=", "<"}


@dataclass(frozen=True, slots=True)
class Counterfactual:
    """The smallest change that makes one failing comparison hold."""

    kind: str  # "count": `by` more or fewer counted items; "value": LEFT moved by `by`
    expression: str  # what changes
    by: Any  # how many items, or how much (exact)
    direction: str  # "more" | "fewer"
    reaches: Any  # the value LEFT then has (for a strict bound, the value to go past)
    strict: bool = False  # a `value` change must go past `reaches` (`>`, `<`)

    def text(self, exact: bool = True) -> str:
        """The counterfactual in words (exact fractions beside rounded ones with `exact`)."""
        if self.kind == "count":
            noun = "item" if self.by == 1 else "items"
            return (
                f"{self.by} {self.direction} {noun} counted by `{self.expression}` "
                f"would reach {shown(self.reaches, exact)}"
            )
        verb = "rising" if self.direction == "more" else "falling"
        if self.strict:
            return (
                f"`{self.expression}` {verb} by more than {shown(self.by, exact)} would pass "
                f"{shown(self.reaches, exact)}"
            )
        by, reaches = shown(self.by, exact), shown(self.reaches, exact)
        return f"`{self.expression}` {verb} by {by} would reach {reaches}"

    def data(self) -> dict[str, Any]:
        """As JSON data."""
        return {
            "kind": self.kind,
            "expression": self.expression,
            "by": exact(self.by),
            "direction": self.direction,
            "reaches": exact(self.reaches),
            "strict": self.strict,
            "text": self.text(),
        }


@dataclass(frozen=True, slots=True)
class Record:
    """An input record a binding names: its id, document and location."""

    id: str
    document: str
    file: str
    line: int | None
    pointer: str


@dataclass(frozen=True, slots=True)
class BindingExplained:
    """One binding of a rule: what it compared, the parts of a ratio, its records."""

    ids: tuple[str, ...]
    passed: bool
    observed: Any = None
    op: str | None = None
    bound: Any = None
    error: str | None = None
    parts: tuple[Any, Any] | None = None
    counterfactual: Counterfactual | None = None
    records: tuple[Record, ...] = ()
    failed_rules: tuple[str, ...] = ()
    entry: tuple[str, ...] = ()  # a budget: the ledger entry where the ceiling broke


@dataclass(frozen=True, slots=True)
class RuleExplained:
    """One rule of the chain: its outcome, condition, bindings shown and counts."""

    name: str
    kind: str
    hash: str
    passed: bool
    condition: str
    bindings: tuple[BindingExplained, ...]
    total: int
    failing: int
    closest: bool  # the bindings shown are the closest passing ones (the rule holds)
    violations: tuple[tuple[str, tuple[str, ...], str], ...] = ()  # code, ids, location


@dataclass(frozen=True, slots=True)
class DecisionExplained:
    """The decision: its row, verdict, the row's condition and the gates it read."""

    name: str
    row: int
    verdict: str
    condition: str
    outcomes: tuple[tuple[str, bool], ...]


@dataclass(frozen=True, slots=True)
class Explanation:
    """The causal chain of one target."""

    target: str
    decision: DecisionExplained | None
    rules: tuple[RuleExplained, ...] = field(default=())


def _rule_kinds(program: Program) -> dict[str, ast.Declaration]:
    symbols = program.ruleset.checked.symbols
    kinds = (ast.DecisionDecl, ast.GateDecl, ast.BudgetDecl, ast.LinkDecl)
    return {n: d for n, d in symbols.declarations.items() if isinstance(d, kinds)}


def explain(
    program: Program, found: ProtocolResult, name: str | None, every: bool = False
) -> Explanation:
    """The chain of `name` (default: the protocol's verdict decision) on one bundle: of
    each rule, its first failing bindings (or the passing one closest to its bound), or
    with `every`, all its failing bindings (all its bindings, when it passes).

    Raises:
        RulecheckError: exit 2 when `name` is no decision, gate, budget or link rule of
            the protocol's graph, or the protocol declares no verdict and none is named.
    """
    declared = _rule_kinds(program)
    target = name or (found.protocol.verdict[0].text if found.protocol.verdict else None)
    if target is None:
        message = f"protocol `{found.protocol.name.text}` declares no verdict: name a rule"
        raise RulecheckError([Diagnostic("UNKNOWN_NAME", message)], ExitCode.USAGE)
    evaluation = found.graph.evaluation
    decisions = {d.name: d for d in evaluation.decisions}
    if target not in declared or (target not in decisions and target not in evaluation.outcomes):
        hint = did_you_mean(target, declared)
        message = f"no decision, gate, budget or link rule `{target}` ran on this bundle"
        raise RulecheckError(
            [Diagnostic("UNKNOWN_NAME", message + (f"; {hint}" if hint else ""))], ExitCode.USAGE
        )
    explainer = _Explainer(program, found, every)
    if target in decisions:
        decision = explainer.decision(decisions[target])
        start = [g for g, ok in decision.outcomes if not ok] or [g for g, _ in decision.outcomes]
        return Explanation(target, decision, tuple(explainer.chain(start)))
    return Explanation(target, None, tuple(explainer.chain([target])))


class _Explainer:
    """Recomputes the values behind each rule on a context rebuilt from the bundle."""

    def __init__(self, program: Program, found: ProtocolResult, every: bool = False) -> None:
        from engine.evaluate.inputs import documents_context
        from engine.evaluate.nested import NestedChecker

        self.program = program
        self.found = found
        self.every = every
        self.evaluation = found.graph.evaluation
        root = found.bundle.root
        graph = found.graph.graph
        self.ctx: Context = documents_context(
            program.graph(graph),
            program,
            found.bundle.documents,
            root,
            NestedChecker(program, root).check,
        )
        self.ctx.gates.update(self.evaluation.outcomes)
        self.steps = {
            s.decl.name.text: s
            for s in program.schedule
            if isinstance(s, CompiledGate | CompiledBudget)
        }
        self.results = {r.name: r for r in (*self.evaluation.gates, *self.evaluation.budgets)}
        self.declared = _rule_kinds(program)

    def decision(self, result: DecisionResult) -> DecisionExplained:
        decl = self.declared[result.name]
        assert isinstance(decl, ast.DecisionDecl)
        row = decl.rows[result.row - 1]
        condition = "otherwise" if row.condition is None else format_expr(row.condition)
        return DecisionExplained(
            result.name, result.row, result.verdict, condition, tuple(result.outcomes.items())
        )

    def chain(self, start: list[str]) -> Iterator[RuleExplained]:
        """Each rule from `start` on, then the failed rules they read, once each."""
        seen: set[str] = set()
        queue = list(start)
        while queue:
            name = queue.pop(0)
            if name in seen or name not in self.declared:
                continue
            seen.add(name)
            explained = self.rule(name)
            yield explained
            if not explained.passed:
                reads = self._reads(name)
                queue += [r for r in reads if self.ctx.gates.get(r) is False and r not in seen]

    def _reads(self, name: str) -> list[str]:
        infos = self.program.ruleset.checked.infos
        kinds = (ast.GateDecl, ast.BudgetDecl, ast.LinkDecl)
        found: list[str] = []
        stack = sorted(infos[name].references)
        visited: set[str] = set()
        while stack:  # through metrics and constants, up to the next rule
            ref = stack.pop(0)
            if ref in visited or ref not in infos:
                continue
            visited.add(ref)
            decl = self.program.ruleset.checked.symbols.declarations.get(ref)
            if isinstance(decl, kinds):
                found.append(ref)
            else:
                stack += sorted(infos[ref].references)
        return sorted(found)

    def rule(self, name: str) -> RuleExplained:
        decl = self.declared[name]
        if isinstance(decl, ast.LinkDecl):
            return self._link(decl)
        result = self.results[name]
        step = self.steps[name]
        condition = (
            format_expr(decl.require)
            if isinstance(decl, ast.GateDecl)
            else f"total {format_expr(step.decl.total)} {step.decl.op} "
            f"{format_expr(step.decl.ceiling)}"
            if isinstance(step, CompiledBudget)
            else ""
        )
        failing = [o for o in result.observations if not o.passed]
        if self.every:
            chosen = failing or list(result.observations)
        else:
            chosen = failing[:_SHOWN_BINDINGS] if failing else _closest(result)
        envs = self._envs(step)
        bindings = tuple(self._binding(step, o, envs.get(o.ids)) for o in chosen)
        return RuleExplained(
            name,
            result.kind,
            result.hash,
            result.passed,
            condition,
            bindings,
            len(result.observations),
            len(failing),
            not failing and not self.every,
        )

    def _link(self, decl: ast.LinkDecl) -> RuleExplained:
        name = decl.name.text
        found = [v for v in self.evaluation.violations if v.rule == name]
        violations = []
        bindings = []
        for violation in found if self.every else found[:_SHOWN_BINDINGS]:
            where = self._locate(violation.document, violation.pointer)
            violations.append((violation.code, violation.ids, where))
            bindings.append(
                BindingExplained(violation.ids, False, records=self._records_of(violation.ids))
            )
        rule_hash = self.program.ruleset.hashed.by_name()[name].hash
        return RuleExplained(
            name,
            "link",
            rule_hash,
            not found,
            format_expr(decl.require),
            tuple(bindings),
            len(found),
            len(found),
            False,
            tuple(violations),
        )

    def _locate(self, document: str | None, pointer: str | None) -> str:
        if document is None or document not in self.found.bundle.documents:
            return document or ""
        return self.found.bundle.documents[document].locate(pointer or "").render()

    def _envs(self, step: CompiledGate | CompiledBudget) -> dict[tuple[str, ...], dict[str, Any]]:
        """Each binding's variables, by the ids it names."""
        from engine.evaluate.bindings import binding_ids

        envs: dict[tuple[str, ...], dict[str, Any]] = {}

        def keep(env: dict[str, Any]) -> None:
            envs.setdefault(binding_ids(env, self.ctx), dict(env))

        step.bindings(self.ctx, {}, keep, [], [])
        return envs

    def _binding(
        self,
        step: CompiledGate | CompiledBudget,
        observation: Observation,
        env: dict[str, Any] | None,
    ) -> BindingExplained:
        parts = None
        counterfactual = None
        decl = step.decl
        if isinstance(step, CompiledGate) and env is not None:
            require = decl.require if isinstance(decl, ast.GateDecl) else None
            if isinstance(require, ast.Binary) and _is_ratio(require.left):
                parts = self._ratio_parts(require.left, env)
        failed_bound = (
            not observation.passed and observation.op is not None and observation.error is None
        )
        if failed_bound and isinstance(step, CompiledBudget) and env is not None:
            counterfactual = self._ledger_counterfactual(step, observation, env)
        elif failed_bound:
            counterfactual = _counterfactual(observation, _left(decl), parts)
        return BindingExplained(
            observation.ids,
            observation.passed,
            observation.observed,
            observation.op,
            observation.bound,
            observation.error,
            parts,
            counterfactual,
            self._records_of(observation.ids or observation.entry),
            observation.failed_rules,
            observation.entry,
        )

    def _ledger_counterfactual(
        self, budget: CompiledBudget, observation: Observation, env: dict[str, Any]
    ) -> Counterfactual | None:
        """A budget holds at every entry once its amounts, at or before the first entry
        that breaks it, fall by the largest excess of a running total over the ceiling."""
        from engine.evaluate.gates import ledger_excess

        try:
            excess, _ = ledger_excess(budget, self.ctx, env)
        except Exception:  # the budget's own observation already reports the error
            return None
        if not isinstance(excess, int | Fraction) or isinstance(excess, bool) or excess <= 0:
            return None
        first = ", ".join(observation.entry) or "the first entry"
        expression = f"{format_expr(budget.decl.total)} (at or before {first})"
        return Counterfactual(
            "value",
            expression,
            _whole(Fraction(excess)),
            "fewer",
            observation.bound,
            budget.decl.op == "<",
        )

    def _ratio_parts(self, call: ast.Expr, env: dict[str, Any]) -> tuple[Any, Any] | None:
        assert isinstance(call, ast.Call)
        try:
            compiler = self.program.compiler
            return compiler.expr(call.args[0])(self.ctx, env), compiler.expr(call.args[1])(
                self.ctx, env
            )
        except Exception:  # the gate's own observation already reports the error
            return None

    def _records_of(self, ids: tuple[str, ...]) -> tuple[Record, ...]:
        """The input records whose id is one of `ids`, located in their files."""
        wanted = set(ids)
        records = []
        graph = self.ctx.graph
        for node in graph.attrs:
            identity = graph.id_of(node)
            text = None if identity is None else value_text(identity)
            if text is None or text not in wanted:
                continue
            place = self.ctx.graph.place(node)
            if place is None:
                continue
            document, pointer = place
            loaded = self.found.bundle.documents.get(document)
            if loaded is None:
                continue
            where = loaded.locate(pointer)
            records.append(Record(text, document, where.file, where.line, pointer))
        return tuple(sorted(records, key=lambda r: (ids.index(r.id), r.document, r.pointer)))


def _left(decl: ast.Declaration) -> ast.Expr | None:
    if isinstance(decl, ast.GateDecl) and isinstance(decl.require, ast.Binary):
        return decl.require.left
    if isinstance(decl, ast.BudgetDecl):
        return decl.total
    return None


def _is_ratio(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Call) and expr.func == "ratio" and len(expr.args) == 2


def _closest(result: RuleResult) -> list[Observation]:
    """The passing binding nearest its bound (the first, when none is numeric)."""
    numeric = [
        o
        for o in result.observations
        if isinstance(o.observed, int | Fraction) and isinstance(o.bound, int | Fraction)
    ]
    if not numeric:
        return list(result.observations[:1])
    return [min(numeric, key=lambda o: abs(Fraction(o.observed) - Fraction(o.bound)))]


def _items_needed(value: Fraction, op: str, bound: Fraction) -> int:
    """The fewest whole steps of 1 from `value` toward `bound` after which `value op
    bound` holds (0 when it already does)."""
    if op in _RAISE:
        gap = bound - value
        steps = math.ceil(gap) if op == ">=" else math.floor(gap) + 1
    else:
        gap = value - bound
        steps = math.ceil(gap) if op == "<=" else math.floor(gap) + 1
    return max(steps, 0)


def _counterfactual(
    observation: Observation, left: ast.Expr | None, parts: tuple[Any, Any] | None
) -> Counterfactual | None:
    """The exact change of a failing comparison that makes it hold, or None when it is
    not a comparison of numbers moved one way (`==`, `!=`, text, a missing value)."""
    op = observation.op
    observed, bound = observation.observed, observation.bound
    numbers = (int, Fraction)
    if op not in _RAISE | _LOWER or isinstance(observed, bool) or left is None:
        return None
    if not isinstance(observed, numbers) or not isinstance(bound, numbers):
        return None
    direction = "more" if op in _RAISE else "fewer"
    if parts is not None and _counted(left):
        counted, base = parts
        if isinstance(counted, int) and isinstance(base, int) and base > 0:
            assert isinstance(left, ast.Call)
            steps = _items_needed(Fraction(counted), op, Fraction(bound) * base)
            if 0 <= (counted + steps if op in _RAISE else counted - steps) <= base:
                reaches = Fraction(counted + steps if op in _RAISE else counted - steps, base)
                return Counterfactual("count", format_expr(left.args[0]), steps, direction, reaches)
        return None
    if isinstance(left, ast.Count):
        steps = _items_needed(Fraction(observed), op, Fraction(bound))
        delta = steps if op in _RAISE else -steps
        return Counterfactual("count", format_expr(left), steps, direction, observed + delta)
    by = abs(Fraction(bound) - Fraction(observed))
    return Counterfactual(
        "value", format_expr(left), _whole(by), direction, _whole(Fraction(bound)), op in "<>"
    )


def _counted(left: ast.Expr) -> bool:
    return isinstance(left, ast.Call) and isinstance(left.args[0], ast.Count)


def _whole(value: Fraction) -> Any:
    return value.numerator if value.denominator == 1 else value


# -- rendering


def explanation_json(explanation: Explanation, bundle: Path) -> dict[str, Any]:
    """The chain as data."""
    decision = explanation.decision
    return {
        "bundle": str(bundle),
        "target": explanation.target,
        "decision": None
        if decision is None
        else {
            "name": decision.name,
            "row": decision.row,
            "verdict": decision.verdict,
            "condition": decision.condition,
            "read": dict(decision.outcomes),
        },
        "chain": [_rule_json(rule) for rule in explanation.rules],
    }


def _rule_json(rule: RuleExplained) -> dict[str, Any]:
    return {
        "name": rule.name,
        "kind": rule.kind,
        "hash": rule.hash,
        "passed": rule.passed,
        "condition": rule.condition,
        "bindings": rule.total,
        "failing": rule.failing,
        "shown": "closest" if rule.closest else "failing" if rule.failing else "every",
        "observations": [_binding_json(b) for b in rule.bindings],
        "violations": [
            {"code": code, "ids": list(ids), "location": where}
            for code, ids, where in rule.violations
        ],
    }


def _binding_json(binding: BindingExplained) -> dict[str, Any]:
    data: dict[str, Any] = {"ids": list(binding.ids), "passed": binding.passed}
    if binding.op is not None:
        data.update(
            {"observed": exact(binding.observed), "op": binding.op, "bound": exact(binding.bound)}
        )
    if binding.parts is not None:
        data["ratio"] = {"counted": exact(binding.parts[0]), "of": exact(binding.parts[1])}
    if binding.error is not None:
        data["error"] = binding.error
    if binding.failed_rules:
        data["failed_rules"] = list(binding.failed_rules)
    if binding.entry:
        data["entry"] = list(binding.entry)
    if binding.counterfactual is not None:
        data["counterfactual"] = binding.counterfactual.data()
    data["records"] = [
        {"id": r.id, "document": r.document, "file": r.file, "line": r.line, "pointer": r.pointer}
        for r in binding.records
    ]
    return data


def explanation_text(explanation: Explanation, exact: bool = False) -> str:
    """The chain for reading; exact fractions beside rounded values only with `exact`."""
    lines: list[str] = []
    decision = explanation.decision
    if decision is not None:
        lines.append(
            f"DECISION {decision.name} row {decision.row}: {decision.verdict}"
            f"  (when {decision.condition})"
        )
        lines += [f"  read {n} = {'pass' if ok else 'fail'}" for n, ok in decision.outcomes]
    for rule in explanation.rules:
        lines += ["", *_rule_lines(rule, exact)]
    return "\n".join(lines).lstrip("\n") + "\n"


def _rule_lines(rule: RuleExplained, exact: bool) -> list[str]:
    outcome = "PASS" if rule.passed else "FAIL"
    lines = [f"{outcome} {rule.kind} {rule.name} [{rule.hash[:12]}]: {rule.condition}"]
    if rule.kind != "link":
        which = "closest binding" if rule.closest else "failing" if rule.failing else "every one"
        lines.append(f"  {rule.failing} of {rule.total} bindings fail; {which}:")
    for code, ids, where in rule.violations:
        lines.append(f"  violation {code} {', '.join(ids)} at {where}")
    for binding in rule.bindings:
        lines += _binding_lines(binding, exact)
    return lines


def _binding_lines(binding: BindingExplained, exact: bool) -> list[str]:
    head = ", ".join(binding.ids) or "(the whole input)"
    lines = []
    if binding.op is not None:
        has = shown(binding.observed, exact)
        if binding.parts is not None:
            has = f"{shown(binding.parts[0], exact)} of {shown(binding.parts[1], exact)} = {has}"
        at = f" at entry {', '.join(binding.entry)}" if binding.entry else ""
        lines.append(f"  {head}: has {has}{at}, needs {binding.op} {shown(binding.bound, exact)}")
    elif binding.error is not None:
        lines.append(f"  {head}: error: {binding.error}")
    else:
        lines.append(f"  {head}: {'holds' if binding.passed else 'does not hold'}")
    if binding.failed_rules:
        lines.append(f"    failed rules it read: {', '.join(binding.failed_rules)}")
    if binding.counterfactual is not None:
        lines.append(f"    counterfactual: {binding.counterfactual.text(exact)}")
    for record in binding.records:
        place = f"{record.file}:{record.line}" if record.line is not None else record.file
        lines.append(f"    record {record.id} ({record.document}) at {place} {record.pointer}")
    return lines
