"""The text report people read: one screen first (verdict, decision row and why, counts,
what failed, each passing rule nearest its bound with units and margin), the long tables
with `--verbose`, exact fractions with `--exact`, and markdown that is markdown throughout."""

from __future__ import annotations

from typing import Any

import pytest
from markdown_it import MarkdownIt

from tests.cli_run import REPO, CliRun

PROTOCOL = REPO / "tests" / "data" / "protocol"
EVAL_RULES = str(PROTOCOL / "eval.rules")
REFUSED = ["check", str(PROTOCOL / "refused"), "--rules", EVAL_RULES]
ACCEPTED = ["check", str(PROTOCOL / "accepted"), "--rules", EVAL_RULES]
CAMPAIGN = ["check", str(REPO / "controls" / "campaign")]


def test_the_first_screen_of_a_refused_bundle() -> None:
    run = CliRun(REFUSED)
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("INVALID: decision verdict, row 1 [")
    assert lines[1:3] == [
        "REFUSED: admission gate admitted",
        "FAILED: 1/2 gates pass, 1/1 budgets hold, 3 link rules violated (4 violations)",
    ]
    text = run.stdout
    assert "WHY: row 1 of decision verdict reads\n  admitted: fail\n  pass_rate_met: pass" in text
    assert "FAIL gate admitted: 1 of 1 fail" in text
    assert "ANSWER_TOO_LONG: an answer used more tokens than the per-answer ceiling [Q3]" in text
    # each passing gate and budget at its binding nearest the bound, in the bound's unit
    assert "pass_rate_met  all      80 % >= 80 %                  0 %" in text
    assert "total_tokens   all      4,341 tokens <= 5,000 tokens  659 tokens" in text
    assert "rule hash" not in text and "| ids |" not in text  # tables wait for --verbose


def test_verbose_adds_the_inputs_every_rule_and_the_tables() -> None:
    text = CliRun([*ACCEPTED, "--verbose"]).stdout
    for title in ("PROTOCOL", "INPUTS", "BUDGETS", "GATES", "answers", "DECISIONS"):
        assert f"\n{title}\n" in text
    assert "rule hash `" in text


@pytest.mark.parametrize("option", [[], ["--exact"]])
def test_exact_fractions_only_with_exact(option: list[str]) -> None:
    text = CliRun([*CAMPAIGN, "--verbose", *option]).stdout
    assert ("(9/10)" in text) == bool(option)


def _markdown(args: list[str]) -> tuple[str, list[Any]]:
    text = CliRun([*args, "--format", "markdown"]).stdout
    return text, MarkdownIt("commonmark").enable("table").parse(text)


@pytest.mark.parametrize("args", [REFUSED, [*ACCEPTED, "--verbose"], [*CAMPAIGN, "--verbose"]])
def test_markdown_is_markdown_throughout(args: list[str]) -> None:
    text, tokens = _markdown(args)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert any(h.startswith("WHY: row ") for h in headings)
    # no two report lines run together into one paragraph: every line is its own block
    assert not [t.content for t in tokens if t.type == "inline" and "\n" in t.content]
    # every gate and each of its bindings is a list item, not loose text
    items = [t for t in tokens if t.type == "list_item_open"]
    assert len(items) >= text.count("\n- ") + text.count("\n  - ")
    if "--verbose" in args:
        assert {"GATES", "BUDGETS", "DECISIONS"} <= set(headings)
        tables = sum(t.type == "table_open" for t in tokens)
        assert tables == text.count("\n|---")


def test_markdown_escapes_what_markdown_would_read_as_markup() -> None:
    text, _tokens = _markdown(REFUSED)
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<em>" not in rendered and "<strong>" not in rendered  # `_` and `*` stay text
    assert "pass_rate_met" in rendered
