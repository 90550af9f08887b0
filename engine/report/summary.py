"""The first screen of a text report: how many rules hold, what failed, and how close each
passing gate and budget came to its bound, in the bound's own unit.

A bound's unit is the one it is written in (`const max_wall = 4 min`, `<= 80 %`): values
are held in base units, so the report converts them back for reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from engine.evaluate.gates import Observation, RuleResult
from engine.evaluate.links import violation_total
from engine.evaluate.program import Evaluation
from engine.report.evaluation_report import exact as exact_form
from engine.report.evaluation_report import rounded
from engine.syntax import ast
from engine.units import UNITS

# How many failing bindings, violations and closest bindings the first screen shows.
SHOWN = 8


def rule_units(declarations: Mapping[str, ast.Declaration]) -> dict[str, str]:
    """The unit each gate's and budget's bound is written in, by rule name (none when the
    bound is a plain number)."""
    units = {}
    for name, decl in declarations.items():
        bound: ast.Expr | None = None
        if isinstance(decl, ast.GateDecl) and isinstance(decl.require, ast.Binary):
            bound = decl.require.right
        elif isinstance(decl, ast.BudgetDecl):
            bound = decl.ceiling
        unit = _written_unit(bound, declarations, set()) if bound is not None else None
        if unit is not None:
            units[name] = unit
    return units


def _written_unit(
    expr: ast.Expr, declarations: Mapping[str, ast.Declaration], seen: set[str]
) -> str | None:
    """The unit a literal of `expr` is written in, following constants."""
    if isinstance(expr, ast.Number):
        return expr.unit
    if isinstance(expr, ast.Name):
        decl = declarations.get(expr.id)
        if isinstance(decl, ast.ConstDecl) and expr.id not in seen:
            return _written_unit(decl.value, declarations, seen | {expr.id})
        return None
    if isinstance(expr, ast.Unary):
        return _written_unit(expr.operand, declarations, seen)
    if isinstance(expr, ast.Binary) and expr.op in ("+", "-", "*", "/"):
        return _written_unit(expr.left, declarations, seen) or _written_unit(
            expr.right, declarations, seen
        )
    return None


def with_unit(value: Any, unit: str | None, exact: bool = False) -> str:
    """A value for reading in `unit` (`67 s`, `80 %`, `0.8000`); with `exact`, its exact
    fraction too when rounding lost something."""
    if not isinstance(value, Fraction | int) or isinstance(value, bool):
        return rounded(value)
    number = Fraction(value)
    if unit is not None and unit in UNITS:
        number /= UNITS[unit].scale
    # whole numbers grouped by thousands (`2,001,390 tokens`): digits are counted at a glance
    text = f"{number.numerator:,}" if number.denominator == 1 else rounded(number)
    if exact and number.denominator != 1:
        text += f" ({exact_form(number)})"
    return f"{text} {unit}" if unit is not None else text


def margin(observation: Observation) -> Fraction | None:
    """How far a compared binding is from failing: positive while it holds, negative by
    how much it misses (None for equality tests and values that are not numbers)."""
    observed, bound = observation.observed, observation.bound
    if not all(
        isinstance(v, Fraction | int) and not isinstance(v, bool) for v in (observed, bound)
    ):
        return None
    if observation.op in ("<=", "<"):
        return Fraction(bound) - Fraction(observed)
    if observation.op in (">=", ">"):
        return Fraction(observed) - Fraction(bound)
    return None


def closest(rule: RuleResult) -> Observation | None:
    """The passing binding of `rule` nearest its bound (the first of equals)."""
    measured = [(m, o) for o in rule.observations if o.passed and (m := margin(o)) is not None]
    return min(measured, key=lambda pair: pair[0])[1] if measured else None


@dataclass(frozen=True, slots=True)
class Counts:
    """Outcomes of an evaluation's rules, as the first screen states them."""

    gates: int
    gates_failed: int
    budgets: int
    budgets_failed: int
    violations: int
    violated_links: int
    vacuous: int
    other_warnings: int = 0  # warnings about the input (`ATTR_ABSENT`)

    def line(self) -> str:
        """`33/33 gates pass, 7/7 budgets hold, no link rule violated (5 vacuous)`."""
        gates = f"{self.gates - self.gates_failed}/{self.gates} gates pass"
        budgets = f"{self.budgets - self.budgets_failed}/{self.budgets} budgets hold"
        if self.violations:
            links = (
                f"{self.violated_links} link rule{'s' if self.violated_links != 1 else ''} "
                f"violated ({self.violations} violation{'s' if self.violations != 1 else ''})"
            )
        else:
            links = "no link rule violated"
        vacuous = f", {self.vacuous} vacuous" if self.vacuous else ""
        if self.other_warnings:
            plural = "s" if self.other_warnings != 1 else ""
            vacuous += f", {self.other_warnings} warning{plural}"
        return f"{gates}, {budgets}, {links}{vacuous}"


def counts(evaluation: Evaluation) -> Counts:
    """The counts of the first screen."""
    return Counts(
        len(evaluation.gates),
        sum(not g.passed for g in evaluation.gates),
        len(evaluation.budgets),
        sum(not b.passed for b in evaluation.budgets),
        violation_total(evaluation.violations),
        len({v.rule for v in evaluation.violations}),
        len(evaluation.vacuous),
        len(evaluation.about_input),
    )


def _ids(observation: Observation) -> str:
    return ", ".join(observation.ids) or "all"


def _comparison(observation: Observation, unit: str | None, exact: bool) -> str:
    observed = with_unit(observation.observed, unit, exact)
    return f"{observed} {observation.op} {with_unit(observation.bound, unit, exact)}"


def failing_lines(rule: RuleResult, unit: str | None, exact: bool) -> list[str]:
    """A failing gate or budget and its failing bindings, each with how much it misses."""
    failing = [o for o in rule.observations if not o.passed]
    lines = [f"FAIL {rule.kind} {rule.name}: {len(failing)} of {len(rule.observations)} fail"]
    for observation in failing[:SHOWN]:
        if observation.error:
            why = f"error: {observation.error}"
        elif observation.failed_rules:
            why = f"failed because these did not hold: {', '.join(observation.failed_rules)}"
        elif observation.op is not None:
            miss = margin(observation)
            short = f", misses by {with_unit(-miss, unit, exact)}" if miss is not None else ""
            total = "running total " if rule.kind == "budget" else ""
            why = total + _comparison(observation, unit, exact) + short
        else:
            why = "does not hold"
        at = f" at entry {', '.join(observation.entry)}" if observation.entry else ""
        lines.append(f"  {_ids(observation)}: {why}{at}")
    if len(failing) > SHOWN:
        lines.append(f"  ... and {len(failing) - SHOWN} more (--verbose)")
    return lines


def closest_rows(
    rules: Sequence[RuleResult], units: Mapping[str, str], exact: bool
) -> list[tuple[str, str, str, str]]:
    """For each passing gate and budget with a measured bound: its name, the binding
    nearest the bound, the comparison and the margin, nearest first (by margin relative
    to the bound, so seconds and ratios compare)."""
    found = []
    for rule in rules:
        observation = closest(rule) if rule.passed else None
        if observation is None:
            continue
        unit = units.get(rule.name)
        left = margin(observation)
        assert left is not None  # closest() only returns measured bindings
        scale = abs(Fraction(observation.bound)) or Fraction(1)
        row = (
            rule.name,
            _ids(observation),
            _comparison(observation, unit, exact),
            with_unit(left, unit, exact),
        )
        found.append((left / scale, rule.name, row))
    found.sort(key=lambda item: (item[0], item[1]))
    return [row for _, _, row in found]


def aligned(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Rows of cells as aligned text columns."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        (indent + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row))).rstrip()
        for row in rows
    ]
