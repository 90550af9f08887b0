"""The parts of every evaluation report: exact and rounded values, rule outcomes with their
observations, report tables and decisions, as canonical JSON data, text and markdown.

Exact values are shown exactly (`3/5`) and rounded for reading (`0.6000`); a gate on its
threshold is judged exactly, never by the rounded figure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

from engine.evaluate.gates import CellError, Observation, RuleResult, TableResult
from engine.evaluate.links import Violation
from engine.evaluate.program import DecisionResult, Evaluation
from engine.evaluate.runtime import Unavailable
from engine.report.diagnostics import diagnostic_json
from engine.report.output import StreamedArray


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


def observation_json(observation: Observation, streamed: bool = False) -> dict[str, Any]:
    """One binding of a gate or budget: its ids, outcome, observed value and bound; for a
    budget, its ledger's running total after each entry, and with `reserving` the total the
    entry was admitted on (`running_totals`; `streamed`: see `table_json`)."""
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
        totals = observation.totals

        def made() -> Iterator[dict[str, Any]]:
            return (
                {"entry": list(entry), "total": exact(total)}
                | ({} if reserved is None else {"reserved": exact(reserved)})
                for entry, total, reserved in totals
            )

        data["running_totals"] = _array(made, len(totals), streamed)
    return data


def _array(made: Callable[[], Iterator[Any]], length: int, streamed: bool) -> Any:
    """The items `made` gives: as a list, or `streamed`, made as the JSON writer reaches
    each (for a report only written as JSON: a campaign's observations, ledgers and table
    rows made all at once were held beside the evaluation they come from)."""
    return StreamedArray(made, length) if streamed else list(made())


def rule_json(rule: RuleResult, streamed: bool = False) -> dict[str, Any]:
    """A gate or budget: its hash, source note, outcome, observations and the failing ones
    (`streamed`: see `table_json`)."""
    failing = [o for o in rule.observations if not o.passed]
    observations = rule.observations

    def made() -> Iterator[dict[str, Any]]:
        return (observation_json(o, streamed) for o in observations)

    return {
        "name": rule.name,
        "kind": rule.kind,
        "hash": rule.hash,
        "source": rule.note,
        "passed": rule.passed,
        "observations": _array(made, len(observations), streamed),
        "decided_by": [list(o.ids) for o in failing],
    }


def table_json(table: TableResult, streamed: bool = False) -> dict[str, Any]:
    """A report table: its columns and its rows of exact values (`streamed`: each row made
    as the JSON writer reaches it, for a report only written as JSON)."""
    rows = table.rows

    def made() -> Iterator[dict[str, Any]]:
        return ({"ids": list(ids), "values": [exact(v) for v in values]} for ids, values in rows)

    return {
        "name": table.name,
        "hash": table.hash,
        "source": table.note,
        "columns": list(table.columns),
        "rows": _array(made, len(rows), streamed),
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
