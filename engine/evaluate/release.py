"""What an evaluation lets go once no later rule reads it.

An evaluation keeps what it derives for the rules that ask again: each metric's table of
values, the keyed indexes and orders of a kind, the edges of a label. On a large input
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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.check.protocols import DeclInfoLike
from engine.check.symbols import SymbolTable
from engine.evaluate.runtime import Context
from engine.syntax import ast

_RULES = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl, ast.TableDecl, ast.DecisionDecl)


@dataclass(frozen=True, slots=True)
class Held:
    """What a rule may read of an evaluation's caches: metric tables by metric name,
    indexes and orders by kind, edges by label."""

    metrics: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    labels: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.metrics or self.kinds or self.labels)

    def let_go(self, ctx: Context) -> None:
        """Drop from `ctx` what this names (each made again if asked again)."""
        for name in self.metrics:
            ctx.memo.pop(name, None)
        for key in [key for key in ctx.indexes if key[0] in self.kinds]:
            del ctx.indexes[key]
        for order in [key for key in ctx.orders if key[0] in self.kinds]:
            del ctx.orders[order]
        ctx.graph.let_go(self.labels)


def held_by(name: str, symbols: SymbolTable, infos: Mapping[str, DeclInfoLike]) -> Held:
    """What rule `name` may read: the metrics it calls, the kinds it reads and the labels
    it navigates, itself or through the metrics and constants it uses (not through the
    rules it reads, whose outcomes are kept)."""
    metrics: set[str] = set()
    kinds: set[str] = set()
    labels: set[str] = set()
    seen: set[str] = set()
    pending = [name]
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if ref in symbols.kinds:
            kinds.add(ref)
            continue
        decl = symbols.declarations.get(ref)
        if decl is None or (ref != name and isinstance(decl, _RULES)):
            continue
        if ref in symbols.metrics:
            metrics.add(ref)
        labels.update(_navigated(decl))
        pending += infos[ref].references if ref in infos else ()
    return Held(frozenset(metrics), frozenset(kinds), frozenset(labels))


def _navigated(decl: ast.Declaration) -> Iterable[str]:
    """Every label a declaration navigates (`x -> label`, `x <- label`)."""
    stack: list[object] = [decl]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
            continue
        if isinstance(node, ast.Navigate):
            yield node.label
        stack.extend(getattr(node, field) for field in ast.child_fields(type(node)))


def release_plan(held: Sequence[Held]) -> tuple[Held | None, ...]:
    """For each rule of a schedule (what each may read, in order), what to let go once it
    has run: what it may read and no later rule may (None where that is nothing)."""
    later: Held = Held()
    plan: list[Held | None] = []
    for reads in reversed(held):
        last = Held(
            reads.metrics - later.metrics, reads.kinds - later.kinds, reads.labels - later.labels
        )
        plan.append(last if last else None)
        later = Held(
            later.metrics | reads.metrics, later.kinds | reads.kinds, later.labels | reads.labels
        )
    return tuple(reversed(plan))
