"""`rulecheck test`: rule test cases beside the rules, their coverage and threshold mutants."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from engine.cases.mutate import _literal, literal_step
from engine.syntax import ast
from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "tests" / "data" / "protocol"
CASES = PROTOCOL / "eval.cases.yaml"


def _cases() -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    return data


WRITTEN = len(yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"])


def _write(tmp_path: Path, data: object, name: str = "my.cases.yaml") -> Path:
    """A case file in `tmp_path` that tests the protocol of tests/data/protocol."""
    assert isinstance(data, dict)
    data = dict(data)
    data["rules"] = [str(PROTOCOL / "eval.rules")]
    for case in data["cases"]:
        if "check" in case:
            case["check"] = str(PROTOCOL / case["check"])
        for name, path in case.get("inputs", {}).items():
            case["inputs"][name] = str(PROTOCOL / path)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_protocol_cases_pass_one_line_each_and_the_count_last() -> None:
    before = _digests(PROTOCOL)
    run = CliRun(["test", str(PROTOCOL)])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] == f"{WRITTEN} passed, 0 failed"
    assert len(lines) == WRITTEN + 1 and all(line.startswith("PASS ") for line in lines[:-1])
    assert "eval.cases.yaml:7:5 accepted bundle" in lines[0]
    assert _digests(PROTOCOL) == before  # edits are made in copies, never in the bundles


def test_the_shipped_trial_set_cases_pass() -> None:
    folder = ROOT / "rules" / "tests"
    written = sum(
        len(yaml.safe_load(path.read_text(encoding="utf-8"))["cases"])
        for path in folder.glob("*.cases.yaml")
    )
    run = CliRun(["test", str(folder)])
    assert run.exit_code == 0, run.stdout
    assert run.stdout.splitlines()[-1] == f"{written} passed, 0 failed"


@pytest.mark.parametrize("name", ["distributions", "shadowing", "binding_names"])
def test_the_language_cases_pass(name: str) -> None:
    """Quartiles and `unavailable` (worked by hand), and bound variables shadowing
    declarations, and binding variables of one name in two rules, in tests/data/NAME."""
    folder = ROOT / "tests" / "data" / name
    written = len(yaml.safe_load((folder / f"{name}.cases.yaml").read_text())["cases"])
    run = CliRun(["test", str(folder)])
    assert run.exit_code == 0, run.stdout
    assert run.stdout.splitlines()[-1] == f"{written} passed, 0 failed"


def _distribution_case(tmp_path: Path, tables: dict[str, object]) -> Path:
    folder = ROOT / "tests" / "data" / "distributions"
    case = {
        "name": "a table row",
        "evaluate": "samples",
        "inputs": {"samples": str(folder / "samples.json")},
        "expect": {"tables": tables},
    }
    data = {"rules": [str(folder / "distributions.rules")], "cases": [case]}
    path = tmp_path / "rows.cases.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_table_row_no_row_matches_fails_beside_the_rows_with_its_keys(tmp_path: Path) -> None:
    wanted = {"distribution": [{"group": "two", "median": "2"}]}
    run = CliRun(["test", str(_distribution_case(tmp_path, wanted))])
    run.assert_clean()
    assert run.exit_code == 1
    assert run.stdout.splitlines()[1:4] == [
        "  tables.distribution[0]",
        '    - expected {"group": "two", "median": "2"}',
        '    + observed [{"group": "two", "median": "3/2"}]',
    ]


def test_a_table_column_the_table_lacks_never_matches(tmp_path: Path) -> None:
    wanted = {"distribution": [{"group": "two", "mean": "3/2"}]}
    run = CliRun(["test", str(_distribution_case(tmp_path, wanted))])
    assert run.exit_code == 1
    assert '+ observed [{"group": "two", "mean": "(no such column)"}]' in run.stdout


def test_a_table_count_fails_on_a_row_that_should_not_be_there(tmp_path: Path) -> None:
    wanted = {"distribution": {"count": 5, "rows": [{"group": "two", "median": "3/2"}]}}
    run = CliRun(["test", str(_distribution_case(tmp_path, wanted))])
    assert run.exit_code == 1
    assert run.stdout.splitlines()[1:4] == [
        "  tables.distribution.count",
        "    - expected 5",
        "    + observed 6",
    ]


def test_an_unknown_table_name_is_a_located_usage_error(tmp_path: Path) -> None:
    run = CliRun(["test", str(_distribution_case(tmp_path, {"distributions": [{"n": 1}]}))])
    assert run.exit_code == 2
    assert "CASES_UNKNOWN_NAME" in run.stderr and "`distribution`" in run.stderr


def test_json_is_canonical_and_byte_stable() -> None:
    first = CliRun(["test", str(PROTOCOL), "--format", "json", "--coverage"])
    second = CliRun(["test", str(PROTOCOL), "--format", "json", "--coverage"])
    assert first.exit_code == 0
    assert first.stdout == second.stdout
    assert first.stdout == json.dumps(first.data, sort_keys=True, indent=2) + "\n"
    assert first.data["passed"] == WRITTEN and first.data["failed"] == 0
    kinds = {case["kind"] for case in first.data["cases"]}
    assert kinds == {"check", "evaluate"}


def test_a_wrong_expectation_fails_with_a_diff(tmp_path: Path) -> None:
    data = _cases()
    cases = data["cases"]
    assert isinstance(cases, list)
    cases[0]["expect"]["verdict"] = "BELOW_BAR"
    cases[0]["expect"]["rules"]["total_tokens"] = "fail"
    run = CliRun(["test", str(_write(tmp_path, data))])
    run.assert_clean()
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[-1] == f"{WRITTEN - 1} passed, 1 failed"
    assert lines[0].startswith("FAIL ") and lines[0].endswith(cases[0]["name"])
    assert lines[1:7] == [
        "  verdict",
        '    - expected "BELOW_BAR"',
        '    + observed "MEETS_BAR"',
        "  rules.total_tokens",
        '    - expected "fail"',
        '    + observed "pass"',
    ]


def test_a_wrong_violation_id_fails(tmp_path: Path) -> None:
    data = _cases()
    cases = data["cases"]
    assert isinstance(cases, list)
    cases[1]["expect"]["rules"]["model_pinned"]["violations"][0]["ids"] = ["Q1"]
    run = CliRun(["test", str(_write(tmp_path, data)), "--format", "json"])
    assert run.exit_code == 1
    failed = [c for c in run.data["cases"] if not c["passed"]]
    assert [d["key"] for d in failed[0]["differences"]] == ["rules.model_pinned"]
    assert failed[0]["differences"][0]["observed"] == {
        "violations": [{"code": "WRONG_MODEL", "ids": ["Q2"]}]
    }


def test_a_refusal_where_a_result_is_expected_fails(tmp_path: Path) -> None:
    data = {"cases": [{"name": "x", "check": "missing_answers", "expect": {"passed": True}}]}
    run = CliRun(["test", str(_write(tmp_path, data)), "--format", "json"])
    assert run.exit_code == 1
    difference = run.data["cases"][0]["differences"][0]
    assert difference["key"] == "passed"
    assert difference["observed"]["refused"][0]["code"] == "BUNDLE_FILE_MISSING"


def test_an_expected_refusal_that_does_not_happen_fails(tmp_path: Path) -> None:
    data = {
        "cases": [
            {"name": "x", "check": "accepted", "expect": {"diagnostics": [{"code": "ATTR_TYPE"}]}}
        ]
    }
    run = CliRun(["test", str(_write(tmp_path, data))])
    assert run.exit_code == 1
    assert "FAIL" in run.stdout and "1 failed" in run.stdout


def test_a_value_of_the_wrong_type_is_a_located_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.cases.yaml"
    path.write_text(
        "cases:\n  - name: x\n    check: accepted\n    strict: yes please\n"
        "    expect: {passed: true}\n",
        encoding="utf-8",
    )
    run = CliRun(["test", str(path), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    [diagnostic] = run.data["diagnostics"]
    assert diagnostic["code"] == "CASES_SCHEMA"
    assert diagnostic["location"] == {
        "file": str(path),
        "line": 4,
        "column": 13,
        "pointer": "/cases/0/strict",
    }
    text = CliRun(["test", str(path)])
    assert text.exit_code == 2
    assert f"{path}:4:13 (/cases/0/strict): error[CASES_SCHEMA]: " in text.stderr
    assert "Traceback" not in text.stderr


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        (
            "cases:\n  - name: x\n    check: accepted\n    expect: {passd: true}\n",
            "CASES_SCHEMA",
            4,
        ),
        ("cases:\n  - name: x\n    expect: {passed: true}\n", "CASES_SCHEMA", 2),
        ("cases:\n  - name: x\n    check: [accepted\n", "CASES_INVALID_YAML", 4),
        (
            "cases:\n  - name: x\n    check: accepted\n    expect:\n"
            "      rules: {pass_rate: pass}\n",
            "CASES_UNKNOWN_NAME",
            5,
        ),
        (
            "cases:\n  - name: x\n    check: accepted\n    edits:\n"
            "      - {file: answers.jsonl, pointer: /9/tokens, value: 1}\n"
            "    expect: {passed: true}\n",
            "CASES_EDIT",
            5,
        ),
    ],
    ids=["unknown_key", "neither_check_nor_evaluate", "invalid_yaml", "unknown_rule", "bad_edit"],
)
def test_unreadable_case_files_are_located_usage_errors(
    tmp_path: Path, text: str, code: str, line: int
) -> None:
    path = tmp_path / "bad.cases.yaml"
    path.write_text(
        f"rules: [{PROTOCOL / 'eval.rules'}]\n"
        + text.replace("check: accepted", f"check: {PROTOCOL / 'accepted'}"),
        encoding="utf-8",
    )
    run = CliRun(["test", str(path), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2, run.stdout
    diagnostic = run.data["diagnostics"][0]
    assert diagnostic["code"] == code
    assert diagnostic["location"]["line"] == line + 1  # the `rules:` line comes first


def test_an_unknown_rule_name_gets_a_suggestion(tmp_path: Path) -> None:
    data = {
        "cases": [{"name": "x", "check": "accepted", "expect": {"rules": {"pass_rate": "pass"}}}]
    }
    run = CliRun(["test", str(_write(tmp_path, data)), "--format", "json"])
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["hint"] == "did you mean `pass_rate_met`?"


def test_a_folder_without_case_files_is_a_usage_error(tmp_path: Path) -> None:
    run = CliRun(["test", str(tmp_path), "--format", "json"])
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "FILE_UNREADABLE"


def test_coverage_lists_what_no_case_reaches(tmp_path: Path) -> None:
    data = _cases()
    cases = data["cases"]
    assert isinstance(cases, list)
    data["cases"] = cases[:1]  # the accepted bundle only
    run = CliRun(["test", str(_write(tmp_path, data)), "--coverage", "--format", "json"])
    assert run.exit_code == 0
    [cover] = run.data["coverage"]
    assert cover["figures"] == {
        "rules": 6,
        "rules_reached": 6,
        "rules_pass_and_fail": 0,
        "outcomes": 18,
        "outcomes_reached": 6,
        "rows": 3,
        "rows_reached": 1,
    }
    rows = {r["verdict"]: r["reached"] for r in cover["decision_rows"]}
    assert rows == {"INVALID": False, "MEETS_BAR": True, "BELOW_BAR": False}
    text = CliRun(["test", str(_write(tmp_path, data)), "--coverage"]).stdout
    assert "  not reached by any case:\n" in text
    assert "    decision verdict row 3 => BELOW_BAR (" in text
    assert text.splitlines()[-1] == "1 passed, 0 failed"


def test_full_coverage_of_the_protocol_cases() -> None:
    run = CliRun(["test", str(PROTOCOL), "--coverage", "--format", "json"])
    figures = run.data["coverage"][0]["figures"]
    assert figures["rules_pass_and_fail"] == 6 and figures["rows_reached"] == 3


def test_every_threshold_mutant_of_the_protocol_is_caught() -> None:
    before = _digests(PROTOCOL)
    run = CliRun(["test", str(PROTOCOL), "--mutate", "--format", "json"])
    assert run.exit_code == 0, run.stdout
    [found] = run.data["mutations"]
    assert found["figures"] == {
        "mutants": 9,
        "caught": 9,
        "survived": 0,
        "unreached": 0,
        "invalid": 0,
    }
    replaced = {(m["original"], m["replacement"]) for m in found["mutants"]}
    assert (
        replaced
        == {
            ("2_000 tokens", "1999 tokens"),
            ("2_000 tokens", "2001 tokens"),
            ("5_000 tokens", "4999 tokens"),
            ("5_000 tokens", "5001 tokens"),
            ("80 %", "79 %"),
            ("80 %", "81 %"),
            ("<=", "<"),
            (">=", ">"),
        }
        and len(found["mutants"]) == 9
    )  # two `<=`: the answer ceiling and the budget
    assert _digests(PROTOCOL) == before  # mutants live in memory only


def test_a_mutant_no_case_catches_survives_and_fails_the_run(tmp_path: Path) -> None:
    data = _cases()
    cases = data["cases"]
    assert isinstance(cases, list)
    data["cases"] = [c for c in cases if "just below" not in c["name"]]
    run = CliRun(["test", str(_write(tmp_path, data)), "--mutate"])
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[-1] == f"{WRITTEN - 1} passed, 0 failed"
    rules = PROTOCOL / "eval.rules"
    assert f"  SURVIVED {rules}:12:23 `80 %` -> `79 %` in min_pass_rate" in lines
    assert sum(line.startswith("  SURVIVED") for line in lines) == 1


def test_test_lock_refuses_rules_that_differ() -> None:
    same = CliRun(["test", str(PROTOCOL), "--lock", str(PROTOCOL / "eval.lock")])
    assert same.exit_code == 0
    other = CliRun(
        ["test", str(PROTOCOL), "--lock", str(PROTOCOL / "looser.lock"), "--format", "json"]
    )
    assert other.exit_code == 1
    assert other.data["diagnostics"][0]["code"] == "LOCK_MISMATCH"
    assert "2_500 tokens -> 2_000 tokens: stricter" in other.data["diagnostics"][0]["message"]


@pytest.mark.parametrize(
    ("text", "unit", "step"),
    [
        ("0.80", None, Fraction(1, 100)),
        ("8e-1", None, Fraction(1, 10)),
        ("90_000", "tokens", Fraction(1)),
        ("2", "Mtokens", Fraction(1)),
        ("4", "min", Fraction(1)),
        ("1.5", "h", Fraction(360)),
        ("1800.5", "s", Fraction(1, 10)),
        ("15", "%", Fraction(1, 100)),
        ("12.5", "%", Fraction(1, 1000)),
        ("30", "USD", Fraction(1, 100)),
        ("0.525", "USD", Fraction(1, 1000)),
    ],
)
def test_the_step_of_each_unit(text: str, unit: str | None, step: Fraction) -> None:
    number = ast.Number(Fraction(text.replace("_", "")), unit, text)
    assert literal_step(number) == step


def test_a_moved_literal_keeps_its_unit_where_it_can() -> None:
    assert _literal(Fraction(241), "min") == "241 s"
    assert _literal(Fraction(300), "min") == "5 min"
    assert _literal(Fraction(2_000_001), "Mtokens") == "2.000001 Mtokens"
    assert _literal(Fraction(79, 100), "%") == "79 %"
    assert _literal(Fraction(81, 100), None) == "0.81"


def test_an_edit_of_one_record_leaves_every_other_line_as_it_was(tmp_path: Path) -> None:
    # A declared edit changes what it names and nothing else: the other records of a JSON
    # Lines file keep their exact bytes, so their hashes (and seals) still hold.
    from engine.cases.files import read_case_file
    from engine.cases.run import prepare

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    original = b'{"id": "E1",  "n": 1}\r\n{"id":"E2","n":2}\n{ "id": "E3", "n": 3 }\n'
    (bundle / "events.jsonl").write_bytes(original)
    cases = tmp_path / "my.cases.yaml"
    cases.write_text(
        f"rules: [{PROTOCOL / 'eval.rules'}]\n"
        "cases:\n  - name: edit E2\n    check: bundle\n    edits:\n"
        "      - {file: events.jsonl, pointer: /1/n, value: 20}\n"
        "    expect: {passed: false}\n",
        encoding="utf-8",
    )
    [case] = read_case_file(cases).cases
    prepared = prepare(case, tmp_path / "scratch")
    assert prepared.bundle is not None
    edited = (prepared.bundle / "events.jsonl").read_bytes().split(b"\n")
    assert edited == [
        b'{"id": "E1",  "n": 1}\r',  # its CRLF line end kept too
        b'{"id":"E2","n":20}',
        b'{ "id": "E3", "n": 3 }',
        b"",
    ]
    assert (bundle / "events.jsonl").read_bytes() == original  # the original is untouched


def test_violated_names_exactly_the_link_rules_with_violations(tmp_path: Path) -> None:
    campaign = ROOT / "controls" / "campaign"
    cases = tmp_path / "my.cases.yaml"
    cases.write_text(
        yaml.safe_dump(
            {
                "rules": [str(ROOT / "rules")],
                "cases": [
                    {
                        "name": "an edit without a new seal breaks the seal too",
                        "check": str(campaign),
                        "edits": [
                            {"file": "requests.jsonl", "pointer": "/4/ordinary_calls", "value": 3}
                        ],
                        "expect": {"violated": ["fixed_evidence_without_tools"]},
                    },
                    {
                        "name": "sealed again, only the edit itself remains",
                        "check": str(campaign),
                        "edits": [
                            {"file": "requests.jsonl", "pointer": "/4/ordinary_calls", "value": 3}
                        ],
                        "reseal": True,
                        "expect": {"violated": ["fixed_evidence_without_tools"]},
                    },
                ],
            },
            sort_keys=False,
        ),
        encoding="utf-8",
    )
    run = CliRun(["test", str(cases)])
    assert run.exit_code == 1
    assert run.stdout.splitlines()[-1] == "1 passed, 1 failed"
    assert "FAIL" in run.stdout.splitlines()[0] and "+ observed" in run.stdout


@pytest.mark.parametrize(
    "edit",
    [
        {"file": "answers.jsonl", "pointer": "/0/n", "value": 1, "value_of": {"file_size": "x"}},
        {
            "file": "answers.jsonl",
            "pointer": "/0/n",
            "value_of": {"file_sha256": "x", "file_size": "y"},
        },
    ],
    ids=["value_and_value_of", "two_measures"],
)
def test_an_edit_says_its_value_once(edit: dict[str, object], tmp_path: Path) -> None:
    data = {
        "cases": [{"name": "one", "check": "accepted", "edits": [edit], "expect": {"passed": True}}]
    }
    run = CliRun(["test", str(_write(tmp_path, data)), "--format", "json"])
    assert run.exit_code == 2
    assert {d["code"] for d in run.data["diagnostics"]} == {"CASES_SCHEMA"}


@pytest.mark.parametrize(
    ("edit", "code", "message"),
    [
        ({"file": "answers.jsonl", "text": '"tokens": 7', "replace": "x"}, "CASES_EDIT", "nowhere"),
        ({"file": "answers.jsonl", "text": '"model"', "replace": "x"}, "CASES_EDIT", "5 times"),
        (
            {"file": "answers.jsonl", "text": "Q1", "replace": "Q9", "pointer": "/0"},
            "CASES_SCHEMA",
            "",
        ),
        ({"file": "answers.jsonl", "text": "Q1"}, "CASES_SCHEMA", "go together"),
        ({"file": "answers.jsonl", "value": 1}, "CASES_SCHEMA", "`pointer:`"),
    ],
    ids=["found_nowhere", "found_five_times", "text_and_pointer", "no_replace", "no_pointer"],
)
def test_a_text_edit_replaces_exactly_one_occurrence(
    edit: dict[str, object], code: str, message: str, tmp_path: Path
) -> None:
    data = {
        "cases": [{"name": "one", "check": "accepted", "edits": [edit], "expect": {"passed": True}}]
    }
    run = CliRun(["test", str(_write(tmp_path, data)), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    assert {d["code"] for d in run.data["diagnostics"]} == {code}
    assert any(message in d["message"] for d in run.data["diagnostics"])
    assert run.data["diagnostics"][0]["location"]["pointer"].startswith("/cases/0/edits/0")


@pytest.mark.parametrize("named", ["nowhere.json", "../eval.rules"], ids=["absent", "outside"])
def test_value_of_a_file_the_bundle_lacks_is_a_located_usage_error(
    named: str, tmp_path: Path
) -> None:
    edit = {"file": "answers.jsonl", "pointer": "/0/tokens", "value_of": {"file_size": named}}
    data = {
        "cases": [{"name": "one", "check": "accepted", "edits": [edit], "expect": {"passed": True}}]
    }
    run = CliRun(["test", str(_write(tmp_path, data)), "--format", "json"])
    assert run.exit_code == 2
    [diagnostic] = run.data["diagnostics"]
    assert diagnostic["code"] == "CASES_EDIT"
    assert diagnostic["location"]["pointer"] == "/cases/0/edits/0"


def _ceiling_loosened(
    changed: list[str], text: str = "const max_answer_tokens = 2_000 tokens"
) -> dict[str, object]:
    """One token over the answer ceiling, judged by the rules with the ceiling one token
    higher (a mutation of the rule file, applied in memory)."""
    rule_edit = {
        "file": str(PROTOCOL / "eval.rules"),
        "text": text,
        "replace": "const max_answer_tokens = 2_001 tokens",
    }
    return {
        "cases": [
            {
                "name": "one token over the ceiling, the ceiling moved",
                "check": "accepted",
                "rule_edits": [rule_edit],
                "edits": [{"file": "answers.jsonl", "pointer": "/2/tokens", "value": 2001}],
                "expect": {
                    "verdict": "MEETS_BAR",
                    "changed": changed,
                    "rules": {"answer_within_ceiling": "pass"},
                },
            }
        ]
    }


def test_a_rule_edit_runs_its_case_against_the_edited_rules_and_names_the_change(
    tmp_path: Path,
) -> None:
    before = _digests(PROTOCOL)
    run = CliRun(["test", str(_write(tmp_path, _ceiling_loosened(["max_answer_tokens"])))])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout
    assert _digests(PROTOCOL) == before  # the rule file is never written
    # the declaration the edit changes, as `rulecheck diff` names it, is an expectation
    wrong = CliRun(["test", str(_write(tmp_path, _ceiling_loosened(["answer_within_ceiling"])))])
    assert wrong.exit_code == 1
    assert "changed" in wrong.stdout and "max_answer_tokens" in wrong.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [("const max_answer_tokens = 9 tokens", "found nowhere"), ("tokens", "times")],
    ids=["nowhere", "many_times"],
)
def test_a_rule_edit_replaces_exactly_one_occurrence(
    text: str, message: str, tmp_path: Path
) -> None:
    run = CliRun(["test", str(_write(tmp_path, _ceiling_loosened([], text))), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 2
    [diagnostic] = run.data["diagnostics"]
    assert diagnostic["code"] == "CASES_EDIT"
    assert message in diagnostic["message"]
    assert diagnostic["location"]["pointer"] == "/cases/0/rule_edits/0"


def test_a_rule_edit_of_a_file_outside_the_cases_rules_is_a_usage_error(tmp_path: Path) -> None:
    data = _ceiling_loosened([])
    case = data["cases"][0]  # type: ignore[index]
    other = tmp_path / "other.rules"
    other.write_text("const max_answer_tokens = 2_000 tokens\n", encoding="utf-8")
    case["rule_edits"][0]["file"] = str(other)
    run = CliRun(["test", str(_write(tmp_path, data)), "--format", "json"])
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "CASES_EDIT"
    assert "no rule file the case runs against" in run.data["diagnostics"][0]["message"]
