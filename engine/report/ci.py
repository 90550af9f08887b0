"""Outputs for CI and code review: JUnit XML, SARIF 2.1.0 and GitHub workflow annotations.

One model feeds the three formats: a `CiReport` of `Check`s (each rule judged on the input,
each declaration of a linted rule file, each test case), every check carrying the
diagnostics that explain it. The reports are built from the same data the JSON output
serialises, so the formats never disagree with `--format json` about what failed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from engine.catalog import CATALOG
from engine.errors import Diagnostic, Location
from engine.report.output import to_json
from engine.resources import rulecheck_version
from engine.syntax.ast import Span, declaration_kind

if TYPE_CHECKING:
    from engine.check import CheckedRuleset
    from engine.evaluate.program import Program

CI_FORMATS = ("junit", "sarif", "github")

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

Outcome = Literal["pass", "fail", "vacuous", "error"]


@dataclass(frozen=True, slots=True)
class Check:
    """One thing judged: a rule on the input, a declaration of a rule file, a test case.

    `group` is what JUnit calls the class name (the rule's kind, or the case file);
    `detail` is what a reader of the CI log needs beyond the findings (a verdict, a diff).
    """

    name: str
    group: str
    outcome: Outcome
    findings: tuple[Diagnostic, ...] = ()
    detail: str = ""


@dataclass(frozen=True, slots=True)
class CiReport:
    """Everything one command judged, for the CI formats.

    `descriptions` gives, for each diagnostic code the findings carry, what it means
    (SARIF's rule descriptors); `properties` are facts of the whole run (its verdict, the
    ruleset hash); `strict` makes a vacuous check a failure.
    """

    suite: str
    checks: tuple[Check, ...]
    descriptions: Mapping[str, str]
    properties: Mapping[str, str]
    strict: bool = False

    def failed(self, check: Check) -> bool:
        """Whether `check` counts as a failure (vacuous ones only under `--strict`)."""
        return check.outcome == "fail" or (check.outcome == "vacuous" and self.strict)


# -- building reports from the JSON data ---------------------------------------------------


def code_descriptions(declared: Mapping[str, str]) -> dict[str, str]:
    """What every code means: the engine's catalog, then the reject codes the rules declare."""
    return {**{e.code: e.meaning for e in CATALOG}, **declared}


def diagnostic_from_json(data: Mapping[str, Any]) -> Diagnostic:
    """The diagnostic that `diagnostic_json` serialised."""
    where = data.get("location")
    location = None
    if where is not None:
        location = Location(
            str(where["file"]),
            where.get("line"),
            where.get("column"),
            where.get("end_line"),
            where.get("end_column"),
            where.get("pointer"),
        )
    return Diagnostic(
        str(data["code"]),
        str(data["message"]),
        location,
        data.get("severity", "error"),
        data.get("hint"),
        data.get("rule"),
        data.get("rule_hash"),
        tuple(data.get("ids", ())),
    )


def _violation(data: Mapping[str, Any]) -> Diagnostic:
    where = data["location"]
    location = None
    if where.get("file"):
        location = Location(
            str(where["file"]), where.get("line"), where.get("column"), pointer=where.get("pointer")
        )
    ids = tuple(data["ids"])
    suffix = f" [{', '.join(ids)}]" if ids else ""
    return Diagnostic(
        data["code"],
        f"{data['message']}{suffix}",
        location,
        rule=data["rule"],
        rule_hash=data["rule_hash"],
        ids=ids,
    )


def _observation_words(observation: Mapping[str, Any]) -> str:
    ids = ", ".join(observation["ids"]) or "all"
    if "error" in observation:
        return f"{ids}: error: {observation['error']}"
    if "failed_rules" in observation:
        return f"{ids}: these did not hold: {', '.join(observation['failed_rules'])}"
    observed = observation.get("observed_rounded", observation.get("observed"))
    crossing = observation.get("crossing_entry")
    at = f" at entry {', '.join(crossing)}" if crossing else ""
    return f"{ids}: observed {observed} {observation['op']} {observation['bound']} fails{at}"


def _rule_check(rule: Mapping[str, Any], sites: Mapping[str, Location], vacuous: bool) -> Check:
    """A gate or budget: one finding per failing binding, located at its declaration."""
    failing = [o for o in rule["observations"] if not o["passed"]]
    code = "BUDGET_FAILED" if rule["kind"] == "budget" else "GATE_FAILED"
    findings = tuple(
        Diagnostic(
            code,
            f"{rule['kind']} `{rule['name']}` fails: {_observation_words(o)}",
            sites.get(rule["name"]),
            rule=rule["name"],
            rule_hash=rule["hash"],
            ids=tuple(o["ids"]),
        )
        for o in failing
    )
    outcome: Outcome = "fail" if not rule["passed"] else "vacuous" if vacuous else "pass"
    return Check(rule["name"], rule["kind"], outcome, findings, rule.get("source") or "")


def evaluation_report(
    suite: str,
    data: Mapping[str, Any],
    links: Sequence[str],
    sites: Mapping[str, Location],
    descriptions: Mapping[str, str],
) -> CiReport:
    """The report of `check` or `evaluate` from its JSON data: each link rule of the graph
    (`links`), budget, gate and decision a check. `sites` locates each declaration in its
    rule file (where a failing gate is reported, having no place in the data)."""
    warnings = [diagnostic_from_json(w) for w in data["warnings"]]
    vacuous = {w.rule: w for w in warnings if w.rule}
    # a warning about the input (`ATTR_ABSENT`) is a check of its own, failed by --strict
    checks = [Check(w.code, "input", "vacuous", (w,)) for w in warnings if not w.rule]
    for name in links:
        found = tuple(_violation(v) for v in data["violations"] if v["rule"] == name)
        warned = vacuous.get(name)
        outcome: Outcome = "fail" if found else "vacuous" if warned else "pass"
        checks.append(Check(name, "link", outcome, found + ((warned,) if warned else ())))
    for rule in (*data["budgets"], *data["gates"]):
        check = _rule_check(rule, sites, rule["name"] in vacuous)
        warned = vacuous.get(rule["name"])
        checks.append(_with(check, warned))
    for decision in data["decisions"]:
        detail = f"verdict {decision['verdict']} (row {decision['row']})"
        checks.append(Check(decision["name"], "decision", "pass", (), detail))
    properties = {"ruleset_hash": str(data["ruleset_hash"]), "graph": str(data["graph"])}
    for key in ("admitted", "verdict", "passed"):
        if data.get(key) is not None:
            properties[key] = _word(data[key])
    return CiReport(suite, tuple(checks), descriptions, properties, bool(data["strict"]))


def _with(check: Check, warning: Diagnostic | None) -> Check:
    if warning is None:
        return check
    return Check(check.name, check.group, check.outcome, (*check.findings, warning), check.detail)


def _word(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def lint_report(
    suite: str, checked: CheckedRuleset, diagnostics: Sequence[Diagnostic], strict: bool
) -> CiReport:
    """The report of `lint`: each declaration a check with the diagnostics inside its
    span; each file a check with the rest (its syntax errors, problems between
    declarations)."""
    remaining = list(diagnostics)
    checks = []
    for decl in checked.declarations():
        span = decl.span
        inside = [d for d in remaining if _within(d.location, span)]
        remaining = [d for d in remaining if d not in inside]
        checks.append(_lint_check(decl.name.text, declaration_kind(decl), inside, strict))
    for rule_file in checked.files:
        mine = [d for d in remaining if d.location and d.location.file == rule_file.path]
        remaining = [d for d in remaining if d not in mine]
        checks.append(_lint_check(rule_file.path, "file", mine, strict))
    files = sorted({d.location.file if d.location else "rule files" for d in remaining})
    for file in files:  # files that did not parse
        mine = [d for d in remaining if (d.location.file if d.location else "rule files") == file]
        checks.append(_lint_check(file, "file", mine, strict))
    return CiReport(suite, tuple(checks), code_descriptions({}), {}, strict)


def _within(location: Location | None, span: Span) -> bool:
    if location is None or location.file != span.file or location.line is None:
        return False
    return span.line <= location.line <= span.end_line


def _lint_check(name: str, kind: str, found: Sequence[Diagnostic], strict: bool) -> Check:
    errors = any(d.severity == "error" for d in found) or (strict and bool(found))
    return Check(name, kind, "fail" if errors else "pass", tuple(found))


def _location_of(where: str) -> Location:
    """A `file:line:column` string as a location (the file alone when it has no numbers)."""
    match = re.fullmatch(r"(.*):(\d+):(\d+)", where)
    if match is None:
        return Location(where)
    return Location(match.group(1), int(match.group(2)), int(match.group(3)))


def cases_report(suite: str, data: Mapping[str, Any]) -> CiReport:
    """The report of `rulecheck test` from its JSON data: each case a check (its
    differences the failure), each threshold mutant of `--mutate` a check too."""
    checks = []
    for case in data["cases"]:
        where = Location(case["file"], case["line"], case["column"])
        differences = [
            f"{d['key']}: expected {to_json(d['expected']).strip()}, "
            f"observed {to_json(d['observed']).strip()}"
            for d in case["differences"]
        ]
        findings: tuple[Diagnostic, ...] = ()
        if not case["passed"]:
            message = f"case `{case['name']}` fails: " + "; ".join(differences)
            findings = (Diagnostic("CASE_FAILED", message, where),)
        outcome: Outcome = "pass" if case["passed"] else "fail"
        checks.append(Check(case["name"], case["file"], outcome, findings, "\n".join(differences)))
    for group in data.get("mutations", ()):
        for mutant in group["mutants"]:
            checks.append(_mutant_check(mutant))
    return CiReport(suite, tuple(checks), code_descriptions({}), {}, False)


def _mutant_check(mutant: Mapping[str, Any]) -> Check:
    change = f"`{mutant['original']}` -> `{mutant['replacement']}` in {mutant['declaration']}"
    name = f"mutant {mutant['where']} {change}"
    if mutant["status"] == "invalid":
        return Check(name, "mutation", "pass", (), "invalid mutant: not run")
    if mutant["status"] == "caught":
        return Check(name, "mutation", "pass", (), f"caught by {', '.join(mutant['caught_by'])}")
    why = " (no case evaluates the rule it changes)" if mutant["status"] == "unreached" else ""
    finding = Diagnostic(
        "MUTANT_SURVIVED", f"no case catches {change}{why}", _location_of(mutant["where"])
    )
    return Check(name, "mutation", "fail", (finding,))


def failure_report(suite: str, diagnostics: Sequence[Diagnostic]) -> CiReport:
    """The report of a run refused before it judged anything (unreadable input, rule
    errors): one check in error, carrying every diagnostic."""
    errors = tuple(diagnostics)
    outcome: Outcome = "error" if any(d.severity == "error" for d in errors) else "pass"
    return CiReport(suite, (Check(suite, "run", outcome, errors),), code_descriptions({}), {})


# -- rendering -----------------------------------------------------------------------------

# Characters XML 1.0 cannot hold at all, even escaped: written as `\xNN` instead.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _finding_line(finding: Diagnostic) -> str:
    where = f"{finding.location.render()}: " if finding.location else ""
    hint = f" ({finding.hint})" if finding.hint else ""
    return f"{where}{finding.severity}[{finding.code}]: {finding.message}{hint}"


def junit_xml(report: CiReport) -> str:
    """JUnit XML (the Ant/Surefire schema Jenkins, GitLab and GitHub read): one test case
    per check, failures and errors with their findings; no timestamps, so byte-stable."""
    failures = sum(report.failed(c) for c in report.checks)
    errors = sum(c.outcome == "error" for c in report.checks)
    skipped = sum(c.outcome == "vacuous" and not report.strict for c in report.checks)
    counts = {"tests": str(len(report.checks)), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", {"name": _xml(report.suite), **counts})
    suite = ET.SubElement(root, "testsuite", {"name": _xml(report.suite), **counts})
    suite.set("skipped", str(skipped))
    if report.properties:
        properties = ET.SubElement(suite, "properties")
        for key, value in sorted(report.properties.items()):
            ET.SubElement(properties, "property", {"name": key, "value": _xml(value)})
    for check in report.checks:
        _junit_case(ET.SubElement(suite, "testcase"), check, report)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def _junit_case(case: ET.Element, check: Check, report: CiReport) -> None:
    case.set("name", _xml(check.name))
    case.set("classname", _xml(check.group))
    lines = [_finding_line(f) for f in check.findings]
    text = _xml("\n".join([*lines, *([check.detail] if check.detail else [])]))
    first = check.findings[0] if check.findings else None
    attributes = {"message": _xml(first.message), "type": first.code} if first else {}
    if check.outcome == "error":
        ET.SubElement(case, "error", attributes).text = text
    elif report.failed(check):
        ET.SubElement(case, "failure", attributes).text = text
    elif check.outcome == "vacuous":
        vacuous = first is None or first.code == "VACUOUS"
        why = "VACUOUS: binds nothing on this input" if vacuous else attributes["message"]
        ET.SubElement(case, "skipped", {"message": why})
        ET.SubElement(case, "system-out").text = text
    elif text:
        ET.SubElement(case, "system-out").text = text


def _uri(file: str) -> str:
    path = Path(file)
    return path.as_uri() if path.is_absolute() else quote(path.as_posix())


def _sarif_location(location: Location) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(location.file)}}
    if location.line:
        region: dict[str, Any] = {"startLine": location.line}
        if location.column:
            region["startColumn"] = location.column
        if location.end_line:
            region["endLine"] = location.end_line
            if location.end_column:
                region["endColumn"] = location.end_column
        physical["region"] = region
    data: dict[str, Any] = {"physicalLocation": physical}
    if location.pointer is not None:
        data["logicalLocations"] = [
            {"fullyQualifiedName": location.pointer or "/", "kind": "element"}
        ]
    return data


def _sarif_result(finding: Diagnostic, check: Check, index: Mapping[str, int]) -> dict[str, Any]:
    message = finding.message + (f" ({finding.hint})" if finding.hint else "")
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": index[finding.code],
        "level": "error" if finding.severity == "error" else "warning",
        "message": {"text": message},
        "properties": {"check": check.name, "kind": check.group},
    }
    if finding.location is not None:
        result["locations"] = [_sarif_location(finding.location)]
    for key in ("rule", "rule_hash"):
        if getattr(finding, key):
            result["properties"][key] = getattr(finding, key)
    if finding.ids:
        result["properties"]["ids"] = list(finding.ids)
    return result


def sarif_json(report: CiReport) -> str:
    """SARIF 2.1.0: each finding a result of one run, rule-file diagnostics located in the
    `.rules` files, data violations in the input files (line and column where known, the
    JSON pointer as a logical location); canonical JSON."""
    pairs = [(f, c) for c in report.checks for f in c.findings]
    codes = sorted({f.code for f, _ in pairs})
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {"id": code, "shortDescription": {"text": report.descriptions.get(code, code)}}
        for code in codes
    ]
    failed = [c.name for c in report.checks if report.failed(c) or c.outcome == "error"]
    run = {
        "tool": {"driver": {"name": "rulecheck", "version": rulecheck_version(), "rules": rules}},
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                "executionSuccessful": not any(c.outcome == "error" for c in report.checks),
                "properties": {"suite": report.suite, **report.properties},
            }
        ],
        "results": [_sarif_result(f, c, index) for f, c in pairs],
        "properties": {"checks": len(report.checks), "failed": failed},
    }
    return to_json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(finding: Diagnostic) -> str:
    level = "error" if finding.severity == "error" else "warning"
    fields = []
    loc = finding.location
    if loc is not None:
        fields.append(f"file={_escape_property(loc.file)}")
        if loc.line:
            fields.append(f"line={loc.line}")
            if loc.column:
                fields.append(f"col={loc.column}")
            if loc.end_line:
                fields.append(f"endLine={loc.end_line}")
    title = finding.code + (f" ({finding.rule})" if finding.rule else "")
    fields.append(f"title={_escape_property(title)}")
    where = f" at {loc.pointer or '/'}" if loc is not None and loc.pointer is not None else ""
    hint = f" ({finding.hint})" if finding.hint else ""
    return f"::{level} {','.join(fields)}::{_escape_data(finding.message + where + hint)}"


def github_annotations(report: CiReport) -> str:
    """GitHub workflow commands: `::error file=F,line=L,col=C,title=CODE::message` per
    finding (warnings as `::warning`), then one plain summary line."""
    lines = [_annotation(f) for c in report.checks for f in c.findings]
    failed = sum(report.failed(c) or c.outcome == "error" for c in report.checks)
    vacuous = sum(c.outcome == "vacuous" for c in report.checks)
    lines.append(
        f"{report.suite}: {len(report.checks)} checks, {len(report.checks) - failed} passed, "
        f"{failed} failed ({vacuous} vacuous)"
    )
    return "\n".join(lines) + "\n"


RENDERERS: Mapping[str, Callable[[CiReport], str]] = {
    "junit": junit_xml,
    "sarif": sarif_json,
    "github": github_annotations,
}


def render(output_format: str, report: CiReport) -> str:
    """`report` in one of CI_FORMATS."""
    return RENDERERS[output_format](report)


def rule_sites(program: Program) -> dict[str, Location]:
    """Where each declaration of the compiled rules starts, in its rule file."""
    sites = {}
    for item in program.ruleset.hashed.declarations:
        span = item.decl.span
        sites[item.name] = Location(span.file, span.line, span.column)
    return sites


def program_report(suite: str, data: Mapping[str, Any], program: Program) -> CiReport:
    """`evaluation_report` for the JSON data of a graph the compiled rules judged."""
    declared = {name: decl.message for name, decl in program.ruleset.checked.symbols.codes.items()}
    links = [link.name for link in program.links_of(str(data["graph"]))]
    return evaluation_report(suite, data, links, rule_sites(program), code_descriptions(declared))
