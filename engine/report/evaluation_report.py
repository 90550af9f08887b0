"""The parts of every evaluation report: exact and rounded values, rule outcomes with their
observations, report tables and decisions, as canonical JSON data, text and markdown.

Exact values are shown exactly (`3/5`) and rounded for reading (`0.6000`); a gate on its
threshold is judged exactly, never by the rounded figure.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from engine.evaluate.gates import CellError, Observation, RuleResult, TableResult
from engine.evaluate.links import Violation
from engine.evaluate.program import DecisionResult, Evaluation
from engine.evaluate.runtime import Unavailable
from engine.report.diagnostics import diagnostic_json


def exact(value: Any) -> Any:
    """A JSON-safe exact form: a whole number as a JSON integer however it was computed
    (`10`, `10.0` and `2.5 * 4` all give `10`), any other rational as a `p/q` string;
    booleans and text unchanged."""
    if isinstance(value, CellError):
        return {"error": value.message}
    if isinstance(value, Unavailable):
        return {"unavailable": list(value.missing)}
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return value.numerator
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, list | tuple | frozenset | set):
        return [exact(v) for v in value]
    if isinstance(value, dict):
        return {str(k): exact(v) for k, v in value.items()}
    return value


def rounded(value: Any) -> str:
    """A short human form: numbers to four decimals, booleans as yes/no."""
    if isinstance(value, CellError):
        return f"error: {value.message}"
    if isinstance(value, Unavailable):
        return "unavailable (missing " + ", ".join(value.missing) + ")"
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Fraction | int):
        number = Fraction(value)
        if number.denominator == 1:
            return str(number.numerator)
        return f"{float(number):.4f}"
    return str(value)


def shown(value: Any, with_exact: bool = True) -> str:
    """The rounded form, followed by the exact fraction when rounding lost something
    (unless `with_exact` is false: the text report shows it only with `--exact`)."""
    text = rounded(value)
    if with_exact and isinstance(value, Fraction) and value.denominator != 1:
        return f"{text} ({exact(value)})"
    return text


def violation_json(violation: Violation, location: dict[str, Any]) -> dict[str, Any]:
    """A link rule's finding: code, message, the rule and its hash, the ids, the location."""
    found: dict[str, Any] = {
        "code": violation.code,
        "message": violation.message,
        "rule": violation.rule,
        "rule_hash": violation.rule_hash,
        "ids": list(violation.ids),
        "location": location,
    }
    if violation.more:  # the rule's violations past the listed ones, counted
        found["not_listed"] = violation.more
    return found


def observation_json(observation: Observation) -> dict[str, Any]:
    """One binding of a gate or budget: its ids, outcome, observed value and bound; for a
    budget, its ledger's running total after each entry, and with `reserving` the total the
    entry was admitted on (`running_totals`)."""
    data: dict[str, Any] = {"ids": list(observation.ids), "passed": observation.passed}
    if observation.op is not None:
        data.update(
            observed=exact(observation.observed), bound=exact(observation.bound), op=observation.op
        )
        if isinstance(observation.observed, Fraction | int):
            data["observed_rounded"] = rounded(observation.observed)
    if observation.error:
        data["error"] = observation.error
    if observation.entry:
        data["crossing_entry"] = list(observation.entry)
    if observation.failed_rules:
        data["failed_rules"] = list(observation.failed_rules)
    if observation.totals:
        data["running_totals"] = [
            {"entry": list(entry), "total": exact(total)}
            | ({} if reserved is None else {"reserved": exact(reserved)})
            for entry, total, reserved in observation.totals
        ]
    return data


def rule_json(rule: RuleResult) -> dict[str, Any]:
    """A gate or budget: its hash, source note, outcome, observations and the failing ones."""
    failing = [o for o in rule.observations if not o.passed]
    return {
        "name": rule.name,
        "kind": rule.kind,
        "hash": rule.hash,
        "source": rule.note,
        "passed": rule.passed,
        "observations": [observation_json(o) for o in rule.observations],
        "decided_by": [list(o.ids) for o in failing],
    }


def table_json(table: TableResult) -> dict[str, Any]:
    """A report table: its columns and its rows of exact values."""
    return {
        "name": table.name,
        "hash": table.hash,
        "source": table.note,
        "columns": list(table.columns),
        "rows": [
            {"ids": list(ids), "values": [exact(v) for v in values]} for ids, values in table.rows
        ],
    }


def decision_json(decision: DecisionResult) -> dict[str, Any]:
    """A decision policy's verdict, the row that gave it and the gate outcomes it read."""
    return {
        "name": decision.name,
        "hash": decision.hash,
        "source": decision.note,
        "verdict": decision.verdict,
        "row": decision.row,
        "gate_outcomes": decision.outcomes,
    }


def warnings_json(evaluation: Evaluation) -> list[dict[str, Any]]:
    """Every warning of an evaluation (`VACUOUS` rules), as data."""
    return [diagnostic_json(w) for w in evaluation.warnings]


def strict_failure(evaluation: Evaluation, strict: bool) -> bool:
    """True when `--strict` was given and some rule bound nothing."""
    return strict and bool(evaluation.warnings)
