"""Tests of the canonical printer (`engine.syntax.format`).

Golden files: every `tests/data/format/*.rules` formats to its `*.expected`. Properties
(Hypothesis): printing random ASTs and parsing them back gives equal declarations, the
printer is idempotent, and extra whitespace and comments between tokens change neither
the declarations nor the set and order of comments.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import RulecheckError
from engine.syntax import ast
from engine.syntax.format import format_declaration, format_expr, format_rule_file
from engine.syntax.parse import parse_text

# The aggregates the grammar knows (test_the_aggregates_are_the_grammars keeps this true).
AGGREGATES = frozenset(
    {"median", "lower_quartile", "upper_quartile", "mean", "min", "max", "sum", "values"}
)

DATA = Path(__file__).parent / "data" / "format"
GOLDEN = sorted(DATA.glob("*.rules"))
# Files whose clauses the formatter reorders, so that comments travel with their clause.
REORDERS_COMMENTS = {"transitions.rules"}


def _parse(text: str) -> ast.RuleFile:
    return parse_text(text, "test.rules")


def _fmt(text: str) -> str:
    return format_rule_file(_parse(text))


def _comment_texts(text: str) -> list[str]:
    return [comment.text for comment in _parse(text).comments]


# ---- golden files --------------------------------------------------------------------------


def test_golden_files_exist() -> None:
    assert len(GOLDEN) >= 5
    for path in GOLDEN:
        assert path.with_suffix(".expected").is_file(), path


@pytest.mark.parametrize("path", GOLDEN, ids=lambda path: path.stem)
def test_golden(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    expected = path.with_suffix(".expected").read_text(encoding="utf-8")
    formatted = _fmt(source)
    assert formatted == expected
    # The expected text is itself canonical and means the same as the input.
    assert _fmt(expected) == expected
    assert _parse(expected).declarations == _parse(source).declarations
    before, after = _comment_texts(source), _comment_texts(expected)
    assert sorted(after) == sorted(before)
    if path.name not in REORDERS_COMMENTS:
        assert after == before


def test_golden_files_cover_every_declaration_and_expression_form() -> None:
    decl_types: set[type] = set()
    expr_types: set[type] = set()

    def walk(value: object) -> None:
        if isinstance(value, tuple):
            for item in value:
                walk(item)
            return
        if not hasattr(value, "__dataclass_fields__"):
            return
        if isinstance(value, ast.Declaration):
            decl_types.add(type(value))
        if isinstance(value, ast.Expr):
            expr_types.add(type(value))
        for name in value.__dataclass_fields__:
            walk(getattr(value, name))

    for path in GOLDEN:
        walk(_parse(path.read_text(encoding="utf-8")).declarations)
    assert decl_types == set(ast.DECLARATION_KINDS)
    assert expr_types == set(ast.Expr.__args__)


# ---- layout details ---------------------------------------------------------------------


def test_file_layout() -> None:
    text = 'ruleset r version "1" const a = 1 const b = 2'
    assert _fmt(text) == 'ruleset r version "1"\n\nconst a = 1\n\nconst b = 2\n'
    assert _fmt('ruleset   r\n\nversion "1"\n\n\n') == 'ruleset r version "1"\n'


def test_format_declaration_has_no_comments_and_no_final_newline() -> None:
    rule_file = _parse(
        'ruleset r version "1"\n'
        "# about g\n"
        'gate g source "s"  # trailing\n'
        "  for t in task   require t.ok  # more\n"
    )
    text = format_declaration(rule_file.declarations[0])
    assert text == 'gate g\n  source "s"\n  for t in task\n  require t.ok'


def test_format_declaration_of_each_kind() -> None:
    rule_file = _parse((DATA / "declarations.rules").read_text(encoding="utf-8"))
    for decl in rule_file.declarations:
        text = format_declaration(decl)
        assert not text.endswith("\n")
        assert "#" not in text
        assert text.split()[0] == ast.declaration_kind(decl)
        reparsed = _parse('ruleset r version "1"\n' + text)
        assert reparsed.declarations == (decl,)


def _name(identifier: str) -> ast.Name:
    return ast.Name(identifier)


def _num(text: str, unit: str | None = None) -> ast.Number:
    return ast.Number(Fraction(text.replace("_", "")), unit, text)


A, B, C = _name("a"), _name("b"), _name("c")


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (ast.Binary("-", A, ast.Binary("-", B, C)), "a - (b - c)"),
        (ast.Binary("-", ast.Binary("-", A, B), C), "a - b - c"),
        (ast.Binary("/", A, ast.Binary("*", B, C)), "a / (b * c)"),
        (ast.Binary("*", ast.Binary("+", A, B), C), "(a + b) * c"),
        (ast.Binary("+", A, ast.Binary("*", B, C)), "a + b * c"),
        (ast.Binary("<", A, ast.Unary("-", B)), "a < -b"),
        (ast.Binary("<", A, _num("-1")), "a < -1"),
        (ast.Binary("<", ast.Binary("<", A, B), C), "(a < b) < c"),
        (ast.Binary("not in", A, ast.SetLiteral(())), "a not in {}"),
        (ast.Unary("not", ast.Binary("in", A, B)), "not a in b"),
        (ast.Binary("==", ast.Unary("not", A), B), "(not a) == b"),
        (ast.BoolOp("or", (ast.BoolOp("and", (A, B)), C)), "a and b or c"),
        (ast.BoolOp("and", (ast.BoolOp("or", (A, B)), C)), "(a or b) and c"),
        (ast.BoolOp("or", (A, ast.BoolOp("or", (B, C)))), "a or (b or c)"),
        (ast.Unary("not", ast.BoolOp("and", (A, B))), "not (a and b)"),
        (ast.Unary("-", ast.Unary("-", A)), "- -a"),
        (ast.Unary("-", ast.Attribute(A, "x")), "-a.x"),
        (ast.Attribute(ast.Unary("-", A), "x"), "(-a).x"),
        (ast.Attribute(_num("-1"), "x"), "(-1).x"),
        (ast.Binary("*", _num("2"), _num("-1")), "2 * -1"),
        (ast.Navigate(ast.Navigate(A, "l", True), "m", False), "a -> l <- m"),
        (ast.Attribute(ast.Navigate(A, "l", True), "m"), "a -> l.m"),
        (ast.Navigate(ast.Attribute(A, "m"), "l", True), "a.m -> l"),
        (ast.Attribute(ast.Binary("+", A, B), "c"), "(a + b).c"),
        (_num("90_000", "tokens"), "90_000 tokens"),
        (_num("4", "USD/Mtokens"), "4 USD/Mtokens"),
        (_num("15", "%"), "15 %"),
        (ast.Number(Fraction(3), None, "--3"), "- -3"),
        (ast.Number(Fraction(-1, 8), "s"), "-0.125 s"),
        (ast.Number(Fraction(12), None), "12"),
        (ast.String('a"b\\c\nd\te#'), '"a\\"b\\\\c\\nd\\te#"'),
        (ast.Call("f", ()), "f()"),
        (ast.Call("ratio", (A, ast.BoolOp("or", (B, C)))), "ratio(a, b or c)"),
        (ast.Quantifier("all", "v", A, B, C), "all(v in a where b: c)"),
        (ast.Quantifier("exists", "v", A, None, C), "exists(v in a: c)"),
        (ast.Quantifier("none", "v", A, B, None), "none(v in a where b)"),
        (ast.Aggregate("median", A, "v", B, None), "median(a for v in b)"),
        (ast.Count("v", A, B), "count(v in a where b)"),
        (ast.Select("v", A, B), "select(v in a where b)"),
        (ast.SetLiteral((ast.String("x"), ast.Null())), '{"x", null}'),
        (
            ast.MapLiteral((("k", ast.Bool(True)), ("l", ast.Bool(False)))),
            '{"k": true, "l": false}',
        ),
        (ast.BoolOp("and", (A,)), "a"),
        (
            ast.Conditional(A, ast.Conditional(B, C, A), ast.Conditional(C, A, B)),
            "if a then (if b then c else a) else if c then a else b",
        ),
    ],
)
def test_format_expr(expr: ast.Expr, text: str) -> None:
    assert format_expr(expr) == text


@pytest.mark.parametrize(
    "expr",
    [
        ast.BoolOp("and", ()),
        ast.BoolOp("xor", (A, B)),
        ast.Binary("%", A, B),
        ast.Unary("+", A),
        ast.Number(Fraction(1, 3), None),
    ],
)
def test_format_expr_refuses_what_no_text_expresses(expr: ast.Expr) -> None:
    with pytest.raises(ValueError):
        format_expr(expr)


def test_comments_survive_an_ast_without_spans() -> None:
    decl = ast.GateDecl(ast.Ident("g"), None, (), A)
    comments = (
        ast.Comment("# one", 1, True),
        ast.Comment("# two", 2, False),
        ast.Comment("# three", 9, True),
    )
    rule_file = ast.RuleFile("p", ast.Ident("r"), "1", (decl,), comments)
    text = format_rule_file(rule_file)
    assert _comment_texts(text) == ["# one", "# two", "# three"]
    assert _fmt(text) == text


def test_two_trailing_comments_folded_onto_one_line_stay_two_comments() -> None:
    text = 'ruleset r version "1"\ngate g require a and  # first\n  b  # second\n'
    formatted = _fmt(text)
    assert formatted == 'ruleset r version "1"\n\ngate g\n  # first\n  require a and b  # second\n'
    assert _fmt(formatted) == formatted


def test_comment_inside_a_multi_line_clause_goes_before_that_clause() -> None:
    text = (
        'ruleset r version "1"\n'
        "gate g\n"
        "  for t in task\n"
        "  require t.a\n"
        "    # about b\n"
        "    and t.b\n"
        "  # at the end\n"
    )
    assert _fmt(text) == (
        'ruleset r version "1"\n\ngate g\n  for t in task\n  # about b\n  require t.a and t.b\n'
        "\n# at the end\n"
    )


@pytest.mark.parametrize("separator", ["\u2028", "\x0c"])
def test_comment_lines_agree_with_spans_after_other_line_breaks(separator: str) -> None:
    text = f'ruleset r version "1"\nconst a = "x{separator}y"  # c\ngate g require a  # d\n'
    rule_file = _parse(text)
    assert [(c.text, c.line) for c in rule_file.comments] == [("# c", 2), ("# d", 3)]


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
def test_carriage_returns_end_lines_for_comments_and_spans_alike(ending: str) -> None:
    text = f'ruleset r version "1"{ending}# c{ending}const a = 1  # d{ending}const b = a{ending}'
    rule_file = _parse(text)
    assert [(c.text, c.line) for c in rule_file.comments] == [("# c", 2), ("# d", 3)]
    assert [d.span.line for d in rule_file.declarations] == [3, 4]
    assert _fmt(text) == 'ruleset r version "1"\n\n# c\nconst a = 1  # d\n\nconst b = a\n'


def test_a_lone_carriage_return_ends_a_string_as_a_newline_does() -> None:
    with pytest.raises(RulecheckError):
        _parse('ruleset r version "1"\nconst a = "x\ry"\n')


# ---- properties ------------------------------------------------------------------------

# Bounded so that the whole file runs in about 10 s.
SETTINGS = settings(
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# Plain names plus words that are keywords elsewhere but may be names here.
NAMES = st.sampled_from(
    ["a", "b", "x", "y_2", "_z", "claim", "Task", "kind", "source", "order", "total", "min", "s"]
)
FUNCS = st.sampled_from(["f", "len", "ratio", "prefix", "ids", "line_count", "unique", "abs"])
UNITS = st.sampled_from(
    [None, None, "tokens", "Mtokens", "USD", "USD/Mtokens", "s", "min", "h", "%"]
)
# No characters other than \n that str.splitlines() treats as line breaks: parse.scan_comments
# numbered lines differently from spans before; see the line-break test above.
TEXT = st.text(alphabet='ab #é✓"\\\n\t{}:,', max_size=6)


@st.composite
def _digits(draw: st.DrawFn) -> str:
    groups = draw(st.lists(st.from_regex(r"[0-9]{1,3}", fullmatch=True), min_size=1, max_size=3))
    return "_".join(groups)


@st.composite
def _numbers(draw: st.DrawFn) -> ast.Number:
    text = draw(_digits())
    if draw(st.booleans()):
        text += "." + draw(_digits())
    if draw(st.booleans()):
        text += draw(st.sampled_from(["e", "E"])) + draw(st.sampled_from(["", "+", "-"]))
        text += draw(st.from_regex(r"[0-9]{1,2}", fullmatch=True))
    value = Fraction(text.replace("_", ""))
    unit = draw(UNITS)
    if draw(st.booleans()):
        return ast.Number(-value, unit, "-" + text)
    return ast.Number(value, unit, text)


def _negate(operand: ast.Expr) -> ast.Expr:
    # As the parser does: a minus before a literal folds into the literal.
    if isinstance(operand, ast.Number):
        return ast.Number(-operand.value, operand.unit, "-" + operand.text)
    return ast.Unary("-", operand)


LEAVES: st.SearchStrategy[ast.Expr] = st.one_of(
    _numbers(),
    st.builds(ast.Name, NAMES),
    st.builds(ast.String, TEXT),
    st.builds(ast.Bool, st.booleans()),
    st.just(ast.Null()),
)
ARITHMETIC = ["+", "-", "*", "/"]
COMPARISONS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
# Operators are listed several times: precedence is where a printer goes wrong.
OPERATOR_FORMS = ["arithmetic"] * 4 + ["comparison"] * 2 + ["and", "or", "not", "neg"]
OPERATOR_FORMS += ["attribute", "navigate"]
OTHER_FORMS = ["call", "quantifier", "aggregate", "count", "select", "set", "map"]


@st.composite
def _exprs(draw: st.DrawFn, depth: int = 4, operators_only: bool = False) -> ast.Expr:
    """A random expression of at most `depth` levels, every form equally likely."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(LEAVES)
    form = draw(st.sampled_from(OPERATOR_FORMS + ([] if operators_only else OTHER_FORMS)))

    def sub() -> ast.Expr:
        return draw(_exprs(depth - 1, operators_only))

    def maybe() -> ast.Expr | None:
        return sub() if draw(st.booleans()) else None

    def some(low: int, high: int) -> tuple[ast.Expr, ...]:
        return tuple(sub() for _ in range(draw(st.integers(low, high))))

    if form in ("arithmetic", "comparison"):
        operators = ARITHMETIC if form == "arithmetic" else COMPARISONS
        return ast.Binary(draw(st.sampled_from(operators)), sub(), sub())
    if form in ("and", "or"):
        return ast.BoolOp(form, some(2, 3))
    if form == "not":
        return ast.Unary("not", sub())
    if form == "neg":
        return _negate(sub())
    if form == "attribute":
        return ast.Attribute(sub(), draw(NAMES))
    if form == "navigate":
        return ast.Navigate(sub(), draw(NAMES), draw(st.booleans()))
    if form == "call":
        return ast.Call(draw(FUNCS), some(0, 3))
    if form == "quantifier":
        op = draw(st.sampled_from(["all", "exists", "none"]))
        return ast.Quantifier(op, draw(NAMES), sub(), maybe(), maybe())
    if form == "aggregate":
        op = draw(st.sampled_from(sorted(AGGREGATES)))
        return ast.Aggregate(op, sub(), draw(NAMES), sub(), maybe())
    if form == "count":
        return ast.Count(draw(NAMES), sub(), maybe())
    if form == "select":
        return ast.Select(draw(NAMES), sub(), maybe())
    if form == "set":
        return ast.SetLiteral(some(0, 3))
    entries = tuple((draw(TEXT), sub()) for _ in range(draw(st.integers(1, 3))))
    return ast.MapLiteral(entries)


EXPRS = _exprs()
SMALL_EXPRS = _exprs(depth=2)  # for declarations, which hold many expressions
# Operators only: dense in precedence and associativity cases.
OPERATOR_EXPRS = _exprs(operators_only=True)
IDENTS = NAMES.map(ast.Ident)
NOTES = st.none() | TEXT


@st.composite
def _declarations(draw: st.DrawFn) -> ast.Declaration:
    """A declaration that holds random expressions in each expression position."""
    shape = draw(st.sampled_from(["const", "gate", "metric", "link", "budget", "decision"]))
    name, note = draw(IDENTS), draw(NOTES)
    if shape == "const":
        return ast.ConstDecl(name, draw(SMALL_EXPRS), note)
    if shape == "metric":
        params = draw(st.lists(st.builds(ast.Param, IDENTS, IDENTS), max_size=2).map(tuple))
        return ast.MetricDecl(name, params, draw(SMALL_EXPRS), note)
    bindings = tuple(
        ast.Binding(draw(IDENTS), draw(SMALL_EXPRS), draw(st.none() | SMALL_EXPRS))
        for _ in range(draw(st.integers(0, 2)))
    )
    if shape == "gate":
        return ast.GateDecl(name, note, bindings, draw(SMALL_EXPRS))
    if shape == "link":
        bindings = bindings or (ast.Binding(draw(IDENTS), draw(SMALL_EXPRS), None),)
        return ast.LinkDecl(name, note, bindings, draw(SMALL_EXPRS), draw(IDENTS))
    if shape == "budget":
        ledger = ast.Ledger(
            draw(IDENTS), draw(SMALL_EXPRS), draw(st.none() | SMALL_EXPRS), draw(SMALL_EXPRS)
        )
        op = draw(st.sampled_from(sorted(ast.COMPARISONS)))
        reserve = draw(st.none() | SMALL_EXPRS)
        return ast.BudgetDecl(
            name, note, bindings, ledger, draw(SMALL_EXPRS), reserve, op, draw(SMALL_EXPRS)
        )
    rows = [
        ast.DecisionRow(draw(SMALL_EXPRS), draw(IDENTS)) for _ in range(draw(st.integers(1, 2)))
    ]
    if draw(st.booleans()):
        rows.append(ast.DecisionRow(None, draw(IDENTS)))
    return ast.DecisionDecl(name, note, tuple(rows))


def _rule_file(*decls: ast.Declaration) -> ast.RuleFile:
    return ast.RuleFile("gen.rules", ast.Ident("gen"), "1", decls)


@settings(SETTINGS, max_examples=70)
@given(EXPRS | OPERATOR_EXPRS, st.booleans())
def test_expressions_round_trip(expr: ast.Expr, as_gate: bool) -> None:
    decl: ast.Declaration
    if as_gate:
        decl = ast.GateDecl(ast.Ident("g"), None, (), expr)
    else:
        decl = ast.ConstDecl(ast.Ident("c"), expr, None)
    text = format_rule_file(_rule_file(decl))
    parsed = _parse(text)
    assert parsed.declarations == (decl,)
    assert format_rule_file(parsed) == text
    assert format_expr(expr) in text


@SETTINGS
@given(st.lists(_declarations(), min_size=1, max_size=3))
def test_declarations_round_trip(decls: list[ast.Declaration]) -> None:
    text = format_rule_file(_rule_file(*decls))
    parsed = _parse(text)
    assert parsed.declarations == tuple(decls)
    assert format_rule_file(parsed) == text
    for decl, printed in zip(decls, text.split("\n\n")[1:], strict=True):
        assert format_declaration(decl) == printed.rstrip("\n")


_TOKEN = re.compile(
    r"""
      "(?:[^"\\\n]|\\.)*"                                   # string
    | \#[^\n]*                                              # comment
    | USD/Mtokens
    | [0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?  # number
    | [A-Za-z_][A-Za-z0-9_]*                                # word
    | ->|<-|==|!=|<=|>=|=>                                  # two-character operators
    | [-+*/<>=(){},:.%]
    """,
    re.VERBOSE,
)
# `all(`, `median(` ...: the grammar's look-ahead `(?=\s*\()` does not skip comments.
_CALL_LIKE = {"all", "exists", "none"} | AGGREGATES
_GAPS = [" ", "   ", "\n", "\n\n   ", "\t"]


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    end = 0
    for match in _TOKEN.finditer(text):
        assert not text[end : match.start()].strip(), "the tokenizer skipped some text"
        tokens.append(match.group())
        end = match.end()
    assert not text[end:].strip()
    return tokens


def _scramble(text: str, seed: int) -> tuple[str, list[str]]:
    """`text` with random whitespace and comments between its tokens."""
    rng = random.Random(seed)
    tokens = _tokens(text)
    parts: list[str] = []
    added: list[str] = []
    for index, token in enumerate(tokens):
        parts.append(token)
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        gap = rng.choice(_GAPS) if following is not None else "\n"
        if token.startswith("#"):  # a comment runs to the end of its line
            parts.append("\n" + gap)
            continue
        if rng.random() < 0.15 and not (token in _CALL_LIKE and following == "("):
            comment = f"# c{len(added)} {rng.choice(['', 'x', '# y', 'é ✓', 'a = 1'])}".rstrip()
            added.append(comment)
            if rng.random() < 0.5:
                gap = f"\n{' ' * rng.randrange(4)}{comment}\n"  # on its own line
            else:
                gap = f"{' ' * rng.randrange(1, 4)}{comment}\n"  # after code
        parts.append(gap)
    return "".join(parts), added


@settings(
    deadline=None,
    max_examples=30,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(st.lists(_declarations(), min_size=1, max_size=3), st.integers(0, 2**32))
def test_whitespace_and_comments_between_tokens(decls: list[ast.Declaration], seed: int) -> None:
    canonical = format_rule_file(_rule_file(*decls))
    scrambled, added = _scramble(canonical, seed)
    parsed = _parse(scrambled)
    assert parsed.declarations == tuple(decls)
    assert [comment.text for comment in parsed.comments] == added
    formatted = format_rule_file(parsed)
    assert _comment_texts(formatted) == added
    assert _parse(formatted).declarations == tuple(decls)
    assert format_rule_file(_parse(formatted)) == formatted
    if not added:
        assert formatted == canonical


@settings(deadline=None, max_examples=15)
@given(st.sampled_from(GOLDEN), st.integers(0, 2**32))
def test_scrambled_golden_files_keep_their_comments(path: Path, seed: int) -> None:
    expected = path.with_suffix(".expected").read_text(encoding="utf-8")
    scrambled, _ = _scramble(expected, seed)
    formatted = _fmt(scrambled)
    assert _parse(formatted).declarations == _parse(expected).declarations
    assert _comment_texts(formatted) == _comment_texts(scrambled)
    assert _fmt(formatted) == formatted


def test_the_aggregates_are_the_grammars() -> None:
    grammar = (Path(__file__).resolve().parent.parent / "grammar" / "rules.lark").read_text()
    found = re.search(r"^AGGREGATE\.\d+: /\(([a-z_|]+)\)", grammar, re.MULTILINE)
    assert found is not None
    assert frozenset(found.group(1).split("|")) == AGGREGATES
