"""What an evaluation lets go once no later rule reads it (engine/evaluate/release.py).

A metric's table, a kind's indexes and a label's edges are let go after the last rule of
the schedule that may read them, directly or through metrics; the outcomes are those of
an evaluation that keeps everything, and a reader that comes later (an `explain`, a
table asked for afterwards) gets the same values, made again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import heap
from engine.evaluate.compile import Context
from engine.evaluate.program import Program, compile_program
from engine.evaluate.release import Held, held_by, release_plan
from engine.graph.build import Graph, build_graph
from engine.ruleset import load_ruleset
from engine.syntax.parse import parse_text

RULES = """ruleset release_order version "1"

code GROUP_EMPTY "an item's group has no item"
  source "test"

code TOO_MANY_NEXT "an item names more than one next item, or is named by more than one"
  source "test"

kind item of g
  records items ""
  key id
  attr group: text
  attr weight: number
  edge next_id -> item

metric group_of(i: item) = having(item, {"group": i.group})
  source "test"

metric after(i: item) = next_by(item, "id", i)
  source "test"

metric heavy(i: item) = len(group_of(i)) > 1 and i.weight > 2
  source "test"

link grouped
  source "test"
  for i in item
  require len(group_of(i)) >= 1
  else reject GROUP_EMPTY

link chained
  source "test"
  for i in item
  require count(n in i -> next_id) <= 1 and count(p in i <- next_id) <= 1 and len(after(i)) <= 1
  else reject TOO_MANY_NEXT

gate few_heavy
  source "test"
  require count(j in item where heavy(j)) <= 1

gate items_present
  source "test"
  require count(i in item) >= 1

decision verdict
  source "test"
  when few_heavy and items_present => FEW
  otherwise => MANY
"""

ITEMS = [
    {"id": "a", "group": "x", "weight": 3, "next_id": "b"},
    {"id": "b", "group": "x", "weight": 5, "next_id": "c"},
    {"id": "c", "group": "y", "weight": 1, "next_id": "c"},
    {"id": "d", "group": "y", "weight": 1, "next_id": "c"},
]


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Program:
    folder = tmp_path_factory.mktemp("rules")
    (folder / "release.rules").write_text(RULES, encoding="utf-8")
    return compile_program(load_ruleset([folder]))


def _graph(program: Program) -> Graph:
    return build_graph(program.graph("g"), {"items": [dict(item) for item in ITEMS]})


def _outcome(program: Program, ctx: Context) -> tuple[Any, ...]:
    found = program.evaluate("g", ctx)
    violations = tuple((v.rule, v.code, v.pointer) for v in found.violations)
    return violations, found.outcomes, tuple(d.verdict for d in found.decisions)


def test_each_cache_is_let_go_after_its_last_reader_and_not_before(program: Program) -> None:
    names = ["grouped", "chained", "few_heavy", "items_present", "verdict"]  # the schedule
    plan = dict(zip(names, program.releases_of("g"), strict=True))
    assert plan["grouped"] is None  # `group_of` and its index are read again by `few_heavy`
    # the only navigator of `next_id`, the only reader (through `after`) of the order by id
    assert plan["chained"] == Held(
        frozenset({"after"}),
        orders=frozenset({("item", "id")}),
        labels=frozenset({"next_id"}),
        incoming=frozenset({"next_id"}),
    )
    # `heavy` reads `group_of` (one keyed look-up, which keeps no table), which looks the
    # kind up by group; the kind itself is read later, but not through that index
    assert plan["few_heavy"] == Held(frozenset({"heavy"}), frozenset({("item", ("group",))}))
    assert plan["items_present"] is None and plan["verdict"] is None


CALLERS = """ruleset callers version "1"

kind item of g
  records items ""
  key id
  attr weight: number

metric below(i: item) = count(k in item where k.weight < i.weight)
  source "test"

metric heavier(i: item, j: item) = below(i) > below(j)
  source "test"

metric outer(i: item) = count(j in item where heavier(i, j))
  source "test"

metric doubled(i: item) = count(j in item where heavier(j, i)) * 2
  source "test"

gate first
  source "test"
  require all(i in item: outer(i) >= 0)

gate again
  source "test"
  require all(i in item: outer(i) <= 100)

gate fresh
  source "test"
  require all(i in item: doubled(i) >= 0)

gate last
  source "test"
  require all(i in item: outer(i) >= 0)
"""


def test_a_table_of_pairs_read_only_inside_a_table_computed_before_is_let_go(
    tmp_path: Path,
) -> None:
    (tmp_path / "callers.rules").write_text(CALLERS, encoding="utf-8")
    program = compile_program(load_ruleset([tmp_path]))
    plan = dict(zip(["first", "again", "fresh", "last"], program.releases_of("g"), strict=True))
    # `again` asks `outer` for what `first` computed, and `heavier` (of one more
    # parameter) only inside it: not kept for it. `fresh` computes `doubled` for the
    # first time: it asks `heavier` itself, and `heavier` asks `below` (of fewer
    # parameters: a table its caller's arguments do not fold away)
    assert plan["first"] is None and plan["again"] is None
    assert plan["fresh"] == Held(frozenset({"doubled", "heavier", "below"}))
    # what `last` may make again through `outer` is let go after it too
    assert plan["last"] == Held(frozenset({"outer", "heavier", "below"}))
    ctx = Context(build_graph(program.graph("g"), {"items": [dict(item) for item in ITEMS]}))
    assert all(program.evaluate("g", ctx).outcomes.values()) and ctx.memo == {}


def test_the_last_reader_of_each_cache_is_found_through_metrics() -> None:
    reads_metric = Held(frozenset({"m"}), frozenset({("k", ("a",))}), frozenset({("k", "b")}))
    navigates = Held(labels=frozenset({"edge"}))
    plan = release_plan([reads_metric, navigates, reads_metric, Held()])
    assert plan == (None, navigates, reads_metric, None)


def test_an_evaluation_ends_holding_no_cache_and_decides_as_before(program: Program) -> None:
    ctx = Context(_graph(program))
    violations, outcomes, verdicts = _outcome(program, ctx)
    assert violations == (("chained", "TOO_MANY_NEXT", "/2"),)  # c: named by b, c and d
    assert outcomes == {
        "grouped": True,
        "chained": False,
        "few_heavy": False,
        "items_present": True,
    }
    assert verdicts == ("MANY",)  # a and b are heavy
    assert ctx.memo == {} and ctx.indexes == {} and ctx.orders == {}
    assert "next_id" not in ctx.graph.outgoing and ctx.graph._incoming == {}
    again = Context(_graph(program))
    assert _outcome(program, again) == (violations, outcomes, verdicts)


def test_a_reader_after_the_evaluation_gets_the_same_values_made_again(program: Program) -> None:
    ctx = Context(_graph(program))
    program.evaluate("g", ctx)
    probe = parse_text(
        'ruleset q version "1"\nconst probe = count(i in item where heavy(i))\n', "q.rules"
    ).declarations[0]
    compiled = program.compiler.expr(probe.value)  # type: ignore[union-attr]
    assert compiled(ctx, {}) == 2  # a and b
    edges = ctx.graph.outgoing["next_id"]
    assert [edges[node] for node in ctx.graph.by_kind["item"]] == [
        [("item", 1)],
        [("item", 2)],
        [("item", 2)],
        [("item", 2)],
    ]


def test_edges_a_graph_was_given_whole_are_kept(program: Program) -> None:
    given = {("item", 0): [("item", 1)], ("item", 1): []}
    graph = Graph({"item": list(given)}, {n: {"id": str(n[1])} for n in given}, {}, {"next": given})
    graph.incoming("next")
    graph.let_go(["next"])
    assert graph.outgoing["next"] is given and graph.incoming("next") == {
        ("item", 1): [("item", 0)]
    }


def test_letting_go_counts_the_entries_dropped_and_hands_a_large_release_back(
    program: Program, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = Context(_graph(program))
    ctx.graph.outgoing["next_id"]
    ctx.graph.incoming("next_id")
    assert ctx.graph.let_go(["next_id"], ["next_id"]) == 4 + 2  # four items' edges, to two
    assert ctx.graph.let_go(["next_id"], ["next_id"]) == 0  # nothing left to drop

    trims: list[int] = []
    monkeypatch.setattr(heap, "_malloc_trim", lambda: trims.append)
    heap.released(heap.LARGE_RELEASE - 1)
    assert trims == []  # an answer's caches: not worth a walk of the C heap
    heap.released(heap.LARGE_RELEASE)
    assert trims == [0]


def test_the_c_library_trim_is_found_once_or_is_absent() -> None:
    trim = heap._malloc_trim()
    assert trim is heap._malloc_trim()
    if trim is not None:  # glibc: 1 when memory was handed back, else 0
        assert trim(0) in (0, 1)


WITHIN = """ruleset within_edges version "1"

kind box of w
  records boxes ""
  key id

kind part of w
  records boxes "/*/parts"
  key id
  within box
"""


def test_edges_to_the_record_that_holds_a_record_are_kept(tmp_path: Path) -> None:
    (tmp_path / "within.rules").write_text(WITHIN, encoding="utf-8")
    program = compile_program(load_ruleset([tmp_path]))
    boxes = [{"id": "b1", "parts": [{"id": "p1"}, {"id": "p2"}]}, {"id": "b2", "parts": []}]
    graph = build_graph(program.graph("w"), {"boxes": boxes})
    made = dict(graph.outgoing["within"])
    assert made == {("part", 0): [("box", 0)], ("part", 1): [("box", 0)]}
    graph.incoming("within")
    # `within` comes from where the records are, not from an id field: nothing could
    # make these edges again, so letting the label go keeps them
    graph.let_go(["within"])
    assert graph.outgoing["within"] == made
    assert graph.incoming("within") == {("box", 0): [("part", 0), ("part", 1)]}


LINKS = """ruleset links version "1"

kind target of l
  records targets ""
  key id

kind one_link of l
  records singles ""
  key id
  edge to -> target

kind many_links of l
  records lists ""
  key id
  edge to -> target
"""


def test_edges_followed_backwards_first_are_those_of_the_edges_reversed(tmp_path: Path) -> None:
    (tmp_path / "links.rules").write_text(LINKS, encoding="utf-8")
    program = compile_program(load_ruleset([tmp_path]))
    documents = {
        "targets": [{"id": t} for t in ("t1", "t2", "t3")],
        "singles": [{"id": "s1", "to": "t2"}, {"id": "s2", "to": "nowhere"}, {"id": "s3"}],
        "lists": [
            {"id": "m1", "to": ["t3", "t1", "t3", "gone"]},
            {"id": "m2", "to": ["t2"]},
            {"id": "m3", "to": [1, None, ["t1"], {"id": "t3"}, "t2"]},  # only a text links
            {"id": "m4", "to": 5},
        ],
    }
    backwards_first = build_graph(program.graph("l"), documents)
    reversed_edges = backwards_first.incoming("to")
    assert "to" not in backwards_first.outgoing  # the forward edges were not made
    forwards_first = build_graph(program.graph("l"), documents)
    forwards_first.outgoing["to"]
    assert list(forwards_first.incoming("to").items()) == list(reversed_edges.items())
    assert reversed_edges == {
        ("target", 1): [("one_link", 0), ("many_links", 1), ("many_links", 2)],
        ("target", 2): [("many_links", 0), ("many_links", 0)],
        ("target", 0): [("many_links", 0)],
    }
    # let go one way, the other is kept
    assert backwards_first.let_go(["to"], []) == 0 and backwards_first._incoming
    assert backwards_first.let_go([], ["to"]) == 3 and not backwards_first._incoming


@pytest.mark.parametrize(
    ("targets", "shared"),
    [(["t1", "t1", "t2", "t1"], True), (["t1", "t2", "t3", "t1"], False)],
    ids=["many to one", "one to one at first"],
)
def test_edges_share_a_list_per_node_reached_unless_no_two_reach_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, targets: list[str], shared: bool
) -> None:
    from engine.graph import build

    monkeypatch.setattr(build, "_SHARING_TRIAL", 2)  # decided after the first two links
    (tmp_path / "links.rules").write_text(LINKS, encoding="utf-8")
    program = compile_program(load_ruleset([tmp_path]))
    singles = [{"id": f"s{n}", "to": target} for n, target in enumerate(targets)]
    documents = {"targets": [{"id": t} for t in ("t1", "t2", "t3")], "singles": singles}
    edges = build_graph(program.graph("l"), documents).outgoing["to"]
    made = [edges[("one_link", n)] for n in range(4)]
    assert made == [[("target", int(t[1]) - 1)] for t in targets]
    assert (made[0] is made[3]) is shared  # both reach t1: one list, or each its own


def test_what_each_rule_reads_is_the_same_when_declarations_are_walked_once() -> None:
    """`held_by` shares each declaration's own reads between the rules of a schedule;
    each rule of the shipped rules reads exactly what a walk of its own finds."""
    checked = load_ruleset([Path(__file__).resolve().parent.parent / "rules"]).checked
    shared: dict[str, Held] = {}
    for name in checked.symbols.declarations:
        if name in checked.infos:
            alone = held_by(name, checked.symbols, checked.infos)
            assert held_by(name, checked.symbols, checked.infos, shared) == alone, name
    assert len(shared) > 100
