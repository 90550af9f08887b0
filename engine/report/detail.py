"""The detailed blocks of a text or markdown report (`--verbose`): every gate and budget
with its bindings, the warnings, the report tables and the decisions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.evaluate.gates import Observation, RuleResult, TableResult
from engine.evaluate.program import DecisionResult, Evaluation
from engine.report.blocks import Block
from engine.report.evaluation_report import shown
from engine.report.summary import closest, with_unit


def budget_failure(observation: Observation, units: str | None = None, exact: bool = False) -> str:
    """Why a budget's binding failed: its error, or the running total that broke the ceiling
    and the ledger entry that broke it."""
    crossing = f" at entry {', '.join(observation.entry)}" if observation.entry else ""
    return observation.error or (
        f"running total {with_unit(observation.observed, units, exact)} {observation.op} "
        f"{with_unit(observation.bound, units, exact)} fails{crossing}"
    )


def table_block(table: TableResult, exact: bool) -> Block:
    """A report table: its note and rule hash, then its rows."""
    header = ("ids", *table.columns)
    rows = [
        (", ".join(ids) or "-", *(shown(v, exact) for v in values)) for ids, values in table.rows
    ]
    note = (
        f"{table.note} (rule hash `{table.hash[:12]}`)"
        if table.note
        else f"rule hash `{table.hash[:12]}`"
    )
    return Block(table.name, ((0, note),), (header, *rows))


def _observation_item(observation: Observation, unit: str | None, exact: bool) -> str:
    ids = ", ".join(observation.ids) or "all"
    if observation.error:
        return f"{ids}: error: {observation.error}"
    if observation.failed_rules:
        return f"{ids}: failed because these did not hold: {', '.join(observation.failed_rules)}"
    if observation.entry and not observation.passed:
        return f"{ids}: {budget_failure(observation, unit, exact)}"
    verdict = "holds" if observation.passed else "fails"
    return (
        f"{ids}: observed {with_unit(observation.observed, unit, exact)} {observation.op} "
        f"{with_unit(observation.bound, unit, exact)}: {verdict}"
    )


def rules_block(
    title: str, rules: Sequence[RuleResult], units: Mapping[str, str], exact: bool
) -> Block:
    """Every gate or budget with its outcome, and its failing bindings (or the passing one
    nearest its bound)."""
    items: list[tuple[int, str]] = []
    for rule in rules:
        status = "PASS" if rule.passed else "FAIL"
        items.append((0, f"{status} {rule.name} [{rule.hash[:12]}] {rule.note or ''}".rstrip()))
        near = closest(rule)
        listed = [o for o in rule.observations if not o.passed] or ([near] if near else [])
        unit = units.get(rule.name)
        items += [(1, _observation_item(o, unit, exact)) for o in listed[:8]]
        if len(listed) > 8:
            items.append((1, f"... and {len(listed) - 8} more"))
    return Block(title, tuple(items))


def decision_items(decision: DecisionResult) -> list[tuple[int, str]]:
    """A decision policy's verdict and the gate outcomes it read."""
    outcomes = ", ".join(
        f"{k}={'pass' if v else 'fail'}" for k, v in sorted(decision.outcomes.items())
    )
    head = f"{decision.name} [{decision.hash[:12]}] row {decision.row}: {decision.verdict}"
    return [(0, head), (1, f"read {outcomes}" if outcomes else "reads no gate")]


def warnings_block(evaluation: Evaluation, strict: bool) -> Block | None:
    """Each vacuous rule, and whether `--strict` makes them a failure."""
    if not evaluation.warnings:
        return None
    consequence = "--strict: these fail the run" if strict else "--strict makes them fail"
    items: list[tuple[int, str]] = []
    for warning in evaluation.warnings:
        where = warning.location.render() if warning.location else ""
        items.append((0, f"{warning.code}: {warning.message}"))
        rule = f"; rule {warning.rule} {warning.rule_hash}" if warning.rule else ""
        items.append((1, f"at {where}{rule}"))
    return Block(f"WARNINGS ({len(evaluation.warnings)}; {consequence})", tuple(items))
