"""The graph builder's generated loop (`KindSpec.add_held`) builds what its record-by-record
path builds: the same nodes in the same order, the same attributes (the records
themselves where held as read, converted copies where not), the same ids and the same
problems, whatever the records hold. Random records, both ways."""

from __future__ import annotations

import copy
import gc
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rulegen import check_texts

from engine.bundle.protocol_bundle import load_protocol_bundle
from engine.bundle.schemac import compile_schema
from engine.evaluate.nested import schema_proofs
from engine.evaluate.program import compile_program
from engine.graph import build
from engine.graph.build import Graph, build_graph, graph_proofs, graph_spec
from engine.limits import MAX_FINDINGS
from engine.ruleset import load_ruleset
from engine.syntax import ast

_KINDS = """ruleset building version "1"

kind rec of g
  records data "/recs"
  key name
  attr name: text
  attr n: number
  attr ok: bool
  attr tags: list
  attr cost: USD
  attr blob: any
  edge next -> rec
"""

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from([0.5, "r0", "r1", "x", "1.25"]),
    st.lists(st.sampled_from(["r0", "t", 1, None]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 1), max_size=2),
)
_RECORDS = st.lists(
    st.dictionaries(
        st.sampled_from(["name", "n", "ok", "tags", "cost", "blob", "next", "extra"]),
        _VALUES,
    ),
    max_size=6,
)


def _built(records: list[dict[str, Any]]) -> tuple[Any, ...]:
    graph = build_graph(
        graph_spec(check_texts({"k.rules": _KINDS}), "g"), {"data": {"recs": records}}
    )
    return _shown(graph)


def _shown(graph: Graph) -> tuple[Any, ...]:
    nodes = graph.by_kind.get("rec", [])
    return (
        nodes,
        [(repr(graph.attrs[n]), graph.attrs[n] is graph.record(n)) for n in nodes],
        {kind: dict(graph.id_index(kind)) for kind in graph.by_kind},
        [(p.code, p.message, p.location) for p in graph.problems],
        dict(graph.edges()),
    )


@settings(max_examples=400, deadline=None)
@given(_RECORDS)
def test_the_generated_loop_builds_what_the_builder_builds_record_by_record(
    records: list[dict[str, Any]],
) -> None:
    fast = _built(records)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build.KindSpec, "add_held", lambda _kind, _proven=(): lambda *_: 0)
        slow = _built(records)
    assert fast == slow


_POINTERS = """ruleset pointers version "1"

kind whole of g
  records data ""
  key name
  attr name: text

kind listed of g
  records data "/recs"
  records data "/groups/0/recs" optional
  records data "/groups/*/recs" optional
  records data "/m/0" optional
  records data "/m/a~1b" optional
  key name
  attr name: text
  attr n: number
"""

_RECORD = st.fixed_dictionaries(
    {}, optional={"name": st.sampled_from(["a", "b", 1]), "n": st.sampled_from([1, "x"])}
)
_FOUND = st.one_of(
    st.none(), st.integers(), _RECORD, st.lists(st.one_of(_RECORD, st.integers()), max_size=3)
)
_HOLDER = st.fixed_dictionaries(
    {},
    optional={
        "recs": _FOUND,
        "0": _FOUND,
        "a/b": _FOUND,
        "*": st.fixed_dictionaries({}, optional={"recs": _FOUND}),  # a member, not a step
    },
)
_POINTED = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["w", 2]),
        "recs": _FOUND,
        "groups": st.one_of(_FOUND, st.lists(_HOLDER, max_size=2), _HOLDER),
        "m": st.one_of(_FOUND, _HOLDER),
    },
)


def _read_pointer_by_pointer(spec: build.GraphSpec, documents: dict[str, Any]) -> Graph:
    """The graph `build_graph` makes, each kind's `records` read by `_add_records`."""
    builder = build._Builder({})
    tables: tuple[dict[str, Any], ...] = ({}, {}, {}, {})
    by_kind, attrs, ids, runs = tables
    for kind in spec.kinds:
        keys: list[Any] = []
        index: dict[str, Any] = {}
        kind_runs: tuple[list[int], list[build.Run]] = ([], [])
        for records in kind.records:
            if records.document in documents:
                document = documents[records.document]
                into = (keys, attrs, index)
                build._add_records(builder, kind, records, document, into, kind_runs, frozenset())
        by_kind[kind.name], ids[kind.name] = keys, index
        if kind_runs[1]:
            runs[kind.name] = kind_runs
    return Graph(by_kind, attrs, ids, {}, problems=tuple(builder.problems), runs=runs)


def _read(graph: Graph) -> tuple[Any, ...]:
    runs = {
        kind: [(r.start, r.head, r.declared, r.records) for r in found]
        for kind, (_starts, found) in graph.runs.items()
    }
    problems = [(p.code, p.message, p.location) for p in graph.problems]
    return graph.by_kind, graph.attrs, graph.ids, runs, problems


@settings(max_examples=400, deadline=None)
@given(_POINTED)
def test_the_generated_node_maker_reads_each_pointer_as_the_builder_does(
    data: dict[str, Any],
) -> None:
    """Pointers read inline (a member, a member named `0` or `a/b`, a step into a list,
    `*`) find the nodes, runs and problems that reading them one by one finds, whatever
    lies at them."""
    spec = graph_spec(check_texts({"p.rules": _POINTERS}), "g")
    built = build_graph(spec, {"data": data})
    assert _read(built) == _read(_read_pointer_by_pointer(spec, {"data": data}))


def test_a_member_named_star_under_a_star_step_is_one_member_among_the_others() -> None:
    """`records data "/groups/*/recs"` steps through every member of `groups`, a member
    named `*` too (it looped, taken for the step again, until Python's recursion limit)."""
    kinds = 'ruleset stars version "1"\n\nkind rec of g\n  records data "/groups/*/recs"\n'
    kinds += "  key name\n  attr name: text\n"
    groups = {"*": {"recs": [{"name": "a"}]}, "g": {"recs": [{"name": "b"}, {"name": "c"}]}}
    graph = build_graph(
        graph_spec(check_texts({"k.rules": kinds}), "g"), {"data": {"groups": groups}}
    )
    assert [graph.attrs[n]["name"] for n in graph.by_kind["rec"]] == ["a", "b", "c"]
    assert [run.head for run in graph.runs["rec"][1]] == ["/groups/*/recs", "/groups/g/recs"]
    assert graph.problems == ()


def test_records_held_as_read_are_the_nodes_attributes_not_copies() -> None:
    records = [{"name": "r0", "n": 1, "tags": ["t"], "next": "r1"}, {"name": "r1", "ok": True}]
    graph = build_graph(
        graph_spec(check_texts({"k.rules": _KINDS}), "g"), {"data": {"recs": records}}
    )
    assert [graph.attrs[n] for n in graph.by_kind["rec"]] == records
    assert all(graph.attrs[n] is r for n, r in zip(graph.by_kind["rec"], records, strict=True))
    assert graph.ids == {"rec": {"r0": ("rec", 0), "r1": ("rec", 1)}}


def test_nodes_of_every_kind_share_their_numbers() -> None:
    """Node `(kind, n)` holds one object `n` for every kind (memory only: the keys are
    the same values), whether its record was added by the generated loop or one by one."""
    kinds = _KINDS + '\nkind other of g\n  records data "/others"\n  attr n: number\n'
    records = [{"name": f"r{i}"} for i in range(400)]
    others = [{"n": "wrong"} if i % 2 else {"n": i} for i in range(400)]  # half one by one
    graph = build_graph(
        graph_spec(check_texts({"k.rules": kinds}), "g"),
        {"data": {"recs": records, "others": others}},
    )
    recs, more = graph.by_kind["rec"], graph.by_kind["other"]
    assert [n[1] for n in recs] == [n[1] for n in more] == list(range(400))
    assert all(a[1] is b[1] for a, b in zip(recs, more, strict=True))


def test_a_converted_or_narrowed_record_is_a_plain_copy_and_the_record_is_untouched() -> None:
    wide = {f"extra{i}": i for i in range(8)}  # more members than the kind has fields
    records = [
        {"name": "r0", "cost": 1.25, "n": 2, "next": "r1"},  # a decimal to hold exactly
        {**wide, "ok": True, "name": "r1"},
        {"name": "r2", "cost": 0.5, "extra": [1]},
    ]
    written = copy.deepcopy(records)
    graph = build_graph(
        graph_spec(check_texts({"k.rules": _KINDS}), "g"), {"data": {"recs": records}}
    )
    held = [graph.attrs[n] for n in graph.by_kind["rec"]]
    assert records == written  # the document's records are as read
    assert not graph.problems
    assert all(h.__class__ is dict and h is not r for h, r in zip(held, records, strict=True))
    assert [list(h) for h in held] == [list(records[0]), ["name", "ok"], list(records[2])]
    assert held[0]["cost"] == Fraction(5, 4) and held[2]["cost"] == Fraction(1, 2)
    held[0]["n"] = 3  # each copy is its own
    assert records[0]["n"] == 2 and "n" not in held[2]


# The records' schema: what `build_graph` may take as proven once a document passed it.
_SCHEMA = {
    "type": "object",
    "properties": {
        "recs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "n": {"oneOf": [{"type": "null"}, {"type": "integer"}]},
                    "ok": {"type": ["boolean", "null"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "cost": {"type": "integer"},
                    "blob": {"type": "object"},
                },
            },
        }
    },
}
_SCHEMA_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from(["r0", "r1", "x", 0.5]),
    st.lists(st.sampled_from(["r0", "t"]), max_size=2),
    st.dictionaries(st.sampled_from(["a"]), st.integers(0, 1), max_size=1),
)
# Mostly values the schema accepts, so that most documents pass it and are built both ways.
_SCHEMA_GOOD = {
    "name": st.sampled_from(["r0", "r1", "x"]),
    "n": st.one_of(st.none(), st.integers(-2, 3)),
    "ok": st.one_of(st.none(), st.booleans()),
    "tags": st.lists(st.sampled_from(["r0", "t", None]), max_size=2),
    "cost": st.integers(-2, 3),
    "blob": st.dictionaries(st.sampled_from(["a"]), st.integers(0, 1), max_size=1),
}


def _mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good` about nine times in ten, any value else."""
    return st.integers(0, 9).flatmap(lambda pick: _SCHEMA_VALUES if pick == 9 else good)


_SCHEMA_RECORDS = st.lists(
    st.fixed_dictionaries(
        {}, optional={member: _mostly(good) for member, good in _SCHEMA_GOOD.items()}
    ),
    max_size=5,
)


def test_a_schema_proves_the_attributes_it_holds_to_their_plain_type() -> None:
    spec = graph_spec(check_texts({"k.rules": _KINDS}), "g")
    # `blob` is `any`: never tested, so no test to leave out (`cost`, in whole USD, the
    # base unit, is held as read when it is an integer)
    proofs = {("rec", "/recs"): {"name", "n", "ok", "tags", "cost"}}
    assert graph_proofs(spec, {"data": _SCHEMA}) == proofs
    assert graph_proofs(spec, {"other": _SCHEMA}) == {}


# The same, but a list's items may be null: `tags` is then no longer proven.
_NULLABLE_ITEMS = copy.deepcopy(_SCHEMA)
_NULLABLE_ITEMS["properties"]["recs"]["items"]["properties"]["tags"]["items"] = {
    "oneOf": [{"type": "null"}, {"type": "string"}]
}


@pytest.mark.parametrize("schema", [_SCHEMA, _NULLABLE_ITEMS], ids=["texts", "nullable items"])
@settings(max_examples=300, deadline=None)
@given(records=_SCHEMA_RECORDS)
def test_records_that_passed_their_schema_build_the_same_graph_with_its_proofs(
    schema: dict[str, Any], records: list[dict[str, Any]]
) -> None:
    document = {"recs": records}
    if compile_schema(schema)(document):
        return  # a document that failed its schema is built with every test
    spec = graph_spec(check_texts({"k.rules": _KINDS}), "g")
    proven = build_graph(spec, {"data": document}, None, graph_proofs(spec, {"data": schema}))
    assert _shown(proven) == _built(records)


def test_problems_past_the_bound_are_counted_in_one_last_problem() -> None:
    # two problems a record (a number as its text key, a text as its number)
    records = [{"name": index, "n": "x"} for index in range(MAX_FINDINGS)]
    graph = build_graph(
        graph_spec(check_texts({"k.rules": _KINDS}), "g"), {"data": {"recs": records}}
    )
    assert [p.code for p in graph.problems] == ["ATTR_TYPE"] * (MAX_FINDINGS + 1)
    listed, last = graph.problems[:-1], graph.problems[-1]
    assert [p.location.pointer for p in listed[:3] if p.location] == [
        "/recs/0/name",
        "/recs/0/n",
        "/recs/1/name",
    ]
    assert last.message.startswith("more than 1,000 `ATTR_TYPE` problems in this document")
    assert last.location is not None and last.location.pointer == f"/recs/{MAX_FINDINGS // 2}/name"
    assert len(graph.by_kind["rec"]) == MAX_FINDINGS  # every record is still a node


_LABELLED = """ruleset labelled version "1"

kind box of g
  records data "/boxes"
  key id

kind label of g
  records data "/labels"
  key id
  edge box -> box
"""


def test_a_large_index_no_edge_follows_is_made_again_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(build, "_UNREAD_INDEX_KEPT", 1)  # every index is large
    data = {
        "boxes": [{"id": "b0"}, {"id": "b1"}, {"id": "b0"}],
        "labels": [{"id": "l0", "box": "b1"}, {"id": "l0", "box": "b0"}, {"id": 7}],
    }
    graph = build_graph(graph_spec(check_texts({"k.rules": _LABELLED}), "g"), {"data": data})
    # an edge reaches boxes by id: indexed as they are made, the first node of each id
    assert graph.ids == {"box": {"b0": ("box", 0), "b1": ("box", 1)}}
    assert graph.outgoing["box"][("label", 1)] == [("box", 0)]
    assert "label" not in graph.ids  # no edge follows labels: let go, made when asked
    assert graph.id_index("label") == {"l0": ("label", 0)}  # a key that is not text: none
    assert graph.id_count(("label", 1)) == 2 and graph.id_set("label") == {"l0"}
    assert graph.id_index("absent") == {}


def test_a_graph_and_its_edges_are_freed_without_the_cyclic_collector() -> None:
    """Answers' graphs are made and dropped by the thousand with the collector paused
    (engine/gcpolicy.py): a graph that its own parts referred back to would be held until
    a collection, a campaign's every answer graph at once."""
    records = [{"name": "r0", "next": "r1"}, {"name": "r1", "next": "r0"}]
    spec = graph_spec(check_texts({"k.rules": _KINDS}), "g")
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        graph = build_graph(spec, {"data": {"recs": [dict(r) for r in records]}})
        graph.outgoing["next"]
        graph.incoming("next")
        graph.id_set("rec")
        del graph
        assert gc.collect() == 0  # nothing was left for the collector to find
    finally:
        if enabled:
            gc.enable()


# ---- a protocol's bundle: the proofs of the schemas its documents passed ----------------

_SHIPPED = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("protocol", "bundle", "records"),
    [
        ("campaign", "campaign", ("session", "rating")),
        ("system_comparison", "system-comparison", ("sys_session", "sys_score")),
    ],
)
def test_a_shipped_bundle_builds_the_same_graph_with_its_schemas_proofs(
    protocol: str, bundle: str, records: tuple[str, ...]
) -> None:
    ruleset = load_ruleset([_SHIPPED / "rules"])
    program = compile_program(ruleset)
    decl = ruleset.checked.symbols.of_type(ast.ProtocolDecl)[protocol]
    loaded = load_protocol_bundle(_SHIPPED / "controls" / bundle, decl)
    spec = program.graph(decl.graph[0].text)
    proofs = schema_proofs(spec, decl, loaded.schemas)
    # each JSON Lines record schema proves most of its members; a document of many files
    # (`packets/*.json`) proves nothing, its schema being each file's
    assert all(proofs[(kind, "")] for kind in records)
    from_files = {
        r.document for kind in spec.kinds for r in kind.records if (kind.name, r.pointer) in proofs
    }
    assert not from_files & {c.name.text for c in decl.documents if c.glob}
    documents = {name: document.value for name, document in loaded.documents.items()}
    unquoted = {n: u for n, d in loaded.documents.items() if (u := d.member_unquoted())}
    with_proofs = build_graph(spec, documents, unquoted, proofs)
    without = build_graph(spec, documents, unquoted)
    assert with_proofs.problems == without.problems == ()
    assert with_proofs.by_kind == without.by_kind
    assert with_proofs.attrs == without.attrs
