"""The parser: golden AST dumps, exact spans and located syntax errors.

Golden files: every `tests/data/parse/NAME.rules` has a `NAME.ast.txt` holding `dump()` of
its parsed RuleFile. The dump leaves out spans by design (they are tested on their own
below), so a golden only changes when the tree does. To regenerate after an intended
grammar change, run `RULECHECK_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_parse.py` and
review the diff.
"""

from __future__ import annotations

import dataclasses
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from engine.errors import RulecheckError
from engine.syntax import ast
from engine.syntax.parse import parse_file, parse_text

DATA = Path(__file__).parent / "data" / "parse"
GOLDEN_INPUTS = sorted(DATA.glob("*.rules"))
_INLINE = (ast.Ident, ast.Name, ast.String, ast.Bool, ast.Null, ast.Number)


# ---- the dump ------------------------------------------------------------------------------


def _inline(node: Any) -> str:
    if isinstance(node, ast.Ident):
        return f"Ident({node.text!r})"
    if isinstance(node, ast.Name):
        return f"Name({node.id!r})"
    if isinstance(node, ast.String):
        return f"String({node.value!r})"
    if isinstance(node, ast.Bool):
        return f"Bool({node.value})"
    if isinstance(node, ast.Null):
        return "Null()"
    if isinstance(node, ast.Number):
        return f"Number({_fraction(node.value)}, unit={node.unit!r}, text={node.text!r})"
    if isinstance(node, Fraction):
        return _fraction(node)
    return repr(node)


def _fraction(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(value)


def _dump_node(node: Any, indent: str, out: list[str], label: str) -> None:
    """Append `label: node` (one line for leaves, an indented block for the rest)."""
    if isinstance(node, _INLINE) or not (dataclasses.is_dataclass(node) or isinstance(node, tuple)):
        out.append(f"{indent}{label}{_inline(node)}")
        return
    if isinstance(node, tuple):
        if not node:
            out.append(f"{indent}{label}()")
            return
        out.append(f"{indent}{label}[")
        for item in node:
            _dump_node(item, indent + "  ", out, "- ")
        out.append(f"{indent}]")
        return
    out.append(f"{indent}{label}{type(node).__name__}")
    for item in dataclasses.fields(node):
        if item.name == "span":
            continue
        _dump_node(getattr(node, item.name), indent + "  ", out, f"{item.name}: ")


def dump(rule_file: ast.RuleFile) -> str:
    """A stable, span-free text form of a parsed rule file."""
    out = [f"ruleset {rule_file.name.text!r} version {rule_file.version!r}"]
    for decl in rule_file.declarations:
        out.append("")
        _dump_node(decl, "", out, "")
    if rule_file.comments:
        out.append("")
        out += [
            f"comment line {c.line} {'own-line' if c.own_line else 'trailing'}: {c.text!r}"
            for c in rule_file.comments
        ]
    return "\n".join(out) + "\n"


# ---- golden files --------------------------------------------------------------------------


def test_golden_inputs_exist() -> None:
    assert {p.stem for p in GOLDEN_INPUTS} >= {"declarations", "expressions", "numbers"}


@pytest.mark.parametrize("source", GOLDEN_INPUTS, ids=lambda p: p.stem)
def test_golden_ast(source: Path) -> None:
    expected_path = source.with_suffix(".ast.txt")
    actual = dump(parse_file(source))
    if os.environ.get("RULECHECK_UPDATE_GOLDEN"):
        expected_path.write_text(actual, encoding="utf-8")
    assert expected_path.is_file(), f"missing golden file {expected_path.name}"
    assert actual == expected_path.read_text(encoding="utf-8")


def _all_nodes(node: Any) -> list[Any]:
    found = [node]
    if isinstance(node, tuple):
        return [n for item in node for n in _all_nodes(item)]
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for item in dataclasses.fields(node):
            found += _all_nodes(getattr(node, item.name))
    return found


def test_goldens_cover_every_declaration_and_expression_form() -> None:
    nodes = [n for path in GOLDEN_INPUTS for n in _all_nodes(parse_file(path).declarations)]
    types = {type(n) for n in nodes}
    assert set(ast.DECLARATION_KINDS) <= types
    expression_types = set(ast.Expr.__args__)  # type: ignore[attr-defined]
    assert expression_types <= types
    binary_ops = {n.op for n in nodes if isinstance(n, ast.Binary)}
    assert binary_ops >= {"==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*", "/"}
    assert {n.op for n in nodes if isinstance(n, ast.Unary)} == {"not", "-"}
    assert {n.op for n in nodes if isinstance(n, ast.BoolOp)} == {"and", "or"}
    assert {n.op for n in nodes if isinstance(n, ast.Quantifier)} == {"all", "exists", "none"}
    aggregates = {n.op for n in nodes if isinstance(n, ast.Aggregate)}
    assert aggregates == {"median", "mean", "min", "max", "sum", "values"}
    assert {n.outgoing for n in nodes if isinstance(n, ast.Navigate)} == {True, False}
    units = {n.unit for n in nodes if isinstance(n, ast.Number)}
    assert units >= {None, "tokens", "Mtokens", "USD", "USD/Mtokens", "s", "min", "h", "%"}
    types = {n.type.text for n in nodes if isinstance(n, ast.Param | ast.AttrDecl)}
    assert types >= {"USD/Mtokens", "%", "tokens", "number", "text", "task"}
    assert any(isinstance(n, ast.BudgetDecl) and n.reserve is not None for n in nodes)


def test_layout_does_not_change_the_tree() -> None:
    compact = parse_text('ruleset a version "1"\nconst x = -(a+b)*c.d->e', "one.rules")
    spread = parse_text(
        'ruleset   a\n version "1" # c\nconst\n x\n=\n- ( a + b ) * c . d -> e\n', "two.rules"
    )
    assert compact.declarations == spread.declarations
    assert spread.comments == (ast.Comment("# c", 2, False),)
    assert dump(compact) == dump(dataclasses.replace(spread, comments=()))


def test_number_values_are_exact() -> None:
    rule_file = parse_file(DATA / "numbers.rules")
    values = {
        d.name.text: d.value
        for d in rule_file.declarations
        if isinstance(d, ast.ConstDecl) and isinstance(d.value, ast.Number)
    }
    assert values["n_dec"].value == Fraction(4, 5)
    assert values["n_exp"].value == Fraction(4, 5)
    assert values["n_sep"].value == values["n_int"].value == 90000
    assert values["n_dec_sep"].value == Fraction("1000.0005")
    assert values["u_rate"].unit == "USD/Mtokens"
    assert values["neg"].value == -3
    assert values["neg"].text == "-3"
    assert values["neg_exp"].value == Fraction(-1, 100)


# ---- spans ---------------------------------------------------------------------------------

SPAN_SOURCE = """ruleset spans version "1"

const cap = 90_000 tokens  source "§5"
gate g
  for t in task where t.ok
  require t.R >= -0.5 and all(a in t <- attempt_of: a.x)
decision d
  when g => PASS
  otherwise => FAIL
transitions m
  initial A
  terminal B
  from A on go to B
"""


def _span(node: Any) -> tuple[int, int, int, int]:
    span = node.span
    assert span.file == "spans.rules"
    return span.line, span.column, span.end_line, span.end_column


def test_spans_are_exact() -> None:
    rule_file = parse_text(SPAN_SOURCE, "spans.rules")
    const, gate, decision, machine = rule_file.declarations
    assert isinstance(const, ast.ConstDecl)
    assert isinstance(gate, ast.GateDecl)
    assert isinstance(decision, ast.DecisionDecl)
    assert isinstance(machine, ast.TransitionsDecl)

    assert _span(rule_file) == (1, 1, 13, 20)
    assert _span(rule_file.name) == (1, 9, 1, 14)
    # a declaration runs from its keyword to the end of its last clause (the note here)
    assert _span(const) == (3, 1, 3, 39)
    assert _span(const.name) == (3, 7, 3, 10)
    assert _span(const.value) == (3, 13, 3, 26)  # number and unit

    assert _span(gate) == (4, 1, 6, 57)
    binding = gate.bindings[0]
    assert _span(binding) == (5, 3, 5, 27)
    assert _span(binding.var) == (5, 7, 5, 8)
    assert _span(binding.source) == (5, 12, 5, 16)
    assert binding.where is not None
    assert _span(binding.where) == (5, 23, 5, 27)

    require = gate.require
    assert isinstance(require, ast.BoolOp)
    assert _span(require) == (6, 11, 6, 57)
    comparison, quantifier = require.operands
    assert isinstance(comparison, ast.Binary)
    assert _span(comparison) == (6, 11, 6, 22)
    assert _span(comparison.left) == (6, 11, 6, 14)  # t.R
    assert _span(comparison.right) == (6, 18, 6, 22)  # -0.5, the sign included
    assert isinstance(quantifier, ast.Quantifier)
    assert _span(quantifier) == (6, 27, 6, 57)
    assert isinstance(quantifier.source, ast.Navigate)
    assert _span(quantifier.source) == (6, 36, 6, 51)

    when, otherwise = decision.rows
    assert _span(when) == (8, 3, 8, 17)
    assert _span(when.verdict) == (8, 13, 8, 17)
    assert _span(otherwise) == (9, 3, 9, 20)

    assert _span(machine.initial) == (11, 11, 11, 12)
    assert _span(machine.terminal[0]) == (12, 12, 12, 13)
    move = machine.moves[0]
    assert _span(move) == (13, 3, 13, 20)
    assert _span(move.event) == (13, 13, 13, 15)


def test_left_associative_chain_spans_cover_their_operands() -> None:
    rule_file = parse_text('ruleset s version "1"\nconst x = a - b - c\n', "spans.rules")
    outer = rule_file.declarations[0].value
    assert isinstance(outer, ast.Binary)
    assert _span(outer) == (2, 11, 2, 20)
    assert isinstance(outer.left, ast.Binary)
    assert _span(outer.left) == (2, 11, 2, 16)


def test_spans_do_not_take_part_in_equality() -> None:
    one = parse_text('ruleset s version "1"\nconst x = 1', "a.rules").declarations[0]
    two = parse_text('ruleset s version "1"\n\n\n   const   x =\n1', "b.rules").declarations[0]
    assert one == two
    assert hash(one) == hash(two)
    assert one.span != two.span


_KEYWORDS = {
    ast.ConstDecl: "const",
    ast.MetricDecl: "metric",
    ast.KindDecl: "kind",
    ast.CodeDecl: "code",
    ast.LinkDecl: "link",
    ast.GateDecl: "gate",
    ast.BudgetDecl: "budget",
    ast.DecisionDecl: "decision",
    ast.TransitionsDecl: "transitions",
    ast.TableDecl: "table",
    ast.ProtocolDecl: "protocol",
}
EVERY_RULE_FILE = sorted(
    path
    for folder in ("rules", "tests/data/parse", "tests/data/format", "tests/data/lint")
    for path in (Path(__file__).parents[1] / folder).glob("*.rules")
    # the lint cases of files that do not parse
    if path.name
    not in {
        "syntax_error.rules",
        "invalid_utf8.rules",
        "swapped_operator.rules",
        "unit_misspelt.rules",
    }
)


def _children(node: Any) -> list[Any]:
    found: list[Any] = []
    values = [getattr(node, f.name) for f in dataclasses.fields(node) if f.name != "span"]
    while values:
        value = values.pop()
        if isinstance(value, tuple):
            values += value
        elif dataclasses.is_dataclass(value) and hasattr(value, "span"):
            found.append(value)
    return found


def _assert_nested(node: Any, path: str) -> None:
    outer = node.span
    assert outer.file == path
    for child in _children(node):
        inner = child.span
        assert (outer.line, outer.column) <= (inner.line, inner.column), (node, child)
        assert (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column), (
            node,
            child,
        )
        _assert_nested(child, path)


@pytest.mark.parametrize("source", EVERY_RULE_FILE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_span_nests_in_its_parent_and_declarations_start_at_their_keyword(
    source: Path,
) -> None:
    text = source.read_text(encoding="utf-8")
    rule_file = parse_text(text, str(source))
    lines = text.split("\n")
    for declaration in rule_file.declarations:
        span = declaration.span
        assert lines[span.line - 1][span.column - 1 :].startswith(_KEYWORDS[type(declaration)])
        _assert_nested(declaration, str(source))


def test_a_parenthesised_operand_is_inside_its_parent_span() -> None:
    rule_file = parse_text('ruleset s version "1"\nconst x = not (a)\n', "spans.rules")
    negation = rule_file.declarations[0].value
    assert isinstance(negation, ast.Unary)
    assert _span(negation) == (2, 11, 2, 18)  # the closing parenthesis included
    assert _span(negation.operand) == (2, 16, 2, 17)  # `a` keeps its own span


# ---- syntax errors -------------------------------------------------------------------------

EXPRESSION_START = (
    "expected `(`, `-`, `all`/`exists`/`none`, `count`, `false`, `if`, `not`, `null`, "
    "`select`, `true`, `{`, a name, a number, a string, an aggregate"
)


def _syntax_error(text: str) -> tuple[str, str, int | None, int | None, str | None]:
    with pytest.raises(RulecheckError) as caught:
        parse_text(text, "bad.rules")
    assert caught.value.exit_code == 1
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.location is not None
    assert diagnostic.location.file == "bad.rules"
    return (
        diagnostic.code,
        diagnostic.message,
        diagnostic.location.line,
        diagnostic.location.column,
        diagnostic.hint,
    )


def test_unexpected_token() -> None:
    code, message, line, column, hint = _syntax_error('ruleset a version "1"\nconst x = = 1\n')
    assert (code, message, line, column) == ("SYNTAX_ERROR", "unexpected `=`", 2, 11)
    assert hint == EXPRESSION_START


def test_unexpected_token_lists_the_clauses_that_may_follow() -> None:
    text = 'ruleset a version "1"\ngate g\n  for t in task\n  else reject X\n'
    code, message, line, column, hint = _syntax_error(text)
    assert (code, message, line, column) == ("SYNTAX_ERROR", "unexpected `else`", 4, 3)
    assert hint is not None and hint.startswith("expected ")
    assert "`require`" in hint and "`for`" in hint and "`where`" in hint


def test_missing_header() -> None:
    code, message, line, column, hint = _syntax_error("const x = 1\n")
    assert (code, message, line, column, hint) == (
        "SYNTAX_ERROR",
        "unexpected `const`",
        1,
        1,
        "expected `ruleset`",
    )


def test_unexpected_character() -> None:
    code, message, line, column, hint = _syntax_error('ruleset a version "1"\nconst x = 1 $ 2\n')
    assert (code, message, line, column) == ("SYNTAX_ERROR", "unexpected character `$`", 2, 13)
    assert hint is not None and hint.startswith("expected ")
    assert "`+`/`-`" in hint and "a comparison" in hint and "a unit" in hint


def test_unterminated_string_is_an_unexpected_character() -> None:
    code, message, line, column, _ = _syntax_error('ruleset a version "1"\nconst x = "abc\n')
    assert (code, message, line, column) == ("SYNTAX_ERROR", 'unexpected character `"`', 2, 11)


def test_unexpected_end_of_file_points_after_the_last_token() -> None:
    code, message, line, column, hint = _syntax_error('ruleset a version "1"\nconst x =\n')
    assert (code, message, line, column) == ("SYNTAX_ERROR", "unexpected end of file", 2, 10)
    assert hint == EXPRESSION_START


def test_unexpected_end_of_file_in_parentheses() -> None:
    code, message, line, column, hint = _syntax_error('ruleset a version "1"\nconst x = (1 + 2')
    assert (code, message, line, column, hint) == (
        "SYNTAX_ERROR",
        "unexpected end of file",
        2,
        17,
        "expected `)`",
    )


def test_empty_file_is_an_unexpected_end_of_file() -> None:
    assert _syntax_error("") == (
        "SYNTAX_ERROR",
        "unexpected end of file",
        1,
        1,
        "expected `ruleset`",
    )


@pytest.mark.parametrize(
    ("number", "column"),
    [("1__0", 11), ("10_", 11), ("1_.5", 11), ("2.5_", 11), ("-1__0", 12)],
)
def test_misplaced_digit_separator(number: str, column: int) -> None:
    code, message, line, col, hint = _syntax_error(f'ruleset a version "1"\nconst x = {number}\n')
    assert code == "SYNTAX_ERROR"
    assert message == f"misplaced digit separator in `{number.lstrip('-')}`"
    assert (line, col) == (2, column)
    assert hint == "`_` may only stand between two digits, as in `90_000`"


def test_digit_separators_between_digits_are_fine() -> None:
    rule_file = parse_text('ruleset a version "1"\nconst x = 1_000.000_5e10\n', "ok.rules")
    (const,) = rule_file.declarations
    assert isinstance(const, ast.ConstDecl) and isinstance(const.value, ast.Number)
    assert const.value.value == Fraction("1000.0005e10")


def test_invalid_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "latin1.rules"
    path.write_bytes(b'ruleset a version "1"\nconst x = "caf\xe9"\n')
    with pytest.raises(RulecheckError) as caught:
        parse_file(path)
    (diagnostic,) = caught.value.diagnostics
    assert caught.value.exit_code == 1
    assert diagnostic.code == "RULES_INVALID_UTF8"
    assert diagnostic.message == "rule file is not valid utf-8 (byte 36)"
    assert diagnostic.location is not None
    assert (diagnostic.location.line, diagnostic.location.column) == (2, 15)


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(RulecheckError) as caught:
        parse_file(tmp_path / "nope.rules")
    (diagnostic,) = caught.value.diagnostics
    assert caught.value.exit_code == 2
    assert diagnostic.code == "FILE_UNREADABLE"


def test_comment_between_a_quantifier_or_aggregate_and_its_parenthesis() -> None:
    text = (
        'ruleset r version "1"\n'
        "gate g require all # every one\n"
        "  (x in {1, 2}: x >= 1) and median # the middle\n"
        " (y for y in {1}) >= 0\n"
    )
    plain = (
        'ruleset r version "1"\n'
        "gate g require all(x in {1, 2}: x >= 1) and median(y for y in {1}) >= 0\n"
    )
    assert parse_text(text, "a.rules").declarations == parse_text(plain, "b.rules").declarations


@pytest.mark.parametrize(
    ("expression", "too_deep"),
    [
        ("+".join(["1"] * 100), False),  # 99 additions over 100 numbers: 100 levels
        ("+".join(["1"] * 101), True),
        ("\n  + ".join(["1"] * 100), False),  # the same over many lines
        ("\n  + ".join(["1"] * 101), True),
        ("not " * 99 + "true", False),
        ("not " * 100 + "true", True),
    ],
)
def test_an_expression_nests_at_most_max_rule_depth_levels_on_one_line_or_many(
    expression: str, too_deep: bool
) -> None:
    """The depth limit counts expression levels, however the text is laid out (a short
    one-line expression is not walked: each level writes at least one character)."""
    from engine.limits import MAX_RULE_DEPTH

    assert MAX_RULE_DEPTH == 100
    text = f'ruleset deep version "1"\nconst a = {expression}\n'
    if not too_deep:
        parse_text(text, "deep.rules")
        return
    with pytest.raises(RulecheckError) as info:
        parse_text(text, "deep.rules")
    assert [d.code for d in info.value.diagnostics] == ["RULE_TOO_DEEP"]
