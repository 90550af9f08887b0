"""docs/experiment-format.md's worked examples against the engine.

Each table of the "Metrics and distributions" section marked `<!-- example: TABLE -->` is a
hand-computed row of report table TABLE over `controls/trials`; it must name every column
of that table, in order, and equal one of its rows exactly (`rulecheck check --format
json`, exact values: `5/8`, `true`, `unavailable: F` for `{"unavailable": ["F"]}`).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "experiment-format.md"
SECTION = "## Metrics and distributions"
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n((?:\|.*\|\n)+)")


def _cell(text: str) -> Any:
    """A cell as the JSON report writes its exact value."""
    text = text.strip()
    if text.startswith("unavailable: "):
        return {"unavailable": [f.strip() for f in text.removeprefix("unavailable: ").split(",")]}
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return {"true": True, "false": False, "null": None}.get(text, text)


def _examples() -> list[tuple[str, list[str], list[list[Any]]]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    following = section.find("\n## ", len(SECTION))
    section = section if following < 0 else section[:following]
    examples = []
    for name, block in EXAMPLE.findall(section):
        lines = [line.strip().strip("|").split("|") for line in block.strip().splitlines()]
        header = [cell.strip() for cell in lines[0]]
        rows = [[_cell(cell) for cell in line] for line in lines[2:]]
        examples.append((name, header, rows))
    return examples


@cache
def _tables() -> dict[str, dict[str, Any]]:
    run = CliRun(["check", str(ROOT / "controls" / "trials"), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout + run.stderr
    return {table["name"]: table for table in run.data["tables"]}


def test_every_family_and_distribution_table_has_an_example() -> None:
    names = {name for name, _, _ in _examples()}
    assert {
        "outcome_metrics",
        "termination_reasons",
        "outcome_distributions",
        "decomposition_distributions",
        "parallelism_distributions",
        "cost_distributions",
        "cost_metrics",
        "indeterminate_trials",
        "stopping_metrics",
        "stopping_distributions",
        "routing_metrics",
        "routing_by_model_and_task",
    } <= names


@pytest.mark.parametrize(("name", "header", "rows"), _examples(), ids=lambda v: str(v)[:40])
def test_each_worked_example_is_a_row_of_the_engine_report(
    name: str, header: list[str], rows: list[list[Any]]
) -> None:
    table = _tables()[name]
    assert header == table["columns"]
    observed = [row["values"] for row in table["rows"]]
    for row in rows:
        assert row in observed, f"{name}: {row} is none of {observed}"
