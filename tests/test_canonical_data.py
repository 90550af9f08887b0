"""`canonical_data_json` writes the bytes `canonical_json` writes, for any JSON data as a
JSON file parses, and hands whatever its faster writer would write otherwise back to it."""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bundle.strictjson import JsonFloat, loads_strict
from engine.evaluate.runtime import json_sha256
from engine.freeze import canonical
from engine.freeze.canonical import canonical_data_json, canonical_json

_TEXT = st.text(st.characters(codec=None, categories=None), max_size=12)  # lone surrogates too
_NUMBERS = st.one_of(
    st.integers(),  # past 64 bits too
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False).map(JsonFloat),
)
_DATA = st.recursive(
    st.one_of(st.none(), st.booleans(), _NUMBERS, _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_TEXT, inner, max_size=5)),
    max_leaves=30,
)


def _written(write: Any, value: Any) -> bytes | type[Exception]:
    try:
        written: bytes = write(value)
    except (TypeError, ValueError) as error:  # refused alike: not JSON data
        return TypeError if isinstance(error, TypeError) else ValueError
    return written


@settings(max_examples=600, deadline=None)
@given(_DATA)
def test_any_data_is_written_as_canonical_json_writes_it(value: Any) -> None:
    assert _written(canonical_data_json, value) == _written(canonical_json, value)


def test_every_character_is_written_alike_in_a_text_and_in_a_key() -> None:
    characters = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(characters)
    assert canonical_data_json(text) == canonical_json(text)
    for character in characters[:0x800]:  # every escape, one by one
        value = {character: [character, f"a{character}b"]}
        assert canonical_data_json(value) == canonical_json(value)


def test_keys_are_in_code_point_order_beyond_the_basic_plane() -> None:
    value = {"\U0001f600": 1, "\uffff": 2, "z": 3, "é": 4, "": 5}
    assert canonical_data_json(value) == canonical_json(value)
    assert canonical_data_json(value).startswith(b'{"":5,"z":3')


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (b'{"a": 1e16, "b": 0.00001, "c": 10.0}', b'{"a":1e+16,"b":1e-05,"c":10.0}'),
        (b"[18446744073709551616, -9223372036854775809]", None),
        (b'["\\ud800"]', None),
    ],
    ids=["fractions_and_exponents", "past_64_bits", "lone_surrogate"],
)
def test_what_orjson_would_write_otherwise_is_written_by_canonical_json(
    text: bytes, written: bytes | None
) -> None:
    value = loads_strict(text, "x.json") if b"ud800" not in text else ["\ud800"]
    assert _written(canonical_data_json, value) == _written(canonical_json, value)
    if written is not None:
        assert canonical_data_json(value) == written


def test_plain_data_is_written_without_canonical_json(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(value: Any) -> bytes:
        raise AssertionError("written by the slow writer")

    monkeypatch.setattr(canonical, "canonical_json", refused)
    value = loads_strict(b'{"b": [1, true, null, "t\\u00e9\\n"], "a": {"c": -7}}', "x.json")
    assert canonical_data_json(value) == b'{"a":{"c":-7},"b":[1,true,null,"t\xc3\xa9\\n"]}'


@pytest.mark.parametrize("number", [1e-05, 1e16, 0.1, 123456789012345680.0])
def test_json_sha256_of_a_plain_float_hashes_pythons_digits(number: float) -> None:
    """`json_sha256` of any value (a YAML document's number is a plain float, which
    orjson would write in digits of its own) hashes what `canonical_json` writes."""
    value = {"n": number, "list": [number]}
    expected = hashlib.sha256(canonical_json(value) + b"\n").hexdigest()
    assert json_sha256(value) == expected
