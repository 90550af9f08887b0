"""What an evaluation lets go once no later rule reads it.

An evaluation keeps what it derives for the rules that ask again: each metric's table of
values, each `having` index and `next_by` order, the edges of a label. On a large input
these are most of the memory the rules add to the graph (a 10,002-session campaign: a
table of 93,491 ratings' values, an index of them, their edges both ways), and a rule
early in the schedule may be their only reader. Each is let go after the last rule that
may read it, directly or through the metrics and constants it uses; the schedule is
fixed, so the last reader is known before the first rule runs.

Only memory depends on this: every one of these is made again, the same, when it is
asked for after it was let go (a metric's table, an index, a label's edges are caches of
pure functions of the input), so a reader this analysis did not foresee costs time,
never a different outcome.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.check.protocols import DeclInfoLike, uses
from engine.check.symbols import SymbolTable
from engine.evaluate.compile import having_key, memoised, next_by_key
from engine.evaluate.runtime import Context
from engine.heap import released
from engine.syntax import ast

_IndexKey = tuple[str, tuple[str, ...]]  # a `having` index: kind, attribute names
_OrderKey = tuple[str, str]  # a `next_by` order: kind, attribute name


@dataclass(frozen=True, slots=True)
class Held:
    """What a rule may read of an evaluation's caches: metric tables by metric name,
    `having` indexes and `next_by` orders by their keys, edges by label: followed
    forwards (`labels`) and backwards (`incoming`), each direction held on its own."""

    metrics: frozenset[str] = frozenset()
    indexes: frozenset[_IndexKey] = frozenset()
    orders: frozenset[_OrderKey] = frozenset()
    labels: frozenset[str] = frozenset()
    incoming: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.metrics or self.indexes or self.orders or self.labels or self.incoming)

    def __or__(self, other: Held) -> Held:
        return Held(
            self.metrics | other.metrics,
            self.indexes | other.indexes,
            self.orders | other.orders,
            self.labels | other.labels,
            self.incoming | other.incoming,
        )

    def __sub__(self, other: Held) -> Held:
        return Held(
            self.metrics - other.metrics,
            self.indexes - other.indexes,
            self.orders - other.orders,
            self.labels - other.labels,
            self.incoming - other.incoming,
        )

    def let_go(self, ctx: Context) -> None:
        """Drop from `ctx` what this names (each made again if asked again); after a large
        release, hand the freed memory back (`engine.heap`)."""
        entries = 0
        for name in self.metrics:
            entries += _entries(ctx.memo.pop(name, None))
        for index in self.indexes:
            found = ctx.indexes.pop(index, None)
            entries += len(found.nodes) if found is not None else 0
        for order in self.orders:
            sorted_nodes = ctx.orders.pop(order, None)
            entries += len(sorted_nodes.nodes) if sorted_nodes is not None else 0
        entries += ctx.graph.let_go(self.labels, self.incoming)
        released(entries)


def _entries(cached: Any) -> int:
    """How many entries a metric's cache held: its table of values by arguments, or the
    one value of a metric without parameters (a collection's items); none when absent."""
    if cached is None:
        return 0
    if isinstance(cached, dict | list | tuple | set | frozenset):
        return len(cached)
    return 1


def held_by(
    name: str,
    symbols: SymbolTable,
    infos: Mapping[str, DeclInfoLike],
    read: dict[str, Held] | None = None,
) -> Held:
    """What rule `name` may read: the tables of the metrics it calls, the indexes and
    orders it looks up and the labels it navigates, itself or through the metrics and
    constants it uses (not through the rules it reads, whose outcomes are kept).

    `read` keeps what each declaration reads itself across calls: the rules of a
    protocol share most of the metrics they use, each walked once so."""
    _rules, _kinds, used = uses(name, symbols, infos)
    metrics = symbols.metrics
    tables = frozenset(m for m in used & metrics.keys() if memoised(metrics[m], metrics))
    held = Held(metrics=tables)
    read = {} if read is None else read
    for reader in (name, *used):
        if reader not in read:
            read[reader] = _read_by(symbols.declarations[reader], symbols)
        held = held | read[reader]
    return held


def asked_by(
    name: str,
    symbols: SymbolTable,
    infos: Mapping[str, DeclInfoLike],
    computed: frozenset[str] = frozenset(),
) -> frozenset[str]:
    """The metrics with a table that rule `name` may ask for values: those it calls,
    itself or through constants and metrics, except a metric of more parameters called
    only inside the table of one of fewer that an earlier rule already computed
    (`computed`). Such a caller folds the callee's extra arguments into one value per
    argument of its own (a session's worst rating, from each pair of session and
    rating): asked again for what the earlier rule asked, it answers from its table."""
    metrics = symbols.metrics
    asked: set[str] = set()
    # each reference, with the computed metric with a table it is called inside (if any)
    pending: list[tuple[str, ast.MetricDecl | None]] = [
        (ref, None) for ref in (infos[name].references if name in infos else ())
    ]
    # by the metric's name: hashing a frozen AST node hashes its whole tree, every time
    visited: set[tuple[str, str | None]] = set()
    while pending:
        ref, inside = pending.pop()
        seen = (ref, None if inside is None else inside.name.text)
        if ref == name or ref not in infos or ref in asked or seen in visited:
            continue
        visited.add(seen)
        decl = symbols.declarations.get(ref)
        if isinstance(decl, ast.MetricDecl) and memoised(decl, metrics):
            if inside is not None and len(decl.params) > len(inside.params):
                continue  # only ever computed for arguments the caller has not seen
            asked.add(ref)
            inside = decl if ref in computed else None
        if isinstance(decl, ast.MetricDecl | ast.ConstDecl):
            pending += [(callee, inside) for callee in infos[ref].references]
    return frozenset(asked)


def _read_by(decl: ast.Declaration, symbols: SymbolTable) -> Held:
    """The indexes, orders and labels (each way) one declaration reads itself."""
    indexes: set[_IndexKey] = set()
    orders: set[_OrderKey] = set()
    labels: set[str] = set()
    incoming: set[str] = set()
    stack: list[object] = [decl]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
            continue
        if isinstance(node, ast.Navigate):
            (labels if node.outgoing else incoming).add(node.label)
        elif isinstance(node, ast.Call) and node.func not in symbols.metrics:
            if node.func == "having":
                indexes.add(having_key(node))
            elif node.func == "next_by":
                orders.add(next_by_key(node))
        stack.extend(getattr(node, field) for field in ast.child_fields(type(node)))
    return Held(
        indexes=frozenset(indexes),
        orders=frozenset(orders),
        labels=frozenset(labels),
        incoming=frozenset(incoming),
    )


def release_plan(
    held: Sequence[Held], asked: Sequence[frozenset[str]] | None = None
) -> tuple[Held | None, ...]:
    """For each rule of a schedule (what each may read, in order, and the metrics each
    may ask for values: `asked_by`, by default every metric it may read), what to let go
    once it has run: what it may read and no later rule may (None where that is nothing).

    A metric's table is kept for a later rule only if that rule asks the metric itself.
    A table read only through another metric's table is made again for the arguments
    that table has not seen (none, when the later rule asks what an earlier one did),
    and let go again after the rule: 10 MiB of a 10,002-session campaign's peak was one
    metric per pair of session and rating, kept for a table that asked only its callers.
    """
    asked = asked if asked is not None else [reads.metrics for reads in held]
    later = Held()
    plan: list[Held | None] = []
    for reads, computes in zip(reversed(held), reversed(asked), strict=True):
        last = reads - later
        plan.append(last if last else None)
        later = later | dataclasses.replace(reads, metrics=computes)
    return tuple(reversed(plan))
