"""Decision tables' completeness, overlaps and unreachable rows (engine/check/decisions.py)
against the plain enumeration: every combination of gate outcomes, one at a time.

The linter decides each row over all combinations at once (bitwise truth tables); here
random tables are written as rule text, linted, and their DECISION_* findings compared
with those of evaluating every row on every combination, as the linter did before.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.check import check_rules
from engine.syntax import ast
from engine.syntax.parse import parse_text

GATES = ("a", "b", "c", "d")

_conditions = st.recursive(
    st.sampled_from([*GATES, "true", "false"]),
    lambda inner: st.one_of(
        inner.map(lambda c: f"not ({c})"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]}) and ({p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]}) or ({p[1]})"),
        st.tuples(
            st.sampled_from(["all", "exists", "none"]),
            st.lists(st.sampled_from(GATES), min_size=1, max_size=3, unique=True),
        ).map(lambda q: f"{q[0]}(g in {{{', '.join(q[1])}}}: g)"),
    ),
    max_leaves=5,
)
_tables = st.tuples(
    st.lists(_conditions, min_size=1, max_size=5), st.booleans()
)  # rows, and whether an `otherwise` row ends the table


def _text(rows: list[str], otherwise: bool) -> str:
    lines = ['ruleset decisions version "1"', *(f"gate {g} require true" for g in GATES)]
    lines.append("decision d")
    lines += [f"  when {row} => VERDICT_{index}" for index, row in enumerate(rows)]
    if otherwise:
        lines.append("  otherwise => REST")
    return "\n".join(lines) + "\n"


def _holds(condition: ast.Expr, outcomes: dict[str, bool]) -> bool:
    match condition:
        case ast.Bool():
            return condition.value
        case ast.Name():
            return outcomes[condition.id]
        case ast.Unary():
            return not _holds(condition.operand, outcomes)
        case ast.BoolOp(op="and"):
            return all(_holds(op, outcomes) for op in condition.operands)
        case ast.BoolOp():
            return any(_holds(op, outcomes) for op in condition.operands)
        case ast.Quantifier(source=ast.SetLiteral() as members):
            values = [_holds(item, outcomes) for item in members.items]
            if condition.op == "all":
                return all(values)
            return any(values) if condition.op == "exists" else not any(values)
    raise AssertionError(condition)


def _enumerated(decl: ast.DecisionDecl) -> list[tuple[str, str]]:
    """(code, message) of each finding, by evaluating every row on every combination."""
    names = sorted(
        {node.id for row in decl.rows if row.condition for node in _gates(row.condition)}
    )

    def render(outcomes: dict[str, bool]) -> str:
        return ", ".join(f"{n}={'pass' if ok else 'fail'}" for n, ok in outcomes.items())

    missing: list[str] = []
    overlaps: dict[tuple[int, int], str] = {}
    reached: set[int] = set()
    otherwise = [i for i, row in enumerate(decl.rows) if row.condition is None]
    for values in itertools.product((True, False), repeat=len(names)):
        outcomes = dict(zip(names, values, strict=True))
        matched = [
            i
            for i, row in enumerate(decl.rows)
            if row.condition is not None and _holds(row.condition, outcomes)
        ]
        for pair in itertools.combinations(matched, 2):
            overlaps.setdefault(pair, render(outcomes))
        if matched:
            reached.update(matched)
        elif otherwise:
            reached.add(otherwise[0])
        else:
            missing.append(render(outcomes))
    found = []
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        found.append(
            (
                "DECISION_INCOMPLETE",
                f"decision `d` gives no verdict for {len(missing)} combination(s) of gate "
                f"outcomes: {'; '.join(missing[:3])}{more}",
            )
        )
    for (first, second), example in sorted(overlaps.items()):
        found.append(
            (
                "DECISION_OVERLAP",
                f"rows {first + 1} (`{decl.rows[first].verdict.text}`) and {second + 1} "
                f"(`{decl.rows[second].verdict.text}`) of decision `d` both match {example}",
            )
        )
    for index, row in enumerate(decl.rows):
        if index not in reached:
            found.append(
                (
                    "DECISION_UNREACHABLE_ROW",
                    f"row {index + 1} (`{row.verdict.text}`) of decision `d` is never reached "
                    "by any combination of gate outcomes",
                )
            )
    return found


def _gates(condition: Any) -> list[ast.Name]:
    match condition:
        case ast.Name():
            return [condition] if condition.id in GATES else []
        case ast.Unary():
            return _gates(condition.operand)
        case ast.BoolOp():
            return [name for op in condition.operands for name in _gates(op)]
        case ast.Quantifier(source=ast.SetLiteral() as members):
            return [name for item in members.items for name in _gates(item)]
    return []


@settings(max_examples=300, deadline=None)
@given(_tables)
def test_findings_are_those_of_every_combination_one_by_one(table: tuple[list[str], bool]) -> None:
    rule_file = parse_text(_text(*table), "decisions.rules")
    (decl,) = [d for d in rule_file.declarations if isinstance(d, ast.DecisionDecl)]
    checked = check_rules([rule_file])
    found = [(d.code, d.message) for d in checked.diagnostics if d.code.startswith("DECISION_")]
    assert sorted(found) == sorted(_enumerated(decl))


def test_sixteen_gates_are_decided_whole() -> None:
    """At the widest table the linter proves complete (16 gates, 65,536 combinations): one
    uncovered combination is found and named, and the other 65,535 are covered once."""
    gates = [f"g{index:02}" for index in range(16)]
    every_pass = " and ".join(gates)
    lines = ['ruleset wide version "1"', *(f"gate {g} require true" for g in gates)]
    lines += ["decision d", f"  when not ({every_pass}) => REJECT"]
    lines += [f"  when {' and '.join(gates[:15])} and not {gates[15]} => NEVER"]
    checked = check_rules([parse_text("\n".join(lines) + "\n", "wide.rules")])
    found = sorted((d.code, d.message) for d in checked.diagnostics if "DECISION" in d.code)
    everything_passed = ", ".join(f"{g}=pass" for g in gates)
    fifteen = ", ".join(f"{g}=pass" for g in gates[:15])
    assert found == [
        (
            "DECISION_INCOMPLETE",
            "decision `d` gives no verdict for 1 combination(s) of gate outcomes: "
            + everything_passed,
        ),
        (
            "DECISION_OVERLAP",
            "rows 1 (`REJECT`) and 2 (`NEVER`) of decision `d` both match "
            + f"{fifteen}, g15=fail",
        ),
    ]
