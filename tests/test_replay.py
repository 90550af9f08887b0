"""Transition tables that run: a `replay` clause drives each entity through its table.

Each `tests/data/replay/NAME.jsonl` is a trace replayed by `machine.rules`; the file
`NAME.expected` beside it holds, one line per row, the `steps` table (how each event was
judged) and then the `entities` table (where each entity ended), as
`rulecheck evaluate --format json` reports them. Adding a case is adding the two files;
a trace that needs a machine of its own has it beside it as `NAME.rules`.
The checker's refusals of a malformed replay go through `rulecheck lint`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.check import check_rules
from engine.errors import RulecheckError
from engine.evaluate.compile import Compiler, Context, EvaluationError
from engine.freeze.canonical import canonical_form
from engine.graph.build import Graph
from engine.syntax.parse import parse_text
from tests.cli_run import CliRun

DATA = Path(__file__).parent / "data" / "replay"
LINT = Path(__file__).parent / "data" / "lint"
TRACES = sorted(DATA.glob("*.jsonl"))


def _machine(trace: Path) -> Path:
    own = trace.with_suffix(".rules")
    return own if own.exists() else DATA / "machine.rules"


def _cell(value: Any) -> str:
    if value is True or value is False:
        return "yes" if value else "no"
    if value is None:
        return "null"
    if isinstance(value, list):
        return ",".join(_cell(item) for item in value)
    return str(value)


def _rows(report: dict[str, Any], table: str) -> list[str]:
    (found,) = [t for t in report["tables"] if t["name"] == table]
    return [" ".join([*row["ids"][:1], *map(_cell, row["values"])]) for row in found["rows"]]


def _expected(path: Path) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for line in path.read_text().splitlines():
        if line.startswith("# steps:") or line.startswith("# entities:"):
            current = line[2:].split(":")[0]
            sections[current] = []
        elif line and not line.startswith("#"):
            sections[current].append(line)
    return sections


@pytest.mark.parametrize("trace", TRACES, ids=[t.stem for t in TRACES])
def test_replay_judges_every_event_as_expected(trace: Path) -> None:
    run = CliRun(
        [
            "evaluate",
            "trace",
            "--rules",
            str(_machine(trace)),
            "--input",
            f"trace={trace}",
            "--format",
            "json",
        ]
    )
    run.assert_clean()
    assert run.exit_code == 0, run.stdout + run.stderr
    expected = _expected(trace.with_suffix(".expected"))
    assert _rows(run.data, "steps") == expected["steps"]
    entities = [row.split(" ", 1)[1] for row in _rows(run.data, "entities")]
    assert entities == expected["entities"]


def test_every_trace_has_its_expectation() -> None:
    assert TRACES
    assert {p.stem for p in DATA.glob("*.expected")} == {t.stem for t in TRACES}


RULES = """ruleset r version "1"
kind event of trace
  records trace ""
  key id
  attr seq: any
  attr entity: text
  attr event: text
transitions job
  initial A
  terminal B
  event go applies A
  from A on go to B
  replay event by entity on event order seq
"""


def _replay_once(records: list[dict[str, Any]], expression: str) -> Any:
    checked = check_rules([parse_text(RULES, "r.rules")])
    assert checked.ok, checked.diagnostics
    compiler = Compiler(checked)
    call = parse_text(
        'ruleset q version "1"\nconst probe = ' + expression + "\n", "q.rules"
    ).declarations[0]
    graph = Graph(
        {"event": [("event", i) for i in range(len(records))]},
        {("event", i): {**record} for i, record in enumerate(records)},
        {},
        {},
    )
    function = compiler.expr(call.value)  # type: ignore[union-attr]
    return function(Context(graph), {"e": ("event", 0)})


def test_an_event_without_an_order_is_an_error_of_the_evaluation_not_a_pass() -> None:
    records = [
        {"id": "e1", "seq": 1, "entity": "j", "event": "go"},
        {"id": "e2", "seq": None, "entity": "j", "event": "go"},
    ]
    with pytest.raises(EvaluationError, match="must be all numbers or all texts"):
        _replay_once(records, "replay_step(job, e).after")


def test_replaying_is_linear_one_sort_and_one_pass() -> None:
    """The replay is built on the first call and every later call is a lookup: a call per
    event over a long trace reads each event once (the benchmark times it)."""
    records = [
        {"id": f"e{i}", "seq": i, "entity": f"j{i % 7}", "event": "go"} for i in range(2_000)
    ]
    assert _replay_once(records, "replay_step(job, e).after") == "B"


def test_a_second_replay_clause_is_a_syntax_error() -> None:
    text = RULES + "  replay event by entity on event order seq\n"
    with pytest.raises(RulecheckError) as raised:
        parse_text(text, "r.rules")
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.code == "SYNTAX_ERROR"
    assert "second `replay` clause" in diagnostic.message


def test_a_table_without_replay_keeps_its_hash_form() -> None:
    """The clause came later: a table that does not write it hashes as before."""
    plain = RULES.replace("  replay event by entity on event order seq\n", "")
    decl = parse_text(plain, "r.rules").declarations[1]
    assert "replay" not in canonical_form(decl)
    replayed = parse_text(RULES, "r.rules").declarations[1]
    assert canonical_form(replayed)["replay"]["kind"] == "event"


def test_replay_misuse_is_reported_where_it_is() -> None:
    run = CliRun(["lint", str(LINT / "replay_misuse.rules"), "--format", "json"])
    assert run.exit_code == 1
    found = [
        (d["location"]["line"], d["location"]["column"], d["code"], d["message"])
        for d in run.data["diagnostics"]
        if d["severity"] == "error"
    ]
    assert found == [
        (
            21,
            29,
            "UNKNOWN_ATTRIBUTE",
            "kind `event` has no attribute `name` (the event of `job`'s replay)",
        ),
        (
            21,
            40,
            "TYPE_MISMATCH",
            "the order of `job`'s replay must be a text or number attribute; "
            "`done` is declared `bool`",
        ),
        (
            21,
            53,
            "TYPE_MISMATCH",
            "the version of `job`'s replay must be a number attribute; "
            "`version` is declared `text`",
        ),
        (27, 10, "UNKNOWN_KIND", "`ghost` replays unknown kind `phantom`"),
        (32, 28, "TYPE_MISMATCH", "`replay_step` needs a `event` event second, found other"),
        (33, 7, "UNKNOWN_ATTRIBUTE", "`replay_step` has no entry `befor`"),
        (
            34,
            26,
            "TYPE_MISMATCH",
            "`replay_entity` needs an entity id (a text) second, found number",
        ),
        (
            35,
            27,
            "REPLAY_TABLE",
            "`replay_entities` needs the name of a transition table with a `replay` clause first",
        ),
        (
            36,
            32,
            "TYPE_MISMATCH",
            "`replay_at` needs a position (a number or text) third, found bool",
        ),
        (
            37,
            20,
            "REPLAY_TABLE",
            "`replay_total` needs a table whose `replay` clause keeps a `ledger`",
        ),
    ]


def test_the_replay_rules_are_formatted() -> None:
    run = CliRun(["fmt", "--check", str(DATA)])
    assert run.exit_code == 0, run.stdout + run.stderr
