"""Threshold mutations of rule files, in memory: each ordering comparison made strict or
inclusive, and each number it reads moved by the smallest step of its unit. A mutant no
case catches (every case that passed still passes) is a boundary the cases do not test.

The rule files are never written: each mutant is the file's text with one token replaced,
parsed, checked and compiled beside the other files as loaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from engine.check import check_rules
from engine.errors import RulecheckError
from engine.freeze.hashing import hash_ruleset
from engine.limits import read_input
from engine.ruleset import Ruleset
from engine.syntax import ast
from engine.syntax.parse import grammar_version, parse_text
from engine.textlines import normalize_newlines
from engine.units import UNITS, to_base

ORDERING = ("<", "<=", ">", ">=")
FLIPPED = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}

# The smallest step of each unit, in base units, for a whole-number literal; a literal
# written with decimals moves by its last digit instead (`0.80` by 0.01, `1800.5 s` by 0.1 s).
UNIT_STEPS: dict[str | None, Fraction] = {
    None: Fraction(1),  # a count
    "tokens": Fraction(1),
    "Mtokens": Fraction(1),  # one token
    "USD": Fraction(1, 100),  # one cent
    "USD/Mtokens": Fraction(1, 100_000_000),  # one cent per Mtokens
    "s": Fraction(1),
    "min": Fraction(1),  # one second
    "h": Fraction(1),  # one second
    "%": Fraction(1, 100),  # one percentage point
}


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutation: where, in which declaration, the text replaced and its replacement."""

    file: str
    line: int
    column: int
    declaration: str
    original: str
    replacement: str
    start: int
    end: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def literal_step(number: ast.Number) -> Fraction:
    """The step a literal moves by, in base units: the last written digit for a literal
    with decimals, else the smallest step of its unit (`UNIT_STEPS`)."""
    digits = number.text.replace("_", "").lower()
    mantissa, _, exponent = digits.partition("e")
    decimals = len(mantissa.partition(".")[2])
    last = Fraction(10) ** (int(exponent or 0) - decimals)
    if last < 1:
        return to_base(last, number.unit)[0]
    return UNIT_STEPS.get(number.unit, Fraction(1))


def _decimal(value: Fraction) -> str | None:
    """`value` as exact decimal text, or None when it has no finite decimal form."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    for places in range(0, 30):
        scaled = value * 10**places
        if scaled.denominator == 1:
            whole = str(scaled.numerator).rjust(places + 1, "0")
            if places == 0:
                return sign + whole
            return f"{sign}{whole[:-places]}.{whole[-places:]}"
    return None


def _literal(value_base: Fraction, unit: str | None) -> str:
    """A literal for a value in base units: in `unit` when it has a finite decimal form
    there, else in the unit of scale 1 of the same dimension (`241 s` for `4 min` + 1 s)."""
    if unit is None:
        return _decimal(value_base) or str(value_base)
    known = UNITS[unit]
    text = _decimal(value_base / known.scale)
    if text is not None:
        return f"{text} {unit}"
    base = next(u for u in UNITS.values() if u.dimension == known.dimension and u.scale == 1)
    return f"{_decimal(value_base) or value_base} {base.name}"


def _offsets(text: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    return starts


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, tuple):
        yield from node
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for item in dataclasses.fields(node):
            if item.name not in ("span", "text", "note"):
                yield getattr(node, item.name)


def _walk(node: Any) -> Iterator[Any]:
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(reversed(list(_children(current))))


def _names(node: Any) -> set[str]:
    found: set[str] = set()
    for item in _walk(node):
        if isinstance(item, ast.Name):
            found.add(item.id)
        elif isinstance(item, ast.Call):
            found.add(item.func)
    return found


def _operands(decl: ast.Declaration) -> Iterator[tuple[str, Any, Any]]:
    """Each ordering comparison of a declaration: its operator, and the operands it bounds."""
    if isinstance(decl, ast.BudgetDecl):
        yield decl.op, (decl.total, decl.reserve), decl.ceiling
    for item in _walk(decl):
        if isinstance(item, ast.Binary) and item.op in ORDERING:
            yield item.op, item.left, item.right


def mutants(ruleset: Ruleset) -> list[Mutant]:
    """Every threshold mutation of the ruleset's files, in file and position order."""
    symbols = ruleset.checked.symbols.declarations
    texts: dict[str, str] = {}
    found: dict[tuple[str, int, str], Mutant] = {}
    bound_names: set[str] = set()
    literal_owner: list[tuple[ast.Number, str]] = []
    for rule_file in ruleset.checked.files:
        text = normalize_newlines(read_input(Path(rule_file.path)).decode("utf-8"))
        texts[rule_file.path] = text
        starts = _offsets(text)
        for decl in rule_file.declarations:
            for op, left, right in _operands(decl):
                site = _operator(text, starts, op, left, right)
                if site is not None:
                    start, line, column = site
                    found[(rule_file.path, start, FLIPPED[op])] = Mutant(
                        rule_file.path,
                        line,
                        column,
                        decl.name.text,
                        op,
                        FLIPPED[op],
                        start,
                        start + len(op),
                    )
                for side in (left, right):
                    bound_names |= _names(side)
                    literal_owner += [
                        (n, decl.name.text) for n in _walk(side) if isinstance(n, ast.Number)
                    ]
    # the numbers of the constants and metrics a bound reads, through other ones
    pending = sorted(bound_names)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen or name not in symbols:
            continue
        seen.add(name)
        decl = symbols[name]
        if isinstance(decl, ast.ConstDecl | ast.MetricDecl):
            body = decl.value if isinstance(decl, ast.ConstDecl) else decl.body
            literal_owner += [(n, name) for n in _walk(body) if isinstance(n, ast.Number)]
            pending += sorted(_names(body) - seen)
    for number, owner in literal_owner:
        span = number.span
        if span.file not in texts or span.line < 1:
            continue
        text = texts[span.file]
        starts = _offsets(text)
        start = starts[span.line - 1] + span.column - 1
        end = starts[span.end_line - 1] + span.end_column - 1
        written = text[start:end]
        base, _dimension = to_base(number.value, number.unit)
        step = literal_step(number)
        for delta in (-step, step):
            replacement = _literal(base + delta, number.unit)
            key = (span.file, start, replacement)
            found.setdefault(
                key,
                Mutant(span.file, span.line, span.column, owner, written, replacement, start, end),
            )
    return sorted(found.values(), key=lambda m: (m.file, m.start, m.replacement))


def _operator(
    text: str, starts: list[int], op: str, left: Any, right: Any
) -> tuple[int, int, int] | None:
    """The offset, line and column of a comparison's operator: the first `op` after the
    last token of its left side (a budget's total or reservation) and before its right."""
    sides = [s for s in (left if isinstance(left, tuple) else (left,)) if s is not None]
    ends = [s.span for s in sides if s.span.line > 0]
    if not ends or right.span.line < 1:
        return None
    last = max(ends, key=lambda s: (s.end_line, s.end_column))
    begin = starts[last.end_line - 1] + last.end_column - 1
    finish = starts[right.span.line - 1] + right.span.column - 1
    index = text.find(op, begin, finish)
    while index != -1 and text[index : index + 2] in ("<=", ">=", "<-") and len(op) == 1:
        index = text.find(op, index + 1, finish)
    if index == -1:
        return None
    line = next(n for n in range(len(starts), 0, -1) if starts[n - 1] <= index)
    return index, line, index - starts[line - 1] + 1


def mutant_ruleset(ruleset: Ruleset, mutant: Mutant) -> Ruleset | None:
    """The ruleset with one mutation applied, or None when the mutant does not check."""
    files = []
    for rule_file in ruleset.checked.files:
        if rule_file.path != mutant.file:
            files.append(rule_file)
            continue
        text = normalize_newlines(read_input(Path(rule_file.path)).decode("utf-8"))
        mutated = text[: mutant.start] + mutant.replacement + text[mutant.end :]
        try:
            files.append(parse_text(mutated, rule_file.path))
        except RulecheckError:
            return None
    checked = check_rules(files)
    if not checked.ok:
        return None
    return Ruleset(checked, hash_ruleset(checked, grammar_version()))


def changed_rules(before: Ruleset, after: Ruleset) -> set[str]:
    """The declarations whose hash the mutation changed (it and everything that uses it)."""
    old = {d.name: d.hash for d in before.hashed.declarations}
    return {d.name for d in after.hashed.declarations if old.get(d.name) != d.hash}
