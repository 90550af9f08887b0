"""Enumerating the `for` clauses of a rule: the cartesian product, filtered, in order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.evaluate.compile import ELEMENT_MARK as _ELEMENT
from engine.evaluate.compile import Compiled, Compiler, Context, Env
from engine.evaluate.runtime import coll
from engine.syntax import ast


@dataclass(frozen=True, slots=True)
class CompiledBinding:
    """One `for VAR in SOURCE where FILTER` clause, compiled.

    `element_of` is set when the source is a list attribute of an earlier bound node
    (`for e in c.evidence_ids`), so a failure can point at the list element itself.
    """

    var: str
    source: Compiled
    where: Compiled | None
    element_of: tuple[str, str] | None


def compile_bindings(
    compiler: Compiler, bindings: tuple[ast.Binding, ...]
) -> tuple[CompiledBinding, ...]:
    """Compile the `for` clauses of a rule."""
    compiled = []
    bound: set[str] = set()
    for binding in bindings:
        source = binding.source
        element_of = None
        if (
            isinstance(source, ast.Attribute)
            and isinstance(source.target, ast.Name)
            and source.target.id in bound
        ):
            element_of = (source.target.id, source.name)
        compiled.append(
            CompiledBinding(
                binding.var.text,
                compiler.expr(source),
                compiler.expr(binding.where) if binding.where is not None else None,
                element_of,
            )
        )
        bound.add(binding.var.text)
    return tuple(compiled)


def enumerate_bindings(
    bindings: tuple[CompiledBinding, ...], ctx: Context, env: Env | None = None
) -> Iterator[Env]:
    """Every environment the clauses bind, in order; a rule with no clauses binds once."""
    env = env or {}
    if not bindings:
        yield env
        return
    first, rest = bindings[0], bindings[1:]
    items = first.source(ctx, env)
    if items is None and first.element_of is not None:
        items = ()  # an absent list attribute binds nothing
    # The same iteration as compiled rules: sets in a fixed order, maps by their keys.
    for index, item in enumerate(coll(items, f"`for {first.var}`")):
        inner = {**env, first.var: item}
        if first.element_of is not None:
            inner[_ELEMENT + first.var] = (*first.element_of, index)
        if first.where is None or first.where(ctx, inner) is True:
            yield from enumerate_bindings(rest, ctx, inner)


def describe_binding(
    env: Env, ctx: Context, subject_document: str | frozenset[str] | None = None
) -> tuple[tuple[str, ...], str | None, str | None]:
    """The values a binding names, and the document and pointer to report it at.

    The location is the innermost list element bound in the subject document, else the
    outermost bound node of the subject document, else the innermost bound node.
    """
    subjects = (
        frozenset({subject_document}) if isinstance(subject_document, str) else subject_document
    ) or frozenset()
    ids: list[str] = []
    element: tuple[str, str] | None = None
    subject: tuple[str, str] | None = None
    innermost: tuple[str, str] | None = None
    for name, value in env.items():
        if name.startswith(_ELEMENT):
            owner, attribute, index = value
            owner_node = env.get(owner)
            attrs = ctx.graph.attrs.get(owner_node, {}) if isinstance(owner_node, tuple) else {}
            if attrs.get("@document") in subjects:
                element = (attrs["@document"], f"{attrs['@pointer']}/{attribute}/{index}")
        elif isinstance(value, tuple) and value in ctx.graph.attrs:
            attrs = ctx.graph.attrs[value]
            if attrs.get("id") is not None:
                ids.append(str(attrs["id"]))
            elif attrs["@pointer"]:
                ids.append(attrs["@pointer"])
            place = (attrs["@document"], attrs["@pointer"])
            innermost = place
            if subject is None and place[0] in subjects:
                subject = place
        else:
            ids.append(_scalar(value))
    document, pointer = element or subject or innermost or (None, None)
    return tuple(ids), document, pointer


def _scalar(value: Any) -> str:
    return "null" if value is None else str(value)
