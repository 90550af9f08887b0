"""Report of `rulecheck check` on a protocol bundle: the protocol and its hash, every
document with its sha256, the admission and the verdict first, then what `evaluate`
reports of the graph (violations, budgets, gates, the report tables, decisions)."""

from __future__ import annotations

from typing import Any

from engine.evaluate.protocol import ProtocolResult
from engine.report.evaluation_report import decision_text, strict_failure
from engine.report.graph_report import graph_json, graph_text


def protocol_passed(result: ProtocolResult, strict: bool) -> bool:
    """The exit condition: admitted (or every rule holds), and with `--strict` nothing vacuous."""
    return result.passed and not strict_failure(result.graph.evaluation, strict)


def _report_tables(result: ProtocolResult) -> list[Any]:
    """The tables the protocol reports, in its order (every table of the graph if it names none)."""
    tables = {t.name: t for t in result.graph.evaluation.tables}
    names = [i.text for i in result.protocol.report] or list(tables)
    return [tables[name] for name in names if name in tables]


def protocol_json(result: ProtocolResult, strict: bool = False) -> dict[str, Any]:
    """The whole report as data (canonical when serialised with sorted keys)."""
    protocol = result.protocol
    reported = _report_tables(result)
    data = graph_json(result.graph, strict, reported)
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


def protocol_text(result: ProtocolResult, *, markdown: bool = False, strict: bool = False) -> str:
    """The report for reading: the protocol, the admission and the verdict first, then the
    graph's inputs, findings, rules, the protocol's report tables and its decisions."""
    protocol = result.protocol
    shown = banners(result)
    lines = [*shown, *([""] if shown else [])]
    lines += [
        f"protocol {protocol.name.text} [{result.protocol_hash[:12]}]"
        + (f"  ({protocol.note})" if protocol.note else ""),
        f"bundle  {result.bundle.root}",
    ]
    absent = [d.name.text for d in protocol.documents if d.name.text not in result.bundle.documents]
    if absent:
        lines.append(f"absent  {', '.join(absent)} (optional)")
    admitted = result.admitted
    if admitted is not None:
        gate = protocol.admission[0].text
        lines.append(f"{'ADMITTED' if admitted else 'REFUSED'}: admission gate {gate}")
    verdict = result.verdict
    if verdict is not None:
        lines += decision_text(verdict)[:1]
    body = graph_text(result.graph, markdown=markdown, strict=strict, tables=_report_tables(result))
    tail = "".join(f"\n{text}\n" if i == 0 else f"{text}\n" for i, text in enumerate(shown))
    return "\n".join(lines) + "\n" + body + tail
