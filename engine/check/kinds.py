"""Static checks of a `kind` declaration's records clauses and attribute encodings.

A records pointer is RFC 6901: empty for the whole document, else `/` and one reference
token per step. `/` alone is legal and names the member `""` of an object, which is almost
never what was meant: on a JSON Lines document (a list) it finds nothing at all. It is
reported as a warning, with the whole-document pointer `""` as the hint, and a pointer
with any other empty token likewise. A token `*` steps through every element of a list
(or member of an object). `as text` is only for attributes that hold numbers.

`within KIND` finds a node's container by position: KIND must take its records from the
same document at the pointer before the first `*` of each of this kind's pointers.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.check.symbols import location
from engine.errors import Diagnostic
from engine.syntax import ast
from engine.units import UNITS


def check_kind(decl: ast.KindDecl) -> list[Diagnostic]:
    """Every problem of `decl`'s records pointers and `as text` attributes."""
    found: list[Diagnostic] = []
    rule = decl.name.text
    for records in decl.records:
        for pointer in records.pointers:
            found += _pointer(pointer, records.span, rule)
    for attr in decl.attrs:
        type_name = attr.type.text
        if attr.as_text and type_name not in UNITS and type_name != "number":
            found.append(
                Diagnostic(
                    "AS_TEXT_TYPE",
                    f"attribute `{attr.name.text}` is of type `{type_name}`: only a unit or "
                    "`number` attribute can be written `as text`",
                    location(attr.span),
                    hint='`as text` reads decimal text such as `"0.52"` as an exact number',
                    rule=rule,
                )
            )
    return found


def _pointer(pointer: str, span: ast.Span, rule: str) -> list[Diagnostic]:
    if pointer and not pointer.startswith("/"):
        return [
            Diagnostic(
                "INVALID_POINTER",
                f"`{pointer}` is not a JSON pointer (it must be empty or start with `/`)",
                location(span),
                rule=rule,
            )
        ]
    tokens = pointer.split("/")[1:]
    if "" not in tokens:
        return []
    if pointer == "/":
        message = 'pointer `/` names the member `""` of an object, not the whole document'
        hint = 'write `""` for the whole document (a JSON Lines document is its list of records)'
    else:
        message = f'pointer `{pointer}` names a member `""` (an empty reference token)'
        kept = "".join(f"/{token}" for token in tokens if token)
        hint = f"did you mean `{kept}`?" if kept else 'write `""` for the whole document'
    return [
        Diagnostic(
            "POINTER_EMPTY_KEY", message, location(span), severity="warning", hint=hint, rule=rule
        )
    ]


def check_within(decl: ast.KindDecl, kinds: Mapping[str, ast.KindDecl]) -> list[Diagnostic]:
    """Every problem of `decl`'s `within KIND` clauses: the kind exists, and each of `decl`'s
    records pointers steps (`/*`) through records KIND takes from the same document."""
    found: list[Diagnostic] = []
    rule = decl.name.text
    for edge in (e for e in decl.edges if e.within):
        target = edge.targets[0].text
        container = kinds.get(target)
        if container is None:  # reported as the unknown target of an edge
            continue
        held = {(r.document.text, p) for r in container.records for p in r.pointers}
        for records in decl.records:
            for pointer in records.pointers:
                if within_prefix(pointer) is None or (
                    (records.document.text, within_prefix(pointer)) not in held
                ):
                    message = (
                        f"`within {target}`: the records `{pointer}` of `{records.document.text}` "
                        f"do not step (`/*`) through the records of kind `{target}`"
                    )
                    hint = f"kind `{target}` takes its records from: " + (
                        ", ".join(f'{d} "{p}"' for d, p in sorted(held)) or "nothing"
                    )
                    where = location(records.span)
                    found.append(
                        Diagnostic("WITHIN_MISMATCH", message, where, hint=hint, rule=rule)
                    )
    return found


def within_prefix(pointer: str) -> str | None:
    """The pointer of a `within` container's records: `pointer` before its first `/*`
    (`""` for `/*/items`); None when it has no `*` step."""
    tokens = pointer.split("/")
    if "*" not in tokens[1:]:
        return None
    return "/".join(tokens[: tokens.index("*", 1)])
