"""Conditions compiled as statements (`and`, `or` and quantifiers as loops with an early
exit), memberships inlined (`x in ids(K)`, `prefix(x) in CONST`, `x.b in x.tags`),
comparisons and the common cases of builtins inlined (`x.a + 1 >= 2`, `x.v == x.a`,
`len(x.v)`) decide what the plain code decides (each condition one expression, each `in`
a call of `member`, each comparison and builtin a call): the same failed bindings, the
same errors with the same messages, in the same order, for links and for the expressions
of gates. Random conditions over random records, both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_run import CliRun
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rulegen import check_texts

from engine.errors import RulecheckError
from engine.evaluate import compile as compile_module
from engine.evaluate.compile import Compiler, Context
from engine.evaluate.links import compile_link, group_links, link_violations, run_group, run_link
from engine.graph.build import build_graph, graph_spec
from engine.syntax import ast
from engine.syntax.parse import parse_text

_KINDS = """ruleset lowering version "1"

code C1 "a record fails the condition"

const letters = {"u", "v"}

kind rec of g
  records data "/recs"
  key id
  attr a: number
  attr b: text
  attr tags: list
  attr next: text
  attr f: bool
  attr v: any
  edge next -> rec
"""


def _atoms(var: str) -> list[str]:
    return [
        f"{var}.a > 1",
        f"{var}.a == null",
        f'{var}.b == "u"',
        f'"t" in {var}.tags',
        f"{var}.b in {var}.tags",
        f"{var}.a + 1 >= 2",
        f"{var}.v == {var}.a",
        f"{var}.v != {var}.f",
        f"{var}.v == {var}.b",
        f"{var}.v == 0.1",
        f"{var}.v == 1",
        f"{var}.v != 0",
        f"{var}.v in {{0.1, 1}}",
        f"{var}.v",
        f"{var}.f",
        f"{var}.b != {var}.next",
        f"len({var}.v) == 1",
        f"line_count({var}.v) >= 1",
        f'prefix({var}.v) == "u"',
        f"{var}.id in ids(rec)",
        f"{var}.next in ids(union(rec))",
        f"prefix({var}.b) in letters",
        "true",
        "false",
    ]


@st.composite
def _condition(draw: st.DrawFn, variables: tuple[str, ...], depth: int = 0) -> str:
    shape = draw(st.integers(0, 7 if depth < 4 else 0))
    if shape <= 1:
        return draw(st.sampled_from([a for v in variables for a in _atoms(v)]))
    if shape in (2, 3):
        operands = draw(st.lists(_condition(variables, depth + 1), min_size=2, max_size=3))
        return "(" + (" and " if shape == 2 else " or ").join(operands) + ")"
    if shape == 4:
        return f"not ({draw(_condition(variables, depth + 1))})"
    var = f"y{depth}"
    outer = draw(st.sampled_from(variables))
    source = draw(
        st.sampled_from(
            ["rec", f"{outer} -> next", f"of_kind({outer} -> next, rec)", f"{outer}.tags"]
        )
    )
    inner = (*variables, var) if source != f"{outer}.tags" else variables
    op = draw(st.sampled_from(["all", "exists", "none"]))
    where = ""
    if draw(st.booleans()):
        where = f" where {draw(_condition(inner, depth + 1))}"
    if source == f"{outer}.tags":  # a text element: a condition of its own
        where = ""
        body = draw(st.sampled_from([f': {var} == "t"', f": {var} in letters", ""]))
    else:
        body = draw(st.sampled_from(["", f": {draw(_condition(inner, depth + 1))}"]))
    return f"{op}({var} in {source}{where}{body})"


# Every class of value an attribute of type `any` may hold: the comparisons and builtins
# inlined for some classes of their operands call their function for the others.
_ANY_VALUES = (None, True, False, 0, 1, 0.1, 1.0, "u", "u1", "", "1\n2", ["t"], {"k": 1})

_RECORDS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "a": st.one_of(st.none(), st.integers(-1, 3)),
            "b": st.sampled_from([None, "u", "v7", "t", "x"]),
            "tags": st.one_of(st.none(), st.lists(st.sampled_from(["t", "u", "v"]), max_size=3)),
            "next": st.sampled_from(["r0", "r1", "r9"]),
            "f": st.sampled_from([None, True, False]),
            "v": st.sampled_from(_ANY_VALUES),
        },
    ),
    max_size=4,
)


def _outcome(compiler: Compiler, decl: ast.LinkDecl, documents: dict[str, Any]) -> Any:
    graph = build_graph(graph_spec(compiler.checked, "g"), documents)
    link = compile_link(compiler, decl, "hash")
    violations, bound = run_link(link, Context(graph))
    gate = compiler.expr(decl.require, bound=("x",))
    values = []
    for node in graph.by_kind.get("rec", []):
        try:
            values.append(gate(Context(graph), {"x": node}))
        except Exception as error:  # the error itself is the outcome compared
            values.append((type(error).__name__, str(error)))
    return violations, bound, values


@settings(max_examples=300, deadline=None)
@given(_condition(("x",)), _condition(("x",)), _RECORDS)
def test_statements_decide_as_the_expression_does(
    require: str, where: str, records: list[dict[str, Any]]
) -> None:
    text = (
        f"{_KINDS}\nlink r\n  for x in rec where {where}\n  require {require}\n  else reject C1\n"
    )
    checked = check_texts({"lowering.rules": text})
    (decl,) = [d for d in checked.declarations() if isinstance(d, ast.LinkDecl)]
    documents = {"data": {"recs": [{"id": f"r{i}", **r} for i, r in enumerate(records)]}}
    lowered = _outcome(Compiler(checked), decl, documents)
    assert lowered == _outcome(Compiler(checked, inline=False), decl, documents)


# Each atom with an inlined operation, against each such value (not left to the draw of
# the test above, which rarely meets a given pair).
_INLINED_ATOMS = [
    atom for atom in _atoms("x") if any(name in atom for name in ("x.v", "x.a", "prefix("))
]


@pytest.mark.parametrize("require", _INLINED_ATOMS)
def test_inlined_operations_decide_as_their_calls_do(require: str) -> None:
    text = f"{_KINDS}\nlink r\n  for x in rec\n  require {require}\n  else reject C1\n"
    checked = check_texts({"lowering.rules": text})
    (decl,) = [d for d in checked.declarations() if isinstance(d, ast.LinkDecl)]
    records = [
        {"id": f"r{i}", "a": i % 3 or None, "b": "u", "v": v} for i, v in enumerate(_ANY_VALUES)
    ]
    documents = {"data": {"recs": records}}
    lowered = _outcome(Compiler(checked), decl, documents)
    assert lowered == _outcome(Compiler(checked, inline=False), decl, documents)


# Clauses after the first, which rules sharing the first clause may share too: with and
# without filters, a source that raises on some records (`x.v`), two clauses deep.
_SECOND_CLAUSES = (
    "",
    "  for y in x -> next\n",
    "  for t in x.tags\n",
    '  for t in x.tags where t != "v"\n',
    "  for t in x.v\n",
    "  for y in x -> next\n  for t in y.tags\n",
    "  for y in x -> next where y.a > 1\n  for t in y.tags\n",
)


@st.composite
def _rule_sharing_a_loop(draw: st.DrawFn, number: int, seconds: tuple[str, ...]) -> str:
    """A link rule over `for x in rec` (or `union(rec)`, another loop), with a filter (one
    that other rules may have too, or one of its own), and one of `seconds` (more clauses
    or none)."""
    source = draw(st.sampled_from(["rec", "union(rec)"]))
    where = draw(st.sampled_from(["", " where x.a > 0", "drawn"]))
    if where == "drawn":
        where = f" where {draw(_condition(('x',)))}"
    second = draw(st.sampled_from(seconds))
    variables = ("x", "y") if "y in" in second else ("x",)
    require = draw(_condition(variables))
    if "t in" in second:
        require = f'({require}) and t != "u"'
    clauses = f"  for x in {source}{where}\n{second}"
    return f"link r{number}\n{clauses}  require {require}\n  else reject C1\n"


@st.composite
def _rules_sharing_a_loop(draw: st.DrawFn) -> tuple[str, ...]:
    """Two to four rules over `x`, their other clauses drawn from one or two of
    `_SECOND_CLAUSES`, so that they often share them."""
    seconds = tuple(draw(st.lists(st.sampled_from(_SECOND_CLAUSES), min_size=1, max_size=2)))
    count = draw(st.integers(2, 4))
    return tuple(draw(_rule_sharing_a_loop(number, seconds)) for number in range(count))


@settings(max_examples=200, deadline=None)
@given(_rules_sharing_a_loop(), _RECORDS)
@example(  # a shared filter that raises, then a shared source that raises on a number
    tuple(
        f"link r{k}\n  for x in rec where x.v > 0\n  for t in x.v\n  require t != {k}\n"
        "  else reject C1\n"
        for k in range(2)
    ),
    [{"v": 1}, {"v": "u"}, {"v": [0, 1]}],
)
def test_rules_sharing_a_loop_find_what_each_finds_alone(
    rules: tuple[str, ...], records: list[dict[str, Any]]
) -> None:
    """Rules whose first clause is the same run in one loop, and those that go on with
    the same filter and clause share that clause's loop too: each finds what it finds run
    alone (the same failed bindings, errors, messages, order and count of bindings),
    whatever the other rules' filters, sources and requirements raise on the same record."""
    checked = check_texts({"groups.rules": _KINDS + "\n" + "\n".join(rules)})
    decls = [d for d in checked.declarations() if isinstance(d, ast.LinkDecl)]
    documents = {"data": {"recs": [{"id": f"r{i}", **r} for i, r in enumerate(records)]}}
    graph = build_graph(graph_spec(checked, "g"), documents)
    compiler = Compiler(checked)
    links = [compile_link(compiler, decl, "hash") for decl in decls]
    groups = group_links(compiler, links, lambda _name: True)
    sources = {rule.split("\n")[1].split(" where ")[0] for rule in rules}
    assert len(groups) == len(sources)
    alone = [run_link(link, Context(graph)) for link in links]
    for group in groups:
        assert run_group(group, Context(graph), None) == [alone[p] for p in group.positions]
    assert link_violations(groups, Context(graph), None) == [v for found, _ in alone for v in found]


@pytest.mark.parametrize(("value", "failed"), [(1, 0), (0, 1)])
def test_a_rule_nested_beyond_python_s_blocks_compiles_as_expressions(
    value: int, failed: int
) -> None:
    """Sixteen clauses (the limit) and quantifiers nested six deep: as statements, more
    blocks than Python compiles; the rule runs all the same, its conditions expressions."""
    require = "x0.a > 0"
    for depth in range(6):
        require = f"exists(y{depth} in rec: y{depth}.a > 0 and {require})"
    clauses = "".join(f"  for x{i} in rec\n" for i in range(16))
    text = f"{_KINDS}\nlink deep\n{clauses}  require {require}\n  else reject C1\n"
    checked = check_texts({"deep.rules": text})
    (decl,) = [d for d in checked.declarations() if isinstance(d, ast.LinkDecl)]
    documents = {"data": {"recs": [{"id": "r0", "a": value}]}}
    graph = build_graph(graph_spec(checked, "g"), documents)
    violations, bound = run_link(compile_link(Compiler(checked), decl, "hash"), Context(graph))
    assert (bound, len(violations)) == (1, failed)


def test_seventeen_clauses_are_refused_at_parse() -> None:
    clauses = "".join(f"  for x{i} in rec\n" for i in range(17))
    text = f"{_KINDS}\nlink deep\n{clauses}  require x0.a > 0\n  else reject C1\n"
    with pytest.raises(RulecheckError) as refused:
        parse_text(text, "deep.rules")
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.code == "RULE_TOO_MANY_BINDINGS"
    at = text.splitlines().index("  for x16 in rec") + 1
    assert diagnostic.location is not None and diagnostic.location.line == at


@pytest.mark.parametrize(("value", "exit_code", "violations"), [(1, 0, 0), (0, 1, 1)])
def test_sixteen_clauses_are_evaluated_through_the_cli(
    tmp_path: Path, value: int, exit_code: int, violations: int
) -> None:
    clauses = "".join(f"  for x{i} in rec\n" for i in range(16))
    rules = tmp_path / "deep.rules"
    rules.write_text(f"{_KINDS}\nlink deep\n{clauses}  require x0.a > 0\n  else reject C1\n")
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"recs": [{"id": "r0", "a": value}]}))
    run = CliRun(
        ["evaluate", "g", "--rules", str(rules), f"--input=data={data}", "--format", "json"]
    )
    run.assert_clean()
    assert run.exit_code == exit_code, run.stdout
    assert [v["code"] for v in run.data["violations"]] == ["C1"] * violations


def test_a_metric_first_used_in_a_comprehension_is_compiled_as_anywhere_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A metric's function is generated on its first use, which may be inside another
    function's comprehension (`count(y in rec where near(y))`); its own body is in none,
    so its comparisons are inlined as anywhere else."""
    text = f"{_KINDS}\nmetric near(r: rec) = r.a + 1 >= 2 and len(r.b) == 1\n"
    checked = check_texts({"metric.rules": text})
    sources: list[str] = []
    real = compile_module.compiled
    monkeypatch.setattr(
        compile_module,
        "compiled",
        lambda source, name: sources.append(source) or real(source, name),
    )
    in_a_comprehension = Compiler(checked)
    in_a_comprehension._comprehensions = 1  # as while generating `count(y in rec where ...)`
    in_a_comprehension._metric("near")
    Compiler(checked)._metric("near")
    inside, alone = sources
    assert inside == alone
    assert ":=" in alone  # the inlined forms hold their operands in temporaries
