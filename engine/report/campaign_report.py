"""Reports of `rulecheck admit` and `rulecheck check`: text, markdown and canonical JSON.

Values are shown as `engine.report.evaluation_report` shows them. Automatic (structural) validation
and recorded human (semantic) decisions are reported in separate sections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.evaluate.campaign import CampaignResult
from engine.evaluate.links import Violation
from engine.report.evaluation_report import (
    budget_failure,
    decision_json,
    decision_text,
    gate_text,
    rule_json,
    table_json,
    table_text,
    violation_json,
    warnings_json,
    warnings_text,
)

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


def _where(result: CampaignResult, violation: Violation) -> dict[str, Any]:
    document = violation.document or ""
    file = _DOCUMENT_FILES.get(document)
    where: dict[str, Any] = {"document": document}
    if file is not None:
        where["file"] = str(Path(result.bundle.root) / file)
    if violation.pointer is not None:
        where["pointer"] = violation.pointer
        lines = result.bundle.record_lines.get(document, ())
        index = violation.pointer.lstrip("/").split("/")[0]
        if index.isdigit() and int(index) < len(lines):
            where["line"] = lines[int(index)][0]
    return where


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
        "warnings": warnings_json(evaluation),
        "admission": {
            "violations": [violation_json(v, _where(result, v)) for v in evaluation.violations],
            "budgets": [rule_json(b) for b in evaluation.budgets],
            "gates": [rule_json(g) for g in evaluation.gates if g.name in result.admission_gates],
        },
    }
    if result.synthetic:
        data["banner"] = BANNER
    if scorecards:
        data["automatic_validation"] = _structural(result)
        data["human_decisions"] = _human(result)
        data["tables"] = [table_json(t) for t in evaluation.tables]
        data["gates"] = [rule_json(g) for g in evaluation.gates]
        data["decisions"] = [decision_json(d) for d in evaluation.decisions]
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
                detail = budget_failure(observation)
                lines.append(
                    f"  BUDGET_EXCEEDED: {budget.name} {', '.join(observation.ids)}: {detail}\n"
                    f"    rule {budget.name} {budget.hash}"
                )
    return lines


def admission_text(result: CampaignResult, strict: bool = False) -> str:
    """The admission report."""
    lines = [BANNER, ""] if result.synthetic else []
    lines.append(f"bundle  {result.bundle.root}")
    lines.append(f"rules   ruleset {result.ruleset_hash}")
    failed = _failed_prerequisites(result)
    gates = {g.name: g for g in result.evaluation.gates}
    for name in sorted(result.admission_gates & gates.keys()):
        if not gates[name].passed:
            reads = sorted({r for o in gates[name].observations for r in o.failed_rules})
            because = (
                f"\n    failed because these did not hold: {', '.join(reads)}" if reads else ""
            )
            failed.append(
                f"  GATE_FAILED: {name}: {gates[name].note}{because}\n"
                f"    rule {name} {gates[name].hash}"
            )
    if result.admitted:
        lines.append("ADMITTED: every prerequisite holds")
    else:
        lines.append(f"REFUSED: {len(failed)} failed prerequisite(s)")
        lines += failed
    warnings = warnings_text(result.evaluation, strict)
    if warnings:
        lines += ["", *warnings[:-1]]
    return "\n".join(lines) + "\n"


def check_text(result: CampaignResult, *, markdown: bool = False, strict: bool = False) -> str:
    """The full `check` report: admission, runs, summaries, gates and the verdict."""
    lines = [admission_text(result, strict).rstrip("\n"), ""]
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
        lines += table_text(table, markdown)
    lines.append("GATES")
    for gate in result.evaluation.gates:
        lines += gate_text(gate, "campaign")
    lines.append("")
    for decision in result.evaluation.decisions:
        lines += decision_text(decision)
    if result.synthetic:
        lines += ["", BANNER]
    return "\n".join(lines) + "\n"
