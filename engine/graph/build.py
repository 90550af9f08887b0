"""Input documents -> a networkx graph, shaped only by the `kind` declarations of the rules.

A kind says which records of which document become its nodes (`records answer
"/final/claims"`), which attribute is the node's id (`key id`), what type each attribute
holds (`attr input_tokens: tokens`, `attr reserved_usd: USD as text`) and which fields are
links (`edge evidence_ids -> evidence`). Python here knows JSON pointers, JSON types and
unit conversion, nothing about any protocol.

The data is checked against its declaration while the graph is built, never coerced: a
value of the wrong JSON type (`"yes"` for a `bool`, `"40000"` for `tokens`) is an
`ATTR_TYPE` problem, a records pointer that finds nothing is `RECORDS_NOT_FOUND` unless
the clause is `optional`, and a record that is not an object is `RECORDS_TYPE`. Every
problem is collected (`Graph.problems`), located by document name and the JSON pointer of
the offending value; callers map the document name to its file and refuse.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from engine.bundle.schematypes import MemberTypes, record_member_types
from engine.check import CheckedRuleset
from engine.check.symbols import near_name
from engine.codecache import compiled
from engine.errors import Diagnostic, Location
from engine.fastinit import faster_init
from engine.limits import MAX_FINDINGS
from engine.pointer import escape_token, unescape_token
from engine.records import record_maker
from engine.units import UNITS
from engine.valuekey import exact_number

NodeKey = tuple[str, int]
Edges = dict[NodeKey, list[NodeKey]]  # the edges of one label: from each node, the nodes reached
if TYPE_CHECKING:  # networkx is imported when a command asks for the DiGraph, not per run
    import networkx as nx

_DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_UNSCALED = Fraction(1)
_SHOW_LIMIT = 40
_SIMPLE = frozenset({"number", "text", "bool", "list", "any"})


_NONE: frozenset[Any] = frozenset()
_NONE_TYPE = type(None)
_DICT_CLASS = frozenset({dict})
_TEXT_CLASS = frozenset({str})
_MAX_PLANS = 256
_PLAIN_TYPES: dict[tuple[str, bool], frozenset[Any]] = {
    ("text", True): frozenset({str}),
    ("text", False): frozenset({str}),
    ("id", True): frozenset({str}),
    ("id", False): frozenset({str}),
    ("bool", True): frozenset({bool}),
    ("bool", False): frozenset({bool}),
    ("number", True): frozenset({int}),
    ("any", True): frozenset({str, int, bool, float, list, dict, Decimal}),
    ("any", False): frozenset({str, int, bool, float, list, dict, Decimal}),
}


@dataclass(frozen=True, slots=True)
class AttrSpec:
    """One declared attribute: its name, its type as written and how its values are read.

    `category` is `number` (a unit or `number`; `scale` converts to base units), `text`,
    `bool`, `list` (of texts), `any`, or `id` (a kind name: the id of a node, a text).
    """

    name: str
    type: str
    category: str
    scale: Fraction = _UNSCALED
    as_text: bool = False

    # The JSON types whose values the graph holds as they are, with no check to make but
    # their type: the common case, decided without building a pointer.
    plain_types: frozenset[Any] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        key = (self.category, self.scale == 1 and not self.as_text)
        object.__setattr__(self, "plain_types", _PLAIN_TYPES.get(key, _NONE))


@dataclass(frozen=True, slots=True)
class RecordsSpec:
    """One pointer of a `records` clause."""

    document: str
    pointer: str
    optional: bool = False


@dataclass(frozen=True, slots=True)
class KindSpec:
    """What the graph builder needs to know about one kind."""

    name: str
    records: tuple[RecordsSpec, ...]
    key: str | None
    attrs: tuple[AttrSpec, ...]
    edges: tuple[tuple[str, tuple[str, ...]], ...]
    within: str | None = None  # `within KIND`: the edge `within` to the containing record's node
    # whether an edge of the graph reaches the kind's nodes by id (else a large index of
    # its ids is made again only if a rule asks: see `build_graph`)
    target: bool = False
    # The members of a record that its node holds (see `_fields`), found once.
    fields: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    # The declared attributes' names, in declaration order.
    attr_names: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    # Per shape of a record (whether its document is plain, the class of each attribute's
    # value): the attributes that need a closer look. Records of one kind nearly always
    # share a shape, so most are checked by one tuple and one dictionary look-up.
    _plans: dict[tuple[Any, ...], tuple[int, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    # `held_as_read`, generated when the kind's first record is read.
    _held: list[Callable[[dict[str, Any]], bool]] = field(
        default_factory=list, init=False, repr=False, compare=False, hash=False
    )
    # `add_held`, likewise, per set of attributes whose tests a schema made redundant.
    _adders: dict[frozenset[str], _Adder] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    # What makes the kind's record copies (see `copy`).
    _new_record: Callable[[], dict[str, Any]] = field(
        default=dict, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", _fields(self))
        object.__setattr__(self, "attr_names", tuple(attr.name for attr in self.attrs))
        object.__setattr__(self, "_new_record", record_maker(("kind", self.name)))

    def copy(self, record: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
        """A plain dict of the members `names` that `record` has, in that order. The
        kind's copies share one key table (`engine.records`): a campaign copies every
        record with a number to convert, tens of thousands."""
        values = self._new_record()
        for name in names:
            if name in record:
                values[name] = record[name]
        return values

    @property
    def held_as_read(self) -> Callable[[dict[str, Any]], bool]:
        """The test of whether a record of a plain document holds every declared attribute
        as the graph holds it: each one absent, null or a plain value of its type (text, a
        boolean, an integer of an unscaled number, a list of texts), nothing to convert or
        to report. The common case, decided by code generated for the kind, one test per
        attribute; any other record is looked at attribute by attribute (`plan`)."""
        if not self._held:
            self._held.append(_held_as_read(self.attrs))
        return self._held[0]

    def add_held(self, proven: frozenset[str] = _NONE) -> _Adder:
        """`add_held(records, keys, attrs, index, numbers)`: the nodes of a run of records of a
        plain document, from its first, for as long as each record is held as read (no
        more members than the kind's fields, `held_as_read`, a text key): appended to
        `keys`, their attributes the records themselves, and each id's first node in
        `index`. Returns how many it added; the builder looks at the rest one by one.
        One loop generated for the kind, every test inline: the common case of every
        record of every answer. The attributes `proven` are not tested: the document's
        schema, which it passed, holds each to its plain type (`proven_attributes`)."""
        adder = self._adders.get(proven)
        if adder is None:
            adder = self._adders[proven] = _add_held(self, proven)
        return adder

    def plan(self, plain: bool, values: dict[str, Any]) -> tuple[int, ...]:
        """The indexes (into `attrs`) of the attributes of a record's `values` that are
        not plain values of their declared type: a list to check item by item, a number
        to convert or any value of the wrong type. In a document that is not plain (a YAML
        file with unquoted scalars) every attribute present is looked at."""
        shape = (plain, *map(type, map(values.get, self.attr_names)))
        found = self._plans.get(shape)
        if found is None:
            found = tuple(
                index
                for index, (attr, cls) in enumerate(zip(self.attrs, shape[1:], strict=True))
                if cls is not _NONE_TYPE and not (plain and cls in attr.plain_types)
            )
            if len(self._plans) < _MAX_PLANS:  # a hostile file's many shapes stay bounded
                self._plans[shape] = found
        return found


def _held_tests(attrs: tuple[AttrSpec, ...], indent: str, fail: str) -> list[str]:
    """The lines that run `fail` unless the record `get` reads from holds every attribute
    as the graph holds it (see `KindSpec.held_as_read`)."""
    lines = []
    for attr in attrs:
        read = f"get({attr.name!r})"
        if attr.category == "any":
            continue
        if attr.category == "list":
            lines += [  # the common class tested first: most values are present
                f"{indent}value = {read}",
                f"{indent}if value.__class__ is not list and value is not None: {fail}",
                f"{indent}if value and not TEXTS.issuperset(map(type, value)): {fail}",
            ]
        elif attr.plain_types:  # one class of plain values: text, a boolean, an integer
            (cls,) = attr.plain_types
            lines += [
                f"{indent}value = {read}",
                f"{indent}if value.__class__ is not {cls.__name__} and value is not None: {fail}",
            ]
        else:  # a scaled number, or a decimal written as text: always converted
            lines.append(f"{indent}if {read} is not None: {fail}")
    return lines


def _generated(lines: list[str], name: str, **names: Any) -> Any:
    namespace: dict[str, Any] = {"TEXTS": _TEXT_CLASS, **names}
    exec(compiled("\n".join(lines) + "\n", "<rulecheck kind>"), namespace)
    return namespace[name]


def _held_as_read(attrs: tuple[AttrSpec, ...]) -> Callable[[dict[str, Any]], bool]:
    """The test `KindSpec.held_as_read` of a kind with these attributes."""
    lines = ["def held_as_read(values):", "    get = values.get"]
    lines += _held_tests(attrs, "    ", "return False")
    lines.append("    return True")
    function: Callable[[dict[str, Any]], bool] = _generated(lines, "held_as_read")
    return function


_Adder = Callable[
    [list[dict[str, Any]], list[NodeKey], dict[NodeKey, Any], dict[str, NodeKey], list[int]],
    int,
]


def _add_held(kind: KindSpec, proven: frozenset[str]) -> _Adder:
    """The loop `KindSpec.add_held` of `kind`, the attributes `proven` left untested."""
    tested = tuple(attr for attr in kind.attrs if attr.name not in proven)
    lines = [
        "def add_held(records, keys, attrs, index, numbers):",
        "    start = number = len(keys)",
        "    append = keys.append",
        "    for record in records:",
        f"        if len(record) > {len(kind.fields)}: break",
        "        get = record.get",
        *_held_tests(tested, "        ", "break"),
        f"        node = ({kind.name!r}, numbers[number])",
    ]
    if kind.key is not None:
        lines += [
            f"        node_id = get({kind.key!r})",
            "        if node_id.__class__ is not str: break  # the builder reports it",
        ]
    lines += ["        attrs[node] = record", "        append(node)", "        number += 1"]
    if kind.key is not None:
        lines.append("        if node_id not in index: index[node_id] = node")
    lines.append("    return number - start")
    function: _Adder = _generated(lines, "add_held")
    return function


# The JSON Schema type that holds exactly the values of each plain class (`schemac`).
_SCHEMA_TYPE = {str: "string", bool: "boolean", int: "integer"}
_LIST_OR_NULL = frozenset({"array", "null"})
_TEXT_ONLY = frozenset({"string"})
# By kind and `records` pointer, the attributes whose type test a schema made redundant
# (`graph_proofs`).
Proofs = Mapping[tuple[str, str], frozenset[str]]
_PROOFS_NONE: Proofs = {}


def proven_attributes(kind: KindSpec, members: Mapping[str, MemberTypes]) -> frozenset[str]:
    """The attributes of `kind` whose type test can never fail on a record of a document
    that passed a schema fixing its `members`' types (`record_member_types`): the schema
    allows only null or the attribute's one plain class (a list: only texts in it)."""
    proven = set()
    for attr in kind.attrs:
        member = members.get(attr.name)
        if member is None:
            continue
        if attr.category == "list":
            holds = member.types <= _LIST_OR_NULL and member.item_types == _TEXT_ONLY
        elif len(attr.plain_types) == 1 and attr.category != "any":
            (cls,) = attr.plain_types
            holds = member.types <= {_SCHEMA_TYPE[cls], "null"}
        else:  # converted (a scaled number, a decimal as text) or never tested (`any`)
            holds = False
        if holds:
            proven.add(attr.name)
    return frozenset(proven)


def graph_proofs(
    spec: GraphSpec, schemas: Mapping[str, Any]
) -> dict[tuple[str, str], frozenset[str]]:
    """By kind and `records` pointer, the attributes whose type test `build_graph` may
    leave out for documents that passed these JSON Schemas (by document name)."""
    proofs = {}
    for kind in spec.kinds:
        for records in kind.records:
            schema = schemas.get(records.document)
            if schema is None:
                continue
            proven = proven_attributes(kind, record_member_types(schema, records.pointer))
            if proven:
                proofs[(kind.name, records.pointer)] = proven
    return proofs


@dataclass(frozen=True, slots=True)
class GraphSpec:
    """The kinds of one named graph (e.g. `answer` or `campaign`)."""

    name: str
    kinds: tuple[KindSpec, ...]
    # Per map of proofs (by identity, kept so that the identity is never reused): the
    # function that makes the graph's nodes (see `node_maker`).
    _makers: dict[int, tuple[object, _NodeMaker]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    @property
    def documents(self) -> frozenset[str]:
        """The input documents this graph reads."""
        return frozenset(records.document for kind in self.kinds for records in kind.records)

    def node_maker(self, proofs: Proofs) -> _NodeMaker:
        """`make(documents, builder, by_kind, attrs, ids, runs)`: every node of the graph
        into the tables, each kind's records read as `_add_records` reads them. Generated
        once per map of `proofs` (see `build_graph`): each kind's pointers are looked up
        step by step inline and each run of records goes to the kind's `add_held` loop;
        anything else (a pointer with `*`, a step that finds no member of an object, a
        value that is no object or list of objects, a document with unquoted YAML
        scalars) takes `_add_records`."""
        kept = self._makers.get(id(proofs))
        if kept is None:
            kept = self._makers[id(proofs)] = (proofs, _node_maker(self, proofs))
        return kept[1]


def _attr_spec(name: str, type_name: str, as_text: bool) -> AttrSpec:
    if type_name in UNITS:
        return AttrSpec(name, type_name, "number", UNITS[type_name].scale, as_text)
    if type_name in _SIMPLE:
        return AttrSpec(name, type_name, type_name, as_text=as_text)
    return AttrSpec(name, type_name, "id")  # a kind name (the checker knows no other)


def graph_spec(checked: CheckedRuleset, graph: str) -> GraphSpec:
    """The spec of graph `graph` from the kind declarations of a checked ruleset."""
    declared = [d for d in checked.symbols.kinds.values() if graph in {g.text for g in d.graphs}]
    targets = {t.text for d in declared for e in d.edges if not e.within for t in e.targets}
    kinds = []
    for decl in declared:
        kinds.append(
            KindSpec(
                decl.name.text,
                tuple(
                    RecordsSpec(r.document.text, p, r.optional)
                    for r in decl.records
                    for p in r.pointers
                ),
                decl.key.text if decl.key else None,
                tuple(_attr_spec(a.name.text, a.type.text, a.as_text) for a in decl.attrs),
                tuple(
                    (e.label.text, tuple(t.text for t in e.targets))
                    for e in decl.edges
                    if not e.within
                ),
                next((e.targets[0].text for e in decl.edges if e.within), None),
                decl.name.text in targets,
            )
        )
    return GraphSpec(graph, tuple(kinds))


@faster_init  # one per list of records read: a dozen an answer, thousands a campaign
@dataclass(frozen=True, slots=True)
class Run:
    """Consecutive nodes of one kind read from one place of a document: the elements of a
    list (`records` a list: node `start + i` is the record at `head/i`) or one record
    (`records` that record, at `head`). A node's place and record are found from its run
    when asked (a finding's location, a record's bytes): per node they would cost more
    than its attributes."""

    start: int
    document: str
    head: str
    records: list[Any] | dict[str, Any]
    declared: str  # the `records` pointer that found them, as declared (`/tasks/*/items`)

    def pointer(self, offset: int) -> str:
        """The JSON pointer of the run's record `offset`."""
        return f"{self.head}/{offset}" if self.records.__class__ is list else self.head

    def record(self, offset: int) -> dict[str, Any]:
        """The run's record `offset`."""
        records = self.records
        return records[offset] if isinstance(records, list) else records


_Runs = tuple[list[int], list[Run]]  # per kind: each run's start, and the runs
_Found = tuple[str, "list[Any] | dict[str, Any]"]  # a run of records found, before numbering


@dataclass(slots=True)
class Graph:
    """One input's graph: nodes with attributes and labelled edges, held as the flat indexes
    the evaluator reads (built once, then only read). `nx_graph()` gives the same graph as
    a networkx DiGraph for graph algorithms and export; it is built on first use, because
    per answer it would cost more than every link rule together (docs/performance.md)."""

    by_kind: dict[str, list[NodeKey]]
    attrs: dict[NodeKey, dict[str, Any]]
    # Per kind, each text id its nodes' `id` attributes hold, to the first node holding it
    # (read through `id_index`: a graph the builder made leaves out large ones no edge
    # follows).
    ids: dict[str, dict[str, NodeKey]]
    # Per edge label, the nodes each node reaches (every node of a kind with the edge has
    # an entry, in node order); a label's edges are made when first asked for
    # (`outgoing[label]`, see `LazyEdges`).
    outgoing: dict[str, Edges]
    # What the documents did not hold as the kinds declare (see the module docstring).
    problems: tuple[Diagnostic, ...] = ()
    # Per kind, where its nodes were read from (see `place` and `record`).
    runs: dict[str, _Runs] = field(default_factory=dict)
    # Per kind, the member of a node's attributes that holds its id (`key`), None for a
    # kind without ids; a kind not named here holds it as `id` (a graph given whole).
    keys: dict[str, str | None] = field(default_factory=dict)
    _id_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _incoming: dict[str, Edges] = field(default_factory=dict)
    _nx: nx.DiGraph | None = None
    # whether `ids` is made kind by kind from the nodes (a graph the builder made), rather
    # than given whole
    _ids_made: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.outgoing, LazyEdges):  # edges given whole (tests, tools)
            given, self.outgoing = self.outgoing, LazyEdges()
            self.outgoing.update(given)

    def edges(self) -> dict[str, Edges]:
        """The edges of every label, each made now if no rule has followed it yet, in the
        order of the kinds' declarations."""
        outgoing = self.outgoing
        assert isinstance(outgoing, LazyEdges)
        return {label: outgoing[label] for label in outgoing.labels()}

    def incoming(self, label: str) -> Edges:
        """Per node, the nodes whose `label` edges reach it, in the order of `outgoing`
        (derived once per label, when a rule first navigates it backwards: most labels
        are never followed that way). Made from the records when no rule has followed the
        label forwards yet: the edges of a one-to-one label held both ways were a tenth
        of a large campaign's peak memory, for rules that follow it one way at a time."""
        found = self._incoming.get(label)
        if found is None:
            outgoing = self.outgoing
            assert isinstance(outgoing, LazyEdges)  # made so in __post_init__
            if outgoing.get(label) is None and outgoing.can_make(label):
                found = self._incoming[label] = outgoing.backwards(label)
                return found
            found = {}
            for node, targets in outgoing[label].items():
                for target in targets:  # inline: a call per node cost 0.7 % of an answer
                    sources = found.get(target)
                    if sources is None:
                        found[target] = [node]
                    else:
                        sources.append(node)
            self._incoming[label] = found
        return found

    def let_go(self, labels: Iterable[str], backwards: Iterable[str] = ()) -> int:
        """Drop the edges of `labels` and the reversed edges of `backwards`, made again
        when next followed (see engine/evaluate/release.py); edges the graph was given
        whole are kept. Returns how many nodes' edges were dropped."""
        outgoing = self.outgoing
        assert isinstance(outgoing, LazyEdges)  # made so in __post_init__
        dropped = 0
        for label in labels:
            dropped += outgoing.forget(label)
        for label in backwards:
            dropped += len(self._incoming.pop(label, ()))
        return dropped

    def id_of(self, node: NodeKey) -> Any:
        """A node's id: its kind's key member (null for a kind without a key). A node's
        attributes are its record as read, so a kind keyed by another member than `id`
        has no `id` member of its own: every reader of an id asks here."""
        key = self.keys.get(node[0], "id")
        return None if key is None else self.attrs[node].get(key)

    def node_attrs(self, node: NodeKey) -> dict[str, Any]:
        """A node's attributes as the rules read them, its id as `id` (a copy where its
        record holds the id under another name, or an `id` member of its own that is
        not the node's id): for the readers that show or export a whole node."""
        values = self.attrs[node]
        key = self.keys.get(node[0], "id")
        if key == "id" or (key is None and "id" not in values):
            return values
        return {**values, "id": None if key is None else values.get(key)}

    def run_of(self, node: NodeKey) -> tuple[Run, int] | None:
        """The run a node was read from and its position in it; None for a node the graph
        was given rather than built from documents."""
        found = self.runs.get(node[0])
        if found is None:
            return None
        starts, runs = found
        at = bisect_right(starts, node[1]) - 1
        if at < 0:
            return None
        run = runs[at]
        return run, node[1] - run.start

    def place(self, node: NodeKey) -> tuple[str, str] | None:
        """The document a node was read from and the JSON pointer of its record there."""
        found = self.run_of(node)
        if found is None:
            return None
        run, offset = found
        return run.document, run.pointer(offset)

    def entry(self, node: NodeKey) -> tuple[str, int] | None:
        """The document a node was read from and the index of the entry of its list (a
        record of JSON Lines, a file of a many-file document) that holds it: the first
        reference token of `place(node)`'s pointer, read without writing the pointer (a
        campaign asks for every rating's record). None when that token is no index."""
        found = self.run_of(node)
        if found is None:
            return None
        run, offset = found
        head = run.head
        if head:
            first = head.split("/", 2)[1]
        elif run.records.__class__ is list:
            return run.document, offset
        else:
            return None
        return (run.document, int(first)) if first.isdigit() else None

    def record(self, node: NodeKey) -> dict[str, Any] | None:
        """The whole record a node was read from (its members no rule reads included)."""
        found = self.run_of(node)
        return None if found is None else found[0].record(found[1])

    def nx_graph(self) -> nx.DiGraph:
        """The graph as a networkx DiGraph: node attributes, with the document and pointer
        each node was read from as `@document` and `@pointer`, and edge `labels` (a set)."""
        if self._nx is None:
            import networkx as nx

            graph = nx.DiGraph()
            graph.add_nodes_from((node, self._exported(node)) for node in self.attrs)
            graph.add_edges_from(
                (u, v, {"labels": frozenset(ls)}) for (u, v), ls in self.labels().items()
            )
            self._nx = graph
        return self._nx

    def _exported(self, node: NodeKey) -> dict[str, Any]:
        attrs = self.node_attrs(node)
        place = self.place(node)
        if place is None:
            return dict(attrs)
        return {**attrs, "@document": place[0], "@pointer": place[1]}

    def labels(self) -> dict[tuple[NodeKey, NodeKey], set[str]]:
        """The labels of the edges from each node to each other, in the order the edges
        were made (derived from `outgoing` when asked: a set per edge held for the whole
        evaluation would cost more than the edges themselves)."""
        found: dict[tuple[NodeKey, NodeKey], set[str]] = {}
        for label, edges in self.edges().items():
            for node, targets in edges.items():
                for target in targets:
                    found.setdefault((node, target), set()).add(label)
        return found

    # `id_count` of every node of the kinds counted so far (`_counted`): generated code
    # reads a node's count here, and asks `id_count` only for a node it lacks.
    id_counts: dict[NodeKey, int] = field(default_factory=dict)
    _counted: set[str] = field(default_factory=set)
    _unions: dict[tuple[str, ...], list[NodeKey]] = field(default_factory=dict)

    def id_count(self, node: NodeKey) -> int:
        """How many nodes of `node`'s kind share its id (counted once per kind, for every
        node of it, into `id_counts`: rules ask per node)."""
        kind = node[0]
        counts = self.id_counts
        if kind not in self._counted:
            self._counted.add(kind)
            nodes = self.by_kind.get(kind, [])
            if len(self.id_index(kind)) == len(nodes):  # as many texts as nodes: all distinct
                counts.update(dict.fromkeys(nodes, 1))
            else:
                keyed = [(n, _hashable_id(self.id_of(n))) for n in nodes]
                counter = Counter(key for _, key in keyed)
                counts.update((n, counter[key]) for n, key in keyed)
        found = counts.get(node)
        if found is None:  # not a node of the graph's kind lists
            return sum(
                1
                for n in self.by_kind.get(kind, [])
                if _hashable_id(self.id_of(n)) == _hashable_id(self.id_of(node))
            )
        return found

    def kinds_union(self, kinds: tuple[str, ...]) -> list[NodeKey]:
        """`union()` of whole kinds: their nodes in order (a node is of one kind only), made
        once per graph for every rule that asks. Callers only read it."""
        found = self._unions.get(kinds)
        if found is None:
            found = []
            for kind in dict.fromkeys(kinds):
                found += self.by_kind.get(kind, ())  # extended in C: no step per node
            self._unions[kinds] = found
        return found

    def kinds_ids(self, kinds: tuple[str, ...]) -> frozenset[str]:
        """`ids(union(...))` of whole kinds: every text id of their nodes, from the kinds'
        indexes."""
        return frozenset().union(*(self.id_index(kind) for kind in kinds))

    def id_index(self, kind: str) -> Mapping[str, NodeKey]:
        """Each text id of the nodes of `kind`, to the first node holding it (for a graph
        the builder made, made again here when it let the index go: see `build_graph`)."""
        index = self.ids.get(kind)
        if index is not None:  # most look-ups: an index kept (no call, on an answer's path)
            return index
        if not self._ids_made:
            return {}
        return _kind_ids(self.ids, self.by_kind, self.attrs, self.keys, kind)

    def id_set(self, kind: str) -> frozenset[str]:
        """Every id of a kind (cached)."""
        if kind not in self._id_sets:
            self._id_sets[kind] = frozenset(self.id_index(kind))
        return self._id_sets[kind]


def _hashable_id(value: Any) -> Any:
    if value.__class__ is str:
        return value
    return value if isinstance(value, str | int | type(None)) else repr(value)


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer, or None when any step is missing."""
    return _lookup(document, pointer)[1]


def _lookup(document: Any, pointer: str) -> tuple[bool, Any, str]:
    """Whether an RFC 6901 pointer finds a value, the value (or None), and the pointer of
    the deepest value on its way that exists (where a missing target is reported)."""
    value = document
    if pointer == "":
        return True, value, ""
    for depth, token in enumerate(_tokens(pointer)):
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and _is_index(token) and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None, "".join(f"/{raw}" for raw in _raw_tokens(pointer)[:depth])
    return True, value, pointer


@lru_cache(maxsize=4096)  # the rules' pointers, read again for every input
def _raw_tokens(pointer: str) -> tuple[str, ...]:
    """The reference tokens of a pointer that starts with `/`, as written."""
    return tuple(pointer[1:].split("/"))


@lru_cache(maxsize=4096)
def _tokens(pointer: str) -> tuple[str, ...]:
    """The member names (or indexes) a pointer that starts with `/` steps through."""
    return tuple(unescape_token(raw) for raw in _raw_tokens(pointer))


def _is_index(token: str) -> bool:
    return token.isascii() and token.isdigit() and (token == "0" or not token.startswith("0"))


def to_exact(value: Any, scale: Fraction) -> Any:
    """A JSON number as an exact Fraction in base units (an int stays an int when unscaled);
    None for anything else, a boolean or a non-finite float included."""
    cls = value.__class__
    if cls is int:
        return value if scale == 1 else Fraction(value) * scale
    if cls is bool:
        return None
    if isinstance(value, int | Decimal):
        return (
            Fraction(value) * scale if not isinstance(value, Decimal) or value.is_finite() else None
        )
    if isinstance(value, float):
        return exact_number(value) * scale if math.isfinite(value) else None
    return None


def misspelt_members(spec: GraphSpec, graph: Graph) -> list[Diagnostic]:
    """An `ATTR_ABSENT` warning for each attribute or edge field a kind declares that none
    of its records holds, where they hold an undeclared member of a near name (`ammount`
    beside `amount`, see `near_name`): a misspelt name reads null on every record, so the
    rules over it judge nothing, without an error. Located (by document and pointer) at
    the first record that holds the near member. An attribute absent for another reason
    (an optional field no record of this input has) is not a warning."""
    found: list[Diagnostic] = []
    for kind in spec.kinds:
        runs = graph.runs.get(kind.name, ((), ()))[1]
        if not runs:
            continue
        declared = dict.fromkeys([*kind.attr_names, *(label for label, _ in kind.edges)])
        absent = [
            name
            for name in declared
            if name != kind.key and not any(name in record for _, _, record in _records(runs))
        ]
        if not absent:
            continue
        members: dict[str, tuple[Run, int]] = {}
        for run, offset, record in _records(runs):
            for member in record:
                members.setdefault(member, (run, offset))
        count = len(graph.by_kind[kind.name])  # a node for each record
        for name in absent:
            near = near_name(name, (m for m in members if m not in declared))
            if near is not None:
                run, offset = members[near]
                pointer = f"{run.pointer(offset)}/{escape_token(near)}"
                found.append(_absent(kind.name, name, near, count, run.document, pointer))
    return found


def _records(runs: Iterable[Run]) -> Iterator[tuple[Run, int, dict[str, Any]]]:
    """Each record of the runs, with its run and its offset in it."""
    for run in runs:
        if run.records.__class__ is list:
            for offset, record in enumerate(run.records):
                yield run, offset, record
        else:
            yield run, 0, run.record(0)


def _absent(kind: str, name: str, near: str, count: int, document: str, at: str) -> Diagnostic:
    records = "its record" if count == 1 else f"its {count} records"
    return Diagnostic(
        "ATTR_ABSENT",
        f"`{name}` of kind `{kind}` is in none of {records}, which hold `{near}`: every "
        f"rule reads `{name}` as null",
        Location(document, pointer=at),
        severity="warning",
        hint=f"did you mean `{near}`? declare the attribute as the records name it",
    )


def _links(value: Any) -> Sequence[str]:
    """The texts an edge attribute links by (items that are not text link nothing)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return ()


# ---- describing what was expected and what was found -----------------------------------------


def _expected(attr: AttrSpec) -> str:
    if attr.category == "number":
        unit = "" if attr.type == "number" else f" in `{attr.type}`"
        if attr.as_text:
            return f'a decimal written as text{unit} (`{attr.type} as text`), such as `"0.52"`'
        return f"a number{unit}"
    return {
        "text": "text",
        "bool": "a boolean",
        "list": "a list of texts",
    }.get(attr.category, f"the id of a `{attr.type}` (text)")


def _shown(text: str) -> str:
    return text if len(text) <= _SHOW_LIMIT else text[: _SHOW_LIMIT - 1] + "…"


def describe(value: Any) -> str:
    """What a value is, for messages: `a boolean `true``, `text `"yes"``, `an object`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean `{'true' if value else 'false'}`"
    if isinstance(value, int | float | Decimal):
        number = repr(float(value)) if isinstance(value, float) else str(value)
        return f"a number `{_shown(number)}`"
    if isinstance(value, str):
        return f"text `{_shown(json.dumps(value, ensure_ascii=False))}`"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, datetime.datetime):
        return f"a date and time `{value.isoformat()}`"
    if isinstance(value, datetime.date):
        return f"a date `{value.isoformat()}`"
    return f"a value of type `{type(value).__name__}`"


# ---- building ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Builder:
    """Collects the problems of one graph build, each located by document and pointer."""

    unquoted: Mapping[str, Mapping[str, tuple[str, str]]]
    problems: list[Diagnostic] = field(default_factory=list)
    # Each number as read (by its class, value and attribute's unit), as the graph holds
    # it: records repeat their figures, and an exact conversion costs microseconds.
    numbers: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    # Per document and code, the problems found: past `MAX_FINDINGS` they are counted,
    # one last problem saying so (a million bad records would be a million findings).
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    # The numbers of nodes, one object each for every kind: node `(kind, n)` holds the
    # `n` of this list (an integer past 256 is an object of its own, and a campaign's
    # kinds number 280,000 nodes; see `numbers_to`).
    node_numbers: list[int] = field(default_factory=list)

    def numbers_to(self, count: int) -> list[int]:
        """`node_numbers`, holding at least the numbers below `count`."""
        numbers = self.node_numbers
        if len(numbers) < count:
            numbers += range(len(numbers), count)
        return numbers

    def problem(
        self,
        code: str,
        message: str,
        document: str,
        pointer: str,
        hint: str | None = None,
        ids: tuple[str, ...] = (),
    ) -> None:
        seen = self.counts[document, code] = self.counts[document, code] + 1
        if seen > MAX_FINDINGS:
            if seen == MAX_FINDINGS + 1:
                more = (
                    f"more than {MAX_FINDINGS:,} `{code}` problems in this document: "
                    "from this one on they are not listed"
                )
                self.problems.append(Diagnostic(code, more, Location(document, pointer=pointer)))
            return
        location = Location(document, pointer=pointer)
        self.problems.append(Diagnostic(code, message, location, hint=hint, ids=ids))

    def bad_key(self, kind: KindSpec, value: Any, document: str, pointer: str) -> None:
        """A record whose `key` member is absent or not text: its node would have no id
        (found by nothing), or a number an id written as text never matches."""
        key = kind.key
        assert key is not None
        typed = any(attr.name == key for attr in kind.attrs)
        if value is None:
            message = f"a record of kind `{kind.name}` has no key `{key}`"
            self.problem("KEY_INVALID", message, document, pointer)
        elif not typed:  # a typed key's wrong type is already its ATTR_TYPE
            message = f"the key `{key}` of kind `{kind.name}` must be text, found {describe(value)}"
            self.problem("KEY_INVALID", message, document, f"{pointer}/{escape_token(key)}")

    def records(
        self, kind: KindSpec, spec: RecordsSpec, document: Any, resolved: int = 0
    ) -> list[_Found]:
        """The records a pointer finds, as runs (see `Run`); every problem with them reported.

        A token `*` steps through every element of the list (or member of the object)
        found so far; the rest of the pointer is looked up in each. The first `resolved`
        tokens are steps already taken: a `*` among them is a member of that name."""
        if not resolved and "*" not in (_raw_tokens(spec.pointer) if spec.pointer else ()):
            return self._records_at(kind, spec, document)
        tokens = spec.pointer.split("/")
        star = next((at for at in range(resolved + 1, len(tokens)) if tokens[at] == "*"), 0)
        if not star:
            return self._records_at(kind, spec, document)
        head, rest = "/".join(tokens[:star]), "/".join(["", *tokens[star + 1 :]])
        found, value, reached = _lookup(document, head)
        if isinstance(value, list):
            steps = [str(index) for index in range(len(value))]
        elif isinstance(value, dict):
            steps = [escape_token(member) for member in value]
        else:
            shown = f"`{head}`" if head else 'the whole document (`""`)'
            what = "finds nothing" if not found else f"holds {describe(value)}"
            message = (
                f"{shown} of document `{spec.document}` (kind `{kind.name}`) {what}: "
                "`*` steps through a list or an object"
            )
            if not spec.optional:
                self.problem("RECORDS_TYPE", message, spec.document, reached)
            return []
        kept: list[_Found] = []
        for step in steps:
            inner = RecordsSpec(spec.document, f"{head}/{step}{rest}", spec.optional)
            kept += self.records(kind, inner, document, star)
        return kept

    def _records_at(self, kind: KindSpec, spec: RecordsSpec, document: Any) -> list[_Found]:
        found, value, reached = _lookup(document, spec.pointer)
        if value.__class__ is list and _DICT_CLASS.issuperset(map(type, value)):
            return [(spec.pointer, value)] if value else []
        shown = f"`{spec.pointer}`" if spec.pointer else 'the whole document (`""`)'
        where = f"{shown} of document `{spec.document}` (kind `{kind.name}`)"
        if not found or value is None:
            if spec.optional:
                return []
            what = "finds nothing" if not found else "is null"
            hint = f"declare `records {spec.document} {_quoted(spec.pointer)} optional` if "
            hint += "the data may lack it"
            if "" in spec.pointer.split("/")[1:]:
                hint = (
                    'a pointer `/` names the member `""` of an object: write `""` for the '
                    "whole document"
                    if spec.pointer == "/"
                    else f'`{spec.pointer}` names a member `""` (an empty reference token)'
                )
            self.problem("RECORDS_NOT_FOUND", f"{where} {what}", spec.document, reached, hint)
            return []
        if isinstance(value, dict):
            return [(spec.pointer, value)]
        if not isinstance(value, list):
            self.problem(
                "RECORDS_TYPE",
                f"{where} must be an object or a list of objects, found {describe(value)}",
                spec.document,
                spec.pointer,
            )
            return []
        kept: list[_Found] = []
        for index, record in enumerate(value):
            pointer = f"{spec.pointer}/{index}"
            if isinstance(record, dict):
                kept.append((pointer, record))
            else:
                self.problem(
                    "RECORDS_TYPE",
                    f"record {index} of {where} must be an object, found {describe(record)}",
                    spec.document,
                    pointer,
                )
        return kept

    def attribute(
        self, kind: KindSpec, attr: AttrSpec, value: Any, document: str, pointer: str, node_id: Any
    ) -> Any:
        """The value of `attr` as the graph holds it (exact numbers in base units); the
        value as found, and a problem, when it is not of the declared type. Not None."""
        category = attr.category
        if category == "any":
            return value
        if category == "number":
            exact = self.number(attr, value)
            if exact is not None:
                return exact
        elif category == "bool":
            if value.__class__ is bool:
                return value
        elif category == "list":
            if isinstance(value, list):
                return self._texts(kind, attr, value, document, pointer, node_id)
        elif self._is_text(value, document, pointer):  # text, or the id of a node
            return value
        self._wrong(kind, attr, value, document, pointer, node_id)
        return value

    def number(self, attr: AttrSpec, value: Any) -> Any:
        """A number attribute's value in base units, None when it is not one."""
        key = (value.__class__, value, attr.scale, attr.as_text)
        try:
            return self.numbers[key]
        except KeyError:
            pass
        except TypeError:  # a list or an object: never a number
            return None
        if attr.as_text:
            exact = None
            if value.__class__ is str and _DECIMAL_TEXT.fullmatch(value):
                exact = Fraction(value) * attr.scale
        else:
            exact = to_exact(value, attr.scale)
        if exact is not None:
            self.numbers[key] = exact
        return exact

    def _texts(
        self,
        kind: KindSpec,
        attr: AttrSpec,
        items: list[Any],
        document: str,
        pointer: str,
        node_id: Any,
    ) -> list[Any]:
        for index, item in enumerate(items):
            at = f"{pointer}/{index}"
            if not self._is_text(item, document, at):
                self._wrong(kind, attr, item, document, at, node_id, f"item {index} of ")
        return items

    def _is_text(self, value: Any, document: str, pointer: str) -> bool:
        if value.__class__ is not str:
            return False
        unquoted = self.unquoted.get(document)
        return unquoted is None or pointer not in unquoted

    def _wrong(
        self,
        kind: KindSpec,
        attr: AttrSpec,
        value: Any,
        document: str,
        pointer: str,
        node_id: Any,
        part: str = "",
    ) -> None:
        expected = "text" if part else _expected(attr)
        found = describe(value)
        hint = None
        unquoted = self.unquoted.get(document, {}).get(pointer)
        wants_text = part or attr.category in ("text", "id", "list") or attr.as_text
        if unquoted is not None:  # what the user wrote, not what YAML made of it
            read_as, written = unquoted
            found = f"a {read_as} `{_shown(written)}`"
            if wants_text:
                hint = (
                    f"YAML reads the unquoted `{_shown(written)}` as a {read_as}: write "
                    f"`{_shown(json.dumps(written, ensure_ascii=False))}` for the text"
                )
        elif attr.category == "number" and not attr.as_text and value.__class__ is str:
            if _DECIMAL_TEXT.fullmatch(value):
                hint = (
                    f"the data writes a decimal as text: declare `attr {attr.name}: "
                    f"{attr.type} as text` if that is how it is written"
                )
        elif (
            attr.as_text
            and isinstance(value, int | float | Decimal)
            and value.__class__ is not bool
        ):
            hint = f'`{attr.type} as text` values are decimals written as text, such as `"0.52"`'
        ids = (node_id,) if isinstance(node_id, str) else ()
        self.problem(
            "ATTR_TYPE",
            f"{part}`{attr.name}` of kind `{kind.name}` must be {expected}, found {found}",
            document,
            pointer,
            hint,
            ids,
        )


def _texts_only(value: Any) -> bool:
    return value.__class__ is list and _TEXT_CLASS.issuperset(map(type, value))


def _quoted(pointer: str) -> str:
    return json.dumps(pointer, ensure_ascii=False)


def build_graph(
    spec: GraphSpec,
    documents: Mapping[str, Any],
    unquoted: Mapping[str, Mapping[str, tuple[str, str]]] | None = None,
    proven: Proofs | None = None,
) -> Graph:
    """Build the graph of `spec` from parsed input documents (absent documents add nothing).

    Every value is checked against its declaration; the problems are in `Graph.problems`
    (the graph is built all the same, an attribute of the wrong type holding the value as
    found: callers refuse such a graph, or only read it where a schema already failed).
    `unquoted` names, per document, the scalars of a YAML document that were written
    without quotes and that YAML reads as another type than a string, by JSON pointer:
    what YAML takes them for (`boolean`, `number`, `date`) and the text as written. Such a
    scalar is never text (`path: no`, `at: 2024-01-01`), and the problem says to quote it.
    `proven` names, by kind and `records` pointer, attributes whose type the documents'
    schemas, which they passed, already fixed (`graph_proofs`): they are not tested again.
    """
    builder = _Builder(unquoted or {})
    by_kind: dict[str, list[NodeKey]] = {}
    attrs: dict[NodeKey, dict[str, Any]] = {}
    ids: dict[str, dict[str, NodeKey]] = {}
    runs: dict[str, _Runs] = {}
    spec.node_maker(proven or _PROOFS_NONE)(documents, builder, by_kind, attrs, ids, runs)
    id_members = {kind.name: kind.key for kind in spec.kinds}
    graph = Graph(
        by_kind, attrs, ids, {}, problems=tuple(builder.problems), runs=runs, keys=id_members
    )
    graph._ids_made = True  # an index let go is made again when asked (`id_index`)
    graph.outgoing = LazyEdges(_edge_maker(spec, graph))
    _within_edges(spec, graph)
    return graph


# Made with the nodes at the cost of one look-up each, an index no edge follows is kept
# while small: most are never read, and a large one was a campaign's 93,491 manifest
# entries (4 MiB), made again the same if a rule asks.
_UNREAD_INDEX_KEPT = 4096

_NodeMaker = Callable[..., None]
_Into = tuple[list[NodeKey], dict[NodeKey, dict[str, Any]], dict[str, NodeKey]]
_ABSENT = object()  # a member a pointer's step does not find (no JSON value is this)


def _add_records(
    builder: _Builder,
    kind: KindSpec,
    records: RecordsSpec,
    document: Any,
    into: _Into,
    kind_runs: tuple[list[int], list[Run]],
    proven: frozenset[str],
) -> None:
    """The nodes of the records one `records` pointer finds in its document, each run of
    them noted in `kind_runs` (its start, and the run); every problem reported."""
    keys = into[0]
    starts, found_runs = kind_runs
    for head, found in builder.records(kind, records, document):
        run = Run(len(keys), records.document, head, found, records.pointer)
        starts.append(run.start)
        found_runs.append(run)
        _add_nodes(builder, kind, run, into, proven)


def _node_maker(spec: GraphSpec, proofs: Proofs) -> _NodeMaker:
    """The function `GraphSpec.node_maker` gives, generated."""
    names: dict[str, Any] = {
        "_ABSENT": _ABSENT,
        "DICTS": _DICT_CLASS,
        "Run": Run,
        "_add_records": _add_records,
        "_add_rest": _add_rest,
    }
    lines = [
        "def make(documents, builder, by_kind, attrs, ids, runs):",
        "    unquoted = builder.unquoted",
        "    numbers = builder.node_numbers",
    ]
    for k, kind in enumerate(spec.kinds):
        names[f"KIND{k}"] = kind
        lines.append("    keys = []; index = {}; starts = []; kind_runs = []")
        for r, records in enumerate(kind.records):
            proven = proofs.get((kind.name, records.pointer), _NONE)
            tag = f"{k}_{r}"
            names |= {f"RECORDS{tag}": records, f"PROOF{tag}": proven}
            names[f"ADD{tag}"] = kind.add_held(proven)
            lines += _records_lines(records, k, tag)
        name = repr(kind.name)
        kept = "" if kind.target else f"if len(index) < {_UNREAD_INDEX_KEPT}: "
        lines += [
            f"    by_kind[{name}] = keys",
            f"    {kept}ids[{name}] = index",
            f"    if kind_runs: runs[{name}] = (starts, kind_runs)",
        ]
    function: _NodeMaker = _generated(lines, "make", **names)
    return function


def _records_lines(records: RecordsSpec, k: int, tag: str) -> list[str]:
    """The lines of `_node_maker` that add the nodes of one `records` pointer of kind
    number `k` (`tag` names its constants)."""
    document, pointer = repr(records.document), repr(records.pointer)
    generic = (
        f"_add_records(builder, KIND{k}, RECORDS{tag}, document, (keys, attrs, index), "
        f"(starts, kind_runs), PROOF{tag})"
    )
    lines = [
        f"    document = documents.get({document}, _ABSENT)",
        "    if document is not _ABSENT:",
    ]
    if records.pointer and "*" in _raw_tokens(records.pointer):
        return [*lines, f"        {generic}"]
    lines.append("        found = document")
    # a step into a list (`/items/0`) finds nothing here, and the generic reading looks
    for token in _tokens(records.pointer) if records.pointer else ():
        step = f"found.get({token!r}, _ABSENT) if found.__class__ is dict else _ABSENT"
        lines.append(f"        found = {step}")
    return [
        *lines,
        "        held = None",
        f"        if {document} in unquoted: {generic}",
        "        elif found.__class__ is list and DICTS.issuperset(map(type, found)): held = found",
        "        elif found.__class__ is dict: held = [found]",
        f"        else: {generic}",
        "        if held:",
        "            start = len(keys)",
        "            if len(numbers) < start + len(held): builder.numbers_to(start + len(held))",
        f"            run = Run(start, {document}, {pointer}, found, {pointer})",
        "            starts.append(start); kind_runs.append(run)",
        f"            done = ADD{tag}(held, keys, attrs, index, numbers)",
        "            if done < len(held):",
        f"                _add_rest(builder, KIND{k}, run, (keys, attrs, index), held, done)",
    ]


def _add_nodes(
    builder: _Builder,
    kind: KindSpec,
    run: Run,
    into: _Into,
    proven: frozenset[str],
) -> None:
    """The nodes of one run of records. A node's attributes are its record itself when the
    record holds them as the graph does (no more members than the kind's fields, none to
    convert); else a copy of the members the rules can read, converted. Its id stays in
    its key member (`Graph.id_of`)."""
    keys, attrs, index = into
    records = run.records
    records = records if isinstance(records, list) else [records]
    numbers = builder.numbers_to(len(keys) + len(records))
    plain = run.document not in builder.unquoted  # no YAML scalar to re-check
    done = kind.add_held(proven)(records, keys, attrs, index, numbers) if plain else 0
    _add_rest(builder, kind, run, into, records, done)


def _add_rest(
    builder: _Builder,
    kind: KindSpec,
    run: Run,
    into: _Into,
    records: list[dict[str, Any]],
    done: int,
) -> None:
    """The nodes of a run's `records` from number `done` on, those `add_held` left: each
    record looked at closely (see `_add_nodes`)."""
    keys, attrs, index = into
    document = run.document
    plain = document not in builder.unquoted  # no YAML scalar to re-check
    fields = kind.fields
    kind_name, key, width, kind_attrs = kind.name, kind.key, len(fields), kind.attrs
    held_as_read = kind.held_as_read
    numbers = builder.numbers_to(len(keys) + len(records) - done)
    for offset in range(done, len(records)):
        record = records[offset]
        node: NodeKey = (kind_name, numbers[len(keys)])
        values = record if len(record) <= width else kind.copy(record, fields)
        node_id = values.get(key) if key else None
        if key and node_id.__class__ is not str:
            builder.bad_key(kind, node_id, document, run.pointer(offset))
        if not (plain and held_as_read(values)):
            for position in kind.plan(plain, values):
                attr = kind_attrs[position]
                value = values[attr.name]
                if plain and attr.category == "list" and _texts_only(value):
                    continue
                at = f"{run.pointer(offset)}/{escape_token(attr.name)}"
                held = builder.attribute(kind, attr, value, document, at, node_id)
                if held is not value:
                    if values is record:
                        values = kind.copy(record, record)
                    values[attr.name] = held
        attrs[node] = values
        keys.append(node)
        if node_id.__class__ is str and node_id not in index:
            index[node_id] = node


def _kind_ids(
    ids: dict[str, dict[str, NodeKey]],
    by_kind: Mapping[str, list[NodeKey]],
    attrs: Mapping[NodeKey, Mapping[str, Any]],
    keys: Mapping[str, str | None],
    kind: str,
) -> dict[str, NodeKey]:
    """`ids[kind]`, made now if it was not: each text id the nodes of `kind` hold in their
    key member, to the first node holding it."""
    index = ids.get(kind)
    if index is None:
        index = ids[kind] = {}
        key = keys.get(kind)
        if key is not None:
            for node in by_kind.get(kind, ()):
                node_id = attrs[node].get(key)
                if node_id.__class__ is str and node_id not in index:
                    index[node_id] = node
    return index


class LazyEdges(dict[str, Edges]):
    """The edges of each label, made when a rule first follows the label: a graph declares
    edges for every link field (an answer's `evidence_ids`, `final_ids`, ...), and most
    rules read those fields as lists, never navigating them. A label no kind declares has
    no edges."""

    __slots__ = ("_maker",)

    def __init__(self, maker: _EdgeMaker | None = None) -> None:
        super().__init__()
        self._maker = maker

    def __missing__(self, label: str) -> Edges:
        found = self._maker.edges(label) if self._maker is not None else {}
        self[label] = found
        return found

    def can_make(self, label: str) -> bool:
        """Whether the edges of `label` are made from the records' id fields (not given
        whole, nor `within` edges, made from where records are)."""
        return self._maker is not None and label in self._maker.by_label

    def backwards(self, label: str) -> Edges:
        """The edges of `label` reversed (`Graph.incoming`), made from the records."""
        return self._maker.incoming(label) if self._maker is not None else {}

    def forget(self, label: str) -> int:
        """Drop the edges of `label` when they can be made again; how many nodes' edges
        were dropped."""
        return len(self.pop(label, ())) if self.can_make(label) else 0

    def labels(self) -> list[str]:
        """Every label with edges: the declared ones in declaration order, then any other."""
        declared = self._maker.labels if self._maker is not None else []
        return [*declared, *(label for label in self if label not in declared)]


@dataclass(frozen=True, slots=True)
class _EdgeMaker:
    """What the edges of a label are made from: the kinds with the label (in declaration
    order), their nodes and attributes, and every kind's nodes by id."""

    by_label: dict[str, list[tuple[str, tuple[str, ...]]]]
    by_kind: dict[str, list[NodeKey]]
    attrs: dict[NodeKey, dict[str, Any]]
    # the graph's id indexes and key members, to index a target kind when first needed
    # (the parts, not the graph: a graph holds its edge maker)
    ids: dict[str, dict[str, NodeKey]]
    keys: dict[str, str | None]
    # per tuple of target kinds, the node each id reaches (see `_first_match`)
    reaches: dict[tuple[str, ...], Mapping[str, NodeKey]] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        """The declared labels, in declaration order."""
        return list(self.by_label)

    def edges(self, label: str) -> Edges:
        """From each node of a kind with edge `label`, the nodes its field's ids reach."""
        kinds = self.by_label.get(label, ())
        # One kind (most labels): the table made at its final size, never grown (each
        # growth held the old table and the new at once); `_add_edges` sets every entry
        edges = cast(Edges, dict.fromkeys(self.by_kind[kinds[0][0]])) if len(kinds) == 1 else {}
        for kind, targets in kinds:
            _add_edges(edges, label, self._reaches(targets), self.by_kind[kind], self.attrs)
        return edges

    def incoming(self, label: str) -> Edges:
        """`edges(label)` reversed, as `Graph.incoming` derives it, without making them."""
        found: Edges = {}
        for kind, targets in self.by_label.get(label, ()):
            _add_incoming(found, label, self._reaches(targets), self.by_kind[kind], self.attrs)
        return found

    def _reaches(self, targets: tuple[str, ...]) -> Mapping[str, NodeKey]:
        reaches = self.reaches.get(targets)
        if reaches is None:  # labels often share their targets (`final_ids` of two kinds)
            by_kind, attrs, ids, keys = self.by_kind, self.attrs, self.ids, self.keys
            reaches = self.reaches[targets] = _first_match(
                [_kind_ids(ids, by_kind, attrs, keys, t) for t in targets if t in by_kind]
            )
        return reaches


def _edge_maker(spec: GraphSpec, graph: Graph) -> _EdgeMaker:
    by_label: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for kind in spec.kinds:
        for label, targets in kind.edges:
            by_label.setdefault(label, []).append((kind.name, targets))
    return _EdgeMaker(by_label, graph.by_kind, graph.attrs, graph.ids, graph.keys)


_SHARING_TRIAL = 4096


def _add_edges(
    edges: Edges,
    label: str,
    reaches: Mapping[str, NodeKey],
    nodes: list[NodeKey],
    attrs: dict[NodeKey, dict[str, Any]],
) -> None:
    """The `label` edges of `nodes`: to the nodes their field's ids reach.

    The nodes that reach one node by a text share its list (and those that reach none
    the empty one): most records link once, many to the same node, and readers of edges
    never change a list. Where the first `_SHARING_TRIAL` such nodes reach as many nodes
    (one to one, such as a manifest's entry and its record), no list is shared: the table
    of lists to share would be as large as the edges, for nothing. Nor among no more
    nodes than that (an answer's): what sharing saves is small, and looking for a list
    to share cost more than making one."""
    no_edges: list[NodeKey] = []
    single: dict[NodeKey, list[NodeKey]] | None = {} if len(nodes) > _SHARING_TRIAL else None
    shared = False
    for node in nodes:
        value = attrs[node].get(label)
        if value.__class__ is str:
            target = reaches.get(value)
            if target is None:
                edges[node] = no_edges
            elif single is None:
                edges[node] = [target]
            else:
                found = single.get(target)
                if found is None:
                    found = single[target] = [target]
                    if len(single) == _SHARING_TRIAL and not shared:
                        single = None
                else:
                    shared = True
                edges[node] = found
        elif value is None:
            edges[node] = no_edges
        else:
            edges[node] = _reached(value, reaches)


def _reached(value: Any, reaches: Mapping[str, NodeKey]) -> list[NodeKey]:
    """The nodes a link field other than one text reaches: only a text is an id the index
    holds, so any other item finds nothing (a node is a non-empty tuple, so
    `filter(None, ...)` drops exactly the misses)."""
    if value.__class__ is list:
        try:
            return list(filter(None, map(reaches.get, value)))
        except TypeError:  # an item that cannot be hashed (a list or an object)
            pass
    return list(filter(None, map(reaches.get, _links(value))))


def _add_incoming(
    reversed_edges: Edges,
    label: str,
    reaches: Mapping[str, NodeKey],
    nodes: list[NodeKey],
    attrs: dict[NodeKey, dict[str, Any]],
) -> None:
    """The `label` edges of `nodes` reversed: to each node their field's ids reach, the
    nodes that reach it, in node order (what `_add_edges` makes, read backwards)."""
    for node in nodes:
        value = attrs[node].get(label)
        if value.__class__ is str:
            items: Sequence[Any] = (value,)
        elif value.__class__ is list:
            items = value  # read item by item: a list of ids is short, `_reached` a call more
        elif value is None:
            continue
        else:
            items = _links(value)
        for item in items:  # as `Graph.incoming` appends them, inline (see there)
            # only a text is an id the index holds: any other item reaches nothing
            target = reaches.get(item) if item.__class__ is str or isinstance(item, str) else None
            if target is None:
                continue
            sources = reversed_edges.get(target)
            if sources is None:
                reversed_edges[target] = [node]
            else:
                sources.append(node)


def _first_match(indexes: Sequence[Mapping[str, NodeKey]]) -> Mapping[str, NodeKey]:
    """The node an edge to any of the target kinds (their id indexes, in the order the
    edge names them) reaches by each id: of the kinds that hold the id, the one named
    first."""
    if len(indexes) == 1:
        return indexes[0]
    merged: dict[str, NodeKey] = {}
    for index in reversed(indexes):
        merged.update(index)
    return merged


def _fields(kind: KindSpec) -> tuple[str, ...]:
    """The members of a record that a node of `kind` holds: its attributes, its key and
    its edges' fields (the checker refuses a rule that reads any other)."""
    names = [attr.name for attr in kind.attrs] + [label for label, _ in kind.edges]
    if kind.key is not None:
        names.append(kind.key)
    return tuple(dict.fromkeys(names))


def _container(declared: str, found: str) -> str:
    """The pointer of the record that holds the record at `found`, found through the
    records pointer `declared`: `found` cut after the step its first `*` took."""
    steps = len(declared.split("/")[: declared.split("/").index("*", 1)])
    return "/".join(found.split("/")[: steps + 1])


def _within_edges(spec: GraphSpec, graph: Graph) -> None:
    """The `within` edge of every node of a `within KIND` kind, to the node of KIND built
    from the record that holds its record."""
    for kind in spec.kinds:
        if kind.within is None:
            continue
        at = {graph.place(n): n for n in graph.by_kind.get(kind.within, [])}
        edges = graph.outgoing.setdefault("within", {})
        for node in graph.by_kind[kind.name]:
            found = graph.run_of(node)
            assert found is not None  # a node the builder made
            run, offset = found
            container = (run.document, _container(run.declared, run.pointer(offset)))
            target = at.get(container)
            edges[node] = [target] if target is not None else []
