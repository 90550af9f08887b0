"""Each link rule is load-bearing for the expected-result table (seed 000 EVALUATOR-CONTROLS,
"Mutation specification": each mutation must make its owning control fail for the intended
reason).

For every link rule in rules/ that `rulecheck answer` evaluates (the link rules over the
`answer` graph, read from the AST and the compiled program, not listed here; link rules of
other graphs, e.g. `campaign`, are never run by `rulecheck answer`), a copy of rules/ is
made with exactly that declaration's lines removed; the table rows that expect a finding of
that rule are re-run with `rulecheck answer --rules COPY`, and at least one of them must now
give a result other than its expectation. The trimmed copy must still load without errors
and evaluate exactly one link rule fewer, so a row fails because the rule is gone, not
because the copy is broken.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from answer_cases import CASES, Case, memoized_rules, run_case
from cli_run import copy_shipped_rules

import engine.ruleset
from engine.evaluate.program import compile_program
from engine.syntax import ast

RULES = Path(__file__).resolve().parents[1] / "rules"
ANSWER_GRAPH = "answer"


def _link_rules() -> list[ast.LinkDecl]:
    """The link rules of the answer graph (campaign rules are covered by test_campaign)."""
    ruleset = engine.ruleset.load_ruleset([RULES])
    answer = _answer_links(RULES)
    return [
        d
        for d in ruleset.checked.declarations()
        if isinstance(d, ast.LinkDecl) and d.name.text in answer
    ]


def _answer_links(rules: Path) -> set[str]:
    """The link rules `rulecheck answer` evaluates with `--rules rules` (raises on any error)."""
    program = compile_program(engine.ruleset.load_ruleset([rules]))
    return {link.name for link in program.links_of(ANSWER_GRAPH)}


LINKS = _link_rules()
RUNNABLE = [case for case in CASES if case.bug is None]


@pytest.fixture(autouse=True, scope="module")
def _rules_parsed_once() -> Iterator[None]:
    with memoized_rules():
        yield


def _without(decl: ast.LinkDecl, target: Path) -> Path:
    """A copy of rules/ in `target` with the lines of `decl` removed (and the schemas beside
    it, where the protocols' schema paths lead)."""
    copy_shipped_rules(target)
    span = decl.span
    path = target / Path(span.file).name
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    last = span.end_line if span.end_column > 1 else span.end_line - 1
    block = "".join(lines[span.line - 1 : last])
    assert block.startswith(f"link {decl.name.text}\n"), block
    assert f"reject {decl.code.text}" in block
    path.write_text("".join(lines[: span.line - 1] + lines[last:]), encoding="utf-8")
    return target


def _cases_naming(rule: str) -> list[Case]:
    return [case for case in RUNNABLE if rule in case.rules]


def test_links_are_found_in_the_rules() -> None:
    assert len(LINKS) >= 30
    assert len({decl.name.text for decl in LINKS}) == len(LINKS)


def test_the_copy_itself_changes_nothing(tmp_path: Path) -> None:
    """Control: an untouched copy of rules/ passed with --rules gives every row its expectation."""
    copy = tmp_path / "rules"
    copy_shipped_rules(copy)
    for index, case in enumerate(case for case in RUNNABLE if case.rules):
        outcome = run_case(case, tmp_path / f"case{index}", rules=copy)
        assert outcome.matches(case), (case.id, outcome.stdout)


@pytest.mark.parametrize("decl", LINKS, ids=[decl.name.text for decl in LINKS])
def test_removing_the_rule_breaks_a_row(decl: ast.LinkDecl, tmp_path: Path) -> None:
    rule = decl.name.text
    cases = _cases_naming(rule)
    assert cases, f"no row of the table expects a finding of link rule `{rule}`"

    trimmed = _without(decl, tmp_path / "rules")
    full, left = _answer_links(RULES), _answer_links(trimmed)  # the copy loads without errors
    assert full - left == {rule} and left < full

    for index, case in enumerate(cases):
        outcome = run_case(case, tmp_path / f"case{index}", rules=trimmed)
        assert outcome.data is not None and outcome.data["rules_evaluated"] == len(left)
        assert all(r != rule for _, r in outcome.findings)
        if not outcome.matches(case):
            return  # this row now fails: the rule is load-bearing
    pytest.fail(f"removing `{rule}` changes none of: {[case.id for case in cases]}")
