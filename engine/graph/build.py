"""Input documents -> a networkx graph, shaped only by the `kind` declarations of the rules.

A kind says which records of which document become its nodes (`records answer
"/final/claims"`), which attribute is the node's id (`key id`), how attributes convert
(`attr input_tokens: tokens`) and which fields are links (`edge evidence_ids -> evidence`).
Python here knows JSON pointers and unit conversion, nothing about any protocol.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

import networkx as nx

from engine.check import CheckedRuleset
from engine.units import UNITS

NodeKey = tuple[str, int]
_DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_UNSCALED = Fraction(1)


@dataclass(frozen=True, slots=True)
class KindSpec:
    """What the graph builder needs to know about one kind."""

    name: str
    records: tuple[tuple[str, str], ...]
    key: str | None
    scales: tuple[tuple[str, Fraction], ...]
    edges: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class GraphSpec:
    """The kinds of one named graph (e.g. `answer` or `campaign`)."""

    name: str
    kinds: tuple[KindSpec, ...]

    @property
    def documents(self) -> frozenset[str]:
        """The input documents this graph reads."""
        return frozenset(doc for kind in self.kinds for doc, _ in kind.records)


def graph_spec(checked: CheckedRuleset, graph: str) -> GraphSpec:
    """The spec of graph `graph` from the kind declarations of a checked ruleset."""
    kinds = []
    for decl in checked.symbols.kinds.values():
        if graph not in {g.text for g in decl.graphs}:
            continue
        scales = tuple(
            (attr.name.text, UNITS[attr.type.text].scale if attr.type.text in UNITS else _UNSCALED)
            for attr in decl.attrs
            if attr.type.text in UNITS or attr.type.text == "number"
        )
        kinds.append(
            KindSpec(
                decl.name.text,
                tuple((r.document.text, p) for r in decl.records for p in r.pointers),
                decl.key.text if decl.key else None,
                scales,
                tuple((e.label.text, tuple(t.text for t in e.targets)) for e in decl.edges),
            )
        )
    return GraphSpec(graph, tuple(kinds))


@dataclass(slots=True)
class Graph:
    """One input's graph: nodes with attributes and labelled edges, held as the flat indexes
    the evaluator reads (built once, then only read). `nx_graph()` gives the same graph as
    a networkx DiGraph for graph algorithms and export; it is built on first use, because
    per answer it would cost more than every link rule together (docs/performance.md)."""

    by_kind: dict[str, list[NodeKey]]
    attrs: dict[NodeKey, dict[str, Any]]
    ids: dict[str, dict[str, NodeKey]]
    outgoing: dict[tuple[NodeKey, str], list[NodeKey]]
    incoming: dict[tuple[NodeKey, str], list[NodeKey]]
    labels: dict[tuple[NodeKey, NodeKey], set[str]] = field(default_factory=dict)
    _id_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _nx: nx.DiGraph | None = None

    def nx_graph(self) -> nx.DiGraph:
        """The graph as a networkx DiGraph: node attributes, and edge `labels` (a set)."""
        if self._nx is None:
            graph = nx.DiGraph()
            graph.add_nodes_from(self.attrs.items())
            graph.add_edges_from(
                (u, v, {"labels": frozenset(ls)}) for (u, v), ls in self.labels.items()
            )
            self._nx = graph
        return self._nx

    _id_counts: dict[str, Counter[Any]] = field(default_factory=dict)

    def id_count(self, node: NodeKey) -> int:
        """How many nodes of `node`'s kind share its id (cached per kind)."""
        kind = node[0]
        if kind not in self._id_counts:
            self._id_counts[kind] = Counter(
                _hashable_id(self.attrs[n].get("id")) for n in self.by_kind.get(kind, [])
            )
        return self._id_counts[kind][_hashable_id(self.attrs[node].get("id"))]

    def id_set(self, kind: str) -> frozenset[str]:
        """Every id of a kind (cached)."""
        if kind not in self._id_sets:
            self._id_sets[kind] = frozenset(self.ids.get(kind, {}))
        return self._id_sets[kind]


def _hashable_id(value: Any) -> Any:
    return value if isinstance(value, str | int | type(None)) else repr(value)


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer, or None when any step is missing."""
    value = document
    if pointer == "":
        return value
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(token)
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value


def to_exact(value: Any, scale: Fraction) -> Any:
    """A JSON number (or decimal string) as an exact Fraction in base units; else unchanged."""
    if isinstance(value, bool):
        return value
    if value.__class__ is int and scale == 1:
        return value
    if isinstance(value, int | Decimal):
        return Fraction(value) * scale
    if isinstance(value, float):
        return Fraction(repr(value)) * scale
    if isinstance(value, str) and _DECIMAL_TEXT.fullmatch(value):
        return Fraction(value) * scale
    return value


def _links(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def build_graph(spec: GraphSpec, documents: Mapping[str, Any]) -> Graph:
    """Build the graph of `spec` from parsed input documents (absent documents add nothing)."""
    by_kind: dict[str, list[NodeKey]] = {}
    attrs: dict[NodeKey, dict[str, Any]] = {}
    ids: dict[str, dict[str, NodeKey]] = {}
    for kind in spec.kinds:
        keys: list[NodeKey] = []
        index: dict[str, NodeKey] = {}
        for document_name, pointer in kind.records:
            if document_name not in documents:
                continue
            found = resolve_pointer(documents[document_name], pointer)
            records = list(enumerate(found)) if isinstance(found, list) else [(None, found)]
            for position, record in records:
                if not isinstance(record, dict):
                    continue
                node: NodeKey = (kind.name, len(keys))
                values = dict(record)
                for name, scale in kind.scales:
                    if name in values:
                        values[name] = to_exact(values[name], scale)
                node_id = values.get(kind.key) if kind.key else None
                values["id"] = node_id
                values["@document"] = document_name
                values["@pointer"] = pointer if position is None else f"{pointer}/{position}"
                attrs[node] = values
                keys.append(node)
                if isinstance(node_id, str) and node_id not in index:
                    index[node_id] = node
        by_kind[kind.name] = keys
        ids[kind.name] = index
    outgoing: dict[tuple[NodeKey, str], list[NodeKey]] = {}
    incoming: dict[tuple[NodeKey, str], list[NodeKey]] = {}
    labels: dict[tuple[NodeKey, NodeKey], set[str]] = {}
    for kind in spec.kinds:
        for label, targets in kind.edges:
            indexes = [ids[t] for t in targets if t in ids]
            for node in by_kind[kind.name]:
                reached = []
                for link in _links(attrs[node].get(label)):
                    target = None
                    for index in indexes:
                        target = index.get(link)
                        if target is not None:
                            break
                    if target is not None:
                        reached.append(target)
                        incoming.setdefault((target, label), []).append(node)
                        labels.setdefault((node, target), set()).add(label)
                outgoing[(node, label)] = reached
    return Graph(by_kind, attrs, ids, outgoing, incoming, labels)
