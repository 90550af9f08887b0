"""The parser's own loop (engine/syntax/lalr.py `_Driver`) against Lark's.

The driver lexes inline instead of through Lark's contextual lexer; it must produce the
very tokens Lark's lexer gives Lark's parser (types, values, every position), and the same
tree, spans included, for every rule file of the repository and the generated bench files.
Where the input is not in the language it must give up (`_Refused`) after the same tokens,
so that Lark parses it again and words the error.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lark import Token
from lark.exceptions import UnexpectedInput
from lark.lexer import PatternRE, TerminalDef

from engine.syntax.lalr import (
    _alternative,
    _blank_prefix,
    _Driver,
    _may_start_with,
    _NumberError,
    _parser,
    _Refused,
    _unplace,
)
from engine.textlines import normalize_newlines
from tests.test_bench import RUN

ROOT = Path(__file__).resolve().parents[1]


def _rule_texts() -> Iterator[tuple[str, str]]:
    """Every readable .rules file under rules/ and tests/, then generated bench files."""
    for folder in ("rules", "tests"):
        for path in sorted((ROOT / folder).rglob("*.rules")):
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:  # refused before parsing (RULES_INVALID_UTF8)
                continue
            yield str(path.relative_to(ROOT)), normalize_newlines(text)
    for count in (100, 500):
        yield f"generate_rules({count})", RUN.generate_rules(count)
    yield "blanks of every kind", _blanks(RUN.generate_rules(100))


def _blanks(text: str) -> str:
    """`text` with the other blanks Lark's `WS` skips: tabs and form feeds between tokens,
    carriage returns and blanks before line ends, blank lines and a blank end."""
    lines = [line.replace(" ", "\t", 1).replace(" = ", " \f= \t") for line in text.split("\n")]
    return (
        "\n".join(f"{line} \r\t" if index % 3 else line for index, line in enumerate(lines))
        + "\n\t \n  "
    )


TEXTS = dict(_rule_texts())


def _fields(token: Token) -> tuple[Any, ...]:
    return (
        type(token),
        token.type,
        str(token),
        token.value,
        token.start_pos,
        token.line,
        token.column,
        token.end_line,
        token.end_column,
        token.end_pos,
    )


def _lark_tokens(text: str) -> list[tuple[Any, ...]]:
    """The tokens Lark's contextual lexer hands Lark's parser, up to an error if any."""
    interactive = _parser().lark.parse_interactive(text)
    tokens: list[tuple[Any, ...]] = []
    try:
        for token in interactive.iter_parse():
            tokens.append(_fields(token))
        interactive.feed_eof()
    except UnexpectedInput:
        return tokens
    except _NumberError as error:  # a builder's own refusal, raised from inside the loop
        return [*tokens, (error.diagnostic,)]
    return tokens


def _driver_tokens(text: str) -> list[tuple[Any, ...]]:
    shifted: list[Token] = []
    try:
        _parser().driver.parse(text, shifted)
    except _Refused:
        pass
    except _NumberError as error:
        return [*map(_fields, shifted), (error.diagnostic,)]
    return [_fields(token) for token in shifted]


def _tree(node: Any) -> list[Any]:
    """Every node and field in order, spans included (they take no part in equality);
    iterative, for the deepest hostile files."""
    flat: list[Any] = []
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, tuple):
            flat.append(("tuple", len(item)))
            pending += reversed(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            flat.append(type(item).__name__)
            pending += reversed([getattr(item, f.name) for f in dataclasses.fields(item)])
        else:
            flat.append(item)
    return flat


def _parse(parse: Any, text: str) -> Any:
    """The tree, or how the text was refused: a builder's diagnostic or Lark's error."""
    try:
        return _tree(_unplace(parse(text)))
    except _NumberError as error:
        return error.diagnostic
    except (UnexpectedInput, _Refused):
        return "refused"


def test_the_driver_lexes_inline() -> None:
    scanners = _parser().driver.scanners
    assert scanners is not None  # else every text would go to Lark's loop
    # and each state's scanner skips the blanks before a token in the token's own match
    assert all(scanner.pattern.startswith("([") for scanner in scanners.values())


def test_a_state_is_made_ready_on_its_first_token() -> None:
    parser = _parser()
    driver = _Driver(parser.lark)  # a driver of its own: no state made ready yet
    assert driver.ready == {}
    parser.builder.path = "first.rules"
    driver.parse('ruleset r version "1"\n')
    ready = dict(driver.ready)
    assert ready and len(ready) < len(driver.scanners or {})  # only the states met
    state = next(iter(ready))
    assert driver._ready(state)[0] is ready[state][0]  # a pattern compiled once is kept
    with pytest.raises(_Refused):  # a state without a scanner is left to Lark's lexer
        driver._ready(object())


@pytest.mark.parametrize(
    ("pattern", "may"),
    [
        (r"x", False),
        (r"[A-Za-z_][A-Za-z0-9_]*", False),
        (r'"([^"\\\n]|\\["\\nt])*"', False),
        (r"#[^\n]*", False),
        (r"(all|none)(?=\s*\()", False),
        (r"(?:==|!=|<)", False),
        (r"\d+|\w", False),
        (r"(?>ab)|[^\S\t]x", True),  # `[^\S\t]`: a blank other than a tab, a space among them
        (r"\s*x", True),
        (r"[^a]", True),
        (r".", True),
        (r"(?: |x)", True),
        (r"a?\t", True),
        (r"(?=x)\s", True),
        (r"[\s]", True),
        (r"\W", True),
        (r"(a)\1", False),
        (r"(a?)\1", True),  # a back-reference: not analysed, so it may
    ],
)
def test_a_terminal_that_may_start_with_a_blank_is_found(pattern: str, may: bool) -> None:
    assert _may_start_with(pattern, frozenset(" \t\f\r\n")) is may


def test_blanks_are_skipped_only_when_nothing_else_starts_with_one() -> None:
    blank = _terminal("WS", r"(?:[ \t\x0c\r\n])+")
    plain = [blank, _terminal("NAME", r"[a-z]+"), _terminal("COMMENT", r"#[^\n]*")]
    skipped = re.escape("\t\x0c\r ")  # every blank that ends no line
    assert _blank_prefix(plain, frozenset({"WS", "COMMENT"})) == f"[{skipped}]*"
    assert _blank_prefix(plain, frozenset({"COMMENT"})) == ""  # blanks are tokens there
    indented = [*plain, _terminal("INDENT", r"\n[ ]+")]  # would begin inside a blank run
    assert _blank_prefix(indented, frozenset({"WS", "COMMENT"})) == ""
    only_newlines = [_terminal("NL", r"(?:\n)+"), _terminal("NAME", r"[a-z]+")]
    assert _blank_prefix(only_newlines, frozenset({"NL"})) == ""  # no blank ends no line


def test_a_branch_names_its_terminal_after_matching_it() -> None:
    terminals = [
        _terminal("COMPARE", r"==|!="),  # an alternation of its own: kept inside the branch
        _terminal("QUANTIFIER", r"(all|none)(?=\()"),
        _terminal("NAME", r"[a-z]+"),
    ]
    branches = "|".join(_alternative(terminal) for terminal in terminals)
    match = re.compile(f"([ ]*)(?:{branches})").match
    found = [match(text) for text in ("  ==", " !=", "  all(x)", " allx")]
    assert [(m.lastgroup, m.end(1), m.end()) for m in found if m] == [
        ("COMPARE", 2, 4),
        ("COMPARE", 1, 3),
        ("QUANTIFIER", 2, 5),
        ("NAME", 1, 5),
    ]


def _terminal(name: str, regexp: str) -> TerminalDef:
    return TerminalDef(name, PatternRE(regexp))


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_tokens_are_lark_s(name: str) -> None:
    text = TEXTS[name]
    _parser().builder.path = name
    assert _driver_tokens(text) == _lark_tokens(text)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_tree_is_lark_s_spans_included(name: str) -> None:
    parser = _parser()
    parser.builder.path = name
    assert _parse(parser.driver.parse, TEXTS[name]) == _parse(parser.lark.parse, TEXTS[name])


def _cuts(text: str) -> Iterator[str]:
    """Broken variants of a text: cut short, a character dropped, a stray one added."""
    step = max(1, len(text) // 25)
    for index in range(0, len(text), step):
        yield text[:index]
        yield text[:index] + text[index + 1 :]
        for stray in ("@", "(", "\u00a0", '"', "1_"):
            yield text[:index] + stray + text[index:]


@pytest.mark.parametrize("name", ["rules/000_bindings.rules", "rules/001_trials.rules"])
def test_broken_texts_are_refused_after_lark_s_tokens(name: str) -> None:
    for text in _cuts(TEXTS[name]):
        assert _driver_tokens(text) == _lark_tokens(text)
