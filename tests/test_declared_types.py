"""Data is checked against its declaration: no silent coercion, no silent loss.

Every `attr` type is enforced when a graph is built (`ATTR_TYPE`), a `records` pointer that
finds nothing is an error unless the clause is `optional` (`RECORDS_NOT_FOUND`), a record
that is not an object is an error (`RECORDS_TYPE`), and an unquoted YAML scalar that YAML
reads as a boolean, number or date is no text. Each case runs the CLI: `rulecheck evaluate`
over a small protocol written here, and `rulecheck answer` and `rulecheck admit` over the
shipped controls with one kind declaration edited.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_run import CliRun, copy_shipped_rules

ROOT = Path(__file__).resolve().parents[1]
CONTROLS = ROOT / "controls"

TYPED = """ruleset typed version "1"

# Runs of a tool, and one summary: an attribute of every type the language has.
kind run of typed
  records log "/runs"
  key id
  attr passed: bool
  attr tokens: tokens
  attr score: number
  attr label: text
  attr tags: list
  attr parent: run
  attr extra: any
  attr cost: USD as text

kind summary of typed
  records log "/summary"
  attr total: USD as text

gate runs_recorded require count(r in run) >= 1

table runs
  for r in run
  column tokens = r.tokens
  column cost = r.cost
  column passed = r.passed

table summaries
  for s in summary
  column total = s.total
"""


def _run(**fields: Any) -> dict[str, Any]:
    run = {
        "id": "r1",
        "passed": True,
        "tokens": 40000,
        "score": 0.5,
        "label": "first",
        "tags": ["fast", "cheap"],
        "parent": None,
        "extra": {"anything": [1, "x"]},
        "cost": "0.52",
    }
    run.update(fields)
    return run


def _log(*runs: dict[str, Any], summary: Any = None) -> dict[str, Any]:
    return {"runs": list(runs) or [_run()], "summary": summary or {"total": "0.52"}}


def evaluate(tmp_path: Path, log: Any, rules: str = TYPED, name: str = "log.json") -> CliRun:
    """`rulecheck evaluate typed --input log=FILE` with `log` written as JSON (or as the
    text given, for YAML and JSON Lines)."""
    (tmp_path / "typed.rules").write_text(rules, encoding="utf-8")
    path = tmp_path / name
    text = log if isinstance(log, str) else json.dumps(log, indent=2)
    path.write_text(text, encoding="utf-8")
    graph = rules.split("kind ", 2)[1].split("\n", 1)[0].split(" of ")[1]
    run = CliRun(
        [
            "evaluate",
            graph,
            "--rules",
            str(tmp_path / "typed.rules"),
            f"--input=log={path}",
            "--format",
            "json",
        ]
    )
    run.assert_clean()
    return run


def diagnostics(run: CliRun) -> list[dict[str, Any]]:
    assert run.exit_code == 1, run.stdout
    found: list[dict[str, Any]] = run.data["diagnostics"]
    return found


def only(run: CliRun) -> dict[str, Any]:
    [diagnostic] = diagnostics(run)
    return diagnostic


def position(path: Path, needle: str) -> tuple[int, int]:
    """The 1-based line and column of the first `needle` in a file."""
    text = path.read_text(encoding="utf-8")
    before = text[: text.index(needle)]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


# ---- rulecheck evaluate: every type ------------------------------------------------------------


def test_values_of_every_declared_type_pass_and_numbers_stay_exact(tmp_path: Path) -> None:
    second = {"id": "r2", "parent": "r1", "cost": "-1.25"}  # absent attributes are null
    run = evaluate(tmp_path, _log(_run(), second))
    assert run.exit_code == 0, run.stdout
    tables = {table["name"]: table["rows"] for table in run.data["tables"]}
    assert tables["runs"] == [
        {"ids": ["r1"], "values": [40000, "13/25", True]},
        {"ids": ["r2"], "values": [None, "-5/4", None]},
    ]
    assert tables["summaries"] == [{"ids": ["/summary"], "values": ["13/25"]}]


def test_null_is_allowed_for_every_type(tmp_path: Path) -> None:
    nulls = {name: None for name in _run() if name != "id"}
    run = evaluate(tmp_path, _log(_run(**nulls), summary={"total": None}))
    assert run.exit_code == 0, run.stdout


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("passed", "yes", '`passed` of kind `run` must be a boolean, found text `"yes"`'),
        ("passed", 1, "`passed` of kind `run` must be a boolean, found a number `1`"),
        (
            "tokens",
            "40000",
            '`tokens` of kind `run` must be a number in `tokens`, found text `"40000"`',
        ),
        (
            "tokens",
            True,
            "`tokens` of kind `run` must be a number in `tokens`, found a boolean `true`",
        ),
        ("score", [1], "`score` of kind `run` must be a number, found a list of 1 item"),
        ("label", 42, "`label` of kind `run` must be text, found a number `42`"),
        ("label", {"a": 1}, "`label` of kind `run` must be text, found an object"),
        ("tags", "fast", '`tags` of kind `run` must be a list of texts, found text `"fast"`'),
        (
            "parent",
            7,
            "`parent` of kind `run` must be the id of a `run` (text), found a number `7`",
        ),
        (
            "cost",
            0.52,
            "`cost` of kind `run` must be a decimal written as text in `USD` (`USD as text`), "
            'such as `"0.52"`, found a number `0.52`',
        ),
        (
            "cost",
            "5e-1",
            "`cost` of kind `run` must be a decimal written as text in `USD` (`USD as text`), "
            'such as `"0.52"`, found text `"5e-1"`',
        ),
    ],
)
def test_a_value_of_another_type_is_refused_and_located(
    tmp_path: Path, field: str, value: Any, message: str
) -> None:
    run = evaluate(tmp_path, _log(_run(**{field: value})))
    diagnostic = only(run)
    assert diagnostic["code"] == "ATTR_TYPE"
    assert diagnostic["message"] == message
    assert diagnostic["ids"] == ["r1"]
    path = tmp_path / "log.json"
    line, column = position(path, f'"{field}": ')
    assert diagnostic["location"] == {
        "file": str(path),
        "line": line,
        "column": column + len(f'"{field}": '),
        "pointer": f"/runs/0/{field}",
    }


def test_the_hints_say_how_a_number_is_written(tmp_path: Path) -> None:
    run = evaluate(tmp_path, _log(_run(tokens="40000", cost=1)))
    hints = {d["location"]["pointer"]: d.get("hint") for d in diagnostics(run)}
    assert hints == {
        "/runs/0/tokens": "the data writes a decimal as text: declare "
        "`attr tokens: tokens as text` if that is how it is written",
        "/runs/0/cost": '`USD as text` values are decimals written as text, such as `"0.52"`',
    }


def test_an_item_of_a_list_that_is_not_text_is_located_at_the_item(tmp_path: Path) -> None:
    run = evaluate(tmp_path, _log(_run(tags=["fast", 3, None])))
    found = [(d["location"]["pointer"], d["message"]) for d in diagnostics(run)]
    assert found == [
        ("/runs/0/tags/1", "item 1 of `tags` of kind `run` must be text, found a number `3`"),
        ("/runs/0/tags/2", "item 2 of `tags` of kind `run` must be text, found null"),
    ]


def test_every_problem_is_reported_not_only_the_first(tmp_path: Path) -> None:
    log = _log(_run(passed="no"), _run(id="r2", label=False), summary={"total": 12})
    pointers = [d["location"]["pointer"] for d in diagnostics(evaluate(tmp_path, log))]
    assert pointers == ["/runs/0/passed", "/runs/1/label", "/summary/total"]


# ---- rulecheck evaluate: records -----------------------------------------------------------


def test_a_records_pointer_that_finds_nothing_is_refused(tmp_path: Path) -> None:
    log = _log()
    del log["summary"]
    diagnostic = only(evaluate(tmp_path, log))
    assert diagnostic["code"] == "RECORDS_NOT_FOUND"
    assert diagnostic["message"] == ("`/summary` of document `log` (kind `summary`) finds nothing")
    assert diagnostic["hint"] == (
        'declare `records log "/summary" optional` if the data may lack it'
    )
    assert diagnostic["location"] == {
        "file": str(tmp_path / "log.json"),
        "line": 1,
        "column": 1,
        "pointer": "",
    }


def test_a_null_records_target_is_refused_too(tmp_path: Path) -> None:
    log = {**_log(), "summary": None}
    diagnostic = only(evaluate(tmp_path, log))
    assert diagnostic["code"] == "RECORDS_NOT_FOUND"
    assert diagnostic["message"] == "`/summary` of document `log` (kind `summary`) is null"


@pytest.mark.parametrize("summary", ["absent", None])
def test_an_optional_records_clause_may_find_nothing(tmp_path: Path, summary: Any) -> None:
    log: dict[str, Any] = _log()
    if summary == "absent":
        del log["summary"]
    else:
        log["summary"] = summary
    rules = TYPED.replace('records log "/summary"', 'records log "/summary" optional')
    run = evaluate(tmp_path, log, rules)
    assert run.exit_code == 0, run.stdout
    assert {t["name"]: t["rows"] for t in run.data["tables"]}["summaries"] == []


def test_records_that_are_not_objects_are_refused(tmp_path: Path) -> None:
    log = {"runs": [_run(), "r2", 3], "summary": 7}
    found = [
        (d["code"], d["location"]["pointer"], d["message"])
        for d in diagnostics(evaluate(tmp_path, log))
    ]
    assert found == [
        (
            "RECORDS_TYPE",
            "/runs/1",
            "record 1 of `/runs` of document `log` (kind `run`) must be an object, "
            'found text `"r2"`',
        ),
        (
            "RECORDS_TYPE",
            "/runs/2",
            "record 2 of `/runs` of document `log` (kind `run`) must be an object, "
            "found a number `3`",
        ),
        (
            "RECORDS_TYPE",
            "/summary",
            "`/summary` of document `log` (kind `summary`) must be an object or a list of "
            "objects, found a number `7`",
        ),
    ]


def test_the_pointer_slash_finds_nothing_in_a_json_lines_document(tmp_path: Path) -> None:
    rules = 'ruleset lines version "1"\nkind entry of lines\n  records log "/"\n  attr n: number\n'
    rules += "gate some require count(e in entry) >= 0\n"
    run = evaluate(tmp_path, '{"n": 1}\n{"n": 2}\n', rules, "log.jsonl")
    diagnostic = only(run)
    assert diagnostic["code"] == "RECORDS_NOT_FOUND"
    assert diagnostic["message"] == "`/` of document `log` (kind `entry`) finds nothing"
    assert diagnostic["hint"] == (
        'a pointer `/` names the member `""` of an object: write `""` for the whole document'
    )
    assert diagnostic["location"]["file"] == str(tmp_path / "log.jsonl")
    fixed = evaluate(tmp_path, '{"n": 1}\n{"n": 2}\n', rules.replace('"/"', '""'), "log.jsonl")
    assert fixed.exit_code == 0, fixed.stdout


def test_a_json_lines_problem_is_located_at_its_line(tmp_path: Path) -> None:
    rules = 'ruleset lines version "1"\nkind entry of lines\n  records log ""\n  attr n: number\n'
    rules += "gate some require count(e in entry) >= 0\n"
    diagnostic = only(evaluate(tmp_path, '{"n": 1}\n\n{"n": "2"}\n', rules, "log.jsonl"))
    assert diagnostic["code"] == "ATTR_TYPE"
    assert diagnostic["location"] == {
        "file": str(tmp_path / "log.jsonl"),
        "line": 3,
        "column": 7,
        "pointer": "/1/n",
    }


# ---- rulecheck evaluate: YAML's implicit types ---------------------------------------------------


@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("no", "boolean"),
        ("yes", "boolean"),
        ("on", "boolean"),
        ("off", "boolean"),
        ("2024-01-01", "date"),
        ("2024-01-01T10:00:00Z", "date"),
        ("0755", "number"),
        ("1.5", "number"),
    ],
)
def test_an_unquoted_yaml_scalar_of_another_type_is_no_text(
    tmp_path: Path, written: str, read_as: str
) -> None:
    yaml = f"runs:\n  - id: r1\n    label: {written}\n    tags: [ok, {written}]\nsummary: {{}}\n"
    found = diagnostics(evaluate(tmp_path, yaml, name="log.yaml"))
    hint = f'YAML reads the unquoted `{written}` as a {read_as}: write `"{written}"` for the text'
    assert [(d["code"], d["location"]["pointer"], d["message"], d["hint"]) for d in found] == [
        (
            "ATTR_TYPE",
            "/runs/0/label",
            f"`label` of kind `run` must be text, found a {read_as} `{written}`",
            hint,
        ),
        (
            "ATTR_TYPE",
            "/runs/0/tags/1",
            f"item 1 of `tags` of kind `run` must be text, found a {read_as} `{written}`",
            hint,
        ),
    ]
    assert (found[0]["location"]["line"], found[0]["location"]["column"]) == (3, 12)
    quoted = yaml.replace(f" {written}", f" '{written}'")
    assert evaluate(tmp_path, quoted, name="log.yaml").exit_code == 0


def test_a_yaml_date_by_explicit_tag_is_refused_without_a_crash(tmp_path: Path) -> None:
    yaml = "runs:\n  - id: r1\n    label: !!timestamp 2024-01-01\nsummary: {}\n"
    diagnostic = only(evaluate(tmp_path, yaml, name="log.yaml"))
    assert diagnostic["message"] == (
        "`label` of kind `run` must be text, found a date `2024-01-01`"
    )
    assert "hint" not in diagnostic  # the tag says what the author meant
    tagged = yaml.replace("!!timestamp", "!!str")
    assert evaluate(tmp_path, tagged, name="log.yaml").exit_code == 0


def test_a_yaml_number_for_decimal_text_says_to_quote_it(tmp_path: Path) -> None:
    yaml = "runs:\n  - id: r1\n    cost: 0.52\nsummary: {}\n"
    diagnostic = only(evaluate(tmp_path, yaml, name="log.yaml"))
    assert diagnostic["hint"] == (
        'YAML reads the unquoted `0.52` as a number: write `"0.52"` for the text'
    )


# ---- rulecheck answer: findings of that answer ---------------------------------------------------


def shipped_rules(tmp_path: Path, file: str, old: str, new: str) -> Path:
    """A copy of the shipped rules with one edit in one file."""
    rules = copy_shipped_rules(tmp_path / "rules")
    path = rules / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return rules


def answer(rules: Path, role: str) -> CliRun:
    folder = CONTROLS / "answer"
    run = CliRun(
        [
            "answer",
            str(folder / f"answer_{role}.json"),
            "--packet",
            str(folder / "packet.json"),
            "--role",
            role,
            "--source",
            str(folder / "source"),
            "--rules",
            str(rules),
            "--format",
            "json",
        ]
    )
    run.assert_clean()
    return run


def test_an_answer_whose_packet_is_not_as_declared_gets_located_findings(tmp_path: Path) -> None:
    declared = "  attr packet_id: text\n"
    rules = shipped_rules(
        tmp_path,
        "000_answer_graph.rules",
        declared,
        declared + "  attr repository: number\n  attr task_id: bool\n",
    )
    run = answer(rules, "D")
    assert run.exit_code == 1
    assert run.data["rules_evaluated"] == 0  # no link rule reads a graph not as declared
    packet = CONTROLS / "answer" / "packet.json"
    found = []
    for finding in run.data["findings"]:
        assert finding["file"] == str(packet)
        found.append((finding["code"], finding["pointer"], finding["line"], finding["column"]))
    assert found == [
        ("ATTR_TYPE", "/task_id", 3, 14),
        ("ATTR_TYPE", "/repository", 4, 17),
    ]
    assert run.data["findings"][1]["message"] == (
        '`repository` of kind `packet` must be a number, found text `"synthetic/ttl-cache"`'
    )


def test_an_answer_without_a_records_target_that_is_not_optional(tmp_path: Path) -> None:
    declared = 'records answer "/reconciliation" optional\n'
    rules = shipped_rules(
        tmp_path, "000_answer_graph.rules", declared, 'records answer "/reconciliation"\n'
    )
    run = answer(rules, "D")
    assert run.exit_code == 1
    [finding] = run.data["findings"]
    assert finding["code"] == "RECORDS_NOT_FOUND"
    assert finding["message"] == (
        "`/reconciliation` of document `answer` (kind `reconciliation`) is null"
    )
    line, _ = position(CONTROLS / "answer" / "answer_D.json", '"reconciliation"')
    assert (finding["pointer"], finding["line"]) == ("/reconciliation", line)
    assert answer(ROOT / "rules", "D").exit_code == 0  # the shipped clause is optional


# ---- rulecheck admit: the campaign is refused ------------------------------------------------


def admit(rules: Path) -> CliRun:
    run = CliRun(["admit", str(CONTROLS / "campaign"), "--rules", str(rules), "--format", "json"])
    run.assert_clean()
    return run


def test_money_as_decimal_text_must_be_declared_so(tmp_path: Path) -> None:
    rules = shipped_rules(
        tmp_path,
        "000_campaign_graph.rules",
        "attr reserved_usd: USD as text",
        "attr reserved_usd: USD",
    )
    found = diagnostics(admit(rules))
    assert {d["code"] for d in found} == {"ATTR_TYPE"}
    requests = (CONTROLS / "campaign" / "requests.jsonl").read_text(encoding="utf-8")
    assert len(found) == requests.count('"reserved_usd":"')
    first = found[0]
    line_text = requests.split("\n")[0]
    assert first["location"] == {
        "file": str(CONTROLS / "campaign" / "requests.jsonl"),
        "line": 1,
        "column": line_text.index('"reserved_usd":') + len('"reserved_usd":') + 1,
        "pointer": "/0/reserved_usd",
    }
    assert first["message"] == (
        '`reserved_usd` of kind `request` must be a number in `USD`, found text `"0.52"`'
    )


def test_a_campaign_yaml_problem_is_located_in_its_file(tmp_path: Path) -> None:
    declared = "  attr fast_mode: bool\n"
    rules = shipped_rules(
        tmp_path, "000_campaign_graph.rules", declared, declared + "  attr sampling: text\n"
    )
    diagnostic = only(admit(rules))
    assert diagnostic["message"] == "`sampling` of kind `model` must be text, found an object"
    manifest = CONTROLS / "campaign" / "manifest.yaml"
    line, _ = position(manifest, "  sampling:")
    assert diagnostic["location"] == {
        "file": str(manifest),
        "line": line + 1,  # a mapping starts at its first key
        "column": 5,
        "pointer": "/model/sampling",
    }


def test_a_truth_problem_is_located_in_the_truth_file_of_its_task(tmp_path: Path) -> None:
    declared = "  attr answerable: bool\n"
    rules = shipped_rules(
        tmp_path, "000_campaign_graph.rules", declared, declared + "  attr text: number\n"
    )
    found = diagnostics(admit(rules))
    assert {d["code"] for d in found} == {"ATTR_TYPE"}
    truth = CONTROLS / "campaign" / "truth"
    assert len(found) == sum(
        path.read_text(encoding="utf-8").count("- obligation_id:") for path in truth.glob("*.yaml")
    )
    second = [d for d in found if d["location"]["file"] == str(truth / "T2.yaml")][1]
    text = (truth / "T2.yaml").read_text(encoding="utf-8")
    line = text[: text.index("  text:", text.index("T2-O2"))].count("\n") + 1
    assert second["location"] == {
        "file": str(truth / "T2.yaml"),
        "line": line,
        "column": 9,
        "pointer": "/obligations/1/text",
    }


def test_a_missing_campaign_records_target_is_refused(tmp_path: Path) -> None:
    rules = shipped_rules(
        tmp_path,
        "000_campaign_graph.rules",
        'records manifest "/runtime"',
        'records manifest "/runtim"',
    )
    diagnostic = only(admit(rules))
    assert diagnostic["code"] == "RECORDS_NOT_FOUND"
    assert (
        diagnostic["message"] == "`/runtim` of document `manifest` (kind `runtime`) finds nothing"
    )
    assert diagnostic["location"]["file"] == str(CONTROLS / "campaign" / "manifest.yaml")
