"""Replaying a kind of events through a transition table (`replay` clause, `replay_*`).

The events of the clause's kind (those whose `where` attribute has its value), sorted by
the order attribute (ties in graph order), are grouped by the entity attribute; each
entity starts in the table's initial state and each of its events, in order, is judged:

- *duplicate*: an earlier event of the replay has the same idempotency key and the same
  content (the `over` attributes; by default every field but the id, the record key and
  the order attribute): a redelivery;
- *conflict*: an earlier event has the same key and other content;
- *stale*: neither of those, and the event's expected version is given and is not the
  entity's version (the number of events applied to it so far);
- *legal*: the table has a move from the entity's state on the event's name.

An event is *applied* when it is legal and neither a duplicate, a conflict nor stale: the
entity then moves and its version grows by one; otherwise its state stays. Replaying is
one sort and one pass over the events, done once per evaluation; every later call is a
lookup. What a state, event or outcome means is the table's business, never this module's.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.evaluate.runtime import Context, EvaluationError, number, order_family
from engine.graph.build import Graph
from engine.syntax import ast
from engine.valuekey import value_key


@dataclass(frozen=True, slots=True)
class Machine:
    """A transition table with its `replay` clause, as the evaluator reads it."""

    name: str
    kind: str
    entity: str
    event: str
    order: str
    where: str | None
    where_value: str | None
    key: str | None
    version: str | None
    initial: str
    terminal: frozenset[str]
    settlement: frozenset[str]
    moves: Mapping[tuple[str, str], str]
    outcomes: Mapping[str, str]
    record_key: tuple[str, ...] = ()  # the kind's `key` field, if it has one
    over: tuple[str, ...] = ()  # what a redelivery repeats; empty: every field
    ledger: str | None = None  # the number each applied event adds to the running total


def machine(decl: ast.TransitionsDecl, kind: ast.KindDecl | None = None) -> Machine:
    """The machine of a table that has a `replay` clause."""
    replay = decl.replay
    assert replay is not None
    return Machine(
        decl.name.text,
        replay.kind.text,
        replay.entity.text,
        replay.event.text,
        replay.order.text,
        replay.where.text if replay.where else None,
        replay.where_value,
        replay.key.text if replay.key else None,
        replay.version.text if replay.version else None,
        decl.initial.text,
        frozenset(s.text for s in decl.terminal),
        frozenset(s.text for s in decl.settlement),
        {(m.source.text, m.event.text): m.target.text for m in decl.moves},
        {o.state.text: o.result.text for o in decl.outcomes},
        (kind.key.text,) if kind is not None and kind.key is not None else (),
        tuple(ident.text for ident in replay.over),
        replay.ledger.text if replay.ledger else None,
    )


# One judged event: entity, event, before, after, applied, legal, duplicate, conflict,
# stale, version before, position in its entity's events. Kept as a tuple (the map a rule
# reads is made on each call): a replay of many events holds one small tuple per event.
Step = tuple[str, str, str, str, bool, bool, bool, bool, bool, int, int]


@dataclass(slots=True)
class EntityTrace:
    """What happened to one entity: its state after each of its events, by order value."""

    positions: list[Any]
    states: list[str]
    state: str
    version: int = 0
    events: int = 0
    settled: bool = False


@dataclass(frozen=True, slots=True)
class Replay:
    """A whole replay: each event's step (or why it could not be judged), each entity."""

    steps: dict[Any, Step | str]
    entities: dict[str, EntityTrace]
    problem: str | None
    # The ledger's running total after each event, by order value (for `replay_total`).
    positions: tuple[Any, ...] = ()
    totals: tuple[Any, ...] = ()


def _ordered(graph: Graph, spec: Machine) -> tuple[list[Any], str | None]:
    """The replay's events sorted by the order attribute, or why they cannot be."""
    attrs = {node: graph.node_attrs(node) for node in graph.by_kind.get(spec.kind, ())}
    events = [
        node
        for node, values in attrs.items()
        if spec.where is None or values.get(spec.where) == spec.where_value
    ]
    values = [attrs[node].get(spec.order) for node in events]
    families = {order_family(value) for value in values}
    if len(families) > 1 or None in families:
        culprit = next(
            node
            for node, value in zip(events, values, strict=True)
            if order_family(value) is None or order_family(value) != order_family(values[0])
        )
        return [], (
            f"`{spec.name}` replays the {spec.kind} events in the order of `{spec.order}`, "
            f"which must be all numbers or all texts: {spec.kind} "
            f"`{attrs[culprit].get('id')}` has {attrs[culprit].get(spec.order)!r}"
        )
    order = sorted(range(len(events)), key=lambda i: (values[i], i))
    return [events[i] for i in order], None


def _content(values: dict[str, Any], record: dict[str, Any] | None, skip: frozenset[str]) -> Any:
    """What a redelivery repeats: every field of the record but its id, its key field and
    its order: the record's fields as the node holds them (a declared attribute's value
    as read), the others as the record has them."""
    fields = {**(record or {}), **values}
    return value_key({k: v for k, v in fields.items() if k not in skip})


def replay(graph: Graph, spec: Machine) -> Replay:
    """Replay every event of `spec`'s kind on `graph`: one sort, one pass."""
    events, problem = _ordered(graph, spec)
    steps: dict[Any, Step | str] = {}
    entities: dict[str, EntityTrace] = {}
    keys: dict[Any, Any] = {}
    skip = frozenset({"id", spec.order, *spec.record_key})
    running: Any = 0
    positions: list[Any] = []
    totals: list[Any] = []
    for node in events:
        values = graph.node_attrs(node)
        positions.append(value_key(values.get(spec.order)))  # a float as its exact number
        totals.append(running)
        amount = values.get(spec.ledger) if spec.ledger is not None else None
        if amount is not None and problem is None and order_family(amount) != "number":
            problem = (
                f"`{spec.name}` adds up the `{spec.ledger}` of its events, which must be "
                f"numbers: {spec.kind} `{values.get('id')}` has {amount!r}"
            )
        entity, name = values.get(spec.entity), values.get(spec.event)
        if not isinstance(entity, str) or not isinstance(name, str):
            steps[node] = (
                f"`{spec.name}` replays {spec.kind} `{values.get('id')}`, which needs a text "
                f"`{spec.entity}` and `{spec.event}`"
            )
            continue
        trace = entities.get(entity)
        if trace is None:
            trace = entities[entity] = EntityTrace([], [], spec.initial)
        duplicate = conflict = stale = False
        key = values.get(spec.key) if spec.key else None
        if key is not None:
            content = (
                tuple(value_key(values.get(field)) for field in spec.over)
                if spec.over
                else _content(values, graph.record(node), skip)
            )
            seen = keys.setdefault(value_key(key), content)
            if seen is not content:
                duplicate, conflict = seen == content, seen != content
        expected = values.get(spec.version) if spec.version else None
        if expected is not None and expected != trace.version and not (duplicate or conflict):
            stale = True
        before = trace.state
        target = spec.moves.get((before, name))
        legal = target is not None
        applied = legal and not (duplicate or conflict or stale)
        steps[node] = (
            entity,
            name,
            before,
            target if applied and target is not None else before,
            applied,
            legal,
            duplicate,
            conflict,
            stale,
            trace.version,
            trace.events,
        )
        if applied and amount is not None and problem is None:
            running = totals[-1] = running + number(amount, "ledger")
        if applied and target is not None:
            trace.state = target
            trace.version += 1
            trace.settled = trace.settled or target in spec.settlement
        trace.events += 1
        trace.positions.append(positions[-1])
        trace.states.append(trace.state)
    return Replay(steps, entities, problem, tuple(positions), tuple(totals))


def _replay(ctx: Context, spec: Machine) -> Replay:
    key = "@replay:" + spec.name  # not an identifier, so never a metric's memo key
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = replay(ctx.graph, spec)
    if found.problem is not None:
        raise EvaluationError(found.problem)
    assert isinstance(found, Replay)
    return found


def replay_step(ctx: Context, spec: Machine, node: Any) -> dict[str, Any]:
    """How the replay judged one event: a map of its entity, event, state before and
    after, and whether it was applied, legal, a duplicate, a conflict or stale."""
    step = _replay(ctx, spec).steps.get(node) if node.__class__ is tuple else None
    if step is None:
        raise EvaluationError(f"`replay_step` needs a {spec.kind} event of `{spec.name}`")
    if isinstance(step, str):
        raise EvaluationError(step)
    entity, event, before, after, applied, legal, duplicate, conflict, stale, version, at = step
    return {
        "entity": entity,
        "event": event,
        "before": before,
        "after": after,
        "applied": applied,
        "legal": legal,
        "duplicate": duplicate,
        "conflict": conflict,
        "stale": stale,
        "version": version,
        "position": at,
        "terminal": after in spec.terminal,
    }


def replay_entity(ctx: Context, spec: Machine, entity: Any) -> dict[str, Any]:
    """One entity at the end of the replay: state, version, events seen and applied,
    whether it is terminal or was ever settled, its outcome and its history of states."""
    trace = _replay(ctx, spec).entities.get(entity) if isinstance(entity, str) else None
    if trace is None:
        trace = EntityTrace([], [], spec.initial)
    history = [spec.initial]
    for state in trace.states:
        if state != history[-1]:
            history.append(state)
    return {
        "state": trace.state,
        "version": trace.version,
        "events": trace.events,
        "applied": trace.version,
        "terminal": trace.state in spec.terminal,
        "settled": trace.settled,
        "outcome": spec.outcomes.get(trace.state),
        "history": history,
    }


def replay_entities(ctx: Context, spec: Machine) -> list[str]:
    """Every entity the replay drove, in the order of its first event."""
    return list(_replay(ctx, spec).entities)


def replay_total(ctx: Context, spec: Machine, position: Any) -> Any:
    """The ledger's running total once every event ordered at or before `position` is
    replayed: the sum of the `ledger` attribute over the applied events (0 before any)."""
    found = _replay(ctx, spec)
    if found.positions and order_family(position) != order_family(found.positions[0]):
        raise EvaluationError(
            f"`replay_total` compares a position with `{spec.order}`, found {position!r}"
        )
    place = bisect.bisect_right(found.positions, value_key(position))
    return found.totals[place - 1] if place else 0


def replay_at(ctx: Context, spec: Machine, entity: Any, position: Any) -> str:
    """The state of an entity once every event of it ordered at or before `position`
    is replayed (the initial state before its first event)."""
    trace = _replay(ctx, spec).entities.get(entity) if isinstance(entity, str) else None
    if trace is None:
        return spec.initial
    if trace.positions and order_family(position) != order_family(trace.positions[0]):
        raise EvaluationError(
            f"`replay_at` compares a position with `{spec.order}`, found {position!r}"
        )
    place = bisect.bisect_right(trace.positions, value_key(position))
    return trace.states[place - 1] if place else spec.initial
