"""Report of `rulecheck evaluate`: one graph's rules over named documents, as canonical JSON,
text or markdown. Every finding names its rule and rule hash and where in which input file
it was found; every input is listed with the sha256 of the bytes that were read."""

from __future__ import annotations

from typing import Any

from engine.evaluate.gates import RuleResult, TableResult
from engine.evaluate.inputs import GraphResult
from engine.evaluate.links import Violation
from engine.report.evaluation_report import (
    budget_failure,
    decision_json,
    decision_text,
    gate_text,
    rule_json,
    strict_failure,
    table_json,
    table_text,
    violation_json,
    warnings_json,
    warnings_text,
)


def _where(result: GraphResult, violation: Violation) -> dict[str, Any]:
    where: dict[str, Any] = {"document": violation.document}
    document = result.documents.get(violation.document or "")
    if document is not None:
        where["file"] = document.file
    if violation.pointer is not None:
        where["pointer"] = violation.pointer
        if document is not None:
            located = document.locate(violation.pointer)
            where["file"] = located.file
            if located.pointer != violation.pointer:
                where["file_pointer"] = located.pointer
            if located.line is not None:
                where["line"] = located.line
            if located.column is not None:
                where["column"] = located.column
    return where


def passed(result: GraphResult, strict: bool) -> bool:
    """Every rule holds, and with `--strict` none bound nothing."""
    return result.passed and not strict_failure(result.evaluation, strict)


def graph_json(
    result: GraphResult, strict: bool = False, tables: list[TableResult] | None = None
) -> dict[str, Any]:
    """The whole report as data (canonical when serialised with sorted keys); `tables`,
    when given, are the tables it shows (else every table of the evaluation)."""
    evaluation = result.evaluation
    return {
        "graph": result.graph,
        "ruleset_hash": result.ruleset_hash,
        "passed": passed(result, strict),
        "strict": strict,
        "warnings": warnings_json(evaluation),
        "inputs": {
            name: {"file": document.file, "format": document.format, "sha256": document.sha256}
            for name, document in sorted(result.documents.items())
        },
        "violations": [violation_json(v, _where(result, v)) for v in evaluation.violations],
        "budgets": [rule_json(b) for b in evaluation.budgets],
        "gates": [rule_json(g) for g in evaluation.gates],
        "tables": [table_json(t) for t in (evaluation.tables if tables is None else tables)],
        "decisions": [decision_json(d) for d in evaluation.decisions],
    }


def _place(where: dict[str, Any]) -> str:
    place = str(where.get("file") or where["document"])
    if "line" in where:
        place += f":{where['line']}" + (f":{where['column']}" if "column" in where else "")
    if "pointer" in where:
        place += f" ({where['pointer'] or '/'})"
    return place


def _violation_text(result: GraphResult, violation: Violation) -> list[str]:
    ids = f" [{', '.join(violation.ids)}]" if violation.ids else ""
    where = _where(result, violation)
    # A binding need not be a record (`for role in {...}` binds constants): no place then.
    place = f"at {_place(where)}; " if where.get("document") else ""
    return [
        f"  {violation.code}: {violation.message}{ids}",
        f"    {place}rule {violation.rule} {violation.rule_hash}",
    ]


def _budget_text(budget: RuleResult) -> list[str]:
    lines = [f"  {'PASS' if budget.passed else 'FAIL'} {budget.name} [{budget.hash[:12]}]"]
    for observation in budget.observations:
        if not observation.passed:
            ids = ", ".join(observation.ids) or "all"
            lines.append(f"      {ids}: {budget_failure(observation)}")
    return lines


def graph_text(
    result: GraphResult,
    *,
    markdown: bool = False,
    strict: bool = False,
    tables: list[TableResult] | None = None,
) -> str:
    """The report for reading: inputs, the outcome, then findings, rules, tables, decisions."""
    evaluation = result.evaluation
    failed_rules = [r for r in (*evaluation.budgets, *evaluation.gates) if not r.passed]
    lines = [f"graph   {result.graph}", f"rules   ruleset {result.ruleset_hash}"]
    for name, document in sorted(result.documents.items()):
        lines.append(f"input   {name} = {document.file} (sha256 {document.sha256})")
    if passed(result, strict):
        lines.append("PASSED: no link rule violated; every budget and gate holds")
    elif result.passed:
        lines.append("FAILED (--strict): every rule holds, but some bind nothing")
    else:
        lines.append(
            f"FAILED: {len(evaluation.violations)} violation(s), "
            f"{len(failed_rules)} failed budget(s) or gate(s)"
        )
    lines.append("")
    lines += warnings_text(evaluation, strict)
    if evaluation.violations:
        lines.append("VIOLATIONS")
        for violation in evaluation.violations:
            lines += _violation_text(result, violation)
        lines.append("")
    if evaluation.budgets:
        lines.append("BUDGETS")
        for budget in evaluation.budgets:
            lines += _budget_text(budget)
        lines.append("")
    if evaluation.gates:
        lines.append("GATES")
        for gate in evaluation.gates:
            lines += gate_text(gate, "all")
        lines.append("")
    for table in evaluation.tables if tables is None else tables:
        lines += table_text(table, markdown)
    for decision in evaluation.decisions:
        lines += decision_text(decision)
    return "\n".join(lines).rstrip("\n") + "\n"
