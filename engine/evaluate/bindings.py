"""What a binding of a rule's `for` clauses names, and where in the data to report it.

The clauses themselves are lowered to loops by `Compiler.rule_function`, once for every
rule kind.
"""

from __future__ import annotations

import json
from typing import Any

from engine.evaluate.compile import ELEMENT_MARK as _ELEMENT
from engine.evaluate.compile import Context, Env


def describe_binding(
    env: Env, ctx: Context, subject_document: str | frozenset[str] | None = None
) -> tuple[tuple[str, ...], str | None, str | None]:
    """The values a binding names (`binding_ids`), and the document and pointer to report
    it at.

    The location is the innermost list element bound in the subject document, else the
    outermost bound node of the subject document, else the innermost bound node.
    """
    subjects = (
        frozenset({subject_document}) if isinstance(subject_document, str) else subject_document
    ) or frozenset()
    element: tuple[str, str] | None = None
    subject: tuple[str, str] | None = None
    innermost: tuple[str, str] | None = None
    for name, value in env.items():
        if name.startswith(_ELEMENT):
            owner, attribute, index = value
            owner_node = env.get(owner)
            owned = ctx.graph.place(owner_node) if isinstance(owner_node, tuple) else None
            if owned is not None and owned[0] in subjects:
                element = (owned[0], f"{owned[1]}/{attribute}/{index}")
        elif isinstance(value, tuple) and value in ctx.graph.attrs:
            place = ctx.graph.place(value)
            if place is not None:
                innermost = place
                if subject is None and place[0] in subjects:
                    subject = place
    document, pointer = element or subject or innermost or (None, None)
    return binding_ids(env, ctx), document, pointer


def binding_ids(env: Env, ctx: Context) -> tuple[str, ...]:
    """The values a binding names, in binding order: a node's id (else the pointer of its
    record) and any other value, each as the reports write values (`value_text`). A gate's
    or a table's row needs these and no location: a node is placed (its pointer made) only
    when it has no id."""
    graph = ctx.graph
    ids: list[str] = []
    for name, value in env.items():
        if name.startswith(_ELEMENT):
            continue
        if isinstance(value, tuple) and value in graph.attrs:
            identity = graph.id_of(value)
            if identity is not None:
                ids.append(value_text(identity))
            else:
                place = graph.place(value)
                if place is not None and place[1]:
                    ids.append(place[1])
        else:
            ids.append(value_text(value))
    return tuple(ids)


def value_text(value: Any) -> str:
    """A bound value or a node's id as the reports write values: a text as itself, JSON's
    `null`, `true` and `false`, a list or an object as JSON in the data's order, an exact
    number as its text (`1/2`). A node's id is not always a text: a record that failed its
    schema is still linked, and its list id is written as JSON, never as Python writes it."""
    if value.__class__ is str:
        return value
    if value is None or value.__class__ is bool:
        return json.dumps(value)
    if isinstance(value, list | dict):
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # a YAML key JSON cannot write (a date): as read
            pass
    return str(value)
