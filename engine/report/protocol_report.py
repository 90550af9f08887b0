"""Report of `rulecheck check` on a protocol bundle: the protocol and its hash, every
document with its sha256, the admission and the verdict first, then what `evaluate`
reports of the graph (violations, budgets, gates, the report tables, decisions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.evaluate.program import DecisionResult
from engine.evaluate.protocol import ProtocolResult
from engine.report.blocks import Block, render
from engine.report.evaluation_report import strict_failure
from engine.report.graph_report import (
    MORE,
    detail_blocks,
    graph_json,
    outcome_line,
    summary_blocks,
)


def protocol_passed(result: ProtocolResult, strict: bool) -> bool:
    """The exit condition: admitted (or every rule holds), and with `--strict` nothing vacuous."""
    return result.passed and not strict_failure(result.graph.evaluation, strict)


def _report_tables(result: ProtocolResult) -> list[Any]:
    """The tables the protocol reports, in its order (every table of the graph if it names none)."""
    tables = {t.name: t for t in result.graph.evaluation.tables}
    names = [i.text for i in result.protocol.report] or list(tables)
    return [tables[name] for name in names if name in tables]


def protocol_json(
    result: ProtocolResult, strict: bool = False, streamed: bool = False
) -> dict[str, Any]:
    """The whole report as data (canonical when serialised with sorted keys; `streamed`:
    for a report only written as JSON, see `table_json`)."""
    protocol = result.protocol
    reported = _report_tables(result)
    data = graph_json(result.graph, strict, reported, streamed)
    documents = {}
    for clause in protocol.documents:
        name = clause.name.text
        document = result.bundle.documents.get(name)
        entry: dict[str, Any] = {
            "path": clause.path,
            "format": clause.format.text,
            "measured": clause.measured,
            "present": document is not None,
        }
        if document is not None:
            entry["sha256"] = document.sha256
        if name in result.bundle.schemas:
            entry["schema_sha256"] = result.bundle.schemas[name]
        documents[name] = entry
    verdict = result.verdict
    data.pop("inputs")
    data.update(
        {
            "bundle": str(result.bundle.root),
            "protocol": {
                "name": protocol.name.text,
                "hash": result.protocol_hash,
                "graph": protocol.graph[0].text,
                "source": protocol.note,
            },
            "documents": documents,
            "admitted": result.admitted,
            "verdict": verdict.verdict if verdict is not None else None,
            "passed": protocol_passed(result, strict),
        }
    )
    if protocol.banners:
        data["banners"] = banners(result)
    return data


def banners(result: ProtocolResult) -> list[str]:
    """The protocol's banners whose gates hold, in order."""
    outcomes = result.graph.evaluation.outcomes
    return [b.text for b in result.protocol.banners if outcomes.get(b.gate.text, False)]


def _why(verdict: DecisionResult) -> Block:
    """The decision row taken and the gate outcomes that took it."""
    items = tuple(
        (0, f"{gate}: {'pass' if held else 'fail'}")
        for gate, held in sorted(verdict.outcomes.items())
    )
    return Block(f"WHY: row {verdict.row} of decision {verdict.name} reads", items)


def protocol_text(
    result: ProtocolResult,
    *,
    markdown: bool = False,
    strict: bool = False,
    verbose: bool = False,
    exact: bool = False,
    units: Mapping[str, str] | None = None,
) -> str:
    """The report for reading, its first screen first: the verdict and the decision row
    that gave it, the admission, the counts, what failed and what came nearest to
    failing; `verbose` adds the documents, every rule, the report tables and decisions."""
    protocol = result.protocol
    graph = result.graph
    shown = banners(result)
    head = []
    verdict = result.verdict
    if verdict is not None:
        head.append(
            f"{verdict.verdict}: decision {verdict.name}, row {verdict.row} [{verdict.hash[:12]}]"
        )
    elif protocol.verdict and result.graph.evaluation.undecided:
        head.append(f"UNDECIDED: decision {protocol.verdict[0].text} gives no verdict")
    if result.admitted is not None:
        gate = protocol.admission[0].text
        head.append(f"{'ADMITTED' if result.admitted else 'REFUSED'}: admission gate {gate}")
    head.append(outcome_line(graph, strict))
    head.append(
        f"protocol {protocol.name.text} [{result.protocol_hash[:12]}], "
        f"ruleset {graph.ruleset_hash[:12]}"
    )
    head.append(f"bundle {result.bundle.root}")
    absent = [d.name.text for d in protocol.documents if d.name.text not in result.bundle.documents]
    if absent:
        head.append(f"absent  {', '.join(absent)} (optional)")
    blocks = [Block(text=tuple(shown))] if shown else []
    blocks.append(Block(text=tuple(head)))
    if verdict is not None:
        blocks.append(_why(verdict))
    blocks += summary_blocks(graph, units or {}, exact, verbose, strict)
    if verbose:
        blocks.append(_documents(result))
        blocks += detail_blocks(graph, strict, _report_tables(result), units or {}, exact)
    else:
        blocks.append(Block(text=(MORE,)))
    if shown:
        blocks.append(Block(text=tuple(shown)))
    return render(blocks, markdown)


def _documents(result: ProtocolResult) -> Block:
    """The protocol's source note and every document read, with its sha256."""
    protocol = result.protocol
    items = [(0, f"protocol {protocol.name.text} {result.protocol_hash}")]
    if protocol.note:
        items.append((1, protocol.note))
    items.append((0, f"ruleset {result.graph.ruleset_hash}"))
    return Block("PROTOCOL", tuple(items))
