"""The Lark side of the parser: Lark's LALR tables, lexer and loop, and the AST builder
run inside it. The only module that knows about Lark (with the tables' cache)."""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import re
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any, NamedTuple

from lark import Token, Tree
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)
from lark.lexer import UnlessCallback, _create_unless
from lark.parse_tree_builder import (
    ChildFilterLALR,
    ChildFilterLALR_NoPlaceholders,
    ExpandSingleChild,
)

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.gcpolicy import collector_paused
from engine.limits import number_too_large
from engine.syntax import ast
from engine.syntax.parse import grammar_text
from engine.syntax.tables import lalr_parser
from engine.units import UNITS

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
# Terminals that carry a value; every other token is a keyword or punctuation.
_VALUE_TERMINALS = frozenset(_TOKEN_WORDS) - {"$END"} | {"TYPE_UNIT"}


class _Parser:
    """The Lark LALR parser with the AST builder run inside it, one file at a time.

    The builder is called as each rule is reduced, so no parse tree is built and walked a
    second time; keywords are kept (`keep_all_tokens`) only so that spans start at them.
    """

    def __init__(self) -> None:
        self.builder = _Builder()
        self.lark = lalr_parser(  # the tables cached per grammar (engine/syntax/tables.py)
            grammar_text(),
            _Callbacks(self.builder),
            lexer="contextual",
            keep_all_tokens=True,
            maybe_placeholders=True,
        )
        self.driver = _Driver(self.lark)
        self.lock = threading.Lock()

    def parse(self, text: str, path: str) -> ast.RuleFile:
        with self.lock, collector_paused():  # the builder holds the path of the file being parsed
            self.builder.path = path
            try:
                result = self.driver.parse(text)
            except _Refused:  # Lark's own loop raises the error exactly as it words it
                result = self.lark.parse(text)
        return _unplace(result)  # type: ignore[no-any-return]


class _Refused(Exception):
    """The input is not in the language: `_Driver` leaves the error to Lark."""


class _Scanner(NamedTuple):
    """What Lark's contextual lexer does in one parser state, as plain data: its terminals
    as one pattern (compiled on the state's first token, see `_Driver._ready`), the
    keywords a matched terminal stands for (Lark's `UnlessCallback`), and the terminals
    it skips or counts newlines in. The pattern may skip blanks before the token it finds
    (see `_blank_prefix`): the token starts where group 1 ends, and its terminal is the
    match's last group (see `_alternative`)."""

    pattern: str
    flags: int
    keywords: dict[str, dict[str, str]]
    ignore: frozenset[str]
    newline: frozenset[str]


# A scanner made ready for the driver's loop: its pattern's `match` and the rest as is.
_Ready = tuple[
    Callable[[str, int], re.Match[str] | None],
    dict[str, dict[str, str]],
    frozenset[str],
    frozenset[str],
]


def _scanners(lexer: Any) -> dict[Any, _Scanner] | None:
    """The scanner of every parser state, or None when a state's lexer does more than one
    compiled pattern and keyword look-ups (then every text goes to Lark's own lexer).

    Each state's pattern is Lark's own alternation (the terminals in Lark's order, after
    Lark folds keywords into the terminals that match them), compiled by the driver and
    not by Lark, whose lexer is left unbuilt until a text it must word the error of."""
    scanners: dict[Any, _Scanner] = {}
    made: dict[int, _Scanner | None] = {}  # Lark shares a lexer among states that accept alike
    for state, basic in getattr(lexer, "lexers", {}).items():
        if id(basic) not in made:
            made[id(basic)] = _scanner(basic)
        scanner = made[id(basic)]
        if scanner is None:
            return None
        scanners[state] = scanner
    return scanners or None


def _scanner(basic: Any) -> _Scanner | None:
    """The scanner of one of Lark's basic lexers, None when it does more than plain data
    can (see `_scanners`)."""
    if basic.re is not re or basic.use_bytes or basic.user_callbacks:
        return None
    terminals, callbacks = _create_unless(  # type: ignore[no-untyped-call]
        basic.terminals, basic.g_regex_flags, basic.re, basic.use_bytes
    )
    keywords: dict[str, dict[str, str]] = {}
    for kind, callback in callbacks.items():
        if type(callback) is not UnlessCallback or callback.scanner.g_regex_flags:
            return None
        words = callback.scanner.terminals
        if any(word.pattern.type != "str" or word.pattern.flags for word in words):
            return None
        keywords[kind] = {}
        for word in words:
            keywords[kind].setdefault(word.pattern.value, word.name)
    alternation = "|".join(_alternative(terminal) for terminal in terminals)
    pattern = f"({_blank_prefix(terminals, basic.ignore_types)})(?:{alternation})"
    return _Scanner(pattern, basic.g_regex_flags, keywords, basic.ignore_types, basic.newline_types)


def _alternative(terminal: Any) -> str:
    """A terminal's branch of a state's pattern: its regular expression, then an empty
    group named after it, which tells which branch matched.

    Lark writes `(?P<NAME>regexp)`, so every branch starts by opening its group, and the
    `re` engine enters each branch in turn at every token: most of a match's cost, with
    forty branches before the common ones. With the group last, a branch that starts with
    a character or a class (`->`, `[a-z_]`) is passed over by testing that one character,
    as `re` does for such branches. The order of the branches and what each matches are
    Lark's; the token's start is where the blanks before it end (group 1)."""
    regexp = terminal.pattern.to_regexp()
    if "|" in regexp:  # its own alternation stays inside the branch
        regexp = f"(?:{regexp})"
    return f"{regexp}(?P<{terminal.name}>)"


_HORIZONTAL_BLANKS = " \t\f\r"


def _blank_prefix(terminals: list[Any], ignore: frozenset[str]) -> str:
    """A pattern that skips the blanks before a token on the same line, or "".

    Between two tokens on one line Lark's lexer matches an ignored run of blanks (`%ignore
    WS`) and then the token: two matches and a turn of the loop for each token, about a
    third of the lexer's matches. The blanks may be skipped inside the token's own match
    when skipping them changes nothing: one ignored terminal is a run of listed
    characters (`[ \\t\\f\\r\\n]+`), and no other terminal of the state can start with one of
    them, so at such a character Lark's lexer can only match that run, and the next token
    starts where the run ends. Only blanks that end no line are skipped, so that lines
    are still counted in the ignored runs that hold newlines."""
    for blank in terminals:
        if blank.name not in ignore:
            continue
        characters = _run_of(blank.pattern.to_regexp())
        skipped = "".join(sorted(set(_HORIZONTAL_BLANKS) & characters))
        if not skipped:
            continue
        others = (t for t in terminals if t is not blank)
        if not any(_may_start_with(t.pattern.to_regexp(), characters) for t in others):
            return f"[{re.escape(skipped)}]*"
    return ""


# The `re` module's own parser of patterns and the names of what it parses them into.
_SRE_PARSER: Any = importlib.import_module("re._parser")
_SRE: Any = importlib.import_module("re._constants")


def _parsed(regexp: str) -> list[tuple[Any, Any]]:
    return list(_SRE_PARSER.parse(regexp).data)


@cache
def _run_of(regexp: str) -> frozenset[str]:
    """The characters of a pattern that is one run of listed characters (`[ \\t]+`), else
    an empty set."""
    items = _parsed(regexp)
    if len(items) != 1 or items[0][0] is not _SRE.MAX_REPEAT:
        return frozenset()
    least, most, body = items[0][1]
    if least != 1 or most is not _SRE.MAXREPEAT or len(body) != 1:
        return frozenset()
    op, members = body[0]
    if op is not _SRE.IN or any(member[0] is not _SRE.LITERAL for member in members):
        return frozenset()
    return frozenset(chr(code) for _, code in members)


@cache
def _may_start_with(regexp: str, characters: frozenset[str]) -> bool:
    """Whether a match of `regexp` may start with one of `characters`: an analysis of the
    parsed pattern that answers yes to anything it does not know."""
    hit, _empty = _first(_parsed(regexp), characters)
    return hit


def _first(items: list[tuple[Any, Any]], characters: frozenset[str]) -> tuple[bool, bool]:
    """(may the sequence start with one of `characters`, may it match nothing)."""
    for item in items:
        hit, empty = _first_of(item, characters)
        if hit:
            return True, False
        if not empty:
            return False, False
    return False, True


def _first_of(item: tuple[Any, Any], characters: frozenset[str]) -> tuple[bool, bool]:
    op, value = item
    if op is _SRE.LITERAL:
        return chr(value) in characters, False
    if op is _SRE.NOT_LITERAL:
        return bool(characters - {chr(value)}), False
    if op is _SRE.IN:
        return any(_in_set(value, character) for character in characters), False
    if op is _SRE.SUBPATTERN:
        return _first(value[3], characters)
    if op is _SRE.ATOMIC_GROUP:
        return _first(value, characters)
    if op is _SRE.BRANCH:
        results = [_first(branch, characters) for branch in value[1]]
        return any(hit for hit, _ in results), any(empty for _, empty in results)
    if op in (_SRE.MAX_REPEAT, _SRE.MIN_REPEAT, _SRE.POSSESSIVE_REPEAT):
        hit, empty = _first(value[2], characters)
        return hit, empty or value[0] == 0
    if op in (_SRE.AT, _SRE.ASSERT, _SRE.ASSERT_NOT):  # consume nothing
        return False, True
    return True, False  # any character, back-references...: it may


def _word(character: str) -> bool:
    return character.isalnum() or character == "_"


_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    _SRE.CATEGORY_SPACE: str.isspace,
    _SRE.CATEGORY_NOT_SPACE: lambda character: not character.isspace(),
    _SRE.CATEGORY_DIGIT: str.isdigit,
    _SRE.CATEGORY_NOT_DIGIT: lambda character: not character.isdigit(),
    _SRE.CATEGORY_WORD: _word,
    _SRE.CATEGORY_NOT_WORD: lambda character: not _word(character),
}


def _in_set(members: list[tuple[Any, Any]], character: str) -> bool:
    """Whether a character class (`[...]`) may match `character`."""
    negated = matched = False
    for op, value in members:
        if op is _SRE.NEGATE:
            negated = True
        elif op is _SRE.LITERAL:
            matched = matched or chr(value) == character
        elif op is _SRE.RANGE:
            matched = matched or value[0] <= ord(character) <= value[1]
        elif op is _SRE.CATEGORY and value in _CATEGORIES:
            matched = matched or _CATEGORIES[value](character)
        else:
            return True
    return matched != negated


def _reducers(callbacks: dict[Any, Any]) -> dict[Any, Any]:
    """Per rule, the callback of its reductions, or None when it returns its one child
    unchanged.

    Lark's callback chain for a rule (a child filter, then `ExpandSingleChild`, then the
    builder's function) becomes one generated function doing the same: the same children
    in the same list, the same single child handed up. A filter's loop over its plan ran
    per reduction, a tenth of a large parse; here each plan is unrolled, and every rule's
    function is compiled at once (one compile per rule cost more than the tables' load)."""
    found: dict[Any, Any] = {}
    lines: list[str] = []
    namespace: dict[str, Any] = {}
    for rule, callback in callbacks.items():
        if isinstance(rule, str):
            continue
        if len(rule.expansion) == 1 and type(callback) is ExpandSingleChild:
            found[rule] = None
            continue
        unrolled = _unrolled(callback)
        if unrolled is None:  # pragma: no cover - a chain Lark does not make for this grammar
            found[rule] = callback
            continue
        body, inner = unrolled
        name = f"reduce_{len(namespace)}"
        namespace[f"{name}_inner"] = inner
        lines += [f"def {name}(c):", *body, f"    return {name}_inner(f)"]
        found[rule] = name
    exec(compile("\n".join(lines) + "\n", "<rulecheck reduce>", "exec"), namespace)
    return {rule: namespace[f] if isinstance(f, str) else f for rule, f in found.items()}


def _unrolled(callback: Any) -> tuple[list[str], Any] | None:
    """The body that builds a reduction's list `f` of children as Lark's chain would
    (returning early where `ExpandSingleChild` hands one child up), and the function the
    chain calls last with `f`; None for a chain of another shape."""
    lines, inner = [], callback
    if type(inner) in (ChildFilterLALR, ChildFilterLALR_NoPlaceholders):
        plan = [(i, expand, nones[0] if nones else 0) for i, expand, *nones in inner.to_include]
        lines += _filter_lines(plan, getattr(inner, "append_none", 0))
        inner = inner.node_builder
    else:
        lines.append("    f = c")
    if type(inner) is ExpandSingleChild:
        lines.append("    if len(f) == 1: return f[0]")
        inner = inner.node_builder
    if type(inner) in (ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild):
        return None
    return lines, inner


def _filter_lines(plan: list[tuple[int, bool, int]], append_none: int) -> list[str]:
    """Lark's `ChildFilterLALR.__call__`, unrolled for one plan: a first expanded child's
    list is taken over, not copied (a left-recursive list stays linear)."""
    lines = ["    f = []"]
    for index, (child, expand, nones) in enumerate(plan):
        if nones:
            lines.append(f"    f += [None] * {nones}")
        if not expand:
            lines.append(f"    f.append(c[{child}])")
        elif index == 0 and not nones:
            lines[0] = f"    f = c[{child}].children"
        else:
            lines.append(f"    f += c[{child}].children")
    if append_none:
        lines.append(f"    f += [None] * {append_none}")
    return lines


class _Driver:
    """Lark's LALR loop over Lark's own tables and callbacks, with Lark's contextual lexer
    run inline, for input it accepts.

    The same tokens (types, values, positions), the same shifts and reductions in the same
    order, so the same AST; only the per-token overhead differs. The lexer matches with
    each state's own compiled pattern, looks keywords up in a dict and counts newlines
    only in the terminals Lark counts them in, without a generator, a `LineCounter` or a
    Python-level `Token.__new__`. Each reduction's size, callback and rule name are looked
    up once, here, instead of hashing Lark's rule object at every reduction. A one-symbol
    rule whose callback is Lark's bare `ExpandSingleChild` (the `?` rules of the
    precedence ladder: four reductions in five) hands its one child up unchanged, so only
    its state changes. On any error (a character no terminal matches, a token the table
    has no action for) it raises `_Refused` and the caller parses again with Lark, which
    raises the error exactly as before.
    """

    def __init__(self, lark: Any) -> None:
        parser = lark.parser.parser.parser
        table = parser.parse_table
        (start,) = lark.options.start
        self.scanners = _scanners(lark.parser.lexer)
        # a state's (match, keywords, ignore, newline), made on its first token: a file
        # meets about half of the states, and compiling a pattern costs a third of a
        # parser's making
        self.ready: dict[Any, _Ready] = {}
        self.compiled: dict[tuple[str, int], Callable[[str, int], re.Match[str] | None]] = {}
        self.start_state = table.start_states[start]
        self.end_state = table.end_states[start]
        callbacks = parser.callbacks
        self.token_callbacks = {
            name: callback for name, callback in callbacks.items() if isinstance(name, str)
        }
        reducers = _reducers(callbacks)
        self.states: dict[Any, dict[str, tuple[bool, Any]]] = {
            state: {
                name: (True, arg)
                if action.name == "Shift"
                else (False, (len(arg.expansion), reducers[arg], arg.origin.name))
                for name, (action, arg) in actions.items()
            }
            for state, actions in table.states.items()
        }
        # (state below, state on top, next token's kind) -> the state on top once every
        # one-symbol reduction that hands its child up (`_unit_chain`) is made: most of a
        # parse's reductions, each met again and again in the same states.
        self.unit_chains: dict[tuple[Any, Any, str | None], Any] = {}

    def _unit_chain(self, below: Any, top: Any, kind: str | None) -> Any:
        """The state on top of `below` after the reductions, one after another, of rules
        of one symbol whose value is their child's, with `kind` the next token: from the
        precedence ladder's top to the rule that uses the expression, a dozen levels. The
        stack under the top does not change, nor the values, so the result depends on the
        two states and the token alone."""
        states = self.states
        while True:
            entry = states[top].get(kind)  # type: ignore[arg-type]
            if entry is None or entry[0] or entry[1][1] is not None:
                return top
            top = states[below][entry[1][2]][1]

    def _ready(self, state: Any) -> _Ready:
        """The scanner of `state`, its pattern compiled (`_Refused` for a state without
        one: Lark's lexer would have to decide)."""
        scanner = self.scanners.get(state) if self.scanners else None
        if scanner is None:
            raise _Refused
        key = (scanner.pattern, scanner.flags)
        if key not in self.compiled:
            self.compiled[key] = re.compile(scanner.pattern, scanner.flags).match
        ready = self.ready[state] = (
            self.compiled[key],
            scanner.keywords,
            scanner.ignore,
            scanner.newline,
        )
        return ready

    def parse(self, text: str, lexed: list[Token] | None = None) -> Any:
        """The callbacks' result for the whole text; `_Refused` when it does not parse.
        Every token lexed is appended to `lexed` when given."""
        if self.scanners is None or self.token_callbacks:
            raise _Refused
        ready = self.ready
        states = self.states
        unit_chains = self.unit_chains
        end_state = self.end_state
        state_stack = [self.start_state]
        value_stack: list[Any] = []
        new_token = str.__new__
        size_of_text = len(text)
        position = line_start = 0
        line = 1
        token = None
        at_end = False
        while True:
            if position < size_of_text:
                try:
                    match, keywords, ignore, newline = ready[state_stack[-1]]
                except KeyError:
                    match, keywords, ignore, newline = self._ready(state_stack[-1])
                found = match(text, position)
                if found is None:
                    raise _Refused
                kind = found.lastgroup
                start = found.end(1)  # after skipped blanks
                position = found.end()
                value = text[start:position]
                start_line, column = line, start - line_start + 1
                if kind in newline:
                    newlines = value.count("\n")
                    if newlines:
                        line += newlines
                        line_start = start + value.rindex("\n") + 1
                if kind in ignore:
                    continue
                words = keywords.get(kind)  # type: ignore[arg-type]
                if words is not None:
                    kind = words.get(value, kind)
                token = new_token(Token, value)
                token.type = kind  # type: ignore[assignment]
                token.value = value
                token.start_pos = start
                token.line = start_line
                token.column = column
                token.end_line = line
                token.end_column = position - line_start + 1
                token.end_pos = position
                if lexed is not None:
                    lexed.append(token)
            else:
                at_end = True
                kind = "$END"
                token = Token.new_borrow_pos(kind, "", token) if token else Token(kind, "", 0, 1, 1)
            while True:
                entry = states[state_stack[-1]].get(kind)  # type: ignore[arg-type]
                if entry is None:
                    raise _Refused
                shift, arg = entry
                if shift:
                    if at_end:  # pragma: no cover - Lark's tables never shift the end
                        raise _Refused
                    state_stack.append(arg)
                    value_stack.append(token)
                    break
                size, reduce, origin = arg
                if reduce is None:  # the value on top is the rule's value: only the state moves
                    if at_end:
                        state_stack[-1] = states[state_stack[-2]][origin][1]
                    else:
                        chain = (state_stack[-2], state_stack[-1], kind)
                        top = unit_chains.get(chain)
                        if top is None:
                            top = unit_chains[chain] = self._unit_chain(*chain)
                        state_stack[-1] = top
                elif size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                    state_stack.append(states[state_stack[-1]][origin][1])
                    value_stack.append(reduce(children))
                else:
                    state_stack.append(states[state_stack[-1]][origin][1])
                    value_stack.append(reduce([]))
                if at_end and state_stack[-1] == end_state:
                    return value_stack[-1]


@cache
def _parser() -> _Parser:
    return _Parser()


def _syntax_diagnostic(error: UnexpectedInput, text: str, path: str) -> Diagnostic:
    line = getattr(error, "line", None)
    column = getattr(error, "column", None)
    if isinstance(error, UnexpectedToken) and error.token.type == "$END":
        # Lark places the end-of-file token at the start of the last token; point after it.
        line = getattr(error.token, "end_line", None) or line
        column = getattr(error.token, "end_column", None) or column
    if isinstance(error, UnexpectedEOF) or line is None or line < 1:
        lines = text.split("\n")  # lines as Lark counts them, at `\n` only
        if len(lines) > 1 and not lines[-1]:
            lines.pop()
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
        message = f"unexpected character {_show_char(text[position : position + 1])}"
    else:
        message = "unexpected end of file"
    hint = (
        "expected " + ", ".join(sorted(_describe(name) for name in expected)) if expected else None
    )
    if isinstance(error, UnexpectedToken):
        hint = _likely_fix(error.token, expected) or hint
    return Diagnostic("SYNTAX_ERROR", message, Location(path, line, column), hint=hint)


# Operators written the other way round, as other languages (or a slip) spell them.
_SWAPPED_OPERATORS = {"=>": ">=", "=<": "<="}


def _likely_fix(token: Token, expected: set[str]) -> str | None:
    """The one fix a slip most likely needs, when it is plain: `=>` written for `>=`
    where `=>` cannot stand, or a misspelt unit after a number (`5 token`). Said instead
    of the list of every token the parser would have accepted there."""
    text = str(token)
    if text in _SWAPPED_OPERATORS and token.type not in expected:
        meant = _SWAPPED_OPERATORS[text]
        return (
            f"did you mean `{meant}`? (`=>` only separates a decision row's condition "
            "from its verdict)"
            if text == "=>"
            else f"did you mean `{meant}`?"
        )
    if token.type == "NAME" and "UNIT" in expected:
        units = {unit.casefold(): unit for unit in UNITS}
        close = difflib.get_close_matches(text.casefold(), list(units), n=1, cutoff=0.6)
        if close:
            return f"did you mean the unit `{units[close[0]]}`? (units: {', '.join(UNITS)})"
    return None


def _show_char(char: str) -> str:
    """A character for a message: visible ones in backticks, the others (controls, spaces
    other than ` `, format characters) by their code point, as in `U+00A0`."""
    if not char:
        return "end of file"
    if char == " " or (char.isprintable() and not char.isspace()):
        return f"`{char}`"
    name = unicodedata.name(char, "")
    return f"`U+{ord(char):04X}`" + (f" ({name.lower()})" if name else "")


def _describe(terminal: str) -> str:
    if terminal in _TOKEN_WORDS:
        return _TOKEN_WORDS[terminal]
    pattern = _parser().lark.get_terminal(terminal).pattern
    return f"`{pattern.value}`" if pattern.type == "str" else terminal.lower()


class _NumberError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _cut(text: str) -> str:
    return text if len(text) <= 40 else text[:20] + "..." + text[-10:]


def _unquote(token: Token) -> str:
    body = str(token)[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


@dataclass(frozen=True, slots=True)
class _Placed:
    """A builder result together with the extent of the text its rule matched, when that
    differs from the result's own span (`(x)`, `where x`, a note, a clause...). Parents
    measure their span over `span` and receive `value`."""

    value: Any
    span: ast.Span


def _unplace(child: Any) -> Any:
    return child.value if type(child) is _Placed else child


class _Callbacks:
    """What Lark calls for each reduced rule: `_callback(builder method)` by rule name."""

    def __init__(self, builder: _Builder) -> None:
        self._builder = builder

    def __getattr__(self, rule: str) -> Callable[[list[Any]], Any]:
        if rule.startswith("_"):
            raise AttributeError(rule)
        return _callback(self._builder, getattr(self._builder, rule))

    def __default__(self, rule: str, children: list[Any], _meta: object) -> Tree[Any]:
        # Lark's own helper rules (`__start_star_0`...) are trees it flattens into their parent.
        if not rule.startswith("_"):  # pragma: no cover - every grammar rule has a builder
            raise RuntimeError(f"grammar rule `{rule}` has no AST builder")
        return Tree(rule, children)


def _callback(
    builder: _Builder, method: Callable[[ast.Span, list[Any]], Any]
) -> Callable[[list[Any]], Any]:
    """Wrap a builder method: measure the span over every child, keywords included, then
    hand it the children that carry meaning."""

    def reduce(children: list[Any]) -> Any:
        first, last = children[0], children[-1]
        position = 0
        while first is None:  # an absent optional part (`[note]`...) starts no span
            position += 1
            first = children[position]
        position = -1
        while last is None:  # nor ends one (a loop: a generator costs more, one in 14)
            position -= 1
            last = children[position]
        # a token's position, or the span of what a rule made (no call: every reduction)
        if type(first) is Token:
            line, column = first.line or 0, first.column or 0
        else:
            line, column = first.span.line, first.span.column
        if type(last) is Token:
            end_line, end_column = last.end_line or 0, last.end_column or 0
        else:
            end_line, end_column = last.span.end_line, last.span.end_column
        span = ast.Span(builder.path, line, column, end_line, end_column)
        kept = []  # a loop, not a comprehension: most reductions have two or three children
        for child in children:
            kind = type(child)
            if kind is _Placed:
                kept.append(child.value)  # `_unplace`, without a call
            elif kind is not Token or child.type in _VALUE_TERMINALS:
                kept.append(child)
        result = method(span, kept)
        if getattr(result, "span", None) is span:
            return result
        return _Placed(result, span)

    return reduce


class _Builder:
    """Builds AST nodes bottom-up, called by the parser as it reduces each grammar rule.

    Every method receives the span of the text the rule matched and its children without
    keywords and punctuation; `_callback` does that bookkeeping for all of them.
    """

    def __init__(self) -> None:
        self.path = ""

    # -- spans -----------------------------------------------------------------------------

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

    def start(self, span: ast.Span, children: list[Any]) -> ast.RuleFile:
        name, version = children[0]
        return ast.RuleFile(self.path, name, version, tuple(children[1:]), (), span)

    def header(self, span: ast.Span, children: list[Token]) -> tuple[ast.Ident, str]:
        return self._ident(children[0]), _unquote(children[1])

    def note(self, span: ast.Span, children: list[Token]) -> str:
        return _unquote(children[0])

    def const_decl(self, span: ast.Span, children: list[Any]) -> ast.ConstDecl:
        name, value, note = children
        return ast.ConstDecl(self._ident(name), value, note, span)

    def metric_decl(self, span: ast.Span, children: list[Any]) -> ast.MetricDecl:
        name, *params, body, note = children
        kept = tuple(param for param in params if param is not None)
        return ast.MetricDecl(self._ident(name), kept, body, note, span)

    def type_name(self, span: ast.Span, children: list[Token]) -> Token:
        return children[0]

    def param(self, span: ast.Span, children: list[Token]) -> ast.Param:
        return ast.Param(self._ident(children[0]), self._ident(children[1]), span)

    def kind_decl(self, span: ast.Span, children: list[Any]) -> ast.KindDecl:
        name, *rest = children
        graphs = tuple(self._ident(g) for g in rest if type(g) is Token)
        note, *members = rest[len(graphs) :]
        records = tuple(m for m in members if isinstance(m, ast.Records))
        keys = [m for m in members if isinstance(m, ast.Ident)]
        attrs = tuple(m for m in members if isinstance(m, ast.AttrDecl))
        edges = tuple(m for m in members if isinstance(m, ast.EdgeDecl))
        key = keys[-1] if keys else None
        return ast.KindDecl(
            self._ident(name),
            graphs,
            records,
            key,
            attrs,
            edges,
            note,
            span,
        )

    def records_decl(self, span: ast.Span, children: list[Any]) -> ast.Records:
        document, *pointers, optional = children
        quoted = tuple(_unquote(p) for p in pointers)
        return ast.Records(self._ident(document), quoted, optional=bool(optional), span=span)

    def optional(self, span: ast.Span, children: list[Token]) -> bool:
        return True

    def key_decl(self, span: ast.Span, children: list[Token]) -> ast.Ident:
        return self._ident(children[0])

    def attr_decl(self, span: ast.Span, children: list[Any]) -> ast.AttrDecl:
        name, type_name, as_text = children
        return ast.AttrDecl(
            self._ident(name), self._ident(type_name), as_text=bool(as_text), span=span
        )

    def as_text(self, span: ast.Span, children: list[Token]) -> bool:
        return True

    def edge_decl(self, span: ast.Span, children: list[Token]) -> ast.EdgeDecl:
        label, _arrow, *targets = children
        return ast.EdgeDecl(self._ident(label), tuple(self._ident(t) for t in targets), span)

    def within_decl(self, span: ast.Span, children: list[Token]) -> ast.EdgeDecl:
        target = self._ident(children[0])
        label = ast.Ident("within", span)
        return ast.EdgeDecl(label, (target,), span, within=True)

    def protocol_decl(self, span: ast.Span, children: list[Any]) -> ast.ProtocolDecl:
        name, note, *clauses = children

        def named(keyword: str) -> tuple[ast.Ident, ...]:
            return tuple(i for k, idents in clauses if k == keyword for i in idents)

        documents = tuple(d for k, d in clauses if k == "document")
        banners = tuple(b for k, b in clauses if k == "banner")
        seals = tuple(b for k, b in clauses if k == "seal")
        freezes = tuple(b for k, b in clauses if k == "freeze")
        return ast.ProtocolDecl(
            self._ident(name),
            note,
            named("graph"),
            documents,
            named("admission"),
            named("verdict"),
            named("report"),
            span,
            banners,
            seals,
            freezes,
        )

    def _names_clause(self, keyword: str, children: list[Token]) -> tuple[str, Any]:
        return keyword, tuple(self._ident(token) for token in children)

    def graph_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, Any]:
        return self._names_clause("graph", children)

    def admission_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, Any]:
        return self._names_clause("admission", children)

    def verdict_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, Any]:
        return self._names_clause("verdict", children)

    def report_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, Any]:
        return self._names_clause("report", children)

    def document_clause(self, span: ast.Span, children: list[Any]) -> tuple[str, Any]:
        name, path, file_format, schema, measured, optional = children
        schema_path, schema_code = schema if schema is not None else (None, None)
        document = ast.DocumentClause(
            self._ident(name),
            _unquote(path),
            self._ident(file_format),
            schema_path,
            bool(measured),
            bool(optional),
            span,
            schema_code=schema_code,
        )
        return "document", document

    def derived_clause(self, span: ast.Span, children: list[Any]) -> tuple[str, Any]:
        name, table = children
        format_ = ast.Ident("", span)
        document = ast.DocumentClause(self._ident(name), "", format_, span=span)
        return "document", dataclasses.replace(document, table=self._ident(table))

    def given_clause(self, span: ast.Span, children: list[Any]) -> tuple[str, Any]:
        name, optional = children
        format_ = ast.Ident("", span)
        document = ast.DocumentClause(
            self._ident(name), "", format_, optional=bool(optional), span=span, given=True
        )
        return "document", document

    def freeze_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, Any]:
        table, document, pointer, before = children
        freeze = ast.Freeze(
            self._ident(table), self._ident(document), _unquote(pointer), self._ident(before), span
        )
        return "freeze", freeze

    def seal_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, Any]:
        table, document = children
        return "seal", ast.Seal(self._ident(table), self._ident(document), span)

    def banner_clause(self, span: ast.Span, children: list[Any]) -> tuple[str, Any]:
        text, gate = children
        return "banner", ast.Banner(_unquote(text), self._ident(gate), span)

    def doc_schema(self, span: ast.Span, children: list[Token]) -> tuple[str, ast.Ident | None]:
        path, code = children[0], children[-1]  # absent, `else reject CODE` is None each
        return _unquote(path), self._ident(code) if code is not None else None

    def doc_measured(self, span: ast.Span, children: list[Token]) -> bool:
        return True

    def code_decl(self, span: ast.Span, children: list[Any]) -> ast.CodeDecl:
        name, message, note = children
        return ast.CodeDecl(self._ident(name), _unquote(message), note, span)

    def binding(self, span: ast.Span, children: list[Any]) -> ast.Binding:
        var, source, where = children
        return ast.Binding(self._ident(var), source, where, span)

    def ledger(self, span: ast.Span, children: list[Any]) -> ast.Ledger:
        var, source, where, order = children
        return ast.Ledger(self._ident(var), source, where, order, span)

    def where(self, span: ast.Span, children: list[Any]) -> Any:
        return children[0]

    def require(self, span: ast.Span, children: list[Any]) -> Any:
        return children[0]

    def link_decl(self, span: ast.Span, children: list[Any]) -> ast.LinkDecl:
        name, note, *bindings, require, code = children
        return ast.LinkDecl(
            self._ident(name),
            note,
            tuple(bindings),
            require,
            self._ident(code),
            span,
        )

    def gate_decl(self, span: ast.Span, children: list[Any]) -> ast.GateDecl:
        name, note, *bindings, require = children
        return ast.GateDecl(self._ident(name), note, tuple(bindings), require, span)

    def budget_decl(self, span: ast.Span, children: list[Any]) -> ast.BudgetDecl:
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
            span,
        )

    def reserving(self, span: ast.Span, children: list[Any]) -> Any:
        return children[0]

    def conditional(self, span: ast.Span, children: list[Any]) -> ast.Conditional:
        condition, then, otherwise = children
        return ast.Conditional(condition, then, otherwise, span)

    def table_decl(self, span: ast.Span, children: list[Any]) -> ast.TableDecl:
        name, note, *rest = children
        bindings = tuple(c for c in rest if isinstance(c, ast.Binding))
        columns = tuple(c for c in rest if isinstance(c, ast.Column))
        return ast.TableDecl(self._ident(name), note, bindings, columns, span)

    def column(self, span: ast.Span, children: list[Any]) -> ast.Column:
        return ast.Column(self._ident(children[0]), children[1], span)

    def decision_decl(self, span: ast.Span, children: list[Any]) -> ast.DecisionDecl:
        name, note, *rows = children
        return ast.DecisionDecl(self._ident(name), note, tuple(rows), span)

    def when_row(self, span: ast.Span, children: list[Any]) -> ast.DecisionRow:
        condition, verdict = children
        return ast.DecisionRow(condition, self._ident(verdict), span)

    def otherwise_row(self, span: ast.Span, children: list[Any]) -> ast.DecisionRow:
        return ast.DecisionRow(None, self._ident(children[0]), span)

    def transitions_decl(self, span: ast.Span, children: list[Any]) -> ast.TransitionsDecl:
        name, note, initial, *clauses = children
        terminal: list[ast.Ident] = []
        settlement: list[ast.Ident] = []
        events: list[ast.EventDecl] = []
        moves: list[ast.Move] = []
        outcomes: list[ast.Outcome] = []
        replays: list[ast.ReplayClause] = []
        policies: list[ast.PolicyPath] = []
        for kind, value in clauses:
            if kind == "replay":
                replays.append(value)
            elif kind == "policy":
                policies.append(value)
            elif kind == "terminal":
                terminal += value
            elif kind == "settlement":
                settlement += value
            elif kind == "event":
                events.append(value)
            elif kind == "move":
                moves.append(value)
            else:
                outcomes.append(value)
        if len(replays) > 1:
            second = replays[1].span
            diagnostic = Diagnostic(
                "SYNTAX_ERROR",
                f"transition table `{name}` has a second `replay` clause",
                Location(self.path, second.line, second.column),
                hint="a table is replayed over one kind of events; declare a second table",
            )
            raise _NumberError(diagnostic)
        return ast.TransitionsDecl(
            self._ident(name),
            note,
            self._ident(initial),
            tuple(terminal),
            tuple(settlement),
            tuple(events),
            tuple(moves),
            tuple(outcomes),
            span,
            replays[0] if replays else None,
            tuple(policies),
        )

    def terminal_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, list[ast.Ident]]:
        return "terminal", [self._ident(t) for t in children]

    def settlement_clause(
        self, span: ast.Span, children: list[Token]
    ) -> tuple[str, list[ast.Ident]]:
        return "settlement", [self._ident(t) for t in children]

    def event_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, ast.EventDecl]:
        name, *states = children
        event = ast.EventDecl(self._ident(name), tuple(self._ident(s) for s in states), span)
        return "event", event

    def move_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, ast.Move]:
        source, event, target = (self._ident(t) for t in children)
        return "move", ast.Move(source, event, target, span)

    def outcome_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, ast.Outcome]:
        state, result = (self._ident(t) for t in children)
        return "outcome", ast.Outcome(state, result, span)

    def replay_clause(self, span: ast.Span, children: list[Any]) -> tuple[str, ast.ReplayClause]:
        kind, entity, event, order, where, key, version, ledger = children
        clause = ast.ReplayClause(
            self._ident(kind),
            self._ident(entity),
            self._ident(event),
            self._ident(order),
            where[0] if where else None,
            where[1] if where else None,
            key[0] if key else None,
            version,
            span,
            key[1] if key else (),
            ledger,
        )
        return "replay", clause

    def policy_clause(self, span: ast.Span, children: list[Token]) -> tuple[str, ast.PolicyPath]:
        outcome, source, *events = (self._ident(t) for t in children)
        return "policy", ast.PolicyPath(outcome, source, tuple(events), span)

    def replay_where(self, span: ast.Span, children: list[Token]) -> tuple[ast.Ident, str]:
        return self._ident(children[0]), _unquote(children[1])

    def replay_key(
        self, span: ast.Span, children: list[Token | None]
    ) -> tuple[ast.Ident, tuple[ast.Ident, ...]]:
        key, *over = children
        assert key is not None
        return self._ident(key), tuple(self._ident(t) for t in over if t is not None)

    def replay_version(self, span: ast.Span, children: list[Token]) -> ast.Ident:
        return self._ident(children[0])

    def replay_ledger(self, span: ast.Span, children: list[Token]) -> ast.Ident:
        return self._ident(children[0])

    # -- expressions -----------------------------------------------------------------------

    def or_expr(self, span: ast.Span, children: list[Any]) -> ast.BoolOp:
        return ast.BoolOp("or", tuple(children), span)

    def and_expr(self, span: ast.Span, children: list[Any]) -> ast.BoolOp:
        return ast.BoolOp("and", tuple(children), span)

    def not_op(self, span: ast.Span, children: list[Any]) -> ast.Unary:
        return ast.Unary("not", children[0], span)

    def negate(self, span: ast.Span, children: list[Any]) -> Any:
        operand = children[0]
        if isinstance(operand, ast.Number):
            return ast.Number(-operand.value, operand.unit, "-" + operand.text, span)
        return ast.Unary("-", operand, span)

    def comparison(self, span: ast.Span, children: list[Any]) -> ast.Binary:
        left, op, right = children
        return ast.Binary(str(op), left, right, span)

    def member(self, span: ast.Span, children: list[Any]) -> ast.Binary:
        return ast.Binary("in", children[0], children[1], span)

    def not_member(self, span: ast.Span, children: list[Any]) -> ast.Binary:
        return ast.Binary("not in", children[0], children[1], span)

    def additive(self, span: ast.Span, children: list[Any]) -> Any:
        return _left_assoc(self.path, children)

    def multiplicative(self, span: ast.Span, children: list[Any]) -> Any:
        return _left_assoc(self.path, children)

    def attribute(self, span: ast.Span, children: list[Any]) -> ast.Attribute:
        return ast.Attribute(children[0], str(children[1]), span)

    def successors(self, span: ast.Span, children: list[Any]) -> ast.Navigate:
        return ast.Navigate(children[0], str(children[2]), True, span)

    def predecessors(self, span: ast.Span, children: list[Any]) -> ast.Navigate:
        return ast.Navigate(children[0], str(children[2]), False, span)

    def string(self, span: ast.Span, children: list[Token]) -> ast.String:
        return ast.String(_unquote(children[0]), span)

    def true(self, span: ast.Span, children: list[Any]) -> ast.Bool:
        return ast.Bool(True, span)

    def false(self, span: ast.Span, children: list[Any]) -> ast.Bool:
        return ast.Bool(False, span)

    def null(self, span: ast.Span, children: list[Any]) -> ast.Null:
        return ast.Null(span)

    def name(self, span: ast.Span, children: list[Token]) -> ast.Name:
        return ast.Name(str(children[0]), span)

    def call(self, span: ast.Span, children: list[Any]) -> ast.Call:
        func, *args = children
        kept = tuple(arg for arg in args if arg is not None)
        return ast.Call(str(func), kept, span)

    def quantifier(self, span: ast.Span, children: list[Any]) -> ast.Quantifier:
        op, var, source, where, body = children
        return ast.Quantifier(str(op), str(var), source, where, body, span)

    def aggregate(self, span: ast.Span, children: list[Any]) -> ast.Aggregate:
        op, element, var, source, where = children
        return ast.Aggregate(str(op), element, str(var), source, where, span)

    def count(self, span: ast.Span, children: list[Any]) -> ast.Count:
        var, source, where = children
        return ast.Count(str(var), source, where, span)

    def select(self, span: ast.Span, children: list[Any]) -> ast.Select:
        var, source, where = children
        return ast.Select(str(var), source, where, span)

    def set_literal(self, span: ast.Span, children: list[Any]) -> ast.SetLiteral:
        return ast.SetLiteral(tuple(c for c in children if c is not None), span)

    def map_literal(self, span: ast.Span, children: list[Any]) -> ast.MapLiteral:
        return ast.MapLiteral(tuple(children), span)

    def map_entry(self, span: ast.Span, children: list[Any]) -> tuple[str, Any]:
        return _unquote(children[0]), children[1]

    def quantity(self, span: ast.Span, children: list[Token | None]) -> ast.Number:
        number, unit = children
        assert number is not None
        text = str(number)
        if not _NUMBER_RE.fullmatch(text):
            diagnostic = Diagnostic(
                "SYNTAX_ERROR",
                f"misplaced digit separator in `{text}`",
                Location(self.path, number.line or 0, number.column or 0),
                hint="`_` may only stand between two digits, as in `90_000`",
            )
            raise _NumberError(diagnostic)
        mantissa, _e, exponent = text.replace("_", "").lower().partition("e")
        digits = mantissa.replace(".", "").lstrip("0") or "0"
        fraction_digits = len(mantissa.partition(".")[2])
        # An exponent too long to read is beyond any limit; keep `int()` within its own.
        if len(exponent) > 12:
            exponent = exponent[:1].strip("0123456789") + "1" + "0" * 12
        scale = int(exponent or "0")
        problem = number_too_large(digits, scale - fraction_digits + len(digits) - 1)
        if problem is not None:
            diagnostic = Diagnostic(
                "RULE_NUMBER_RANGE",
                f"number `{_cut(text)}` is too large to hold exactly: {problem}",
                Location(self.path, number.line or 0, number.column or 0),
            )
            raise _NumberError(diagnostic)
        value = Fraction(text.replace("_", ""))
        return ast.Number(value, str(unit) if unit is not None else None, text, span)

    def atom(self, span: ast.Span, children: list[Any]) -> Any:
        return children[0]  # a parenthesised expression keeps its own span

    def predicate(self, span: ast.Span, children: list[Any]) -> Any:
        return children[0]


def _left_assoc(path: str, children: list[Any]) -> Any:
    """Fold `a op b op c` to the left; each Binary spans its own operands."""
    result = children[0]
    for index in range(1, len(children), 2):
        op, right = str(children[index]), children[index + 1]
        span = ast.Span(
            path,
            result.span.line,
            result.span.column,
            right.span.end_line,
            right.span.end_column,
        )
        result = ast.Binary(op, result, right, span)
    return result


def parse_tree(text: str, path: str) -> ast.RuleFile:
    """The tree of rule `text` (newlines normalised), before the depth check and comments.

    Raises:
        RulecheckError: with a located SYNTAX_ERROR or RULE_NUMBER_RANGE diagnostic (exit 1).
    """
    try:
        return _parser().parse(text, path)
    except UnexpectedInput as error:
        raise RulecheckError([_syntax_diagnostic(error, text, path)], ExitCode.REFUSED) from None
    except _NumberError as error:
        raise RulecheckError([error.diagnostic], ExitCode.REFUSED) from None
