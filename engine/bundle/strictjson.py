"""Strict JSON loading for untrusted data files (answers, evidence packets, receipts).

The hot path is the stdlib C decoder with a few cheap hooks that only *notice* trouble:
duplicate keys, `NaN`/`Infinity` literals, numbers outside the range of a 64-bit float.
A quick regex looks for escaped lone surrogates, which the C decoder lets through. When
anything looks wrong, a slow, exact pure-Python scanner walks the text, records a JSON
pointer and a line:column for every value, and reports every problem it finds.

Refusals raise `RulecheckError` with exit code `REFUSED` and these diagnostic codes:
`JSON_INVALID_UTF8`, `JSON_SYNTAX`, `JSON_TRAILING_DATA`, `JSON_DUPLICATE_KEY`,
`JSON_NON_FINITE`, `JSON_LONE_SURROGATE`, `JSON_NUMBER_RANGE`. A syntax or encoding
error is reported alone; the others are all collected in one pass (trailing data too).

Nesting deeper than `engine.limits.MAX_NESTING` is refused as `INPUT_TOO_DEEP`, and a
string or key longer than `MAX_STRING_CHARS` as `INPUT_STRING_TOO_LONG`.

Positions are 1-based; a line ends at `\\n` and columns count characters, not bytes.
Pointers follow RFC 6901; in diagnostics a lone surrogate in a key is shown as `\\uXXXX`.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import math
import pathlib
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.limits import (
    MAX_NESTING,
    MAX_STRING_CHARS,
    MAX_VALUES,
    held_as_written,
    read_input,
    too_many_values,
)
from engine.pointer import escape_token

__all__ = [
    "SourceMap",
    "is_json_integer",
    "load_strict_file",
    "loads_strict",
    "loads_verified",
    "locate",
    "source_map",
]

_BOM: Final = b"\xef\xbb\xbf"
# An int literal this long or shorter is below 1e308, so its float value is finite.
_SAFE_INT_CHARS: Final = 308
# Shown user input is cut to this many characters.
_SHOW_LIMIT: Final = 40

_HEX2: Final = "[0-9a-fA-F]{2}"
_HIGH: Final = rf"\\u[dD][89abAB]{_HEX2}"
_LOW: Final = rf"\\u[dD][c-fC-F]{_HEX2}"
# Matches wherever an escaped lone surrogate *may* be: a high escape not followed by a
# low one, a low escape not preceded by a high one, or a pair whose high escape follows a
# backslash (it may be an escaped backslash). It never misses a real lone surrogate;
# a false alarm only costs a slow scan. It starts with the literal `\u`, so `re` skips
# quickly through text without escapes.
_SURROGATE_HINT: Final = re.compile(
    rf"\\u[dD](?:[89abAB]{_HEX2}(?!{_LOW})"
    rf"|[c-fC-F]{_HEX2}(?:(?<!{_HIGH}{_LOW})|(?<=\\{_HIGH}{_LOW})))"
)
_SURROGATE_CHAR: Final = re.compile("[\ud800-\udfff]")
_UNPRINTABLE: Final = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_SHORT_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE: Final = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_BLANK_CHARS: Final = " \t\n\r"  # the blanks JSON allows between tokens
_WHITESPACE: Final = re.compile(f"[{_BLANK_CHARS}]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS: Final = ("null", "true", "false")
_NON_FINITE: Final = ("NaN", "Infinity", "-Infinity")
_isfinite: Final = math.isfinite


class JsonFloat(float):
    """A JSON number written with a fraction or an exponent, such as `10.0` or `1e2`.

    A float in every way but one: `is_integer()` is always False. JSON Schema validators
    (jsonschema, fastjsonschema) accept a float whose `is_integer()` is true as an
    `"integer"`; this keeps `10.0` from passing where the schema requires an integer.
    Arithmetic on it returns plain floats.
    """

    __slots__ = ()

    def is_integer(self) -> bool:
        """Always False: the number was written as a fraction or with an exponent."""
        return False


# --- fast path ---------------------------------------------------------------------------


class _Suspicious(Exception):
    """Raised by a fast-path hook: stop decoding and run the exact scanner."""


# Numbers each object the fast path decodes: `loads_strict` reads how many one document
# held from two draws around its decode (a draw is atomic, so a decode in another thread
# can only make the figure larger: a bound that stays a bound).
_OBJECTS_DECODED: Final = itertools.count()


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    next(_OBJECTS_DECODED)
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Suspicious
    return obj


def _parse_float(text: str) -> float:
    value = JsonFloat(text)
    # finite (inf - inf is nan; cheaper than math.isfinite), and read as written
    if value - value == 0.0 and held_as_written(text, value):
        return value
    raise _Suspicious


def _parse_int(text: str) -> int:
    if len(text) <= _SAFE_INT_CHARS:
        return int(text)
    raise _Suspicious  # maybe beyond the float range; the scanner decides exactly


def _reject_constant(text: str) -> float:
    raise _Suspicious


def _lenient_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:  # beyond sys.get_int_max_str_digits(); reported as a range problem
        return None


def _nan(text: str) -> float:
    return math.nan


_FAST: Final = json.JSONDecoder(
    object_pairs_hook=_pairs_hook,
    parse_float=_parse_float,
    parse_int=_parse_int,
    parse_constant=_reject_constant,
)
# The fast path's scanner, as `_FAST.decode` calls it once the blanks before the value are
# skipped (a JSON Lines file's records are decoded one by one: the two frames of `decode`
# and `raw_decode` were a fifth of a small record's time).
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = _FAST.scan_once  # type: ignore[attr-defined]
_BLANKS: Final = frozenset(_BLANK_CHARS)
# Same grammar, never raises for semantic problems; used to judge syntax exactly like the
# fast path does, and for the value when the fast path raised a false alarm.
_LENIENT: Final = json.JSONDecoder(
    parse_float=JsonFloat, parse_int=_lenient_int, parse_constant=_nan
)
# Decodes single string tokens for the scanner.
_PLAIN: Final = json.JSONDecoder()


def loads_strict(raw: bytes, source: str) -> Any:
    """Parse `raw` as strict JSON; raise RulecheckError (exit REFUSED) listing problems.

    Integers come back as `int`; numbers written with a fraction or an exponent come back
    as `JsonFloat`, a float whose `is_integer()` is False, so that `10.0` fails a JSON
    Schema `"integer"` check; `true`/`false` come back as `bool` (see `is_json_integer`).
    Objects are plain dicts.

    Args:
        raw: The bytes of the document, which must be UTF-8 without a byte-order mark.
        source: The name used as `Location.file` in diagnostics.

    Returns:
        The decoded value.

    Raises:
        RulecheckError: With exit code `REFUSED` and one diagnostic per problem found:
            `JSON_INVALID_UTF8` or `JSON_SYNTAX` (the first only), or any number of
            `JSON_TRAILING_DATA`, `JSON_DUPLICATE_KEY`, `JSON_NON_FINITE`,
            `JSON_LONE_SURROGATE` and `JSON_NUMBER_RANGE`. No other exception escapes.
    """
    if raw.startswith(_BOM):
        raise _refuse(
            Diagnostic(
                "JSON_INVALID_UTF8",
                "a utf-8 byte-order mark is not allowed",
                Location(source, 1, 1),
                hint="save the file as utf-8 without a byte-order mark",
            )
        )
    too_many = too_many_values(raw, source) if len(raw) > MAX_VALUES else None
    if too_many is not None:
        raise too_many
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _refuse(_utf8_diagnostic(raw, error, source)) from None
    first_object = next(_OBJECTS_DECODED)
    start = _after_blanks(text, 0) if text[:1] in _BLANKS else 0
    try:
        value, end = _SCAN(text, start)  # `_FAST.decode` without its two Python frames
    except (StopIteration, _Suspicious, ValueError, RecursionError):
        return _slow_path(text, source)
    if end != len(text) and _after_blanks(text, end) != len(text):
        return _slow_path(text, source)  # something after the value: trailing data
    # Only a value of more than MAX_NESTING objects and lists, or a long text, can break
    # the nesting or string limits, and only then is the value walked. The objects are
    # counted as decoded (the hook), the lists bounded by the text's `[`: counting one
    # character is C-fast, yet a pass over the whole text, and a second one cost more
    # than the count of objects.
    objects = next(_OBJECTS_DECODED) - first_object - 1
    may_nest = objects + text.count("[") > MAX_NESTING
    if (may_nest or len(text) > MAX_STRING_CHARS) and _beyond_limits(value):
        return _slow_path(text, source)
    first_escape = text.find("\\")  # memchr-fast; the regex starts at the first escape
    if first_escape >= 0 and _SURROGATE_HINT.search(text, first_escape) is not None:
        _slow_path(text, source)  # raises unless the hint was a false alarm
    return value


# The standard decoder with the number types `loads_strict` gives: for bytes it accepted.
_VERIFIED: Final = json.JSONDecoder(parse_float=JsonFloat)


def _after_blanks(text: str, pos: int) -> int:
    """Where the blanks JSON allows (space, tab, line feed, carriage return) from `pos` end."""
    found = _WHITESPACE.match(text, pos)
    assert found is not None  # the pattern matches the empty text
    return found.end()


def loads_verified(raw: bytes) -> Any:
    """The value of bytes that `loads_strict` accepted before, as it gave it: decoded
    without the hooks that look for what it refuses (about half its time), which these
    bytes were shown to hold none of. The caller answers for the bytes being those
    accepted (by their sha256, see `engine.evaluate.facts.BundleFiles`)."""
    return _VERIFIED.decode(raw.decode("utf-8"))


def _beyond_limits(value: Any) -> bool:
    """Whether `value` nests deeper than `MAX_NESTING` or holds a string (or key) longer
    than `MAX_STRING_CHARS`; an iterative walk."""
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if type(item) is dict:
            if depth >= MAX_NESTING or any(len(key) > MAX_STRING_CHARS for key in item):
                return True
            pending += [(child, depth + 1) for child in item.values()]
        elif type(item) is list:
            if depth >= MAX_NESTING:
                return True
            pending += [(child, depth + 1) for child in item]
        elif type(item) is str and len(item) > MAX_STRING_CHARS:
            return True
    return False


def load_strict_file(path: pathlib.Path) -> tuple[Any, bytes]:
    """Read and parse a file with `loads_strict`.

    Args:
        path: The file to read; its `str()` names it in diagnostics.

    Returns:
        The decoded value and the raw bytes it was decoded from.

    Raises:
        RulecheckError: `FILE_UNREADABLE` with exit code `USAGE` when the file cannot be
            read (missing, a directory, no permission), `INPUT_NOT_REGULAR` or
            `INPUT_TOO_LARGE` (see `engine.limits.read_input`); otherwise as `loads_strict`.
    """
    raw = read_input(path)
    return loads_strict(raw, str(path)), raw


def locate(raw: bytes, pointer: str) -> tuple[int, int] | None:
    """1-based (line, column) of the start of the JSON value at RFC 6901 `pointer` in `raw`.

    Used only to report errors. The first call for a document builds its `SourceMap` (one
    scan), kept for the last few documents located, so each further finding in the same
    `raw` object costs a lookup and a binary search: O(log n), not a rescan. Column counts
    Unicode characters, not bytes. With duplicate keys the first occurrence is found. A
    document that is broken after the value still locates it.

    Args:
        raw: UTF-8 JSON text.
        pointer: An RFC 6901 pointer such as `/final/claims/3` (`""` is the whole
            document); `~1` stands for `/` and `~0` for `~` in keys.

    Returns:
        The position, or None when the pointer is absent or malformed, or `raw` is not
        UTF-8 or is broken before the value.
    """
    return source_map(raw).position(pointer)


class SourceMap:
    """Where every value of one JSON document starts, built once by one iterative scan:
    JSON pointer -> offset, and the offsets of its line ends for (line, column)."""

    __slots__ = ("_lines", "_starts")

    def __init__(self, raw: bytes) -> None:
        self._starts: dict[str, int] = {}
        self._lines: _Lines | None = None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return
        scanner = _Scanner(text, record=self._starts)
        with contextlib.suppress(_ScanError):
            scanner.run()
        self._lines = scanner.lines

    def position(self, pointer: str) -> tuple[int, int] | None:
        """1-based (line, column) of the value at `pointer`, or None (see `locate`)."""
        start = self._starts.get(pointer)
        if start is None or self._lines is None:
            return None
        return self._lines.position(start)


_MAPS: OrderedDict[int, tuple[bytes, SourceMap]] = OrderedDict()
_MAPS_KEPT: Final = 4  # documents whose maps are kept (each holds its bytes alive)


def source_map(raw: bytes) -> SourceMap:
    """The `SourceMap` of `raw`, built on first use and kept for the last few documents
    (by identity of the bytes object, which is kept alive with its map)."""
    key = id(raw)
    cached = _MAPS.get(key)
    if cached is not None and cached[0] is raw:
        _MAPS.move_to_end(key)
        return cached[1]
    built = SourceMap(raw)
    _MAPS[key] = (raw, built)
    while len(_MAPS) > _MAPS_KEPT:
        _MAPS.popitem(last=False)
    return built


def is_json_integer(value: object) -> bool:
    """True for Python int that is not bool.

    Args:
        value: Any decoded JSON value.

    Returns:
        Whether `value` is a JSON integer (`true`/`false` decode to `bool`, a subclass of
        `int`, and are not integers).
    """
    return isinstance(value, int) and not isinstance(value, bool)


# --- slow path ---------------------------------------------------------------------------


def _refuse(*diagnostics: Diagnostic) -> RulecheckError:
    return RulecheckError(list(diagnostics), ExitCode.REFUSED)


def _slow_path(text: str, source: str) -> Any:
    """Raise with every problem in `text`, or return its value if the alarm was false."""
    lines = _Lines(text)
    try:
        value = _LENIENT.decode(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":
            raise _refuse(_syntax_diagnostic(error, text, source, lines)) from None
        extra = text[error.pos :]
        trailing = Diagnostic(
            "JSON_TRAILING_DATA",
            f"unexpected `{_show(extra)}` after the top-level value",
            lines.location(source, error.pos),
        )
        raise _refuse(trailing, *_problems(text[: error.pos], source, lines)) from None
    except RecursionError:
        raise _refuse(_nesting_diagnostic(text, source, lines)) from None
    problems = _problems(text, source, lines)
    if problems:
        raise _refuse(*problems)
    return value


def _problems(text: str, source: str, lines: _Lines) -> list[Diagnostic]:
    """Every semantic problem in syntactically valid `text`."""
    scanner = _Scanner(text)
    try:
        scanner.run()
    except _ScanError as error:  # pragma: no cover - the C decoder accepted this text
        return [Diagnostic("JSON_SYNTAX", error.message, lines.location(source, error.pos))]
    return [
        Diagnostic(
            problem.code,
            problem.message,
            lines.location(source, problem.pos, _show_pointer(problem.pointer)),
        )
        for problem in scanner.problems
    ]


def _utf8_diagnostic(raw: bytes, error: UnicodeDecodeError, source: str) -> Diagnostic:
    before = raw[: error.start].decode("utf-8")
    line = before.count("\n") + 1
    column = len(before) - before.rfind("\n")
    return Diagnostic(
        "JSON_INVALID_UTF8",
        f"invalid utf-8 byte `0x{raw[error.start]:02x}` at byte offset {error.start}",
        Location(source, line, column),
    )


def _syntax_diagnostic(
    error: json.JSONDecodeError, text: str, source: str, lines: _Lines
) -> Diagnostic:
    msg, pos = error.msg, error.pos
    if msg.startswith("Expecting"):
        found = f"`{_show(text[pos])}`" if pos < len(text) else "end of input"
        message = f"expecting{msg[len('Expecting') :]}, found {found}"
    elif msg.startswith("Unterminated string"):
        message = "unterminated string"
    elif msg.startswith("Invalid control character"):
        message = f"invalid control character `{_show(text[pos : pos + 1])}` in string"
    elif msg == "Invalid \\escape":
        message = f"invalid escape `{_show(text[pos : pos + 2])}`"
    elif msg == "Invalid \\uXXXX escape":
        if text[pos - 1 : pos] == "\\":  # point at the backslash, as for other escapes
            pos -= 1
        message = f"invalid unicode escape `{_show(text[pos : pos + 6])}`"
    else:  # pragma: no cover - e.g. 3.13's "Illegal trailing comma before end of array"
        message = msg[:1].lower() + msg[1:]
    return Diagnostic("JSON_SYNTAX", message, lines.location(source, pos))


def _nesting_diagnostic(text: str, source: str, lines: _Lines) -> Diagnostic:
    scanner = _Scanner(text)
    with contextlib.suppress(_ScanError):
        scanner.run()
    return Diagnostic(
        "INPUT_TOO_DEEP",
        _TOO_DEEP,
        lines.location(source, scanner.too_deep if scanner.too_deep >= 0 else scanner.deepest),
        hint=f"this document nests at least {scanner.max_depth} levels deep",
    )


_TOO_DEEP: Final = f"values nest more than {MAX_NESTING} levels deep"


def _show(text: str) -> str:
    """User text for a message: control characters and lone surrogates escaped, cut short."""
    shown = _UNPRINTABLE.sub(_escape_char, text[:_SHOW_LIMIT])
    return shown + "..." if len(text) > _SHOW_LIMIT else shown


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _show_pointer(pointer: str) -> str:
    """A pointer for a diagnostic: lone surrogates (not encodable) become `\\uXXXX` text."""
    return _SURROGATE_CHAR.sub(_escape_char, pointer)


class _Lines:
    """Index -> (line, column) for one text."""

    def __init__(self, text: str) -> None:
        self._newlines = [match.start() for match in re.finditer("\n", text)]

    def position(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, pos - start + 1

    def location(self, source: str, pos: int, pointer: str | None = None) -> Location:
        line, column = self.position(pos)
        return Location(source, line, column, pointer=pointer)


@dataclass(frozen=True, slots=True)
class _Problem:
    code: str
    message: str
    pos: int
    pointer: str


class _ScanError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


@dataclass(slots=True)
class _Frame:
    """An open object or array."""

    keys: dict[str, int] | None  # key -> position of its first occurrence; None for arrays
    index: int = 0
    pointer: str = ""  # the container's own pointer, when recording a source map
    close: str = field(init=False)

    def __post_init__(self) -> None:
        self.close = "]" if self.keys is None else "}"


class _Scanner:
    """Exact, iterative (no recursion limit) walk over JSON text.

    Records semantic problems with pointers and positions, the deepest opening bracket,
    and, given a target pointer, the position where that value starts (then stops). The
    current pointer is kept as a list of escaped tokens, so deep documents stay linear.
    """

    def __init__(
        self, text: str, target: str | None = None, record: dict[str, int] | None = None
    ) -> None:
        self.text = text
        self.record = record
        self.target: list[str] | None = None
        if target is not None:
            # A pointer that does not start with "/" (other than "") matches nothing.
            self.target = target.split("/")[1:] if target.startswith("/") or not target else None
            self.searching = True
        else:
            self.searching = False
        if record is not None:
            self.searching = True  # no problems collected while mapping
        self.found: int | None = None
        self.problems: list[_Problem] = []
        self.max_depth = 0
        self.deepest = 0
        self.too_deep = -1  # where nesting first went beyond MAX_NESTING
        self._path: list[str] = []
        self._lines: _Lines | None = None

    @property
    def lines(self) -> _Lines:
        """Line index of the text, built on first use."""
        if self._lines is None:
            self._lines = _Lines(self.text)
        return self._lines

    def run(self) -> None:
        """Scan the whole text; raise _ScanError at the first syntax error."""
        text, path, target, record = self.text, self._path, self.target, self.record
        stack: list[_Frame] = []
        pos = self._skip(0)
        here = ""
        while True:
            # A value starts at `pos`; `path` is its pointer.
            if target is not None and len(path) == len(target) and path == target:
                self.found = pos
                return
            if record is not None:
                here = stack[-1].pointer + "/" + path[-1] if stack else ""
                record.setdefault(here, pos)
            char = text[pos : pos + 1]
            if char in ("{", "["):
                frame = _Frame({} if char == "{" else None, pointer=here)
                stack.append(frame)
                if len(stack) > self.max_depth:
                    self.max_depth, self.deepest = len(stack), pos
                    if len(stack) == MAX_NESTING + 1:
                        self.too_deep = pos
                        self._report("INPUT_TOO_DEEP", _TOO_DEEP, pos)
                pos = self._skip(pos + 1)
                if text.startswith(frame.close, pos):
                    stack.pop()
                    pos += 1
                elif frame.keys is not None:
                    pos = self._member(frame, pos)
                    continue
                else:
                    path.append("0")
                    continue
            else:
                pos = self._scalar(pos)
            # The value is complete: close containers until one continues.
            while stack:
                frame = stack[-1]
                pos = self._skip(pos)
                char = text[pos : pos + 1]
                if char == ",":
                    pos = self._skip(pos + 1)
                    if frame.keys is not None:
                        path.pop()
                        pos = self._member(frame, pos)
                    else:
                        frame.index += 1
                        path[-1] = str(frame.index)
                    break
                if char != frame.close:
                    raise _ScanError("expecting ',' delimiter", pos)
                stack.pop()
                path.pop()
                pos += 1
            else:
                break
        pos = self._skip(pos)
        if pos != len(text):
            raise _ScanError("extra data", pos)

    def _pointer(self) -> str:
        return "".join("/" + token for token in self._path)

    def _report(self, code: str, message: str, pos: int) -> None:
        if not self.searching:
            self.problems.append(_Problem(code, message, pos, self._pointer()))

    def _skip(self, pos: int) -> int:
        match = _WHITESPACE.match(self.text, pos)
        return match.end() if match else pos

    def _string(self, pos: int) -> tuple[str, int]:
        """Decode the string token at `pos`; return it and the position after it."""
        try:
            value, end = _PLAIN.raw_decode(self.text, pos)
        except json.JSONDecodeError as error:
            raise _ScanError(error.msg, error.pos) from None
        assert isinstance(value, str)
        return value, end

    def _lone_surrogates(self, start: int, end: int, what: str) -> None:
        """Report each escape in text[start:end] that the decoder left as a lone surrogate."""
        escapes = list(_ESCAPE.finditer(self.text, start, end))
        paired = False
        for number, escape in enumerate(escapes):
            if paired:  # the low half of a pair
                paired = False
                continue
            digits = escape.group(1)
            code = int(digits, 16) if digits else 0
            if not 0xD800 <= code <= 0xDFFF:
                continue
            if code <= 0xDBFF and number + 1 < len(escapes):
                following = escapes[number + 1]
                low = following.group(1)
                paired = (
                    following.start() == escape.end()
                    and low is not None
                    and 0xDC00 <= int(low, 16) <= 0xDFFF
                )
                if paired:
                    continue
            self._report(
                "JSON_LONE_SURROGATE",
                f"{what} contains a lone utf-16 surrogate escape `{escape.group()}`",
                escape.start(),
            )

    def _member(self, frame: _Frame, pos: int) -> int:
        """Read `"key" :` at `pos`, push the key onto the path; return where the value starts."""
        assert frame.keys is not None
        if not self.text.startswith('"', pos):
            raise _ScanError("expecting property name enclosed in double quotes", pos)
        key, end = self._string(pos)
        self._path.append(escape_token(key))
        self._long_string(key, pos, "key")
        if _SURROGATE_CHAR.search(key) is not None:
            self._lone_surrogates(pos + 1, end - 1, "key")
        first = frame.keys.get(key)
        if first is None:
            frame.keys[key] = pos
        elif not self.searching:
            line, column = self.lines.position(first)
            self._report(
                "JSON_DUPLICATE_KEY",
                f"duplicate key `{_show(key)}` (first at line {line}, column {column})",
                pos,
            )
        pos = self._skip(end)
        if not self.text.startswith(":", pos):
            raise _ScanError("expecting ':' delimiter", pos)
        return self._skip(pos + 1)

    def _long_string(self, value: str, pos: int, what: str) -> None:
        if len(value) > MAX_STRING_CHARS:
            self._report(
                "INPUT_STRING_TOO_LONG",
                f"a {what} of {len(value)} characters, more than the limit of {MAX_STRING_CHARS}",
                pos,
            )

    def _scalar(self, pos: int) -> int:
        text = self.text
        if text.startswith('"', pos):
            value, end = self._string(pos)
            if _SURROGATE_CHAR.search(value) is not None:
                self._lone_surrogates(pos + 1, end - 1, "string")
            self._long_string(value, pos, "string")
            return end
        number = _NUMBER.match(text, pos)
        if number is not None:
            written = number.group()
            as_float = float(written)
            if not _isfinite(as_float):
                self._report(
                    "JSON_NUMBER_RANGE",
                    f"number `{_show(written)}` is outside the range of a 64-bit float",
                    pos,
                )
            elif written.strip("-0123456789") and not held_as_written(written, as_float):
                self._report(
                    "JSON_NUMBER_RANGE",
                    f"number `{_show(written)}` cannot be held as written by a 64-bit float"
                    f" (it would be read as `{as_float!r}`): write a number it holds"
                    " as written, or the value as text",
                    pos,
                )
            return number.end()
        for word in _LITERALS:
            if text.startswith(word, pos):
                return pos + len(word)
        for word in _NON_FINITE:
            if text.startswith(word, pos):
                self._report("JSON_NON_FINITE", f"non-finite number `{word}` is not allowed", pos)
                return pos + len(word)
        raise _ScanError("expecting value", pos)
