"""Reports of a files alias (`rulecheck answer`): what the protocol found in one input's
files, structure only; the alias's notes say what a pass does and does not mean."""

from __future__ import annotations

from typing import Any

from engine.errors import Diagnostic, Location
from engine.evaluate.alias import FilesAlias
from engine.evaluate.batch import FilesResult


def _ordered(result: FilesResult) -> list[Diagnostic]:
    def key(d: Diagnostic) -> tuple[Any, ...]:
        where = d.location or Location("")
        return (where.file, where.line or 0, where.column or 0, d.code, d.rule or "", d.ids)

    return sorted(result.outcome.findings, key=key)


def _where(finding: Diagnostic) -> str:
    where = finding.location or Location("")
    text = where.file or "<input>"
    if where.line is not None:
        text += f":{where.line}:{where.column}"
    if where.pointer is not None:
        text += f" ({where.pointer or '/'})"
    return text


def answer_text(alias: FilesAlias, result: FilesResult, ruleset_hash: str) -> str:
    """Human-readable report, one finding per line."""
    named = result.job.shown(alias)
    values = [f"{option} {named[option]}" for option in alias.values if option in named]
    first = f"{alias.subject}  {named[alias.subject]}"
    lines = [first + (f" ({', '.join(values)})" if values else "")]
    lines += [
        f"{option}  {named[option]}"
        for option in alias.shown
        if option in named and option not in alias.values
    ]
    findings = _ordered(result)
    for finding in findings:
        rule = f" [rule {finding.rule} {finding.rule_hash}]" if finding.rule else ""
        ids = f" ids: {', '.join(finding.ids)}" if finding.ids else ""
        lines.append(f"{_where(finding)}: {finding.code}: {finding.message}{ids}{rule}")
    passed = result.outcome.passed
    lines.append(
        alias.passed_note if passed else f"{alias.failed_note}: {len(findings)} finding(s)"
    )
    lines.append(f"rules {result.outcome.rules_evaluated} link rules, ruleset {ruleset_hash}")
    return "\n".join(lines) + "\n"


def finding_json(finding: Diagnostic) -> dict[str, Any]:
    """A finding as data (absent fields left out)."""
    where = finding.location or Location("")
    data: dict[str, Any] = {"code": finding.code, "message": finding.message}
    located = {
        "file": where.file or None,
        "pointer": where.pointer,
        "line": where.line,
        "column": where.column,
        "rule": finding.rule,
        "rule_hash": finding.rule_hash,
    }
    data.update({key: value for key, value in located.items() if value is not None})
    data["ids"] = list(finding.ids)
    return data


def answer_json(
    alias: FilesAlias, result: FilesResult, ruleset_hash: str, schema_sha256: str | None
) -> dict[str, Any]:
    """The report as data."""
    passed = result.outcome.passed
    return {
        **result.job.shown(alias),
        "structural_ok": passed,
        "scope": "structural",
        "note": alias.passed_note if passed else alias.failed_note,
        "findings": [finding_json(f) for f in _ordered(result)],
        "rules_evaluated": result.outcome.rules_evaluated,
        "ruleset_hash": ruleset_hash,
        alias.schema_key: schema_sha256,
    }
