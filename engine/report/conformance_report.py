"""`rulecheck conformance`: traces checked against a protocol of the rules, as a report
with its own hash, and a folder of fixture traces checked against `expected.yaml`.

Nothing here knows a controller: a trace is a protocol bundle, checked as `rulecheck
check` checks it; a finding is a link rule's violation, shown with the rule's `source`
note (where the rules say which suite a rule belongs to) and the record it is located
at, as the trace wrote it (its sequence number and entity with it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engine.bundle.yamldoc import safe_yaml
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.protocol import bundle_protocol, evaluate_protocol, reported_tables
from engine.freeze.canonical import canonical_json
from engine.pointer import pointer_tokens
from engine.report.protocol_report import protocol_json, protocol_passed

EXPECTED = "expected.yaml"


def _record_at(documents: dict[str, Any], location: dict[str, Any]) -> Any:
    """The record a violation is located at, or null when it names none."""
    document = documents.get(location.get("document", ""))
    pointer = location.get("pointer")
    if document is None or not isinstance(pointer, str):
        return None
    value: Any = document.value
    for token in pointer_tokens(pointer):
        if isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        else:
            return None
    return value


def check_trace(program: Any, bundle: Path, protocol_name: str | None) -> dict[str, Any]:
    """One trace bundle checked, as a report: whether it conforms and each finding with
    its rule's note and record."""
    return with_hash({"trace": str(bundle)}, _trace_body(program, bundle, protocol_name))


def _trace_body(program: Any, bundle: Path, protocol_name: str | None) -> dict[str, Any]:
    protocol = bundle_protocol(program, bundle, protocol_name)
    found = evaluate_protocol(program, bundle, protocol, reported_tables(protocol))
    data = protocol_json(found)
    declarations = program.compiler.symbols.declarations
    findings = []
    for violation in data["violations"]:
        decl = declarations.get(violation["rule"])
        location = violation.get("location", {})
        findings.append(
            {
                "rule": violation["rule"],
                "code": violation["code"],
                "message": violation["message"],
                "suite": getattr(decl, "note", None),
                "ids": violation["ids"],
                "line": location.get("line"),
                "record": _record_at(found.bundle.documents, location),
            }
        )
    return {
        "protocol": data["protocol"]["name"],
        "documents": {k: v.get("sha256") for k, v in sorted(data["documents"].items())},
        "ruleset_hash": data["ruleset_hash"],
        "conforms": protocol_passed(found, False),
        "findings": findings,
    }


def with_hash(where: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    """A report: where it was run (the folders given, no part of what was found), its body,
    and `report_sha256`, the sha256 of the body's canonical JSON and a newline: what
    `json_sha256(report)` gives in the rules, so a manifest that embeds a report can
    check the hash it names."""
    digest = hashlib.sha256(canonical_json(body) + b"\n").hexdigest()
    return {**where, "report": body, "report_sha256": digest}


@dataclass(frozen=True, slots=True)
class Expectation:
    """What a fixture trace must give: conformance, or exactly these violated rules."""

    trace: str
    conforms: bool
    violated: tuple[str, ...]
    line: int


def read_expected(folder: Path) -> list[Expectation]:
    """The entries of `folder/expected.yaml`; a malformed one is a located usage error."""
    path = folder / EXPECTED
    try:
        data = safe_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise _expected_error(path, f"cannot read `{path}`: {error}") from None
    traces = data.get("traces") if isinstance(data, dict) else None
    if not isinstance(traces, list):
        raise _expected_error(path, f"`{path}` needs a list `traces`")
    found = []
    for number, entry in enumerate(traces):
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("trace"), str)
            and isinstance(entry.get("conforms"), bool)
            and all(isinstance(r, str) for r in entry.get("violated", []))
            and (entry.get("conforms") or entry.get("violated"))
        )
        if not ok:
            raise _expected_error(
                path,
                f"`{path}` entry {number + 1} needs `trace`, `conforms` and, unless it "
                "conforms, the `violated` rules",
            )
        found.append(
            Expectation(
                entry["trace"], entry["conforms"], tuple(sorted(entry.get("violated", []))), number
            )
        )
    return found


def _expected_error(path: Path, message: str) -> RulecheckError:
    diagnostic = Diagnostic("CONFORMANCE_EXPECTED", message, Location(str(path), 0, 0))
    return RulecheckError([diagnostic], ExitCode.USAGE)


def check_fixtures(program: Any, folder: Path, protocol_name: str | None) -> dict[str, Any]:
    """Every trace `folder/expected.yaml` lists, checked against its expectation."""
    results = []
    for expected in read_expected(folder):
        checked = check_trace(program, folder / expected.trace, protocol_name)
        trace = checked["report"]
        violated = tuple(sorted({f["rule"] for f in trace["findings"]}))
        held = trace["conforms"] == expected.conforms and violated == expected.violated
        results.append(
            {
                "trace": expected.trace,
                "passed": held,
                "expected": {"conforms": expected.conforms, "violated": list(expected.violated)},
                "observed": {"conforms": trace["conforms"], "violated": list(violated)},
                "report_sha256": checked["report_sha256"],
            }
        )
    return with_hash({"fixtures": str(folder)}, {"results": results})


def _finding_lines(finding: dict[str, Any]) -> list[str]:
    record = finding["record"]
    shown = canonical_json(record).decode("utf-8") if record is not None else "(no record)"
    return [
        f"  {finding['code']}: {finding['message']}",
        f"    rule {finding['rule']}; suite: {finding['suite'] or '(no source note)'}",
        f"    at line {finding['line']}: {shown}",
    ]


def trace_text(report: dict[str, Any]) -> str:
    """A trace's report as text: verdict, each finding, the report's hash."""
    body = report["report"]
    verdict = "CONFORMS" if body["conforms"] else "DOES NOT CONFORM"
    lines = [f"{verdict}: {report['trace']} (protocol {body['protocol']})"]
    for finding in body["findings"]:
        lines += _finding_lines(finding)
    lines.append(f"  ruleset {body['ruleset_hash']}")
    lines.append(f"  report sha256 {report['report_sha256']}")
    return "\n".join(lines) + "\n"


def fixtures_text(report: dict[str, Any]) -> str:
    """Each fixture trace PASS or FAIL (with what differs), then `N passed, N failed`."""
    lines = []
    results = report["report"]["results"]
    for result in results:
        lines.append(f"{'PASS' if result['passed'] else 'FAIL'} {result['trace']}")
        if not result["passed"]:
            lines.append(f"  - expected {_outcome(result['expected'])}")
            lines.append(f"  + observed {_outcome(result['observed'])}")
    passed = sum(1 for r in results if r["passed"])
    lines.append(f"report sha256 {report['report_sha256']}")
    lines.append(f"{passed} passed, {len(results) - passed} failed")
    return "\n".join(lines) + "\n"


def _outcome(outcome: dict[str, Any]) -> str:
    if outcome["conforms"]:
        return "conforms"
    return "violates " + ", ".join(outcome["violated"] or ["(no rule)"])
