"""Static checks of a transition table's `replay` clause and of the `replay_*` builtins.

A `replay` clause binds a table to a kind of events: which attribute names the entity,
which the event, which orders the events, and optionally which carries the idempotency
key and the expected version. Each must be an attribute of the kind with a type the
replay can use; the builtins that read a replay must name a table that has one.
"""

from __future__ import annotations

from engine.check.symbols import SymbolTable, did_you_mean, location
from engine.errors import Diagnostic
from engine.syntax import ast

# The builtins that read a replay, each with the entries of the map it returns (none for
# the ones that return a list or a text).
REPLAY_ENTRIES: dict[str, tuple[str, ...]] = {
    "replay_step": (
        "entity",
        "event",
        "before",
        "after",
        "applied",
        "legal",
        "duplicate",
        "conflict",
        "stale",
        "version",
        "position",
        "terminal",
    ),
    "replay_entity": (
        "state",
        "version",
        "events",
        "applied",
        "terminal",
        "settled",
        "outcome",
        "history",
    ),
    "replay_entities": (),
    "replay_at": (),
    "replay_total": (),
}
REPLAY_ARITY = {
    "replay_step": 2,
    "replay_entity": 2,
    "replay_entities": 1,
    "replay_at": 3,
    "replay_total": 2,
}

# What each clause attribute may be declared as: the type names of `attr`.
_TEXT_LIKE = "text"
_NUMERIC = "number"


def replayed_tables(symbols: SymbolTable) -> dict[str, ast.TransitionsDecl]:
    """The transition tables that declare a `replay` clause, by name."""
    return {
        name: decl
        for name, decl in symbols.of_type(ast.TransitionsDecl).items()
        if decl.replay is not None
    }


def _family(type_name: str, symbols: SymbolTable) -> str:
    """`text`, `number` or `other` for an attribute's declared type name."""
    if type_name == "text" or type_name in symbols.kinds:
        return _TEXT_LIKE  # a kind-typed attribute holds an id, a text
    if type_name == "any":
        return "any"
    if type_name in ("bool", "list"):
        return "other"
    return _NUMERIC  # `number` and every unit


def check_replay(decl: ast.TransitionsDecl, symbols: SymbolTable) -> list[Diagnostic]:
    """Every problem of one table's `replay` clause: an unknown kind, an attribute the
    kind lacks, or one whose type the replay cannot use."""
    replay = decl.replay
    if replay is None:
        return []
    name = decl.name.text
    kind = symbols.kinds.get(replay.kind.text)
    if kind is None:
        return [
            Diagnostic(
                "UNKNOWN_KIND",
                f"`{name}` replays unknown kind `{replay.kind.text}`",
                location(replay.kind.span),
                hint=did_you_mean(replay.kind.text, symbols.kinds),
                rule=name,
            )
        ]
    attrs = {a.name.text: a.type.text for a in kind.attrs}
    wanted: list[tuple[str, ast.Ident | None, tuple[str, ...]]] = [
        ("entity", replay.entity, (_TEXT_LIKE,)),
        ("event", replay.event, (_TEXT_LIKE,)),
        ("order", replay.order, (_TEXT_LIKE, _NUMERIC)),
        ("where", replay.where, (_TEXT_LIKE,)),
        ("key", replay.key, (_TEXT_LIKE,)),
        ("version", replay.version, (_NUMERIC,)),
        ("ledger", replay.ledger, (_NUMERIC,)),
        *(("content", ident, (_TEXT_LIKE, _NUMERIC, "other")) for ident in replay.over),
    ]
    diagnostics: list[Diagnostic] = []
    for role, ident, families in wanted:
        if ident is None:
            continue
        if ident.text not in attrs:
            diagnostics.append(
                Diagnostic(
                    "UNKNOWN_ATTRIBUTE",
                    f"kind `{kind.name.text}` has no attribute `{ident.text}` "
                    f"(the {role} of `{name}`'s replay)",
                    location(ident.span),
                    hint=did_you_mean(ident.text, attrs),
                    rule=name,
                )
            )
            continue
        family = _family(attrs[ident.text], symbols)
        if family not in (*families, "any"):
            shown = " or ".join(families)
            diagnostics.append(
                Diagnostic(
                    "TYPE_MISMATCH",
                    f"the {role} of `{name}`'s replay must be a {shown} attribute; "
                    f"`{ident.text}` is declared `{attrs[ident.text]}`",
                    location(ident.span),
                    rule=name,
                )
            )
    return diagnostics
