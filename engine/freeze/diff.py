"""Compare two rulesets (rule files or locks) by declaration hash, explaining threshold moves.

A changed number is judged by its polarity: in `x >= 0.80`, raising `0.80` makes the rule
stricter; in `x <= 90_000 tokens`, raising the ceiling makes it looser. A constant takes the
polarity of its uses.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.freeze.canonical import canonical_form
from engine.freeze.hashing import HashedRuleset
from engine.freeze.lock import read_lock
from engine.ruleset import load_ruleset
from engine.syntax import ast
from engine.units import to_base

LOCK_SUFFIXES = (".lock", ".yaml", ".yml")
_STRICTER_OPS = {(">=", ">"), ("<=", "<")}


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a diff: declarations with their hashes."""

    label: str
    ruleset_hash: str
    declarations: dict[str, ast.Declaration]
    hashes: dict[str, str]
    kinds: dict[str, str]


@dataclass(frozen=True, slots=True)
class ValueChange:
    """A number or bound operator that changed inside a declaration."""

    old: str
    new: str
    direction: str  # stricter | looser | changed


@dataclass(frozen=True, slots=True)
class DeclarationChange:
    """A declaration added, removed or changed between the two sides."""

    name: str
    kind: str
    status: str  # added | removed | changed
    old_hash: str | None
    new_hash: str | None
    values: tuple[ValueChange, ...] = ()
    via: tuple[str, ...] = ()


def change_lines(change: DeclarationChange) -> list[str]:
    """A change in `rulecheck diff`'s words: the declaration and its status, the hashes,
    each number or bound that moved and whether it became stricter or looser, and the
    changed declarations it changed through."""
    marker = {"added": "+", "removed": "-", "changed": "~"}[change.status]
    lines = [f"{marker} {change.kind} {change.name} ({change.status})"]
    if change.old_hash and change.new_hash:
        lines.append(f"    {change.old_hash} -> {change.new_hash}")
    for value in change.values:
        if value.old or value.new:
            lines.append(f"    {value.old} -> {value.new}: {value.direction}")
        else:
            lines.append("    definition changed")
    if change.via:
        lines.append("    through changed " + ", ".join(f"`{name}`" for name in change.via))
    return lines


@dataclass(frozen=True, slots=True)
class DiffResult:
    """Everything that differs; `identical` is True when every hash is equal."""

    old: Side
    new: Side
    changes: tuple[DeclarationChange, ...]
    note_changes: tuple[str, ...]

    @property
    def identical(self) -> bool:
        return not self.changes and self.old.ruleset_hash == self.new.ruleset_hash


def load_side(path: Path) -> Side:
    """A lock file or rule files/folder as a diff side."""
    if path.is_file() and path.suffix in LOCK_SUFFIXES:
        locked = read_lock(path)
        return Side(
            str(path),
            locked.ruleset_hash,
            {d.name.text: d for d in locked.declarations},
            locked.hashes,
            locked.kinds,
        )
    return ruleset_side(str(path), load_ruleset([path]).hashed)


def ruleset_side(label: str, hashed: HashedRuleset) -> Side:
    """A loaded, hashed ruleset as a diff side."""
    return Side(
        label,
        hashed.ruleset_hash,
        {d.name: d.decl for d in hashed.declarations},
        {d.name: d.hash for d in hashed.declarations},
        {d.name: d.kind for d in hashed.declarations},
    )


def diff_sides(old: Side, new: Side) -> DiffResult:
    """Added, removed and changed declarations, with threshold directions."""
    uses = _const_polarities(list(new.declarations.values()))
    changes: list[DeclarationChange] = []
    notes: list[str] = []
    for name in sorted(old.hashes.keys() | new.hashes.keys()):
        before, after = old.declarations.get(name), new.declarations.get(name)
        if after is None:
            changes.append(
                DeclarationChange(name, old.kinds[name], "removed", old.hashes[name], None)
            )
        elif before is None:
            changes.append(
                DeclarationChange(name, new.kinds[name], "added", None, new.hashes[name])
            )
        elif old.hashes[name] != new.hashes[name]:
            changes.append(_changed(name, before, after, old, new, uses))
        elif before.note != after.note:
            notes.append(name)
    return DiffResult(old, new, tuple(changes), tuple(notes))


def _changed(
    name: str,
    before: ast.Declaration,
    after: ast.Declaration,
    old: Side,
    new: Side,
    uses: dict[str, set[int]],
) -> DeclarationChange:
    values: list[ValueChange] = []
    if canonical_form(before) != canonical_form(after):
        derived = isinstance(after, ast.ConstDecl | ast.MetricDecl)
        polarity = _polarity_of_uses(uses.get(name, set())) if derived else 1
        _walk_pair(before, after, polarity, values)
        if not values:
            values.append(ValueChange("", "", "changed"))
    via = tuple(
        dep
        for dep in sorted(new.hashes)
        if dep != name
        and dep in old.hashes
        and old.hashes[dep] != new.hashes[dep]
        and _references(after, dep)
    )
    return DeclarationChange(
        name, new.kinds[name], "changed", old.hashes[name], new.hashes[name], tuple(values), via
    )


def _references(decl: ast.Declaration, name: str) -> bool:
    return name in _names(decl)


def _names(node: Any) -> set[str]:
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Call):
        return {node.func} | {n for arg in node.args for n in _names(arg)}
    if isinstance(node, ast.Ident):
        return {node.text}
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return {n for f in dataclasses.fields(node) for n in _names(getattr(node, f.name))}
    if isinstance(node, tuple):
        return {n for item in node for n in _names(item)}
    return set()


def _polarity_of_uses(polarities: set[int]) -> int:
    return next(iter(polarities)) if len(polarities) == 1 else 0


def _render_number(number: ast.Number) -> str:
    return number.text + (f" {number.unit}" if number.unit else "")


def _direction(delta_sign: int, polarity: int) -> str:
    product = delta_sign * polarity
    return "stricter" if product > 0 else "looser" if product < 0 else "changed"


def _walk_pair(old: Any, new: Any, polarity: int, out: list[ValueChange]) -> None:
    """Record differing numbers and bound operators between two trees of equal shape."""
    if type(old) is not type(new):
        if canonical_form(old) != canonical_form(new):
            out.append(ValueChange(_short(old), _short(new), "changed"))
        return
    if isinstance(old, ast.Number):
        before, old_dimension = to_base(old.value, old.unit)
        after, new_dimension = to_base(new.value, new.unit)
        if old_dimension != new_dimension:  # `1 tokens` -> `1 USD`: no order between them
            out.append(ValueChange(_render_number(old), _render_number(new), "changed"))
        elif before != after:
            sign = 1 if after > before else -1
            out.append(
                ValueChange(_render_number(old), _render_number(new), _direction(sign, polarity))
            )
        return
    if isinstance(old, tuple):
        if len(old) != len(new):
            out.append(ValueChange(f"{len(old)} items", f"{len(new)} items", "changed"))
            return
        for a, b in zip(old, new, strict=True):
            _walk_pair(a, b, polarity, out)
        return
    if not (dataclasses.is_dataclass(old) and not isinstance(old, type)):
        if old != new:
            out.append(ValueChange(_short(old), _short(new), "changed"))
        return
    if isinstance(old, ast.Binary | ast.BudgetDecl):
        _walk_comparison(old, new, polarity, out)
        return
    for item in dataclasses.fields(old):
        if item.name in ("span", "text", "note"):
            continue
        child = _child_polarity(old, item.name, polarity)
        _walk_pair(getattr(old, item.name), getattr(new, item.name), child, out)


def _walk_comparison(old: Any, new: Any, polarity: int, out: list[ValueChange]) -> None:
    if isinstance(old, ast.BudgetDecl):
        total, ceiling = _side_polarities(new.op)
        pairs = [
            ("bindings", 0),
            ("ledger", 0),
            ("total", total),
            ("reserve", total),
            ("ceiling", ceiling),
        ]
        op_old, op_new = old.op, new.op
    else:
        left, right = _side_polarities(old.op)
        pairs = [("left", left), ("right", right)]
        op_old, op_new = old.op, new.op
    if op_old != op_new:
        if (op_old, op_new) in _STRICTER_OPS:
            direction = _direction(1, polarity)
        elif (op_new, op_old) in _STRICTER_OPS:
            direction = _direction(-1, polarity)
        else:
            direction = "changed"
        out.append(ValueChange(f"`{op_old}`", f"`{op_new}`", direction))
    for field_name, factor in pairs:
        _walk_pair(getattr(old, field_name), getattr(new, field_name), polarity * factor, out)


def _side_polarities(op: str) -> tuple[int, int]:
    """Polarity of (left, right) operands: +1 where raising the value makes it stricter."""
    return {
        ">=": (-1, 1),
        ">": (-1, 1),
        "<=": (1, -1),
        "<": (1, -1),
        "+": (1, 1),
        "-": (1, -1),
        "*": (1, 1),
        "/": (1, -1),
    }.get(op, (0, 0))


def _child_polarity(node: Any, field_name: str, polarity: int) -> int:
    if isinstance(node, ast.Unary):
        return -polarity
    if isinstance(
        node, ast.Quantifier | ast.Aggregate | ast.Count | ast.Select | ast.Binding | ast.Ledger
    ):
        return 0 if field_name in ("where", "source") else polarity
    if isinstance(node, ast.Call | ast.MapLiteral | ast.SetLiteral):
        return polarity if isinstance(node, ast.MapLiteral) else 0
    if isinstance(node, ast.Conditional):  # the branches are the value, not the condition
        return 0 if field_name == "condition" else polarity
    return polarity


def _short(value: Any) -> str:
    if isinstance(value, ast.Ident):
        return value.text
    if isinstance(value, str | int | float | bool) or value is None:
        return str(value)
    return type(value).__name__


def _const_polarities(declarations: Sequence[ast.Declaration]) -> dict[str, set[int]]:
    """For each name, the polarities of the places that read it.

    A constant or metric read inside another constant's value or a metric's body takes the
    polarities of that constant's (or metric's) own uses, times its position there: with
    `const b = a * 2` and `require x >= b`, raising `a` is stricter.
    """
    found: dict[str, set[int]] = defaultdict(set)
    derived = {
        decl.name.text: decl.value if isinstance(decl, ast.ConstDecl) else decl.body
        for decl in declarations
        if isinstance(decl, ast.ConstDecl | ast.MetricDecl)
    }

    def visit(node: Any, polarity: int) -> None:
        if isinstance(node, ast.Name):
            found[node.id].add(polarity)
            return
        if isinstance(node, ast.Call):
            found[node.func].add(polarity)  # a metric's result is read with this polarity
            visit(node.args, 0)
            return
        if isinstance(node, ast.Binary):
            left, right = _side_polarities(node.op)
            visit(node.left, polarity * left)
            visit(node.right, polarity * right)
            return
        if isinstance(node, ast.BudgetDecl):
            total, ceiling = _side_polarities(node.op)
            visit((node.bindings, node.ledger), 0)
            visit(node.total, polarity * total)
            visit(node.reserve, polarity * total)
            visit(node.ceiling, polarity * ceiling)
            return
        if isinstance(node, tuple):
            for item in node:
                visit(item, polarity)
            return
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            for item in dataclasses.fields(node):
                visit(getattr(node, item.name), _child_polarity(node, item.name, polarity))

    for decl in declarations:
        if not isinstance(decl, ast.ConstDecl | ast.MetricDecl):
            visit(decl, 1)
    # Push polarities into constant values and metric bodies until nothing new is learnt
    # (each name has at most the three polarities -1, 0 and 1, so this ends).
    visited: dict[str, set[int]] = defaultdict(set)
    pending = True
    while pending:
        pending = False
        for name, body in derived.items():
            for polarity in sorted(found.get(name, set()) - visited[name]):
                visited[name].add(polarity)
                visit(body, polarity)
                pending = True
    return found


def refuse_unlocked(lock: Path, hashed: HashedRuleset) -> None:
    """Refuse a run whose rules differ from the lock it is pinned to (`--lock`): one
    `LOCK_MISMATCH` per declaration added, removed or changed since the lock, in `diff`'s
    words, located at the declaration in the rules loaded (at the lock for a removed one).

    Raises:
        RulecheckError: exit 1 when the rules differ from the lock; exit 2 when the lock
            cannot be read, exit 1 when it is malformed or tampered (as `read_lock`).
    """
    result = diff_sides(load_side(lock), ruleset_side("the rules loaded", hashed))
    if result.identical:
        return
    spans = {d.name: d.decl.span for d in hashed.declarations}
    problems = []
    for change in result.changes:
        head, *details = change_lines(change)
        if change.old_hash and change.new_hash:
            details = details[1:]  # the hashes: the message says what moved instead
        span = spans.get(change.name)
        where = (
            Location(span.file, span.line, span.column)
            if span is not None
            else Location(str(lock), pointer="/declarations")
        )
        message = f"the rules differ from the lock `{lock}`: {head[2:]}" + "".join(
            f"; {line.strip()}" for line in details
        )
        problems.append(Diagnostic("LOCK_MISMATCH", message, where, rule=change.name))
    if not problems:  # every declaration is equal: the grammar version differs
        message = (
            f"the rules differ from the lock `{lock}`: ruleset {hashed.ruleset_hash}, "
            f"locked {result.old.ruleset_hash}"
        )
        problems.append(Diagnostic("LOCK_MISMATCH", message, Location(str(lock))))
    hint = f"`rulecheck diff {lock} RULES` shows the same; re-freeze only a reviewed change"
    problems = [dataclasses.replace(p, hint=hint) for p in problems]
    raise RulecheckError(problems, ExitCode.REFUSED)
