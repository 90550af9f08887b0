"""Rule text -> typed AST. The only module that knows about Lark."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.tree import Meta

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError, unreadable
from engine.resources import shipped
from engine.syntax import ast

GRAMMAR_FILE = "rules.lark"
_VERSION_RE = re.compile(r"grammar-version:\s*(\S+)")
_NUMBER_RE = re.compile(r"[0-9]+(_[0-9]+)*(\.[0-9]+(_[0-9]+)*)?([eE][+-]?[0-9]+)?")

_TOKEN_WORDS = {
    "NAME": "a name",
    "STRING": "a string",
    "NUMBER": "a number",
    "UNIT": "a unit",
    "COMPARE": "a comparison",
    "QUANTIFIER": "`all`/`exists`/`none`",
    "AGGREGATE": "an aggregate",
    "OUT_ARROW": "`->`",
    "IN_ARROW": "`<-`",
    "ADD_OP": "`+`/`-`",
    "MUL_OP": "`*`/`/`",
    "$END": "end of file",
}


def grammar_text() -> str:
    """The grammar as shipped with the package."""
    return shipped("grammar").joinpath(GRAMMAR_FILE).read_text(encoding="utf-8")


def grammar_version() -> str:
    """The version declared in the grammar's header comment."""
    match = _VERSION_RE.search(grammar_text())
    if match is None:  # pragma: no cover - the shipped grammar always declares it
        raise RuntimeError("grammar file declares no grammar-version")
    return match.group(1)


@cache
def _parser() -> Lark:
    return Lark(
        grammar_text(),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
    )


def parse_text(text: str, path: str) -> ast.RuleFile:
    """Parse rule `text` (from `path`, used in spans and messages) into a RuleFile.

    Raises:
        RulecheckError: with a located SYNTAX_ERROR diagnostic (exit 1).
    """
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as error:
        raise RulecheckError([_syntax_diagnostic(error, text, path)], ExitCode.REFUSED) from None
    builder = _Builder(path)
    try:
        rule_file: ast.RuleFile = builder.transform(tree)
    except VisitError as error:  # Lark wraps whatever a transformer callback raises
        if isinstance(error.orig_exc, _NumberError):
            raise RulecheckError([error.orig_exc.diagnostic], ExitCode.REFUSED) from None
        raise
    comments = tuple(scan_comments(text))
    return ast.RuleFile(
        rule_file.path,
        rule_file.name,
        rule_file.version,
        rule_file.declarations,
        comments,
        rule_file.span,
    )


def parse_file(path: Path) -> ast.RuleFile:
    """Read and parse one rule file; unreadable or non-UTF-8 files raise RulecheckError."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise unreadable(str(path), error.strerror or type(error).__name__) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        before = raw[: error.start]  # valid utf-8 up to the bad byte
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8")) + 1
        diagnostic = Diagnostic(
            "RULES_INVALID_UTF8",
            f"rule file is not valid utf-8 (byte {error.start})",
            Location(str(path), line, column),
        )
        raise RulecheckError([diagnostic], ExitCode.REFUSED) from None
    return parse_text(text, str(path))


def scan_comments(text: str) -> list[ast.Comment]:
    """Every `#` comment outside string literals, with its line and placement."""
    comments: list[ast.Comment] = []
    # Lark counts lines at `\n` only; so must we (str.splitlines also splits at \x0c, \u2028...).
    for number, raw_line in enumerate(text.split("\n"), start=1):
        line = raw_line.removesuffix("\r")
        in_string = False
        escaped = False
        for index, char in enumerate(line):
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "#":
                own_line = not line[:index].strip()
                comments.append(ast.Comment(line[index:].rstrip(), number, own_line))
                break
    return comments


def _syntax_diagnostic(error: UnexpectedInput, text: str, path: str) -> Diagnostic:
    line = getattr(error, "line", None)
    column = getattr(error, "column", None)
    if isinstance(error, UnexpectedToken) and error.token.type == "$END":
        # Lark places the end-of-file token at the start of the last token; point after it.
        line = getattr(error.token, "end_line", None) or line
        column = getattr(error.token, "end_column", None) or column
    if isinstance(error, UnexpectedEOF) or line is None or line < 1:
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
    expected: set[str] = set()
    if isinstance(error, UnexpectedToken):
        # `accepts` also holds the keywords (`not`, `true`, `count`...) that `expected` omits.
        expected = set(error.accepts or error.expected)
    elif isinstance(error, UnexpectedEOF):
        expected = set(error.expected)
    elif isinstance(error, UnexpectedCharacters):
        expected = set(error.allowed or ())
    if isinstance(error, UnexpectedToken):
        token = error.token
        found = "end of file" if token.type == "$END" else f"`{token}`"
        message = f"unexpected {found}"
    elif isinstance(error, UnexpectedCharacters):
        position = error.pos_in_stream or 0
        message = f"unexpected character `{text[position : position + 1]}`"
    else:
        message = "unexpected end of file"
    hint = (
        "expected " + ", ".join(sorted(_describe(name) for name in expected)) if expected else None
    )
    return Diagnostic("SYNTAX_ERROR", message, Location(path, line, column), hint=hint)


def _describe(terminal: str) -> str:
    if terminal in _TOKEN_WORDS:
        return _TOKEN_WORDS[terminal]
    pattern = _parser().get_terminal(terminal).pattern
    return f"`{pattern.value}`" if pattern.type == "str" else terminal.lower()


class _NumberError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _unquote(token: Token) -> str:
    body = str(token)[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


@v_args(meta=True)
class _Builder(Transformer[Token, Any]):
    """Builds AST nodes bottom-up; every node gets the span of the text it came from."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    # -- spans -----------------------------------------------------------------------------

    def _span(self, meta: Meta) -> ast.Span:
        if getattr(meta, "empty", True):
            return ast.NO_SPAN
        return ast.Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _token_span(self, token: Token) -> ast.Span:
        return ast.Span(
            self.path,
            token.line or 0,
            token.column or 0,
            token.end_line or 0,
            token.end_column or 0,
        )

    def _ident(self, token: Token) -> ast.Ident:
        return ast.Ident(str(token), self._token_span(token))

    # -- file and declarations -------------------------------------------------------------

    def start(self, meta: Meta, children: list[Any]) -> ast.RuleFile:
        name, version = children[0]
        return ast.RuleFile(self.path, name, version, tuple(children[1:]), (), self._span(meta))

    def header(self, meta: Meta, children: list[Token]) -> tuple[ast.Ident, str]:
        return self._ident(children[0]), _unquote(children[1])

    def note(self, meta: Meta, children: list[Token]) -> str:
        return _unquote(children[0])

    def const_decl(self, meta: Meta, children: list[Any]) -> ast.ConstDecl:
        name, value, note = children
        return ast.ConstDecl(self._ident(name), value, note, self._span(meta))

    def metric_decl(self, meta: Meta, children: list[Any]) -> ast.MetricDecl:
        name, *params, body, note = children
        kept = tuple(param for param in params if param is not None)
        return ast.MetricDecl(self._ident(name), kept, body, note, self._span(meta))

    def type_name(self, meta: Meta, children: list[Token]) -> Token:
        return children[0]

    def param(self, meta: Meta, children: list[Token]) -> ast.Param:
        return ast.Param(self._ident(children[0]), self._ident(children[1]), self._span(meta))

    def kind_decl(self, meta: Meta, children: list[Any]) -> ast.KindDecl:
        name, graph, note, *members = children
        records = tuple(m for m in members if isinstance(m, ast.Records))
        keys = [m for m in members if isinstance(m, ast.Ident)]
        attrs = tuple(m for m in members if isinstance(m, ast.AttrDecl))
        edges = tuple(m for m in members if isinstance(m, ast.EdgeDecl))
        key = keys[-1] if keys else None
        return ast.KindDecl(
            self._ident(name),
            self._ident(graph),
            records,
            key,
            attrs,
            edges,
            note,
            self._span(meta),
        )

    def records_decl(self, meta: Meta, children: list[Token]) -> ast.Records:
        document, *pointers = children
        return ast.Records(
            self._ident(document), tuple(_unquote(p) for p in pointers), self._span(meta)
        )

    def key_decl(self, meta: Meta, children: list[Token]) -> ast.Ident:
        return self._ident(children[0])

    def attr_decl(self, meta: Meta, children: list[Token]) -> ast.AttrDecl:
        return ast.AttrDecl(self._ident(children[0]), self._ident(children[1]), self._span(meta))

    def edge_decl(self, meta: Meta, children: list[Token]) -> ast.EdgeDecl:
        label, _arrow, *targets = children
        return ast.EdgeDecl(
            self._ident(label), tuple(self._ident(t) for t in targets), self._span(meta)
        )

    def code_decl(self, meta: Meta, children: list[Any]) -> ast.CodeDecl:
        name, message, note = children
        return ast.CodeDecl(self._ident(name), _unquote(message), note, self._span(meta))

    def binding(self, meta: Meta, children: list[Any]) -> ast.Binding:
        var, source, where = children
        return ast.Binding(self._ident(var), source, where, self._span(meta))

    def ledger(self, meta: Meta, children: list[Any]) -> ast.Ledger:
        var, source, where, order = children
        return ast.Ledger(self._ident(var), source, where, order, self._span(meta))

    def where(self, meta: Meta, children: list[Any]) -> Any:
        return children[0]

    def require(self, meta: Meta, children: list[Any]) -> Any:
        return children[0]

    def link_decl(self, meta: Meta, children: list[Any]) -> ast.LinkDecl:
        name, note, *bindings, require, code = children
        return ast.LinkDecl(
            self._ident(name),
            note,
            tuple(bindings),
            require,
            self._ident(code),
            self._span(meta),
        )

    def gate_decl(self, meta: Meta, children: list[Any]) -> ast.GateDecl:
        name, note, *bindings, require = children
        return ast.GateDecl(self._ident(name), note, tuple(bindings), require, self._span(meta))

    def budget_decl(self, meta: Meta, children: list[Any]) -> ast.BudgetDecl:
        name, note, *bindings, ledger, total, reserve, op, ceiling = children
        return ast.BudgetDecl(
            self._ident(name),
            note,
            tuple(bindings),
            ledger,
            total,
            reserve,
            str(op),
            ceiling,
            self._span(meta),
        )

    def reserving(self, meta: Meta, children: list[Any]) -> Any:
        return children[0]

    def conditional(self, meta: Meta, children: list[Any]) -> ast.Conditional:
        condition, then, otherwise = children
        return ast.Conditional(condition, then, otherwise, self._span(meta))

    def table_decl(self, meta: Meta, children: list[Any]) -> ast.TableDecl:
        name, note, *rest = children
        bindings = tuple(c for c in rest if isinstance(c, ast.Binding))
        columns = tuple(c for c in rest if isinstance(c, ast.Column))
        return ast.TableDecl(self._ident(name), note, bindings, columns, self._span(meta))

    def column(self, meta: Meta, children: list[Any]) -> ast.Column:
        return ast.Column(self._ident(children[0]), children[1], self._span(meta))

    def decision_decl(self, meta: Meta, children: list[Any]) -> ast.DecisionDecl:
        name, note, *rows = children
        return ast.DecisionDecl(self._ident(name), note, tuple(rows), self._span(meta))

    def when_row(self, meta: Meta, children: list[Any]) -> ast.DecisionRow:
        condition, verdict = children
        return ast.DecisionRow(condition, self._ident(verdict), self._span(meta))

    def otherwise_row(self, meta: Meta, children: list[Any]) -> ast.DecisionRow:
        return ast.DecisionRow(None, self._ident(children[0]), self._span(meta))

    def transitions_decl(self, meta: Meta, children: list[Any]) -> ast.TransitionsDecl:
        name, note, initial, *clauses = children
        terminal: list[ast.Ident] = []
        settlement: list[ast.Ident] = []
        events: list[ast.EventDecl] = []
        moves: list[ast.Move] = []
        outcomes: list[ast.Outcome] = []
        for kind, value in clauses:
            if kind == "terminal":
                terminal += value
            elif kind == "settlement":
                settlement += value
            elif kind == "event":
                events.append(value)
            elif kind == "move":
                moves.append(value)
            else:
                outcomes.append(value)
        return ast.TransitionsDecl(
            self._ident(name),
            note,
            self._ident(initial),
            tuple(terminal),
            tuple(settlement),
            tuple(events),
            tuple(moves),
            tuple(outcomes),
            self._span(meta),
        )

    def terminal_clause(self, meta: Meta, children: list[Token]) -> tuple[str, list[ast.Ident]]:
        return "terminal", [self._ident(t) for t in children]

    def settlement_clause(self, meta: Meta, children: list[Token]) -> tuple[str, list[ast.Ident]]:
        return "settlement", [self._ident(t) for t in children]

    def event_clause(self, meta: Meta, children: list[Token]) -> tuple[str, ast.EventDecl]:
        name, *states = children
        event = ast.EventDecl(
            self._ident(name), tuple(self._ident(s) for s in states), self._span(meta)
        )
        return "event", event

    def move_clause(self, meta: Meta, children: list[Token]) -> tuple[str, ast.Move]:
        source, event, target = (self._ident(t) for t in children)
        return "move", ast.Move(source, event, target, self._span(meta))

    def outcome_clause(self, meta: Meta, children: list[Token]) -> tuple[str, ast.Outcome]:
        state, result = (self._ident(t) for t in children)
        return "outcome", ast.Outcome(state, result, self._span(meta))

    # -- expressions -----------------------------------------------------------------------

    def or_expr(self, meta: Meta, children: list[Any]) -> ast.BoolOp:
        return ast.BoolOp("or", tuple(children), self._span(meta))

    def and_expr(self, meta: Meta, children: list[Any]) -> ast.BoolOp:
        return ast.BoolOp("and", tuple(children), self._span(meta))

    def not_op(self, meta: Meta, children: list[Any]) -> ast.Unary:
        return ast.Unary("not", children[0], self._span(meta))

    def negate(self, meta: Meta, children: list[Any]) -> Any:
        operand = children[0]
        if isinstance(operand, ast.Number):
            return ast.Number(-operand.value, operand.unit, "-" + operand.text, self._span(meta))
        return ast.Unary("-", operand, self._span(meta))

    def comparison(self, meta: Meta, children: list[Any]) -> ast.Binary:
        left, op, right = children
        return ast.Binary(str(op), left, right, self._span(meta))

    def member(self, meta: Meta, children: list[Any]) -> ast.Binary:
        return ast.Binary("in", children[0], children[1], self._span(meta))

    def not_member(self, meta: Meta, children: list[Any]) -> ast.Binary:
        return ast.Binary("not in", children[0], children[1], self._span(meta))

    def additive(self, meta: Meta, children: list[Any]) -> Any:
        return self._left_assoc(meta, children)

    def multiplicative(self, meta: Meta, children: list[Any]) -> Any:
        return self._left_assoc(meta, children)

    def _left_assoc(self, meta: Meta, children: list[Any]) -> Any:
        result = children[0]
        for index in range(1, len(children), 2):
            op, right = str(children[index]), children[index + 1]
            span = ast.Span(
                self.path,
                result.span.line,
                result.span.column,
                right.span.end_line,
                right.span.end_column,
            )
            result = ast.Binary(op, result, right, span)
        return result

    def attribute(self, meta: Meta, children: list[Any]) -> ast.Attribute:
        return ast.Attribute(children[0], str(children[1]), self._span(meta))

    def successors(self, meta: Meta, children: list[Any]) -> ast.Navigate:
        return ast.Navigate(children[0], str(children[2]), True, self._span(meta))

    def predecessors(self, meta: Meta, children: list[Any]) -> ast.Navigate:
        return ast.Navigate(children[0], str(children[2]), False, self._span(meta))

    def string(self, meta: Meta, children: list[Token]) -> ast.String:
        return ast.String(_unquote(children[0]), self._span(meta))

    def true(self, meta: Meta, children: list[Any]) -> ast.Bool:
        return ast.Bool(True, self._span(meta))

    def false(self, meta: Meta, children: list[Any]) -> ast.Bool:
        return ast.Bool(False, self._span(meta))

    def null(self, meta: Meta, children: list[Any]) -> ast.Null:
        return ast.Null(self._span(meta))

    def name(self, meta: Meta, children: list[Token]) -> ast.Name:
        return ast.Name(str(children[0]), self._span(meta))

    def call(self, meta: Meta, children: list[Any]) -> ast.Call:
        func, *args = children
        kept = tuple(arg for arg in args if arg is not None)
        return ast.Call(str(func), kept, self._span(meta))

    def quantifier(self, meta: Meta, children: list[Any]) -> ast.Quantifier:
        op, var, source, where, body = children
        return ast.Quantifier(str(op), str(var), source, where, body, self._span(meta))

    def aggregate(self, meta: Meta, children: list[Any]) -> ast.Aggregate:
        op, element, var, source, where = children
        return ast.Aggregate(str(op), element, str(var), source, where, self._span(meta))

    def count(self, meta: Meta, children: list[Any]) -> ast.Count:
        var, source, where = children
        return ast.Count(str(var), source, where, self._span(meta))

    def set_literal(self, meta: Meta, children: list[Any]) -> ast.SetLiteral:
        return ast.SetLiteral(tuple(c for c in children if c is not None), self._span(meta))

    def map_literal(self, meta: Meta, children: list[Any]) -> ast.MapLiteral:
        return ast.MapLiteral(tuple(children), self._span(meta))

    def map_entry(self, meta: Meta, children: list[Any]) -> tuple[str, Any]:
        return _unquote(children[0]), children[1]

    def quantity(self, meta: Meta, children: list[Token | None]) -> ast.Number:
        number, unit = children
        assert number is not None
        text = str(number)
        span = self._token_span(number)
        if not _NUMBER_RE.fullmatch(text):
            diagnostic = Diagnostic(
                "SYNTAX_ERROR",
                f"misplaced digit separator in `{text}`",
                Location(self.path, span.line, span.column),
                hint="`_` may only stand between two digits, as in `90_000`",
            )
            raise _NumberError(diagnostic)
        value = Fraction(text.replace("_", ""))
        return ast.Number(value, str(unit) if unit is not None else None, text, self._span(meta))
