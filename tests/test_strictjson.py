"""Tests for engine.bundle.strictjson: strict JSON loading with exact problem locations."""

from __future__ import annotations

import contextlib
import json
import math
import os
import pathlib
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from engine.bundle import strictjson
from engine.bundle.schemac import compile_schema
from engine.bundle.strictjson import (
    JsonFloat,
    is_json_integer,
    load_strict_file,
    loads_strict,
    loads_verified,
    locate,
)
from engine.errors import ExitCode, RulecheckError

SOURCE = "answer.json"
CODES = {
    "INPUT_TOO_DEEP",
    "INPUT_STRING_TOO_LONG",
    "JSON_INVALID_UTF8",
    "JSON_SYNTAX",
    "JSON_TRAILING_DATA",
    "JSON_DUPLICATE_KEY",
    "JSON_NON_FINITE",
    "JSON_LONE_SURROGATE",
    "JSON_NUMBER_RANGE",
}

Found = tuple[str, int | None, int | None, str | None]


def refusal(raw: bytes) -> RulecheckError:
    with pytest.raises(RulecheckError) as info:
        loads_strict(raw, SOURCE)
    error = info.value
    assert error.exit_code is ExitCode.REFUSED
    for diagnostic in error.diagnostics:
        assert diagnostic.code in CODES
        assert diagnostic.location is not None
        assert diagnostic.location.file == SOURCE
        outside_backticks = re.sub("`[^`]*`", "", diagnostic.message)
        assert outside_backticks == outside_backticks.lower()
    return error


def found(raw: bytes) -> list[Found]:
    """(code, line, column, pointer) of every diagnostic, in reporting order."""
    result: list[Found] = []
    for diagnostic in refusal(raw).diagnostics:
        location = diagnostic.location
        assert location is not None
        result.append((diagnostic.code, location.line, location.column, location.pointer))
    return result


def message(raw: bytes) -> str:
    diagnostics = refusal(raw).diagnostics
    assert len(diagnostics) == 1
    return diagnostics[0].message


def same(loaded: Any, expected: Any) -> bool:
    """Equal, with the same types all the way down (so 1 != 1.0 != True).

    Where `expected` has a float, `loaded` must have a JsonFloat.
    """
    if type(expected) is float:
        return type(loaded) is JsonFloat and loaded == expected
    if type(loaded) is not type(expected):
        return False
    if isinstance(expected, dict):
        return loaded.keys() == expected.keys() and all(
            same(loaded[key], expected[key]) for key in expected
        )
    if isinstance(expected, list):
        return len(loaded) == len(expected) and all(map(same, loaded, expected))
    return bool(loaded == expected)


# --- JSON_INVALID_UTF8 -------------------------------------------------------------------


def test_invalid_utf8_reports_first_bad_byte_position_in_characters() -> None:
    assert found(b'{"a":\n "x\xff"}') == [("JSON_INVALID_UTF8", 2, 4, None)]
    # `é` is two bytes but one column.
    assert found(b'["\xc3\xa9", "\xc3\xa9\xc3"]') == [("JSON_INVALID_UTF8", 1, 9, None)]
    assert "`0xff`" in message(b'"x\xff"')


def test_encoded_surrogate_is_invalid_utf8() -> None:
    assert found(b'"\xed\xa0\x80"') == [("JSON_INVALID_UTF8", 1, 2, None)]


def test_byte_order_mark_is_rejected() -> None:
    assert found(b'\xef\xbb\xbf{"a": 1}') == [("JSON_INVALID_UTF8", 1, 1, None)]
    assert "byte-order mark" in message(b"\xef\xbb\xbf{}")


# --- JSON_SYNTAX -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "line", "column", "text"),
    [
        (b"", 1, 1, "expecting value, found end of input"),
        (b"  \n ", 2, 2, "expecting value, found end of input"),
        (b'{"a": }', 1, 7, "expecting value, found `}`"),
        (b"[1,\n 2,\n]", 3, 1, "expecting value, found `]`"),
        (b'{"a": 1,}', 1, 9, "expecting property name enclosed in double quotes, found `}`"),
        (b'{"a" 1}', 1, 6, "expecting ':' delimiter, found `1`"),
        (b"[1 2]", 1, 4, "expecting ',' delimiter, found `2`"),
        (b'{"a": "b', 1, 7, "unterminated string"),
        (b'["a\tb"]', 1, 4, "invalid control character `\\t` in string"),
        (b'"a\\q"', 1, 3, "invalid escape `\\q`"),
        (b'"\\u12x4"', 1, 2, "invalid unicode escape `\\u12x4`"),
        (b"nul", 1, 1, "expecting value, found `n`"),
        (b"{'a': 1}", 1, 2, "expecting property name enclosed in double quotes, found `'`"),
    ],
)
def test_syntax_errors(raw: bytes, line: int, column: int, text: str) -> None:
    assert found(raw) == [("JSON_SYNTAX", line, column, None)]
    assert message(raw) == text


def test_syntax_error_stops_at_the_first_problem() -> None:
    # The duplicate key comes first but the document does not parse: one syntax error.
    assert found(b'{"a": 1, "a": NaN,') == [("JSON_SYNTAX", 1, 19, None)]


@pytest.mark.parametrize("raw", [b"[" * 100_000, b"[" * 5_000 + b"]" * 5_000, b'{"a":' * 3_000])
def test_deep_nesting_is_refused_not_a_crash(raw: bytes) -> None:
    diagnostics = refusal(raw).diagnostics
    assert [d.code for d in diagnostics] == ["INPUT_TOO_DEEP"]
    assert diagnostics[0].message == "values nest more than 200 levels deep"
    opening = [i for i, byte in enumerate(raw) if byte in b"[{"]
    assert diagnostics[0].location is not None
    assert diagnostics[0].location.column == opening[200] + 1  # the 201st bracket


def test_moderate_nesting_is_fine() -> None:
    assert loads_strict(b"[" * 200 + b"]" * 200, SOURCE) is not None
    deeper = b'{"a": ' * 201 + b"1" + b"}" * 201  # parses, but beyond the limit
    assert found(deeper) == [("INPUT_TOO_DEEP", 1, 1201, "/a" * 200)]


@pytest.mark.parametrize(
    "levels, text, refused",
    [(200, "[{" * 300, False), (201, "", True), (201, "[{" * 300, True), (201, "{", True)],
)
def test_objects_and_lists_nest_together(levels: int, text: str, refused: bool) -> None:
    # A list holding a text and then alternating lists and objects, `levels` containers
    # deep in all: the limit is on containers, whichever their kind (half of them objects,
    # which no count of `[` finds), never on the characters of a string.
    inner = range(levels - 1)
    opening = ["[" if level % 2 == 0 else '{"a": ' for level in inner]
    closing = "".join("]" if level % 2 == 0 else "}" for level in reversed(inner))
    head = '[{"t": "' + text + '"}, '
    raw = (head + "".join(opening) + "1" + closing + "]").encode()
    if not refused:
        assert loads_strict(raw, SOURCE)[0] == {"t": text}
        return
    column = len(head) + len("".join(opening[:199])) + 1  # the 201st container
    pointer = "/1" + "".join("/0" if level % 2 == 0 else "/a" for level in range(199))
    assert found(raw) == [("INPUT_TOO_DEEP", 1, column, pointer)]


def test_a_string_beyond_the_limit_is_refused() -> None:
    raw = b'{"a": "' + b"x" * 1_000_001 + b'"}'
    assert found(raw) == [("INPUT_STRING_TOO_LONG", 1, 7, "/a")]


# --- JSON_TRAILING_DATA ------------------------------------------------------------------


def test_trailing_data() -> None:
    assert found(b'{"a": 1}\n  x') == [("JSON_TRAILING_DATA", 2, 3, None)]
    assert found(b"[1] [2]") == [("JSON_TRAILING_DATA", 1, 5, None)]
    assert found(b"1.") == [("JSON_TRAILING_DATA", 1, 2, None)]
    assert message(b"[]\n\nmore text") == "unexpected `more text` after the top-level value"


@pytest.mark.parametrize(
    "raw", [b'{"a": 1}', b' \n\t{"a": 1}', b'{"a": 1}\r\n ', b'\r\n{"a": 1}\n\n'], ids=repr
)
def test_blanks_around_a_value_keep_the_fast_path(
    raw: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow(text: str, source: str) -> Any:
        raise AssertionError("the exact scanner ran")

    monkeypatch.setattr(strictjson, "_slow_path", slow)
    assert loads_strict(raw, "f.json") == {"a": 1}


def test_trailing_whitespace_is_fine() -> None:
    assert loads_strict(b' \t{"a": 1} \r\n\n\t ', SOURCE) == {"a": 1}


def test_trailing_data_is_reported_with_other_problems() -> None:
    assert found(b'{"a": 1, "a": 2} x') == [
        ("JSON_DUPLICATE_KEY", 1, 10, "/a"),
        ("JSON_TRAILING_DATA", 1, 18, None),
    ]


# --- JSON_DUPLICATE_KEY ------------------------------------------------------------------


def test_duplicate_key() -> None:
    assert found(b'{"a": 1, "a": 2}') == [("JSON_DUPLICATE_KEY", 1, 10, "/a")]
    assert message(b'{"a": 1,\n "a": 2}') == "duplicate key `a` (first at line 1, column 2)"


def test_every_duplicate_is_reported() -> None:
    raw = b'{"a": 1, "a": 2, "a": 3, "b": {"c": 1, "c": 2}, "d": [{"e": 0, "e": 0}]}'
    assert found(raw) == [
        ("JSON_DUPLICATE_KEY", 1, 10, "/a"),
        ("JSON_DUPLICATE_KEY", 1, 18, "/a"),
        ("JSON_DUPLICATE_KEY", 1, 40, "/b/c"),
        ("JSON_DUPLICATE_KEY", 1, 64, "/d/0/e"),
    ]


def test_duplicate_key_at_nested_pointer() -> None:
    raw = b"""{
  "final": {
    "claims": [
      {"id": "c0"},
      {"id": "c1"},
      {"id": "c2"},
      {"id": "c3", "text": "x",
       "id": "c3-again"}
    ]
  }
}"""
    assert found(raw) == [("JSON_DUPLICATE_KEY", 8, 8, "/final/claims/3/id")]


def test_duplicate_key_pointer_escapes_tilde_and_slash() -> None:
    assert found(b'{"a/b~": {"x": 1, "x": 2}}') == [("JSON_DUPLICATE_KEY", 1, 19, "/a~1b~0/x")]


def test_keys_equal_after_unescaping_are_duplicates() -> None:
    assert found(b'{"a": 1, "\\u0061": 2}') == [("JSON_DUPLICATE_KEY", 1, 10, "/a")]


# --- JSON_NON_FINITE ---------------------------------------------------------------------


def test_non_finite_literals_are_all_reported() -> None:
    assert found(b"[NaN, Infinity,\n -Infinity]") == [
        ("JSON_NON_FINITE", 1, 2, "/0"),
        ("JSON_NON_FINITE", 1, 7, "/1"),
        ("JSON_NON_FINITE", 2, 2, "/2"),
    ]
    assert message(b'{"x": NaN}') == "non-finite number `NaN` is not allowed"


# --- JSON_LONE_SURROGATE -----------------------------------------------------------------


def test_lone_surrogate_in_value() -> None:
    assert found(b'{"k": "ab\\ud800"}') == [("JSON_LONE_SURROGATE", 1, 10, "/k")]
    assert message(b'["\\udc00"]') == "string contains a lone utf-16 surrogate escape `\\udc00`"


def test_lone_surrogate_in_key_reports_printable_pointer() -> None:
    assert found(b'{"x\\uDBFF": 1}') == [("JSON_LONE_SURROGATE", 1, 4, "/x\\udbff")]
    assert message(b'{"\\udc00": 1}').startswith("key contains")


def test_every_lone_surrogate_is_reported() -> None:
    # high-high-low: the first high is lone, the second pairs; then a lone low.
    raw = b'["\\udbff\\udbff\\udfff", "\\ude00\\ud83d"]'
    assert found(raw) == [
        ("JSON_LONE_SURROGATE", 1, 3, "/0"),
        ("JSON_LONE_SURROGATE", 1, 25, "/1"),
        ("JSON_LONE_SURROGATE", 1, 31, "/1"),
    ]


def test_surrogate_pairs_and_escaped_backslashes_are_fine() -> None:
    assert loads_strict(b'"\\ud83d\\ude00"', SOURCE) == "\U0001f600"
    assert loads_strict(b'"\\uD83D\\uDE00"', SOURCE) == "\U0001f600"
    assert loads_strict(b'"\\\\ud800"', SOURCE) == "\\ud800"
    assert loads_strict(b'"\\\\\\ud83d\\ude00"', SOURCE) == "\\\U0001f600"


def test_low_surrogate_after_an_escaped_backslash_is_lone() -> None:
    # `\\ud800` is a backslash and text; the `\udc00` after it has no high half.
    assert found(b'"\\\\ud800\\udc00"') == [("JSON_LONE_SURROGATE", 1, 9, "")]


# --- JSON_NUMBER_RANGE -------------------------------------------------------------------


def test_number_out_of_float_range() -> None:
    assert found(b'{"x": 1e999, "y": [-1E+400, 2e308]}') == [
        ("JSON_NUMBER_RANGE", 1, 7, "/x"),
        ("JSON_NUMBER_RANGE", 1, 20, "/y/0"),
        ("JSON_NUMBER_RANGE", 1, 29, "/y/1"),
    ]
    assert message(b"[1e999]") == "number `1e999` is outside the range of a 64-bit float"


def test_huge_integers_are_out_of_range() -> None:
    assert found(b"[" + b"9" * 309 + b"]") == [("JSON_NUMBER_RANGE", 1, 2, "/0")]
    assert found(b"-" + b"1" * 5000) == [("JSON_NUMBER_RANGE", 1, 1, "")]
    assert message(b"1" * 400).endswith("...` is outside the range of a 64-bit float")


def test_large_but_finite_numbers_are_fine() -> None:
    big = int("1" + "0" * 308)
    assert loads_strict(b"1" + b"0" * 308, SOURCE) == big
    assert loads_strict(b"-1" + b"0" * 308, SOURCE) == -big
    assert loads_strict(b"[1.7976931348623157e308, 5e-324]", SOURCE) == [
        1.7976931348623157e308,
        5e-324,
    ]


@pytest.mark.parametrize(
    "written, read",
    [
        ("1e-999", "0.0"),  # below the float's range: not zero as written
        ("3e-324", "5e-324"),  # between two subnormal floats
        ("0.1000000000000000055511151231257827", "0.1"),  # more digits than a float keeps
        ("123456789012345678901.5", "1.2345678901234568e+20"),
        ("-9007199254740993.0", "-9007199254740992.0"),
        ("1e-99999999999999999999999999999", "0.0"),  # an exponent beyond Decimal's too
    ],
)
def test_a_number_a_float_cannot_hold_as_written_is_refused(written: str, read: str) -> None:
    raw = f'{{"cost": [1.5, {written}]}}'.encode()
    assert found(raw) == [("JSON_NUMBER_RANGE", 1, 16, "/cost/1")]
    assert message(raw) == (
        f"number `{written[:37] + '...' if len(written) > 40 else written}` cannot be held"
        f" as written by a 64-bit float (it would be read as `{read}`): write a number it"
        " holds as written, or the value as text"
    )


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_as_python_writes_it_is_read_back(value: float) -> None:
    # Python's json (as inspect_ai writes its logs) writes the shortest text of a float,
    # which is read as written; so is every number of up to 15 significant digits.
    assert loads_strict(json.dumps([value]).encode(), SOURCE) == [value]


@pytest.mark.parametrize(
    "written",
    [
        "0.1",
        "-0.0",
        "0.0",
        "3672.0",
        "1e-310",
        "1.5E+3",
        "0.30000000000000004",
        "123456.789012345",
        "2.2250738585072014e-308",
        "0e-999999999999999999999999",
    ],
)
def test_numbers_a_float_holds_as_written_are_read(written: str) -> None:
    assert loads_strict(f"[{written}]".encode(), SOURCE) == [float(written)]


# --- several problems at once ------------------------------------------------------------


def test_all_problems_are_collected_in_one_pass() -> None:
    raw = b"""{
  "a": NaN,
  "b": "\\ud800",
  "a": 1e400,
  "c": [Infinity, {"d": 1, "d": 2}]
}"""
    assert found(raw) == [
        ("JSON_NON_FINITE", 2, 8, "/a"),
        ("JSON_LONE_SURROGATE", 3, 9, "/b"),
        ("JSON_DUPLICATE_KEY", 4, 3, "/a"),
        ("JSON_NUMBER_RANGE", 4, 8, "/a"),
        ("JSON_NON_FINITE", 5, 9, "/c/0"),
        ("JSON_DUPLICATE_KEY", 5, 28, "/c/1/d"),
    ]


# --- values ------------------------------------------------------------------------------


def test_valid_documents_round_trip() -> None:
    raw = '{"a": [1, -2, 3.5, 1e2, true, false, null, "é\\n\\u00e9"], "b": {}, "": []}'
    assert same(loads_strict(raw.encode(), SOURCE), json.loads(raw))


def test_numbers_keep_integer_and_float_apart() -> None:
    value = loads_strict(b'{"i": 10, "f": 10.0, "e": 1e2, "n": -0, "t": true}', SOURCE)
    assert type(value["i"]) is int
    assert isinstance(value["f"], float)
    assert value["f"] == 10.0
    assert isinstance(value["e"], float)
    assert type(value["n"]) is int
    assert value["t"] is True


def test_fraction_or_exponent_fails_a_schema_integer_check() -> None:
    value = loads_strict(b"[10, 10.0, 1e2, 2.5]", SOURCE)
    assert [type(item) for item in value] == [int, JsonFloat, JsonFloat, JsonFloat]
    assert value[1].is_integer() is False
    assert value[1] + 1 == 11.0
    assert json.dumps(value) == "[10, 10.0, 100.0, 2.5]"
    integer = {"type": "integer"}
    strict = compile_schema(integer)
    assert strict(value[0]) == []
    for item in value[1:]:
        assert strict(item)[0][1] == "type"
    assert [Draft7Validator(integer).is_valid(item) for item in value] == [
        True,
        False,
        False,
        False,
    ]


def test_is_json_integer() -> None:
    value = loads_strict(b"[10, 10.0, true, false, null, -3]", SOURCE)
    assert [is_json_integer(item) for item in value] == [True, False, False, False, False, True]


def test_valid_documents_do_not_take_the_slow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(text: str, source: str) -> Any:
        raise AssertionError("slow path taken")

    monkeypatch.setattr(strictjson, "_slow_path", fail)
    raw = json.dumps({"emoji": "😀 ok", "n": [1, 2.5], "k": "\\n"}).encode()
    assert loads_strict(raw, SOURCE)["emoji"] == "😀 ok"


# --- load_strict_file --------------------------------------------------------------------


def test_load_strict_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "answer.json"
    path.write_bytes(b'{"a": [1, 2]}\n')
    assert load_strict_file(path) == ({"a": [1, 2]}, b'{"a": [1, 2]}\n')


def test_load_strict_file_names_the_file_in_diagnostics(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "answer.json"
    path.write_bytes(b'{"a": 1, "a": 2}')
    with pytest.raises(RulecheckError) as info:
        load_strict_file(path)
    assert info.value.exit_code is ExitCode.REFUSED
    location = info.value.diagnostics[0].location
    assert location is not None
    assert location.file == str(path)


def unreadable_code(path: pathlib.Path) -> tuple[str, ExitCode]:
    with pytest.raises(RulecheckError) as info:
        load_strict_file(path)
    return info.value.diagnostics[0].code, info.value.exit_code


def test_missing_file_and_directory_are_unreadable(tmp_path: pathlib.Path) -> None:
    assert unreadable_code(tmp_path / "missing.json") == ("FILE_UNREADABLE", ExitCode.USAGE)
    assert unreadable_code(tmp_path) == ("FILE_UNREADABLE", ExitCode.USAGE)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root posix user")
def test_unpermitted_file_is_unreadable(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "secret.json"
    path.write_bytes(b"{}")
    path.chmod(0)
    try:
        assert unreadable_code(path) == ("FILE_UNREADABLE", ExitCode.USAGE)
    finally:
        path.chmod(0o600)


def test_permission_error_is_unreadable(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(path: object, flags: int, mode: int = 0o777) -> int:
        raise PermissionError(13, "Permission denied", str(path))

    (tmp_path / "answer.json").write_bytes(b"{}")
    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(RulecheckError) as info:
        load_strict_file(tmp_path / "answer.json")
    assert info.value.exit_code is ExitCode.USAGE
    assert info.value.diagnostics[0].code == "FILE_UNREADABLE"
    assert "Permission denied" in info.value.diagnostics[0].message


# --- locate ------------------------------------------------------------------------------


def test_locate() -> None:
    raw = '{\n  "é": "x", "b": [1, {"c": [true]}],\n  "a/b": {"~": null}\n}'.encode()
    assert locate(raw, "") == (1, 1)
    assert locate(b" \n [1]", "") == (2, 2)
    assert locate(raw, "/b") == (2, 18)  # columns count characters: `é` is one
    assert locate(raw, "/b/1/c/0") == (2, 29)
    assert locate(raw, "/a~1b/~0") == (3, 16)
    assert locate(raw, "/é") == (2, 8)


@pytest.mark.parametrize("pointer", ["/missing", "/b/2", "/b/-", "/b/01", "b", "/b/0/x", "/a~2"])
def test_locate_absent_or_malformed_pointer(pointer: str) -> None:
    assert locate(b'{"b": [1, 2], "a~2": 0}', pointer) is None


def test_locate_in_broken_or_deep_documents() -> None:
    assert locate(b'{"a": 1, "b": [2, ', "/a") == (1, 7)
    assert locate(b'{"a": 1, "b": [2, ', "/c") is None
    assert locate(b"\xff", "") is None
    assert locate(b"[" * 5_000 + b"]" * 5_000, "/0" * 4_999) == (1, 5_000)


def test_locate_finds_the_first_duplicate() -> None:
    assert locate(b'{"a": 1, "a": 2}', "/a") == (1, 7)


# --- properties --------------------------------------------------------------------------

# Integers stay inside the float range: beyond it they are refused (JSON_NUMBER_RANGE).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**300), max_value=10**300)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(json_values, st.booleans(), st.sampled_from([None, 2]))
def test_property_dumped_values_load_back_equal(
    value: Any, ascii: bool, indent: int | None
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii, indent=indent).encode()
    assert same(loads_strict(raw, SOURCE), value)


@settings(max_examples=150, deadline=None)
@given(json_values, st.booleans(), st.sampled_from([None, 2]))
def test_property_bytes_accepted_once_load_again_the_same_without_the_checks(
    value: Any, ascii: bool, indent: int | None
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii, indent=indent).encode()
    try:
        strict = loads_strict(raw, SOURCE)
    except RulecheckError:  # an integer beyond the float range: nothing to load again
        return
    again = loads_verified(raw)
    assert same(again, strict)
    assert json.dumps(again) == json.dumps(strict)  # members in the same order


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_property_any_bytes_raise_only_rulecheck_errors(raw: bytes) -> None:
    try:
        loads_strict(raw, SOURCE)
    except RulecheckError as error:
        assert error.exit_code is ExitCode.REFUSED
        assert error.diagnostics
        assert {d.code for d in error.diagnostics} <= CODES


json_ish = st.lists(
    st.sampled_from(
        [
            *'{}[],:"  \n0123456789.-+eEtrufalsnNI\\a',
            '"a"',
            '"a":',
            "true",
            "null",
            "NaN",
            "Infinity",
            "1e999",
            "\\ud800",
            "\\udc00",
            "\\u0061",
            "\\\\",
            '\\"',
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_ish)
def test_property_agrees_with_the_stdlib_decoder(text: str) -> None:
    try:
        expected = json.loads(text)
    except json.JSONDecodeError as stdlib_error:
        diagnostics = refusal(text.encode()).diagnostics
        codes = {d.code for d in diagnostics}
        if stdlib_error.msg == "Extra data":
            assert "JSON_TRAILING_DATA" in codes
            assert "JSON_SYNTAX" not in codes
        else:
            assert codes == {"JSON_SYNTAX"}
            location = diagnostics[0].location
            assert location is not None
            if not diagnostics[0].message.startswith("invalid unicode escape"):
                assert (location.line, location.column) == (stdlib_error.lineno, stdlib_error.colno)
        return
    try:
        value = loads_strict(text.encode(), SOURCE)
    except RulecheckError as error:
        assert {d.code for d in error.diagnostics} <= CODES - {"JSON_SYNTAX", "JSON_INVALID_UTF8"}
        return
    assert same(value, expected)


surrogate_pieces = st.sampled_from(
    ["a", "\\\\", "\\n", "\\ud800", "\\udbff", "\\udc00", "\\uDFFF", "\\ud83d\\ude00", "\\u0041"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(surrogate_pieces, max_size=12).map("".join))
def test_property_lone_surrogates_are_exactly_those_the_decoder_leaves(body: str) -> None:
    raw = f'["{body}"]'.encode()
    decoded = json.loads(raw)[0]
    lone = sum(0xD800 <= ord(char) <= 0xDFFF for char in decoded)
    if lone == 0:
        assert loads_strict(raw, SOURCE) == [decoded]
    else:
        codes = [d.code for d in refusal(raw).diagnostics]
        assert codes == ["JSON_LONE_SURROGATE"] * lone


def pointers(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every (pointer, sub-value) in `value`, the root included."""
    result = [(prefix, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            token = key.replace("~", "~0").replace("/", "~1")
            result += pointers(item, f"{prefix}/{token}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            result += pointers(item, f"{prefix}/{index}")
    return result


@settings(max_examples=100, deadline=None)
@given(json_values, st.booleans(), st.data())
def test_property_locate_points_at_the_value(value: Any, ascii: bool, data: st.DataObject) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=ascii)
    pointer, expected = data.draw(st.sampled_from(pointers(value)))
    position = locate(text.encode(), pointer)
    assert position is not None
    line, column = position
    lines = text.split("\n")
    offset = sum(len(previous) + 1 for previous in lines[: line - 1]) + column - 1
    located, _ = json.JSONDecoder(parse_float=JsonFloat).raw_decode(text, offset)
    assert same(located, expected)


def test_float_values_survive_exactly() -> None:
    for number in (0.1, -0.0, 5e-324, 1.7976931348623157e308, math.pi):
        loaded = loads_strict(json.dumps(number).encode(), SOURCE)
        assert loaded == number
        assert math.copysign(1, loaded) == math.copysign(1, number)


# --- the source map ----------------------------------------------------------------------


def _rescan(raw: bytes, pointer: str) -> tuple[int, int] | None:
    """The position by a scan that stops at the target (how `locate` worked before)."""
    from engine.bundle.strictjson import _Lines, _ScanError, _Scanner

    text = raw.decode("utf-8")
    scanner = _Scanner(text, target=pointer)
    with contextlib.suppress(_ScanError):
        scanner.run()
    return None if scanner.found is None else _Lines(text).position(scanner.found)


def _pointers(value: Any, prefix: str = "") -> list[str]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            token = key.replace("~", "~0").replace("/", "~1")
            found += _pointers(item, f"{prefix}/{token}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _pointers(item, f"{prefix}/{index}")
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, indent=st.sampled_from([None, 0, 2]))
def test_the_source_map_locates_every_value_where_a_rescan_does(value: Any, indent: Any) -> None:
    from engine.bundle.strictjson import SourceMap

    raw = json.dumps(value, indent=indent, ensure_ascii=False).encode("utf-8")
    mapped = SourceMap(raw)
    for pointer in [*_pointers(value), "/missing", "x", "/0/00"]:
        assert mapped.position(pointer) == _rescan(raw, pointer) == locate(raw, pointer)


def test_the_source_map_keeps_the_first_duplicate_and_values_before_a_break() -> None:
    from engine.bundle.strictjson import SourceMap

    assert SourceMap(b'{"a": 1, "a": {"b": 2}}').position("/a") == (1, 7)
    assert SourceMap(b'{"a": 1, "a": {"b": 2}}').position("/a/b") == (1, 21)
    assert SourceMap(b'{"a": [1,\n 2], "b": ').position("/a/1") == (2, 2)
    assert SourceMap(b"\xff").position("") is None


def test_locating_many_findings_scans_the_document_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.bundle.strictjson as strictjson

    raw = json.dumps({"items": [{"v": i} for i in range(2000)]}).encode("utf-8")
    scans = []
    original = strictjson._Scanner.run

    def counted(self: Any) -> None:
        scans.append(1)
        original(self)

    monkeypatch.setattr(strictjson._Scanner, "run", counted)
    positions = [locate(raw, f"/items/{i}/v") for i in range(2000)]
    assert len(scans) == 1
    assert positions[1999] == _rescan(raw, "/items/1999/v")
