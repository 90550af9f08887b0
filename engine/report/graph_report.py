"""Report of `rulecheck evaluate`: one graph's rules over named documents, as canonical JSON,
text or markdown. Every finding names its rule and rule hash and where in which input file
it was found; every input is listed with the sha256 of the bytes that were read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.evaluate.gates import TableResult
from engine.evaluate.inputs import GraphResult
from engine.evaluate.links import Violation, violation_total
from engine.evaluate.program import Evaluation
from engine.gcpolicy import collector_paused
from engine.report.blocks import Block, render
from engine.report.detail import decision_items, rules_block, table_block, warnings_block
from engine.report.diagnostics import diagnostic_json
from engine.report.evaluation_report import (
    decision_json,
    rule_json,
    strict_failure,
    table_json,
    violation_json,
    warnings_json,
)
from engine.report.summary import SHOWN, closest_rows, counts, failing_lines


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


def _prepare_locations(result: GraphResult, violations: Iterable[Violation]) -> None:
    """Each document gets ready to locate all its findings at once (`_where` then asks
    one by one)."""
    pointers: dict[str, list[str]] = {}
    for violation in violations:
        if violation.pointer is not None and violation.document in result.documents:
            pointers.setdefault(violation.document, []).append(violation.pointer)
    for name, wanted in pointers.items():
        result.documents[name].prepare_locations(wanted)


def passed(result: GraphResult, strict: bool) -> bool:
    """Every rule holds, and with `--strict` none bound nothing."""
    return result.passed and not strict_failure(result.evaluation, strict)


@collector_paused()  # see engine/gcpolicy.py: the report's dicts and lists are bulk work
def graph_json(
    result: GraphResult,
    strict: bool = False,
    tables: list[TableResult] | None = None,
    streamed: bool = False,
) -> dict[str, Any]:
    """The whole report as data (canonical when serialised with sorted keys); `tables`,
    when given, are the tables it shows (else every table of the evaluation); `streamed`:
    their rows, and the gates' and budgets' observations, made as the JSON writer reaches
    them (`table_json`)."""
    evaluation = result.evaluation
    _prepare_locations(result, evaluation.violations)
    return {
        "graph": result.graph,
        "ruleset_hash": result.ruleset_hash,
        "passed": passed(result, strict),
        "strict": strict,
        "warnings": warnings_json(evaluation),
        **_undecided_json(evaluation),
        "inputs": {
            name: {"file": document.file, "format": document.format, "sha256": document.sha256}
            for name, document in sorted(result.documents.items())
        },
        "violations": [violation_json(v, _where(result, v)) for v in evaluation.violations],
        "budgets": [rule_json(b, streamed) for b in evaluation.budgets],
        "gates": [rule_json(g, streamed) for g in evaluation.gates],
        "tables": [
            table_json(t, streamed) for t in (evaluation.tables if tables is None else tables)
        ],
        "decisions": [decision_json(d) for d in evaluation.decisions],
    }


def _undecided_json(evaluation: Evaluation) -> dict[str, Any]:
    """`undecided`, present only when a decision gave no verdict (reports of decided runs
    keep their bytes)."""
    if not evaluation.undecided:
        return {}
    return {"undecided": [diagnostic_json(d) for d in evaluation.undecided]}


def _place(where: dict[str, Any]) -> str:
    place = str(where.get("file") or where["document"])
    if "line" in where:
        place += f":{where['line']}" + (f":{where['column']}" if "column" in where else "")
    if "pointer" in where:
        place += f" ({where['pointer'] or '/'})"
    return place


def _violation_items(result: GraphResult, violation: Violation) -> list[tuple[int, str]]:
    ids = f" [{', '.join(violation.ids)}]" if violation.ids else ""
    where = _where(result, violation)
    # A binding need not be a record (`for role in {...}` binds constants): no place then.
    place = f"at {_place(where)}; " if where.get("document") else ""
    return [
        (0, f"{violation.code}: {violation.message}{ids}"),
        (1, f"{place}rule {violation.rule} {violation.rule_hash[:12]}"),
    ]


def outcome_line(result: GraphResult, strict: bool) -> str:
    """`PASSED: 33/33 gates pass, ...` or `FAILED: ...`: the outcome and its counts."""
    stated = counts(result.evaluation).line()
    if passed(result, strict):
        return f"PASSED: {stated}"
    if result.passed:
        return f"FAILED (--strict): {stated}"
    return f"FAILED: {stated}"


def summary_blocks(
    result: GraphResult,
    units: Mapping[str, str],
    exact: bool,
    verbose: bool,
    strict: bool = False,
) -> list[Block]:
    """The first screen after the outcome: failing rules, violations (the first few unless
    `verbose`), vacuous rules, and each passing rule's binding nearest its bound."""
    evaluation = result.evaluation
    blocks = []
    if evaluation.undecided:
        undecided = tuple((0, f"{d.code}: {d.message}") for d in evaluation.undecided)
        blocks.append(Block(f"UNDECIDED ({len(evaluation.undecided)})", undecided))
    failing = [r for r in (*evaluation.budgets, *evaluation.gates) if not r.passed]
    if failing:
        items: list[tuple[int, str]] = []
        for rule in failing:
            head, *bindings = failing_lines(rule, units.get(rule.name), exact)
            items += [(0, head), *((1, line.strip()) for line in bindings)]
        blocks.append(Block(f"FAILED RULES ({len(failing)})", tuple(items)))
    if evaluation.violations:
        shown = evaluation.violations if verbose else evaluation.violations[:SHOWN]
        items = [item for v in shown for item in _violation_items(result, v)]
        if len(shown) < len(evaluation.violations):
            items.append((0, f"... and {len(evaluation.violations) - len(shown)} more (--verbose)"))
        total = violation_total(evaluation.violations)
        blocks.append(Block(f"VIOLATIONS ({total})", tuple(items)))
    consequence = "--strict: these fail the run" if strict else "--strict fails them"
    about_input = evaluation.about_input
    if about_input and not verbose:
        items = [(0, f"{w.code}: {w.message}") for w in about_input[:SHOWN]]
        if len(about_input) > SHOWN:
            items.append((0, f"... and {len(about_input) - SHOWN} more (--verbose)"))
        blocks.append(Block(f"WARNINGS ({len(about_input)}; {consequence})", tuple(items)))
    if evaluation.vacuous and not verbose:
        rules = evaluation.vacuous
        vacuous = [(0, f"`{w.rule}`") for w in rules[:SHOWN]]
        if len(rules) > SHOWN:
            vacuous.append((0, f"... and {len(rules) - SHOWN} more (--verbose)"))
        title = f"VACUOUS ({len(rules)}: bind nothing; {consequence})"
        blocks.append(Block(title, tuple(vacuous)))
    rows = closest_rows([*evaluation.gates, *evaluation.budgets], units, exact)
    if rows:
        header = ("rule", "binding", "observed", "margin")
        blocks.append(
            Block("NEAREST THEIR BOUNDS (passing gates and budgets)", (), (header, *rows))
        )
    return blocks


def detail_blocks(
    result: GraphResult,
    strict: bool,
    tables: list[TableResult] | None,
    units: Mapping[str, str],
    exact: bool,
) -> list[Block]:
    """What `--verbose` adds: inputs, warnings, every budget and gate, tables, decisions."""
    evaluation = result.evaluation
    inputs = tuple(
        (0, f"{name} = {document.file} (sha256 {document.sha256})")
        for name, document in sorted(result.documents.items())
    )
    blocks = [Block("INPUTS", inputs)] if inputs else []
    warned = warnings_block(evaluation, strict)
    blocks += [warned] if warned else []
    if evaluation.budgets:
        blocks.append(rules_block("BUDGETS", evaluation.budgets, units, exact))
    if evaluation.gates:
        blocks.append(rules_block("GATES", evaluation.gates, units, exact))
    blocks += [table_block(t, exact) for t in (evaluation.tables if tables is None else tables)]
    if evaluation.decisions:
        items = tuple(item for d in evaluation.decisions for item in decision_items(d))
        blocks.append(Block("DECISIONS", items))
    return blocks


def graph_text(
    result: GraphResult,
    *,
    markdown: bool = False,
    strict: bool = False,
    tables: list[TableResult] | None = None,
    verbose: bool = False,
    exact: bool = False,
    units: Mapping[str, str] | None = None,
) -> str:
    """The report for reading: the outcome with its counts first, then what failed and
    what came nearest to failing; `verbose` adds inputs, every rule, tables, decisions."""
    return render(graph_blocks(result, strict, tables, verbose, exact, units or {}), markdown)


def graph_blocks(
    result: GraphResult,
    strict: bool,
    tables: list[TableResult] | None,
    verbose: bool,
    exact: bool,
    units: Mapping[str, str],
) -> list[Block]:
    """The blocks of `graph_text`."""
    evaluation = result.evaluation
    head = [outcome_line(result, strict), f"graph {result.graph}, ruleset {result.ruleset_hash}"]
    blocks = [Block(text=tuple(head))]
    if evaluation.decisions and not verbose:
        items = tuple(item for d in evaluation.decisions for item in decision_items(d))
        blocks.append(Block("DECISIONS", items))
    blocks += summary_blocks(result, units, exact, verbose, strict)
    if verbose:
        blocks += detail_blocks(result, strict, tables, units, exact)
    else:
        blocks.append(Block(text=(MORE,)))
    return blocks


MORE = "more with --verbose: inputs, warnings, every gate and budget, the report tables"
