"""Reports of `rulecheck answer`: structural findings only, never a claim of correctness."""

from __future__ import annotations

from typing import Any

from engine.evaluate.answer import AnswerReport, Finding

STRUCTURAL_PASS = (
    "structural check passed: the answer satisfies the response contract's structure. "
    "This says nothing about whether it is correct, complete or ready; that is decided by "
    "semantic adjudication."
)
STRUCTURAL_FAIL = "structural check failed"


def _where(finding: Finding) -> str:
    text = finding.file or "<input>"
    if finding.line is not None:
        text += f":{finding.line}:{finding.column}"
    if finding.pointer is not None:
        text += f" ({finding.pointer or '/'})"
    return text


def answer_text(report: AnswerReport) -> str:
    """Human-readable report, one finding per line group."""
    lines = [f"answer  {report.answer} (role {report.role})", f"packet  {report.packet}"]
    for finding in report.findings:
        rule = f" [rule {finding.rule} {finding.rule_hash}]" if finding.rule else ""
        ids = f" ids: {', '.join(finding.ids)}" if finding.ids else ""
        lines.append(f"{_where(finding)}: {finding.code}: {finding.message}{ids}{rule}")
    verdict = (
        STRUCTURAL_PASS
        if report.structural_ok
        else (f"{STRUCTURAL_FAIL}: {len(report.findings)} finding(s)")
    )
    lines.append(verdict)
    lines.append(f"rules {report.rules_evaluated} link rules, ruleset {report.ruleset_hash}")
    return "\n".join(lines) + "\n"


def finding_json(finding: Finding) -> dict[str, Any]:
    """A finding as data (absent fields left out)."""
    data: dict[str, Any] = {"code": finding.code, "message": finding.message}
    for key in ("file", "pointer", "line", "column", "rule", "rule_hash"):
        value = getattr(finding, key)
        if value is not None:
            data[key] = value
    data["ids"] = list(finding.ids)
    return data


def answer_json(report: AnswerReport) -> dict[str, Any]:
    """The report as data."""
    return {
        "answer": report.answer,
        "packet": report.packet,
        "role": report.role,
        "structural_ok": report.structural_ok,
        "scope": "structural",
        "note": STRUCTURAL_PASS if report.structural_ok else STRUCTURAL_FAIL,
        "findings": [finding_json(f) for f in report.findings],
        "rules_evaluated": report.rules_evaluated,
        "ruleset_hash": report.ruleset_hash,
        "response_schema_sha256": report.schema_sha256,
    }
