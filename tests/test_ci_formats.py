"""The CI and review formats: `--format junit`, `sarif` and `github` on `check`, `evaluate`,
`test` and `lint`. SARIF is validated against the official SARIF 2.1.0 JSON Schema and JUnit
against the Jenkins JUnit XSD, both vendored in tests/schemas/ (see its README)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft4Validator
from lxml import etree

from engine.errors import Diagnostic, Location
from engine.report.ci import Check, CiReport, junit_xml
from tests.cli_run import REPO, CliRun

SCHEMAS = Path(__file__).parent / "schemas"
PROTOCOL = REPO / "tests" / "data" / "protocol"
EVAL_RULES = str(PROTOCOL / "eval.rules")
SHOP = REPO / "tests" / "data" / "evaluate"
SHOP_FILES = {"catalogue": "catalogue.yaml", "orders": "orders.jsonl", "policy": "policy.json"}

# Each command run in every CI format, with the exit code its text form has.
RUNS: dict[str, tuple[list[str], int]] = {
    "check accepted": (["check", str(PROTOCOL / "accepted"), "--rules", EVAL_RULES], 0),
    "check refused": (["check", str(PROTOCOL / "refused"), "--rules", EVAL_RULES], 1),
    "check campaign": (["check", str(REPO / "controls" / "campaign")], 0),
    "check no bundle": (["check", str(PROTOCOL / "absent"), "--rules", EVAL_RULES], 2),
    "evaluate shop": (
        ["evaluate", "shop", "--rules", str(SHOP / "shop.rules")]
        + [f"--input={name}={SHOP / file}" for name, file in SHOP_FILES.items()],
        0,
    ),
    "test protocol": (["test", str(PROTOCOL)], 0),
    "lint shipped rules": (["lint"], 0),
    "lint an overlap": (
        ["lint", str(REPO / "tests" / "data" / "lint" / "decision_overlap.rules")],
        1,
    ),
}


@pytest.fixture(scope="module")
def sarif_validator() -> Draft4Validator:
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


@pytest.fixture(scope="module")
def junit_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "junit-10.xsd")))


def run(args: list[str], output_format: str) -> CliRun:
    result = CliRun([*args, "--format", output_format])
    result.assert_clean()
    return result


def sarif_errors(validator: Draft4Validator, text: str) -> list[str]:
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(json.loads(text))]


def junit(schema: etree.XMLSchema, text: str) -> Any:
    document = etree.fromstring(text.encode("utf-8"))
    assert schema.validate(document), schema.error_log
    return document


@pytest.mark.parametrize("name", sorted(RUNS))
def test_sarif_validates_and_keeps_the_exit_code(name: str, sarif_validator: Any) -> None:
    args, code = RUNS[name]
    result = run(args, "sarif")
    assert result.exit_code == code, result.stdout + result.stderr
    assert sarif_errors(sarif_validator, result.stdout) == []
    assert result.data["version"] == "2.1.0"


@pytest.mark.parametrize("name", sorted(RUNS))
def test_junit_validates_and_keeps_the_exit_code(name: str, junit_schema: Any) -> None:
    args, code = RUNS[name]
    result = run(args, "junit")
    assert result.exit_code == code, result.stdout + result.stderr
    suite = junit(junit_schema, result.stdout).find("testsuite")
    failing = len(suite.findall("testcase/failure")) + len(suite.findall("testcase/error"))
    assert int(suite.get("failures")) + int(suite.get("errors")) == failing
    assert (failing == 0) == (code == 0)


@pytest.mark.parametrize("name", sorted(RUNS))
@pytest.mark.parametrize("output_format", ["junit", "sarif", "github"])
def test_every_format_is_byte_stable(name: str, output_format: str) -> None:
    args, _code = RUNS[name]
    assert run(args, output_format).stdout == run(args, output_format).stdout


def test_each_rule_of_the_graph_is_a_test_case(junit_schema: Any) -> None:
    args, _ = RUNS["check refused"]
    suite = junit(junit_schema, run(args, "junit").stdout).find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert sorted(cases) == sorted(
        [
            "model_pinned",
            "answered_once",
            "answer_within_ceiling",
            "total_tokens",
            "admitted",
            "pass_rate_met",
            "verdict",
        ]
    )
    assert cases["answered_once"].find("failure").get("type") == "NOT_ANSWERED_ONCE"
    assert cases["total_tokens"].find("failure") is None
    assert "verdict INVALID (row 1)" in cases["verdict"].findtext("system-out")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["verdict"] == "INVALID" and properties["admitted"] == "false"


def test_sarif_locates_data_violations_in_the_input_files() -> None:
    args, _ = RUNS["check refused"]
    data = run(args, "sarif").data
    results = data["runs"][0]["results"]
    by_code = {r["ruleId"]: r for r in results}
    where = by_code["ANSWER_TOO_LONG"]["locations"][0]
    assert where["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "tests/data/protocol/refused/answers.jsonl"
    )
    assert where["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 1}
    assert where["logicalLocations"] == [{"fullyQualifiedName": "/2", "kind": "element"}]
    assert by_code["ANSWER_TOO_LONG"]["properties"]["rule"] == "answer_within_ceiling"
    gate = by_code["GATE_FAILED"]["locations"][0]["physicalLocation"]
    assert gate["artifactLocation"]["uri"].endswith("eval.rules")
    assert gate["region"]["startLine"] > 1
    rules = data["runs"][0]["tool"]["driver"]["rules"]
    described = {r["id"]: r["shortDescription"]["text"] for r in rules}
    assert described["ANSWER_TOO_LONG"] == "an answer used more tokens than the per-answer ceiling"


def test_sarif_locates_rule_file_diagnostics_in_the_rules_file() -> None:
    args, _ = RUNS["lint an overlap"]
    results = run(args, "sarif").data["runs"][0]["results"]
    overlap = [r for r in results if r["ruleId"] == "DECISION_OVERLAP"]
    assert len(overlap) == 1 and overlap[0]["level"] == "error"
    assert {r["level"] for r in results if r is not overlap[0]} == {"warning"}
    location = overlap[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("tests/data/lint/decision_overlap.rules")
    assert location["region"] == {"startLine": 6, "startColumn": 3, "endLine": 6, "endColumn": 30}


def test_a_syntax_error_is_located_in_every_format(tmp_path: Path, junit_schema: Any) -> None:
    broken = tmp_path / "broken.rules"
    broken.write_text('ruleset r version "1"\n\ngate g\n  require 1 => 2\n', encoding="utf-8")
    for command in (
        ["lint", str(broken)],
        ["check", str(PROTOCOL / "accepted"), "--rules", str(broken)],
    ):
        annotations = run(command, "github")
        assert annotations.exit_code == 1, annotations.stdout
        first = annotations.stdout.splitlines()[0]
        assert re.match(rf"::error file={re.escape(str(broken))},line=4,col=\d+,title=", first)
        suite = junit(junit_schema, run(command, "junit").stdout).find("testsuite")
        assert int(suite.get("failures")) + int(suite.get("errors")) == 1


def test_github_annotations_name_file_line_and_column() -> None:
    args, _ = RUNS["check refused"]
    lines = run(args, "github").stdout.splitlines()
    assert (
        f"::error file={PROTOCOL}/refused/answers.jsonl,line=3,col=1,"
        "title=ANSWER_TOO_LONG (answer_within_ceiling)::"
        "an answer used more tokens than the per-answer ceiling [Q3] at /2"
    ) in lines
    assert lines[-1].endswith(": 7 checks, 3 passed, 4 failed (0 vacuous)")


def test_vacuous_rules_are_skipped_unless_strict(tmp_path: Path, junit_schema: Any) -> None:
    bundle = tmp_path / "empty"
    shutil.copytree(PROTOCOL / "accepted", bundle)
    (bundle / "answers.jsonl").write_text("", encoding="utf-8")
    (bundle / "plan.yaml").write_text("questions: []\n", encoding="utf-8")
    args = ["check", str(bundle), "--rules", EVAL_RULES]
    lenient = junit(junit_schema, run(args, "junit").stdout).find("testsuite")
    strict = junit(junit_schema, run([*args, "--strict"], "junit").stdout).find("testsuite")
    assert int(lenient.get("skipped")) > 0
    assert int(strict.get("skipped")) == 0
    assert int(strict.get("failures")) >= int(lenient.get("skipped"))
    warnings = [line for line in run(args, "github").stdout.splitlines() if "VACUOUS" in line]
    assert warnings and all(line.startswith("::warning ") for line in warnings)


def test_a_failing_case_is_a_failure_with_its_diff(tmp_path: Path, junit_schema: Any) -> None:
    folder = shutil.copytree(PROTOCOL, tmp_path / "protocol")
    cases = folder / "eval.cases.yaml"
    text = cases.read_text(encoding="utf-8")
    cases.write_text(text.replace("verdict: MEETS_BAR", "verdict: BELOW_BAR", 1), encoding="utf-8")
    result = run(["test", str(folder)], "junit")
    assert result.exit_code == 1
    suite = junit(junit_schema, result.stdout).find("testsuite")
    failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == [
        "accepted bundle, on the answer ceiling and on the pass-rate bar"
    ]
    failure = failed[0].find("failure")
    assert failure.get("type") == "CASE_FAILED"
    assert 'verdict: expected "BELOW_BAR", observed "MEETS_BAR"' in failure.text


def test_xml_cannot_be_broken_by_control_characters(junit_schema: Any) -> None:
    finding = Diagnostic("CASE_FAILED", "id `a\x01b` & <c>", Location("x\x02.yaml", 1, 1))
    report = CiReport("suite", (Check("n\x00", "g", "fail", (finding,)),), {}, {})
    text = junit_xml(report)
    junit(junit_schema, text)
    assert "a\\x01b" in text


def test_the_pre_commit_hooks_run_real_commands() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    by_id = {hook["id"]: hook for hook in hooks}
    assert sorted(by_id) == ["rulecheck-fmt", "rulecheck-lint", "rulecheck-test"]
    for hook in hooks:
        entry = hook["entry"].split()
        assert entry[0] == "rulecheck"
        help_run = CliRun([entry[1], "--help"])
        assert help_run.exit_code == 0
        for option in (e for e in entry[2:] if e.startswith("--")):
            assert option in help_run.stdout, (hook["id"], option)
