"""Helpers for property tests of rule hashes and diffs (not a test module).

- `tokens` / `respace`: rewrite a rule text with other whitespace and comments between its
  tokens, which must change nothing.
- `number_sites` / `replace_spans` / `respell` / `changed_literal`: find every numeric
  literal with the declaration that holds it, and write it differently (same value) or
  with another value.
- `rulesets()`: a Hypothesis strategy for small rule files that lint clean: constants with
  units, derived constants, a metric, kinds, gates, links, a budget and a decision.
- `hash_texts` / `dependents`: hash rule texts in memory; who references a declaration.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from engine.check import CheckedRuleset, check_rules
from engine.freeze.hashing import HashedRuleset, hash_ruleset
from engine.syntax import ast
from engine.syntax.parse import grammar_version, parse_text
from engine.units import UNITS

# ---- tokens --------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\["\\nt])*")
  | (?P<number>[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?)
  | (?P<rate>USD/Mtokens)
  | (?P<op>->|<-|==|!=|<=|>=|=>)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[-+*/<>=(),.:{}%])
    """,
    re.VERBOSE,
)
# After these names a `(` must follow on the same line: the grammar's lookahead for
# quantifiers and aggregates skips whitespace but not comments.
_CALL_KEYWORDS = frozenset(
    {"all", "exists", "none", "values", "mean", "min", "max", "sum"}
    | {"median", "lower_quartile", "upper_quartile"}
)


def tokens(text: str) -> list[str]:
    """The tokens of a rule text, comments and whitespace left out."""
    found: list[str] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        assert match is not None, f"cannot tokenize {text[position : position + 20]!r}"
        if match.lastgroup not in ("ws", "comment"):
            found.append(match.group())
        position = match.end()
    return found


SEPARATORS = (" ", "  ", "\n", "\t", "\n\n  ", " # a comment\n", "\n# own line\n\t")


def respace(parts: Sequence[str], separators: Sequence[str]) -> str:
    """`parts` joined with the given separators (cycled); comments never split a call."""
    out = [parts[0]]
    for index, part in enumerate(parts[1:]):
        separator = separators[index % len(separators)] if separators else " "
        if parts[index] in _CALL_KEYWORDS and part == "(" and "#" in separator:
            separator = " "
        out += [separator, part]
    return "".join(out) + "\n"


# ---- numbers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class NumberSite:
    """A numeric literal and the declaration it is written in."""

    owner: str
    number: ast.Number


def _walk(node: Any) -> Iterator[Any]:
    yield node
    if isinstance(node, tuple):
        for item in node:
            yield from _walk(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for item in dataclasses.fields(node):
            yield from _walk(getattr(node, item.name))


def number_sites(rule_file: ast.RuleFile) -> list[NumberSite]:
    """Every numeric literal of a file, in source order, with its declaration's name."""
    return [
        NumberSite(decl.name.text, node)
        for decl in rule_file.declarations
        for node in _walk(decl)
        if isinstance(node, ast.Number)
    ]


def _offset(text: str, line: int, column: int) -> int:
    starts = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
    return starts[line - 1] + column - 1


def replace_spans(text: str, edits: Sequence[tuple[ast.Span, str]]) -> str:
    """`text` with each span replaced (spans must not overlap)."""
    ordered = sorted(edits, key=lambda edit: (edit[0].line, edit[0].column), reverse=True)
    for span, new in ordered:
        start = _offset(text, span.line, span.column)
        end = _offset(text, span.end_line, span.end_column)
        text = text[:start] + new + text[end:]
    return text


def decimal(value: Fraction) -> str | None:
    """`value` as a plain decimal, or None if it has no finite decimal form."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    rest, places = value.denominator, 0
    for prime in (2, 5):
        while rest % prime == 0:
            rest //= prime
    if rest != 1:
        return None
    while (value * 10**places).denominator != 1:
        places += 1
    digits = str((value * 10**places).numerator).rjust(places + 1, "0")
    return sign + (f"{digits[:-places]}.{digits[-places:]}" if places else digits)


def _group(digits: str) -> str:
    """`90000` -> `90_000`."""
    head = len(digits) % 3 or 3
    return "_".join([digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)])


def spellings(value: Fraction) -> list[str]:
    """Several spellings of one value: `0.8`, `0.80`, `8e-1`, `90_000`, `9E+4`..."""
    plain = decimal(value)
    assert plain is not None
    sign, body = ("-", plain[1:]) if plain.startswith("-") else ("", plain)
    whole, _, fraction = body.partition(".")
    found = {plain, f"{sign}{whole}.{fraction}00" if fraction else f"{sign}{whole}.0"}
    found.add(f"{sign}{_group(whole)}" + (f".{fraction}" if fraction else ""))
    digits = (whole + fraction).lstrip("0") or "0"
    exponent = -len(fraction)
    found.add(f"{sign}{digits}e{exponent}" if exponent else f"{sign}{digits}E+0")
    if fraction == "" and whole.endswith("0") and whole != "0":
        stripped = whole.rstrip("0")
        found.add(f"{sign}{stripped}E+{len(whole) - len(stripped)}")
    return sorted(found)


def _units_of(number: ast.Number) -> list[str | None]:
    dimension = UNITS[number.unit].dimension if number.unit else UNITS["%"].dimension
    return [None, *(n for n, u in UNITS.items() if u.dimension == dimension)]


def respell(number: ast.Number, choice: int) -> str:
    """Another spelling of the same value in base units: other digits, maybe another unit."""
    base = number.value * (UNITS[number.unit].scale if number.unit else 1)
    options: list[str] = []
    for unit in _units_of(number):
        if (
            unit is None
            and number.unit is not None
            and not UNITS[number.unit].dimension.dimensionless
        ):
            continue
        value = base / (UNITS[unit].scale if unit else 1)
        if decimal(value) is None:
            continue
        options += [f"{text} {unit}" if unit else text for text in spellings(value)]
    return sorted(options)[choice % len(options)]


def changed_literal(number: ast.Number, bump: int) -> str:
    """A literal of the same unit with another (positive) value."""
    value = abs(number.value) + Fraction(bump, 100)
    text = decimal(value)
    assert text is not None and value != number.value
    return f"{text} {number.unit}" if number.unit else text


# ---- hashing -------------------------------------------------------------------------------


def check_texts(texts: Mapping[str, str]) -> CheckedRuleset:
    checked = check_rules(parse_text(text, path) for path, text in texts.items())
    assert checked.ok, [d.message for d in checked.diagnostics]
    return checked


def hash_texts(texts: Mapping[str, str]) -> HashedRuleset:
    """Parse, check and hash rule texts (path -> text) in memory."""
    return hash_ruleset(check_texts(texts), grammar_version())


def hashes(hashed: HashedRuleset) -> dict[str, str]:
    return {d.name: d.hash for d in hashed.declarations}


def dependents(checked: CheckedRuleset, name: str) -> set[str]:
    """`name` and every declaration that references it, directly or not."""
    found = {name}
    grown = True
    while grown:
        grown = False
        for other, info in checked.infos.items():
            if other not in found and info.references & found:
                found.add(other)
                grown = True
    return found


def declaration_texts(text: str, rule_file: ast.RuleFile) -> list[str]:
    """The source text of each declaration of a file, cut at its span."""
    return [
        text[
            _offset(text, d.span.line, d.span.column) : _offset(
                text, d.span.end_line, d.span.end_column
            )
        ]
        for d in rule_file.declarations
    ]


# ---- generated rulesets --------------------------------------------------------------------

DIMENSIONS: dict[str, tuple[str | None, ...]] = {
    "number": (None, "%"),
    "tokens": ("tokens", "Mtokens"),
    "time": ("s", "min", "h"),
    "money": ("USD",),
}
# Gate templates per dimension; `{c}` is a constant or a literal of that dimension.
_GATES: dict[str, tuple[str, ...]] = {
    "number": (
        "median(t.R for t in task) >= {c}",
        "count(t in task where t.R > {c}) >= 1",
        "all(t in task: t.R <= {c})",
    ),
    "tokens": ("sum(t.tokens for t in task) <= {c}", "all(t in task: t.tokens < {c})"),
    "time": ("max(t.wall for t in task) < {c}", "mean(t.wall for t in task) <= {c}"),
    "money": ("sum(t.cost for t in task) <= {c}", "cost_of(1000 tokens) <= {c}"),
}
HEADER = """ruleset generated version "1"

kind task of campaign
  attr R: number
  attr tokens: tokens
  attr wall: s
  attr cost: USD
kind attempt of campaign
  attr tokens: tokens
  attr started: number
  edge attempt_of -> task
code TOO_BIG "an attempt used too many tokens"
const rate = {rate} USD/Mtokens
metric cost_of(used: tokens) = rate * used
"""


@st.composite
def _literal(draw: st.DrawFn, dimension: str) -> str:
    value = Fraction(draw(st.integers(1, 99_999)), 10 ** draw(st.integers(0, 3)))
    unit = draw(st.sampled_from(DIMENSIONS[dimension]))
    text = decimal(value)
    assert text is not None
    return f"{text} {unit}" if unit else text


@st.composite
def rulesets(draw: st.DrawFn) -> str:
    """A small rule file that lints clean, with numbers in every kind of position."""
    lines = [HEADER.format(rate=decimal(Fraction(draw(st.integers(1, 999)), 100)))]
    consts: dict[str, list[str]] = {dim: [] for dim in DIMENSIONS}
    index = 0
    for dimension in DIMENSIONS:
        for _ in range(draw(st.integers(1, 2))):
            name = f"c{index}_{dimension}"
            index += 1
            lines.append(f"const {name} = {draw(_literal(dimension))}")
            consts[dimension].append(name)
    for _ in range(draw(st.integers(0, 2))):  # derived constants
        dimension = draw(st.sampled_from(sorted(DIMENSIONS)))
        base = draw(st.sampled_from(consts[dimension]))
        name = f"d{index}_{dimension}"
        index += 1
        if draw(st.booleans()):
            lines.append(f"const {name} = {base} * {draw(_literal('number'))}")
        else:
            lines.append(f"const {name} = {base} + {draw(_literal(dimension))}")
        consts[dimension].append(name)

    def operand(dimension: str) -> str:
        if draw(st.integers(0, 3)) == 0:
            return draw(_literal(dimension))
        return draw(st.sampled_from(consts[dimension]))

    gates = []
    for number in range(draw(st.integers(1, 4))):
        dimension = draw(st.sampled_from(sorted(DIMENSIONS)))
        template = draw(st.sampled_from(_GATES[dimension]))
        lines.append(f"gate g{number} require " + template.format(c=operand(dimension)))
        gates.append(f"g{number}")
    if draw(st.booleans()):
        lines.append(
            "link l0 for t in task for a in t <- attempt_of "
            f"require a.tokens <= {operand('tokens')} else reject TOO_BIG"
        )
    if draw(st.booleans()):
        lines.append(
            "budget b0 for t in task ledger a in t <- attempt_of order by a.started "
            f"total a.tokens <= {operand('tokens')}"
        )
    if draw(st.booleans()):
        first, second = draw(st.sampled_from(gates)), draw(st.sampled_from(gates))
        lines.append(f"decision verdict when {first} and {second} => PASS otherwise => FAIL")
    return "\n".join(lines) + "\n"
