"""Reports of `rulecheck admit` and `rulecheck check`: text, markdown and canonical JSON.

Exact values are shown exactly (`3/5`) and rounded for reading (`0.6000`); a gate on its
threshold is judged exactly, never by the rounded figure. Automatic (structural) validation
and recorded human (semantic) decisions are reported in separate sections.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from engine.evaluate.campaign import CampaignResult
from engine.evaluate.gates import CellError, Observation, RuleResult, TableResult
from engine.evaluate.links import Violation

BANNER = "SYNTHETIC CAMPAIGN: synthetic inputs; no result about real agents"
_DOCUMENT_FILES = {
    "manifest": "manifest.yaml",
    "tasks": "tasks.yaml",
    "sessions": "sessions.jsonl",
    "requests": "requests.jsonl",
    "receipts": "receipts.jsonl",
    "adjudications": "adjudications.jsonl",
    "adjudication_manifest": "adjudication_manifest.yaml",
}


def exact(value: Any) -> Any:
    """A JSON-safe exact form: fractions as `p/q` strings, booleans and text unchanged."""
    if isinstance(value, CellError):
        return {"error": value.message}
    if isinstance(value, Fraction):
        return (
            str(value.numerator)
            if value.denominator == 1
            else f"{value.numerator}/{value.denominator}"
        )
    if isinstance(value, list | tuple | frozenset | set):
        return [exact(v) for v in value]
    if isinstance(value, dict):
        return {str(k): exact(v) for k, v in value.items()}
    return value


def rounded(value: Any) -> str:
    """A short human form: numbers to four decimals, booleans as yes/no."""
    if isinstance(value, CellError):
        return f"error: {value.message}"
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


def _shown(value: Any) -> str:
    text = rounded(value)
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{text} ({exact(value)})"
    return text


def _where(result: CampaignResult, violation: Violation) -> dict[str, Any]:
    document = violation.document or ""
    file = _DOCUMENT_FILES.get(document)
    where: dict[str, Any] = {"document": document}
    if file is not None:
        where["file"] = str(Path(result.bundle.root) / file)
    if violation.pointer is not None:
        where["pointer"] = violation.pointer
        records = result.bundle.documents.get(document)
        index = violation.pointer.lstrip("/").split("/")[0]
        if isinstance(records, list) and index.isdigit() and int(index) < len(records):
            where["line"] = records[int(index)].get("line")
    return where


def _violation_json(result: CampaignResult, violation: Violation) -> dict[str, Any]:
    return {
        "code": violation.code,
        "message": violation.message,
        "rule": violation.rule,
        "rule_hash": violation.rule_hash,
        "ids": list(violation.ids),
        "location": _where(result, violation),
    }


def _observation_json(observation: Observation) -> dict[str, Any]:
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
    return data


def _rule_json(rule: RuleResult) -> dict[str, Any]:
    failing = [o for o in rule.observations if not o.passed]
    return {
        "name": rule.name,
        "kind": rule.kind,
        "hash": rule.hash,
        "source": rule.note,
        "passed": rule.passed,
        "observations": [_observation_json(o) for o in rule.observations],
        "decided_by": [list(o.ids) for o in failing],
    }


def _table_json(table: TableResult) -> dict[str, Any]:
    return {
        "name": table.name,
        "hash": table.hash,
        "source": table.note,
        "columns": list(table.columns),
        "rows": [
            {"ids": list(ids), "values": [exact(v) for v in values]} for ids, values in table.rows
        ],
    }


def _structural(result: CampaignResult) -> dict[str, Any]:
    reports = result.bundle.answer_reports
    return {
        "answers_checked": len(reports),
        "structurally_valid": sum(1 for r in reports.values() if r.structural_ok),
        "with_findings": {
            session: sorted({f.code for f in report.findings})
            for session, report in sorted(reports.items())
            if not report.structural_ok
        },
        "note": "structural validation only: never correctness, completeness or readiness",
    }


def _human(result: CampaignResult) -> dict[str, Any]:
    ratings = result.bundle.documents.get("adjudications") or []
    return {
        "ratings": len(ratings),
        "primary": sum(1 for r in ratings if r.get("role") == "primary"),
        "third": sum(1 for r in ratings if r.get("role") == "third"),
        "raters": sorted({r.get("rater") for r in ratings if r.get("rater")}),
        "note": "recorded human semantic decisions, frozen before arm and cost were revealed",
    }


def campaign_json(result: CampaignResult, *, scorecards: bool) -> dict[str, Any]:
    """The whole report as data (canonical when serialised with sorted keys)."""
    evaluation = result.evaluation
    manifest = result.bundle.documents.get("manifest") or {}
    data: dict[str, Any] = {
        "synthetic": result.synthetic,
        "campaign_id": manifest.get("campaign_id"),
        "ruleset_hash": result.ruleset_hash,
        "admitted": result.admitted,
        "admission": {
            "violations": [_violation_json(result, v) for v in evaluation.violations],
            "budgets": [_rule_json(b) for b in evaluation.budgets],
            "gates": [_rule_json(g) for g in evaluation.gates if g.name in result.admission_gates],
        },
    }
    if result.synthetic:
        data["banner"] = BANNER
    if scorecards:
        data["automatic_validation"] = _structural(result)
        data["human_decisions"] = _human(result)
        data["tables"] = [_table_json(t) for t in evaluation.tables]
        data["gates"] = [_rule_json(g) for g in evaluation.gates]
        data["decisions"] = [
            {
                "name": d.name,
                "hash": d.hash,
                "source": d.note,
                "verdict": d.verdict,
                "row": d.row,
                "gate_outcomes": d.outcomes,
            }
            for d in evaluation.decisions
        ]
        data["verdict"] = result.verdict
    return data


def _failed_prerequisites(result: CampaignResult) -> list[str]:
    lines = []
    for violation in result.evaluation.violations:
        where = _where(result, violation)
        place = where.get("file", where["document"])
        if "line" in where:
            place += f":{where['line']}"
        elif "pointer" in where:
            place += f" ({where['pointer'] or '/'})"
        ids = f" [{', '.join(violation.ids)}]" if violation.ids else ""
        lines.append(
            f"  {violation.code}: {violation.message}{ids}\n"
            f"    at {place}; rule {violation.rule} {violation.rule_hash}"
        )
    for budget in result.evaluation.budgets:
        for observation in budget.observations:
            if not observation.passed:
                crossing = f" at entry {', '.join(observation.entry)}" if observation.entry else ""
                detail = observation.error or (
                    f"running total {_shown(observation.observed)} {observation.op} "
                    f"{_shown(observation.bound)} fails{crossing}"
                )
                lines.append(
                    f"  BUDGET_EXCEEDED: {budget.name} {', '.join(observation.ids)}: {detail}\n"
                    f"    rule {budget.name} {budget.hash}"
                )
    return lines


def admission_text(result: CampaignResult) -> str:
    """The admission report."""
    lines = [BANNER, ""] if result.synthetic else []
    lines.append(f"bundle  {result.bundle.root}")
    lines.append(f"rules   ruleset {result.ruleset_hash}")
    failed = _failed_prerequisites(result)
    gates = {g.name: g for g in result.evaluation.gates}
    for name in sorted(result.admission_gates & gates.keys()):
        if not gates[name].passed:
            failed.append(
                f"  GATE_FAILED: {name}: {gates[name].note}\n    rule {name} {gates[name].hash}"
            )
    if result.admitted:
        lines.append("ADMITTED: every prerequisite holds")
    else:
        lines.append(f"REFUSED: {len(failed)} failed prerequisite(s)")
        lines += failed
    return "\n".join(lines) + "\n"


def _table_text(table: TableResult, markdown: bool) -> list[str]:
    header = ["ids", *table.columns]
    rows = [[", ".join(ids) or "-", *(_shown(v) for v in values)] for ids, values in table.rows]
    if markdown:
        out = [f"### {table.name}", "", f"_{table.note}_ (rule hash `{table.hash[:12]}`)", ""]
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
        out += ["| " + " | ".join(row) + " |" for row in rows]
        return [*out, ""]
    out = [f"{table.name}  ({table.note})"]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        out.append("  " + "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)))
    return [*out, ""]


def _gate_text(gate: RuleResult) -> list[str]:
    status = "PASS" if gate.passed else "FAIL"
    lines = [f"  {status} {gate.name} [{gate.hash[:12]}] {gate.note or ''}"]
    shown = [o for o in gate.observations if not o.passed] or gate.observations[:1]
    for observation in shown[:8]:
        ids = ", ".join(observation.ids)
        if observation.error:
            lines.append(f"      {ids}: error: {observation.error}")
        elif observation.op is not None:
            verdict = "holds" if observation.passed else "fails"
            lines.append(
                f"      {ids or 'campaign'}: observed {_shown(observation.observed)} "
                f"{observation.op} {_shown(observation.bound)}: {verdict}"
            )
    if len(shown) > 8:
        lines.append(f"      ... and {len(shown) - 8} more")
    return lines


def check_text(result: CampaignResult, *, markdown: bool = False) -> str:
    """The full `check` report: admission, runs, summaries, gates and the verdict."""
    lines = [admission_text(result).rstrip("\n"), ""]
    data = campaign_json(result, scorecards=True)
    structural = data["automatic_validation"]
    human = data["human_decisions"]
    lines += [
        "AUTOMATIC VALIDATION (structural only; never correctness or readiness)",
        f"  {structural['structurally_valid']} of {structural['answers_checked']} answers "
        "structurally valid",
        *(
            f"  {session}: {', '.join(codes)}"
            for session, codes in structural["with_findings"].items()
        ),
        "",
        "RECORDED HUMAN DECISIONS (semantic adjudication, frozen before reveal)",
        f"  {human['ratings']} ratings ({human['primary']} primary, {human['third']} third) by "
        f"{', '.join(human['raters'])}",
        "",
    ]
    for table in result.evaluation.tables:
        lines += _table_text(table, markdown)
    lines.append("GATES")
    for gate in result.evaluation.gates:
        lines += _gate_text(gate)
    lines.append("")
    for decision in result.evaluation.decisions:
        outcomes = ", ".join(
            f"{k}={'pass' if v else 'fail'}" for k, v in sorted(decision.outcomes.items())
        )
        head = f"DECISION {decision.name} [{decision.hash[:12]}] row {decision.row}"
        lines.append(f"{head}: {decision.verdict}")
        lines.append(f"  {outcomes}")
    if result.synthetic:
        lines += ["", BANNER]
    return "\n".join(lines) + "\n"
