"""Rule text -> typed AST: reading, the grammar's version, comments and the depth limit.

The Lark side (tables, lexer, LALR loop, AST builder) is `engine/syntax/lalr.py`, imported
only when a file has to be parsed: a file read back from `engine/syntax/parsecache.py`
needs no Lark at all, which spares its import at every start.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.limits import MAX_RULE_BINDINGS, MAX_RULE_DEPTH, read_input
from engine.resources import shipped
from engine.syntax import ast, parsecache
from engine.textlines import normalize_newlines

GRAMMAR_FILE = "rules.lark"
_VERSION_RE = re.compile(r"grammar-version:\s*(\S+)")


def grammar_text() -> str:
    """The grammar as shipped with the package."""
    return shipped("grammar").joinpath(GRAMMAR_FILE).read_text(encoding="utf-8")


@cache
def _grammar() -> str:
    return grammar_text()


def grammar_version() -> str:
    """The version declared in the grammar's header comment."""
    match = _VERSION_RE.search(grammar_text())
    if match is None:  # pragma: no cover - the shipped grammar always declares it
        raise RuntimeError("grammar file declares no grammar-version")
    return match.group(1)


def parse_text(text: str, path: str) -> ast.RuleFile:
    """Parse rule `text` (from `path`, used in spans and messages) into a RuleFile.

    A line ends at `\\n`, `\\r\\n` or a lone `\\r` (see `normalize_newlines`).

    Raises:
        RulecheckError: with a located SYNTAX_ERROR, RULE_NUMBER_RANGE, RULE_TOO_DEEP or
            RULE_TOO_MANY_BINDINGS diagnostic (exit 1).
    """
    from engine.syntax.lalr import parse_tree

    text = normalize_newlines(text)
    rule_file = parse_tree(text, path)
    too_deep = _too_deep(rule_file) or _too_many_bindings(rule_file)
    if too_deep is not None:
        raise RulecheckError([too_deep], ExitCode.REFUSED)
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
    """Read (within `engine.limits`) and parse one rule file; unreadable or non-UTF-8 files
    raise RulecheckError. An unchanged file's AST comes from `parsecache` when kept."""
    raw = read_input(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        before = normalize_newlines(raw[: error.start].decode("utf-8"))  # valid up to there
        line = before.count("\n") + 1
        column = len(before) - before.rfind("\n")
        diagnostic = Diagnostic(
            "RULES_INVALID_UTF8",
            f"rule file is not valid utf-8 (byte {error.start})",
            Location(str(path), line, column),
        )
        raise RulecheckError([diagnostic], ExitCode.REFUSED) from None
    grammar = _grammar()
    cached = parsecache.load(str(path), raw, grammar)
    if cached is not None:
        return cached
    rule_file = parse_text(text, str(path))
    parsecache.save(str(path), raw, grammar, rule_file)
    return rule_file


def scan_comments(text: str) -> list[ast.Comment]:
    """Every `#` comment outside string literals, with its line and placement."""
    comments: list[ast.Comment] = []
    # Lark counts lines at `\n` only; so must we (str.splitlines also splits at \x0c, \u2028...).
    for number, raw_line in enumerate(text.split("\n"), start=1):
        if "#" not in raw_line:  # most lines: nothing to scan
            continue
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


def _too_deep(rule_file: ast.RuleFile) -> Diagnostic | None:
    """RULE_TOO_DEEP at the first expression nested deeper than `MAX_RULE_DEPTH`, found by
    an iterative walk, so that no later stage recurses deeper than the limit."""
    pending: list[tuple[object, int]] = [(decl, 0) for decl in reversed(rule_file.declarations)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, tuple):
            pending += [(item, depth) for item in reversed(node)]
            continue
        if isinstance(node, _EXPRESSIONS):
            depth += 1
            if depth > MAX_RULE_DEPTH:
                span: ast.Span = node.span
                return Diagnostic(
                    "RULE_TOO_DEEP",
                    f"expression nested more than {MAX_RULE_DEPTH} levels deep",
                    Location(span.file, span.line, span.column, span.end_line, span.end_column),
                    hint="split it with `const` or `metric` declarations",
                )
        for name in reversed(ast.expression_fields(type(node))):
            child = getattr(node, name)
            if child is not None and type(child) not in _LEAVES and not _shallow(child, depth):
                pending.append((child, depth))
    return None


def _too_many_bindings(rule_file: ast.RuleFile) -> Diagnostic | None:
    """RULE_TOO_MANY_BINDINGS at the first `for` clause of a rule beyond
    `MAX_RULE_BINDINGS`: each clause is a loop nested in the one before, and the compiled
    rule must stay within what Python can nest."""
    for decl in rule_file.declarations:
        bindings: tuple[ast.Binding, ...] = getattr(decl, "bindings", ())
        if len(bindings) > MAX_RULE_BINDINGS:
            span = bindings[MAX_RULE_BINDINGS].span
            return Diagnostic(
                "RULE_TOO_MANY_BINDINGS",
                f"a rule binds more than {MAX_RULE_BINDINGS} `for` clauses",
                Location(span.file, span.line, span.column, span.end_line, span.end_column),
                hint="bind fewer records per rule: a `metric` or `having` can look records up",
            )
    return None


def _shallow(node: object, depth: int) -> bool:
    """Whether an expression at `depth` is written on one line in fewer characters than
    the levels left: each level of an expression writes at least one character of its own
    (a name, an operator, a keyword, a bracket), so it cannot nest deeper than its text
    is long, and the walk need not look inside."""
    if not isinstance(node, _EXPRESSIONS):
        return False
    span: ast.Span = node.span
    if not 0 < span.line == span.end_line:
        return False
    return depth + (span.end_column - span.column + 1) <= MAX_RULE_DEPTH


# Field values that hold no node: not worth a turn of the walk.
_LEAVES = frozenset({str, int, bool, Fraction})

_EXPRESSIONS = (
    ast.Number,
    ast.String,
    ast.Bool,
    ast.Null,
    ast.Name,
    ast.Attribute,
    ast.Navigate,
    ast.Call,
    ast.Quantifier,
    ast.Aggregate,
    ast.Count,
    ast.Select,
    ast.SetLiteral,
    ast.MapLiteral,
    ast.Unary,
    ast.Binary,
    ast.BoolOp,
    ast.Conditional,
)

# What tests of the Lark side reach through this module.
_LALR_NAMES = frozenset({"_Builder", "_Callbacks", "_unplace"})


def __getattr__(name: str) -> Any:
    if name in _LALR_NAMES:
        from engine.syntax import lalr

        return getattr(lalr, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
