"""`having(KIND, {"attr": value, ...})`: the keyed lookup binds exactly what the scan binds.

The property tests build random graphs whose attributes mix the values `==` treats
specially (`1`, `1.0`, `Fraction(1)`, `"1"`, `true`, null and missing, lists, maps, NaN,
values without an index key such as `Decimal(1)`) and compare, binding by binding and in
order, `for u in having(row, {...})` with the filtered scan `for u in row where u.a ==
p.a and ...` it replaces, both compiled by the engine. The checker's refusals of a
malformed lookup go through the CLI.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.check import check_rules
from engine.evaluate.compile import Compiler, Context, Env
from engine.graph.build import Graph
from engine.syntax import ast
from engine.syntax.parse import parse_text
from tests.cli_run import CliRun

RULES = """ruleset having_property version "1"

kind row of g
  records rows ""
  key id
  attr a: any
  attr b: any

kind probe of g
  records probes ""
  attr a: any
  attr b: any

gate scan_a
  for p in probe
  for u in row where u.a == p.a
  require true

gate index_a
  for p in probe
  for u in having(row, {"a": p.a})
  require true

gate scan_ab
  for p in probe
  for u in row where u.a == p.a and u.b == p.b
  require true

gate index_ab
  for p in probe
  for u in having(row, {"a": p.a, "b": p.b})
  require true

gate scan_id
  for p in probe
  for u in row where u.id == p.a
  require true

gate index_id
  for p in probe
  for u in having(row, {"id": p.a})
  require true

gate count_scan
  for p in probe
  require count(u in row where u.b == p.b and u.a == p.a) == 1

gate count_index
  for p in probe
  require len(having(row, {"b": p.b, "a": p.a})) == 1
"""

CHECKED = check_rules([parse_text(RULES, "having.rules")])
COMPILER = Compiler(CHECKED)
GATES = {name: decl for name, decl in CHECKED.symbols.declarations.items()}
MISSING = object()  # the attribute is absent from the record

# Values `==` must tell apart, or not: 1 == 1.0 == Fraction(1) but not "1" or true.
VALUES = st.sampled_from(
    [
        MISSING,
        None,
        True,
        False,
        0,
        1,
        1.0,
        Fraction(1),
        Fraction(1, 2),
        0.5,
        "1",
        "a",
        "",
        [1],
        [1.0],
        [True],
        {"k": 1},
        {"k": 1.0},
        float("nan"),
        Decimal(1),  # no key: equal to 1, found by comparing record by record
        Decimal("0.5"),
    ]
)
RECORD = st.fixed_dictionaries({"a": VALUES, "b": VALUES})


def _graph(rows: list[dict[str, Any]], probes: list[dict[str, Any]]) -> Graph:
    by_kind: dict[str, list[tuple[str, int]]] = {"row": [], "probe": []}
    attrs: dict[tuple[str, int], dict[str, Any]] = {}
    for kind, records in (("row", rows), ("probe", probes)):
        for number, record in enumerate(records):
            node = (kind, number)
            by_kind[kind].append(node)
            values = {k: v for k, v in record.items() if v is not MISSING}
            attrs[node] = {"id": record["a"] if isinstance(record["a"], str) else f"R{number}"}
            attrs[node].update(values)
    return Graph(by_kind, attrs, {}, {})


def _bound(name: str, ctx: Context) -> list[tuple[Any, Any]]:
    """Every (p, u) the gate's `for` clauses bind, in order, and no error."""
    decl = GATES[name]
    assert isinstance(decl, ast.GateDecl)
    found: list[Env] = []
    errors: list[tuple[Env, str]] = []
    COMPILER.rule_function(f"bind_{name}", decl.bindings)(ctx, {}, found.append, [], errors)
    assert errors == []
    return [(env["p"], env["u"]) for env in found]


def _outcome(name: str, ctx: Context) -> list[Env]:
    """The bindings at which the gate's requirement does not hold."""
    decl = GATES[name]
    assert isinstance(decl, ast.GateDecl)
    condition = COMPILER.expr(decl.require)
    failed: list[Env] = []

    def sink(env: Env) -> None:
        if condition(ctx, env) is not True:
            failed.append(env)

    COMPILER.rule_function(f"outcome_{name}", decl.bindings)(ctx, {}, sink, [], [])
    return failed


def test_the_rules_check_clean() -> None:
    assert [d for d in CHECKED.diagnostics if d.severity == "error"] == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(RECORD, max_size=12), probes=st.lists(RECORD, max_size=6))
def test_having_binds_what_the_scan_binds(
    rows: list[dict[str, Any]], probes: list[dict[str, Any]]
) -> None:
    ctx = Context(_graph(rows, probes))
    for scan, index in (("scan_a", "index_a"), ("scan_ab", "index_ab"), ("scan_id", "index_id")):
        assert _bound(index, ctx) == _bound(scan, ctx), (scan, rows, probes)
    assert _outcome("count_index", ctx) == _outcome("count_scan", ctx)


@given(rows=st.lists(RECORD, max_size=12), probes=st.lists(RECORD, max_size=6))
def test_an_index_is_built_once_per_context_and_key(
    rows: list[dict[str, Any]], probes: list[dict[str, Any]]
) -> None:
    ctx = Context(_graph(rows, probes))
    _bound("index_ab", ctx)
    _bound("index_ab", ctx)
    _outcome("count_index", ctx)
    built = set(ctx.indexes) if probes else set()
    assert built == ({("row", ("a", "b")), ("row", ("b", "a"))} if probes else set())


@pytest.mark.parametrize(
    ("call", "code", "message"),
    [
        ('having(row, {"a": 1}, 2)', "ARITY_MISMATCH", "`having` takes 2 arguments, got 3"),
        ('having(p, {"a": 1})', "TYPE_MISMATCH", "`having` needs a kind name first"),
        (
            "having(row, p)",
            "TYPE_MISMATCH",
            "`having` needs its keys written out second, as a map of attribute names to values",
        ),
        ('having(row, {"colour": 1})', "UNKNOWN_ATTRIBUTE", "kind `row` has no attribute `colour`"),
        ('having(row, {"n": "1"})', "TYPE_MISMATCH", "`having` compares `n` (number) with text"),
        ('having(row, {"n": 1 s})', "UNIT_MISMATCH", "`having` compares `n` (number) with s"),
        ('having(row, {"n": 1, "n": 2})', "DUPLICATE_NAME", "map key `n` appears twice"),
    ],
)
def test_the_checker_refuses_a_malformed_lookup(
    call: str, code: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "lookup.rules"
    path.write_text(
        'ruleset lookup version "1"\nkind row of g\n  records rows ""\n  attr n: number\n'
        f"gate g1\n  for p in row\n  require len({call}) == 1\n",
        encoding="utf-8",
    )
    run = CliRun(["lint", str(path), "--format", "json"])
    assert run.exit_code == 1
    found = [(d["code"], d["message"]) for d in run.data["diagnostics"]]
    assert (code, message) in found
