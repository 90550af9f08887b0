"""`rulecheck lint`: every error class, with its exact message and location, through the CLI.

Each `tests/data/lint/NAME.rules` holds exactly one error (the row of CASES that names it).
The JSON output pins code, message, file, line, column and hint; the text output must show
`file:line:col: error[CODE]: message`, the source line and a caret under the column.
Most runs go through click's CliRunner (fast, in process); `test_cli_rules.py` runs a few
real subprocesses.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.cli import main
from engine.report.diagnostics import EXCERPT_WIDTH

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "lint"


@dataclass(frozen=True)
class Case:
    """One lint error class: the data file that shows it and the diagnostic it must give."""

    file: str
    code: str
    message: str  # `{path}` stands for the rule file's path
    line: int
    column: int
    hint: str | None = None
    severity: str = "error"  # a warning is reported but leaves the rules usable (exit 0)


# Warnings about declarations that never matter: most files here have some, and each
# case below is about something else, so they are left out unless the case names one.
USAGE_CODES = frozenset(
    {
        "UNUSED_CONST",
        "UNUSED_METRIC",
        "UNUSED_CODE",
        "GATE_UNREAD",
        "RULE_RUNS_NOWHERE",
        "QUADRATIC_SCAN",
        "LINK_UNGATED",
    }
)

CASES = (
    Case(
        "transition_reopened",
        "TRANSITION_REOPENED",
        "settlement state `SETTLED` moves to `RUNNING`, which is neither terminal nor "
        "settlement: a terminal state would reopen",
        12,
        3,
    ),
    Case(
        "transition_policy_path",
        "TRANSITION_POLICY_PATH",
        "policy `REJECT` has no legal event path: `FAILED` has no move on `finish`",
        13,
        40,
    ),
    Case(
        "replay_table",
        "REPLAY_TABLE",
        "`replay_step` needs the name of a transition table with a `replay` clause first",
        16,
        23,
    ),
    Case(
        "protocol_clause",
        "PROTOCOL_CLAUSE",
        "protocol `shop` needs exactly one `graph` clause, found 2",
        9,
        9,
    ),
    Case(
        "unknown_graph",
        "UNKNOWN_GRAPH",
        "no kind belongs to graph `inventry`",
        8,
        9,
        "did you mean `inventory`?",
    ),
    Case(
        "unknown_format",
        "UNKNOWN_FORMAT",
        "document `items` has format `csv`",
        9,
        42,
        "a format is one of json, jsonl, yaml",
    ),
    Case(
        "invalid_path",
        "INVALID_PATH",
        "`../items.jsonl` is not a path inside the bundle",
        9,
        3,
        "write a relative path with `/` between names, no `..`, `.` or empty segment "
        "(`*` may stand for any run of characters in the file name)",
    ),
    Case(
        "shadows_builtin",
        "SHADOWS_BUILTIN",
        "metric `concat` has the name of the builtin `concat(t, ...)`",
        5,
        8,
        "give the metric another name: a call must mean one thing",
    ),
    Case(
        "within_mismatch",
        "WITHIN_MISMATCH",
        "`within file`: the records `/items` of `docs` do not step (`/*`) through the records "
        "of kind `file`",
        7,
        3,
        'kind `file` takes its records from: docs ""',
    ),
    Case(
        "derived_reads_rule",
        "DERIVED_READS_RULE",
        "table `flags` of derived document `tags` reads rule `small`",
        16,
        3,
        "a derived document's table reads kinds, metrics and constants only",
    ),
    Case(
        "derived_reads_later",
        "DERIVED_READS_LATER",
        "table `flags` of derived document `tags` reads kind `tag`, whose records are not "
        "derived yet when it runs",
        16,
        3,
        "a table reads the documents derived before its own, never its own or later ones",
    ),
    Case(
        "protocol_document_missing",
        "PROTOCOL_DOCUMENT_MISSING",
        "graph `inventory` reads document `items`, which protocol `shop` does not declare",
        7,
        10,
        'add `document items path "..." format json|jsonl|yaml`',
    ),
    Case(
        "schema_unreadable",
        "SCHEMA_UNREADABLE",
        "cannot read the schema `no_such.schema.json` of `items`: no such file or directory",
        9,
        3,
    ),
    Case(
        "schema_invalid",
        "SCHEMA_INVALID",
        "the schema `invalid_schema.json` of `items` is unusable: "
        "unsupported keyword(s): patternProperties",
        9,
        3,
    ),
    Case(
        "protocol_entry_off_graph",
        "PROTOCOL_ENTRY_OFF_GRAPH",
        "`elsewhere_ok` runs on `elsewhere`, not on the protocol's graph `inventory`",
        14,
        13,
    ),
    Case(
        "unused_const",
        "UNUSED_CONST",
        "constant `spare` is never used",
        3,
        7,
        severity="warning",
    ),
    Case(
        "unused_metric",
        "UNUSED_METRIC",
        "metric `doubled` is never used",
        3,
        8,
        severity="warning",
    ),
    Case(
        "unused_code",
        "UNUSED_CODE",
        "reject code `NEVER_RAISED` is never used",
        3,
        6,
        severity="warning",
    ),
    Case(
        "gate_unread",
        "GATE_UNREAD",
        "no decision, table or rule reads gate `orphan`: it decides nothing",
        7,
        6,
        severity="warning",
    ),
    Case(
        "link_ungated",
        "LINK_UNGATED",
        "no admission gate or verdict of a protocol of graph `inventory` reads link "
        "`positive`: a bundle that breaks it is reported and still admitted",
        9,
        6,
        "read it where the protocol decides, e.g. `require passed(positive)` in its admission gate",
        severity="warning",
    ),
    Case(
        "rule_runs_nowhere",
        "RULE_RUNS_NOWHERE",
        "gate `arithmetic_holds` reads no kind, so it runs on no graph and is never evaluated",
        3,
        6,
        severity="warning",
    ),
    Case(
        "quadratic_scan",
        "QUADRATIC_SCAN",
        "`j in item` compares `j.group` with a value of an outer variable: every item is "
        "read once per binding, which grows with the square of the input",
        8,
        11,
        'look the records up by key: `having(item, {"group": i.group})`',
        severity="warning",
    ),
    Case(
        "graphs_disjoint",
        "GRAPHS_DISJOINT",
        "`claims_per_session` reads kinds that no graph holds together: `claim` (answer), "
        "`session` (campaign)",
        8,
        6,
        "a rule runs on a graph that holds every kind it reads; declare a shared kind `of` "
        "both graphs",
    ),
    Case(
        "duplicate_name",
        "DUPLICATE_NAME",
        "`limit` is already declared as a const at {path}:2:7",
        3,
        6,
    ),
    Case(
        "duplicate_attribute",
        "DUPLICATE_NAME",
        "attribute `R` is declared twice in kind `task`",
        4,
        8,
    ),
    Case(
        "duplicate_edge",
        "DUPLICATE_NAME",
        "edge `parent` is declared twice in kind `task`",
        5,
        8,
        "one edge per label: list every kind it may reach, `edge LABEL -> KIND, KIND`; "
        "`within KIND` is the edge `within`",
    ),
    Case(
        "duplicate_within",
        "DUPLICATE_NAME",
        "`within` is declared twice in kind `step`",
        9,
        3,
        "one edge per label: list every kind it may reach, `edge LABEL -> KIND, KIND`; "
        "`within KIND` is the edge `within`",
    ),
    Case(
        "duplicate_map_key",
        "DUPLICATE_NAME",
        "map key `DIRECT` appears twice",
        2,
        17,
    ),
    Case(
        "duplicate_column",
        "DUPLICATE_NAME",
        "column `R` appears twice in table `report`",
        7,
        10,
    ),
    Case(
        "unknown_name",
        "UNKNOWN_NAME",
        "unknown name `min_task_median`",
        3,
        31,
        "did you mean `min_task_median_R`?",
    ),
    Case(
        "decision_unknown_gate",
        "UNKNOWN_NAME",
        "unknown gate `median_okk`",
        4,
        8,
        "did you mean `median_ok`?",
    ),
    Case(
        "unknown_attribute_node",
        "UNKNOWN_ATTRIBUTE",
        "kind `task` has no attribute `r`",
        4,
        30,
        "did you mean `R`?",
    ),
    Case(
        "unknown_attribute_map",
        "UNKNOWN_ATTRIBUTE",
        "map `workers` has no entry `DIRECTT`",
        3,
        16,
        "did you mean `DIRECT`?",
    ),
    Case(
        "unknown_edge",
        "UNKNOWN_EDGE",
        "no edge `support` leaves kind claim",
        5,
        42,
        "did you mean `supports`?",
    ),
    Case(
        "unknown_code",
        "UNKNOWN_CODE",
        "reject code `MISSING_EVIDENCES` is not declared",
        4,
        48,
        "did you mean `MISSING_EVIDENCE`?",
    ),
    Case(
        "unknown_schema_code",
        "UNKNOWN_CODE",
        "reject code `ITEM_SCHEMAS` is not declared",
        10,
        88,
        "did you mean `ITEM_SCHEMA`?",
    ),
    Case("unknown_type", "UNKNOWN_TYPE", "unknown type `tokenz`", 3, 16, "did you mean `tokens`?"),
    # another language's type name gets the rule language's, not the nearest unit (`min`)
    Case("foreign_type", "UNKNOWN_TYPE", "unknown type `int`", 3, 13, "did you mean `number`?"),
    Case(
        "ambiguous_navigation",
        "UNKNOWN_ATTRIBUTE",
        "`s <- session` reaches kinds `answer` and `review`, and kind `review` has no "
        "attribute `tokens`",
        15,
        34,
        "keep the nodes of one kind: `of_kind(s <- session, answer)`",
    ),
    # a plain slip gets its fix, not the list of every token the parser would accept
    Case(
        "swapped_operator",
        "SYNTAX_ERROR",
        "unexpected `=>`",
        4,
        17,
        "did you mean `>=`? (`=>` only separates a decision row's condition from its verdict)",
    ),
    Case(
        "unit_misspelt",
        "SYNTAX_ERROR",
        "unexpected `token`",
        2,
        19,
        "did you mean the unit `tokens`? (units: tokens, Mtokens, USD, USD/Mtokens, s, min, h, %)",
    ),
    Case(
        "unknown_kind",
        "UNKNOWN_KIND",
        "edge `supports` leads to unknown kind `evidenc`",
        3,
        20,
        "did you mean `evidence`?",
    ),
    Case(
        "unknown_function",
        "UNKNOWN_FUNCTION",
        "unknown function `lenn`",
        2,
        11,
        "did you mean `len`?",
    ),
    Case(
        "arity_metric",
        "ARITY_MISMATCH",
        "metric `cost` takes 1 argument, got 2",
        3,
        11,
    ),
    Case("arity_builtin", "ARITY_MISMATCH", "`ratio` takes 2 arguments, got 1", 2, 11),
    Case("unit_compare", "UNIT_MISMATCH", "`<=` cannot combine tokens with USD", 4, 16),
    Case("unit_add", "UNIT_MISMATCH", "`+` cannot combine s with tokens", 2, 15),
    Case(
        "unit_argument",
        "UNIT_MISMATCH",
        "argument `used` of `cost` expects tokens, found USD",
        3,
        16,
    ),
    Case("type_mismatch", "TYPE_MISMATCH", "expected a condition (bool), found text", 2, 16),
    Case(
        "not_constant",
        "NOT_CONSTANT",
        "a constant may only use constants and metrics, not the gate `g`",
        3,
        11,
    ),
    Case(
        "cyclic_definition",
        "CYCLIC_DEFINITION",
        "these declarations depend on each other: `a` -> `b` -> `a`",
        2,
        7,
    ),
    Case(
        "invalid_pointer",
        "INVALID_POINTER",
        "`final/claims` is not a JSON pointer (it must be empty or start with `/`)",
        3,
        3,
    ),
    Case(
        "pointer_empty_key",
        "POINTER_EMPTY_KEY",
        'pointer `/` names the member `""` of an object, not the whole document',
        4,
        3,
        'write `""` for the whole document (a JSON Lines document is its list of records)',
        severity="warning",
    ),
    Case(
        "as_text_type",
        "AS_TEXT_TYPE",
        "attribute `model` is of type `text`: only a unit or `number` attribute can be "
        "written `as text`",
        3,
        3,
        '`as text` reads decimal text such as `"0.52"` as an exact number',
    ),
    Case(
        "decision_incomplete",
        "DECISION_INCOMPLETE",
        "decision `d` gives no verdict for 1 combination(s) of gate outcomes: a=pass, b=fail",
        4,
        10,
        "add a row for them or an `otherwise` row",
    ),
    Case(
        "decision_overlap",
        "DECISION_OVERLAP",
        "rows 1 (`ACCEPT`) and 2 (`PARTIAL`) of decision `d` both match a=pass, b=fail",
        6,
        3,
        "make the conditions exclusive so every combination has one verdict",
    ),
    Case(
        "decision_unreachable_row",
        "DECISION_UNREACHABLE_ROW",
        "row 3 (`INCONCLUSIVE`) of decision `d` is never reached by any combination of gate "
        "outcomes",
        6,
        3,
    ),
    Case(
        "decision_reads_non_gate",
        "DECISION_READS_NON_GATE",
        "a decision row may read only gates; `a` is a const",
        5,
        8,
    ),
    Case(
        "decision_condition",
        "DECISION_CONDITION",
        "a decision condition cannot use the `==` operator",
        5,
        8,
        "use gate names with `and`, `or`, `not` and all/exists/none over {...}",
    ),
    Case(
        "decision_too_wide",
        "DECISION_TOO_WIDE",
        "decision `wide` reads 17 gates; at most 16 can be proved complete",
        19,
        10,
    ),
    Case(
        "unknown_event",
        "UNKNOWN_EVENT",
        "event `finnish` is not declared in `m`",
        7,
        19,
        "did you mean `finish`?",
    ),
    Case(
        "transition_event_not_applicable",
        "TRANSITION_EVENT_NOT_APPLICABLE",
        "event `finish` is not documented as applying to `PENDING`",
        9,
        3,
        "add `PENDING` to `event finish applies ...`",
    ),
    Case(
        "transition_terminal_exit",
        "TRANSITION_TERMINAL_EXIT",
        "terminal state `DONE` may only move to a settlement state, not `PENDING`",
        7,
        3,
    ),
    Case(
        "transition_nondeterministic",
        "TRANSITION_NONDETERMINISTIC",
        "`PENDING` on `finish` has 2 targets: `DONE`, `FAILED`",
        7,
        3,
    ),
    Case(
        "transition_event_unhandled",
        "TRANSITION_EVENT_UNHANDLED",
        "event `cancel` applies to `PENDING` but no move handles it there",
        6,
        24,
    ),
    Case(
        "transition_unreachable_state",
        "TRANSITION_UNREACHABLE_STATE",
        "state `ORPHAN` cannot be reached from `PENDING`",
        4,
        18,
    ),
    Case(
        "transition_dead_end",
        "TRANSITION_DEAD_END",
        "state `RUNNING` is not terminal but has no move out",
        7,
        28,
        "declare it terminal or add a move",
    ),
    Case(
        "transition_outcome_not_terminal",
        "TRANSITION_OUTCOME_NOT_TERMINAL",
        "only terminal states map to an outcome; `PENDING` is not",
        8,
        11,
    ),
    Case(
        "transition_outcome",
        "TRANSITION_OUTCOME",
        "terminal state `FAILED` must map to exactly one outcome, found 0",
        2,
        13,
    ),
    Case(
        "transition_outcome_twice",
        "TRANSITION_OUTCOME",
        "terminal state `DONE` must map to exactly one outcome, found 2",
        8,
        3,
    ),
    Case(
        "syntax_error",
        "SYNTAX_ERROR",
        "unexpected `=`",
        4,
        17,
        "expected `(`, `-`, `all`/`exists`/`none`, `count`, `false`, `null`, `select`, `true`, "
        "`{`, a name, a number, a string, an aggregate",
    ),
    Case(
        "invalid_utf8",
        "RULES_INVALID_UTF8",
        "rule file is not valid utf-8 (byte 44)",
        2,
        19,
    ),
)


def lint(*args: str) -> Result:
    """`rulecheck lint ARGS` in process."""
    return CliRunner().invoke(main, ["lint", *args], catch_exceptions=False)


def lint_json(path: Path) -> tuple[int, dict[str, Any]]:
    result = lint(str(path), "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def _expected(case: Case, path: Path) -> dict[str, Any]:
    form: dict[str, Any] = {
        "code": case.code,
        "severity": case.severity,
        "message": case.message.format(path=path),
        "file": str(path),
        "line": case.line,
        "column": case.column,
    }
    if case.hint is not None:
        form["hint"] = case.hint
    return form


def _about(case: Case, diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The diagnostics a case is about: usage warnings only where the case names one."""
    return [d for d in diagnostics if d["code"] not in USAGE_CODES - {case.code}]


def _summary_ends(case: Case, stdout: str) -> bool:
    verdict = "1 error" if case.severity == "error" else "ok"
    return re.search(rf": {verdict}( \(\d+ warnings?\))?\n$", stdout) is not None


def _actual(diagnostic: dict[str, Any]) -> dict[str, Any]:
    location = diagnostic["location"]
    form = {key: diagnostic[key] for key in ("code", "severity", "message")}
    form.update({key: location.get(key) for key in ("file", "line", "column")})
    if "hint" in diagnostic:
        form["hint"] = diagnostic["hint"]
    return form


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.file)
def test_error_class_json(case: Case) -> None:
    path = DATA / f"{case.file}.rules"
    exit_code, report = lint_json(path)
    assert exit_code == (1 if case.severity == "error" else 0)
    assert report["ok"] is (case.severity != "error")
    assert [_actual(d) for d in _about(case, report["diagnostics"])] == [_expected(case, path)]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.file)
def test_error_class_text(case: Case) -> None:
    path = DATA / f"{case.file}.rules"
    result = lint(str(path))
    assert result.exit_code == (1 if case.severity == "error" else 0)
    message = case.message.format(path=path)
    lines = result.stderr.splitlines()
    head = f"{path}:{case.line}:{case.column}: {case.severity}[{case.code}]: {message}"
    index = next(i for i, line in enumerate(lines) if line.startswith(head))
    source = path.read_bytes().decode("utf-8", errors="replace").split("\n")[case.line - 1]
    assert lines[index + 1] == f"{case.line:>5} | {source}"
    caret = lines[index + 2]
    assert caret.startswith("      | ")
    assert caret[len("      | ") :].index("^") == case.column - 1
    assert set(caret[len("      | ") :].strip()) == {"^"}
    if case.hint is not None:
        assert lines[index + 3] == f"  = {case.hint}"
    assert _summary_ends(case, result.stdout), result.stdout


_NUMBERS = [str(number) for number in range(3000)]


@pytest.mark.parametrize(
    ("line", "code", "named"),
    [
        ("const x = {" + ", ".join(_NUMBERS) + "}", "UNUSED_CONST", "x"),  # a long line's start
        (" " * 100_000 + "const x = 1", "UNUSED_CONST", "x"),  # its end
        (
            "const x = {" + ", ".join([*_NUMBERS[:1500], "y", *_NUMBERS[1500:]]) + "}",
            "UNKNOWN_NAME",
            "y",
        ),
    ],
    ids=["start", "end", "inside"],
)
def test_a_long_line_is_shown_cut_around_the_finding(
    tmp_path: Path, line: str, code: str, named: str
) -> None:
    """However long the line, each finding shows at most EXCERPT_WIDTH of its characters
    (plus a `…` at each cut end), with the caret under the name it is about."""
    path = tmp_path / "long.rules"
    path.write_text(f'ruleset long version "1"\n{line}\n', encoding="utf-8")
    result = lint(str(path))
    lines = result.stderr.splitlines()
    index = next(i for i, text in enumerate(lines) if f"[{code}]" in text)
    assert lines[index].startswith(f"{path}:2:")
    shown, caret = lines[index + 1], lines[index + 2]
    assert shown.startswith("    2 | ") and caret.startswith("      | ")
    excerpt = shown[len("    2 | ") :]
    assert len(excerpt) <= EXCERPT_WIDTH + 2
    assert excerpt.strip("…") in line
    at = caret.index("^") - len("      | ")
    assert excerpt[at : at + len(named)] == named
    assert len(result.stderr) < 2_000


def test_every_check_code_has_a_case() -> None:
    """A new error code in engine/check needs a row in CASES (and a data file)."""
    sources = "".join(path.read_text() for path in sorted((ROOT / "engine" / "check").glob("*.py")))
    found = set(re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"', sources))
    covered = {case.code for case in CASES}
    assert found, "no error codes found in engine/check"
    assert found <= covered, f"error codes without a lint test: {sorted(found - covered)}"


def test_every_data_file_is_used() -> None:
    used = {case.file for case in CASES} | {"clean", "three_errors", "kind_cycle_is_fine"}
    used |= {"next_by_misuse", "replay_misuse", "values_misuse"}
    assert {path.stem for path in DATA.glob("*.rules")} == used


def test_rule_names_are_reported() -> None:
    _, report = lint_json(DATA / "unknown_name.rules")
    [diagnostic] = [d for d in report["diagnostics"] if d["code"] == "UNKNOWN_NAME"]
    assert diagnostic["rule"] == "median_ok"
    assert diagnostic["location"]["end_column"] == 46


# ---- files that are not errors --------------------------------------------------------------


def test_clean_file() -> None:
    path = DATA / "clean.rules"
    result = lint(str(path))
    assert result.exit_code == 0
    assert result.stdout == "1 file, 14 declarations: ok\n"
    assert result.stderr == ""
    exit_code, report = lint_json(path)
    assert exit_code == 0
    assert report == {"diagnostics": [], "ok": True}


def test_an_empty_token_inside_a_pointer_is_a_warning_with_the_pointer_meant(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.rules"
    path.write_text(
        'ruleset p version "1"\nkind claim of answer\n  records answer "/final//claims/"\n'
    )
    exit_code, report = lint_json(path)
    assert exit_code == 0
    [diagnostic] = report["diagnostics"]
    assert (diagnostic["code"], diagnostic["severity"]) == ("POINTER_EMPTY_KEY", "warning")
    assert diagnostic["hint"] == "did you mean `/final/claims`?"


def test_kinds_may_name_each_other() -> None:
    """A kind whose attribute is of its own kind (or of a kind naming it back) is no cycle."""
    exit_code, report = lint_json(DATA / "kind_cycle_is_fine.rules")
    assert (exit_code, report["diagnostics"]) == (0, [])


def test_only_a_scan_per_record_of_the_input_is_quadratic(tmp_path: Path) -> None:
    """A variable over a constant set, a navigation, a lookup or a filter on a constant reads
    a kind once per constant or per record's own edges: no QUADRATIC_SCAN. A metric whose
    parameter is a record, or a scan nested in another over the input, does."""
    path = tmp_path / "scans.rules"
    path.write_text(
        'ruleset scans version "1"\nconst arms = {"A", "B"}\n'
        'kind item of g\n  records items ""\n  attr arm: text\n  edge next -> item\n'
        "gate per_arm\n  for arm in arms\n  require count(i in item where i.arm == arm) >= 0\n"
        'gate constant\n  for i in item\n  require count(j in item where j.arm == "A") >= 0\n'
        "gate navigated\n  for i in item\n  require all(j in i -> next: j.arm == i.arm)\n"
        'gate looked_up\n  for i in item\n  require len(having(item, {"arm": i.arm})) >= 1\n'
        "metric same_arm(i: item) = count(j in item where i.arm == j.arm)\n"
        "gate by_metric\n  for i in item\n  require same_arm(i) >= 1\n"
        "gate nested\n  require all(i in item: exists(j in item: j.arm == i.arm))\n",
        encoding="utf-8",
    )
    exit_code, report = lint_json(path)
    assert exit_code == 0
    found = [
        (d["rule"], d["location"]["line"])
        for d in report["diagnostics"]
        if d["code"] == "QUADRATIC_SCAN"
    ]
    assert found == [("same_arm", 19), ("nested", 24)]


def test_shipped_rules_scan_no_kind_per_record() -> None:
    _, report = lint_json(ROOT / "rules")
    assert [d for d in report["diagnostics"] if d["code"] == "QUADRATIC_SCAN"] == []


def test_shipped_rules_lint_clean() -> None:
    result = lint()  # no argument: the shipped rules
    assert result.exit_code == 0, result.stderr
    count = len(list((ROOT / "rules").glob("*.rules")))
    assert re.fullmatch(
        rf"{count} files, \d+ declarations: ok( \(\d+ warnings\))?\n", result.stdout
    )


# ---- several errors ------------------------------------------------------------------------


def test_every_error_of_a_file_is_reported_in_position_order() -> None:
    path = DATA / "three_errors.rules"
    exit_code, report = lint_json(path)
    assert exit_code == 1
    found = [
        (d["code"], d["location"]["line"], d["location"]["column"], d["message"])
        for d in report["diagnostics"]
        if d["severity"] == "error"
    ]
    assert found == [
        ("UNIT_MISMATCH", 3, 20, "`<=` cannot combine tokens with USD"),
        ("UNKNOWN_NAME", 4, 22, "unknown name `spnt`"),
        ("DUPLICATE_NAME", 6, 7, f"`dup` is already declared as a const at {path}:5:7"),
    ]
    text = lint(str(path))
    assert re.fullmatch(r"1 file, 5 declarations: 3 errors( \(\d+ warnings?\))?\n", text.stdout)
    heads = [line for line in text.stderr.splitlines() if ": error[" in line]
    assert [h.split(": error[")[0] for h in heads] == [
        f"{path}:3:20",
        f"{path}:4:22",
        f"{path}:6:7",
    ]


def test_errors_of_several_files_are_all_reported(tmp_path: Path) -> None:
    (tmp_path / "a.rules").write_text('ruleset a version "1"\nconst x = y\n')
    (tmp_path / "b.rules").write_text('ruleset b version "1"\nconst z = = 1\n')
    (tmp_path / "c.rules").write_text('ruleset c version "1"\nconst w = 1 tokens + 1 USD\n')
    exit_code, report = lint_json(tmp_path)
    assert exit_code == 1
    found = [
        (Path(d["location"]["file"]).name, d["code"])
        for d in report["diagnostics"]
        if d["severity"] == "error"
    ]
    assert found == [
        ("a.rules", "UNKNOWN_NAME"),
        ("b.rules", "SYNTAX_ERROR"),
        ("c.rules", "UNIT_MISMATCH"),
    ]


def test_names_are_shared_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.rules").write_text('ruleset a version "1"\nconst x = y * 2\n')
    (tmp_path / "b.rules").write_text('ruleset b version "1"\nconst y = 1\nconst x = 3\n')
    exit_code, report = lint_json(tmp_path)
    assert exit_code == 1
    (diagnostic,) = [d for d in report["diagnostics"] if d["severity"] == "error"]
    assert diagnostic["code"] == "DUPLICATE_NAME"
    assert diagnostic["location"]["file"] == str(tmp_path / "b.rules")
    assert diagnostic["message"] == (
        f"`x` is already declared as a const at {tmp_path / 'a.rules'}:2:7"
    )


def test_source_line_is_read_fresh_after_an_edit(tmp_path: Path) -> None:
    path = tmp_path / "edited.rules"
    path.write_text('ruleset e version "1"\nconst x = y\n')
    assert "    2 | const x = y\n" in lint(str(path)).stderr
    path.write_text('ruleset e version "1"\nconst xx = 1\nconst x = yy\n')
    assert "    3 | const x = yy\n" in lint(str(path)).stderr


# ---- files that cannot be read --------------------------------------------------------------


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "missing.rules"
    result = lint(str(path), "--format", "json")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "ok": False,
        "diagnostics": [
            {
                "code": "FILE_UNREADABLE",
                "severity": "error",
                "message": f"cannot read `{path}`: no such file or folder",
                "location": {"file": str(path)},
            }
        ],
    }
    text = lint(str(path))
    assert text.exit_code == 2
    assert text.stderr == (
        f"{path}: error[FILE_UNREADABLE]: cannot read `{path}`: no such file or folder\n"
    )
    assert "Traceback" not in text.output


def test_folder_without_rule_files_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not rules")
    result = lint(str(tmp_path), "--format", "json")
    assert result.exit_code == 2
    (diagnostic,) = json.loads(result.stdout)["diagnostics"]
    assert diagnostic["code"] == "FILE_UNREADABLE"
    assert diagnostic["message"] == f"cannot read `{tmp_path}`: no `*.rules` files in this folder"


def test_values_is_a_list_of_its_expression_type_checked_inside() -> None:
    """`values(EXPR for v in S where F)` is a list of EXPR's type: an aggregate over it
    keeps EXPR's unit and a text list is no number; a unit or type error inside it, in
    EXPR or in the filter, is located there. Lines 8 to 11 are accepted."""
    exit_code, report = lint_json(DATA / "values_misuse.rules")
    assert exit_code == 1
    found = [
        (d["rule"], d["location"]["line"], d["location"]["column"], d["message"])
        for d in report["diagnostics"]
        if d["code"] != "GATE_UNREAD"
    ]
    assert found == [
        ("mixed", 12, 38, "`+` cannot combine USD with tokens"),
        ("filtered", 13, 60, "expected a condition (bool), found text"),
        ("compared", 14, 23, "`<=` cannot combine USD/tokens with tokens"),
        ("texts", 15, 24, "`sum` needs a number, found text"),
        ("listed", 16, 21, "`>` needs a number, found list of USD"),
    ]


def test_next_by_needs_a_kind_an_orderable_attribute_and_a_node_of_the_kind() -> None:
    exit_code, report = lint_json(DATA / "next_by_misuse.rules")
    assert exit_code == 1
    found = [
        (d["location"]["line"], d["location"]["column"], d["message"])
        for d in report["diagnostics"]
        if d["code"] == "TYPE_MISMATCH"
    ]
    assert found == [
        (12, 23, "`next_by` needs a kind name first"),
        (13, 25, "`next_by` sorts by a number or a text, and `done` is bool"),
        (14, 25, "`next_by` needs the attribute to sort by written out second, as a text"),
        (15, 34, "`next_by` needs a node of kind `item` third, found number"),
    ]


def test_every_expression_class_has_a_type_rule() -> None:
    """The type checker looks an expression's rule up by its class: a class of the
    language without one would only fail when a rule file first used it."""
    from typing import get_args

    from engine.check.types import _EXPRESSION_TYPES
    from engine.syntax import ast

    assert set(_EXPRESSION_TYPES) == set(get_args(ast.Expr))
