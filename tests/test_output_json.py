"""The canonical JSON writer of reports is `json.dumps(sort_keys, indent=2)`, byte for byte.

Reports are written by a faster writer than the standard library's indented one; for any
value it must give the same text, or fail as `json.dumps` fails."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from decimal import Decimal
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.report.output import StreamedArray, json_chunks, to_json


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


class _Level(IntEnum):
    LOW = 1


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(),
    st.sampled_from(["", "é", "\u2028", "\ud800", '"\\\n\t', "\x00\x1f"]),
)
_keys = st.one_of(st.text(max_size=6), st.integers(-3, 3), st.none(), st.booleans())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
        st.dictionaries(_keys, inner, max_size=3),
    ),
    max_leaves=30,
)


def _same(value: Any) -> None:
    try:
        expected = _reference(value)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            to_json(value)
        return
    assert to_json(value) == expected


@settings(max_examples=600, deadline=None)
@given(_values)
def test_any_json_value_is_written_as_json_dumps_writes_it(value: Any) -> None:
    _same(value)


def _streamed(value: Any) -> Any:
    """`value` with each list a `StreamedArray` of the same items, made when written."""
    if isinstance(value, list):
        items = [_streamed(item) for item in value]
        return StreamedArray(lambda: iter(items), len(items))
    if isinstance(value, dict):
        return {key: _streamed(item) for key, item in value.items()}
    return value


@settings(max_examples=300, deadline=None)
@given(_values)
def test_an_array_made_as_it_is_written_is_written_as_its_list(value: Any) -> None:
    try:
        expected = _reference(value)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            to_json(_streamed(value))
        return
    assert to_json(_streamed(value)) == expected


def test_an_array_made_as_it_is_written_is_made_then_and_each_time() -> None:
    made: list[int] = []

    def rows() -> Any:
        made.append(1)
        return iter([{"n": 1}, {"n": 2}])

    value = {"rows": StreamedArray(rows, 2), "empty": StreamedArray(lambda: iter(()), 0)}
    assert made == []
    assert (
        to_json(value) == to_json(value) == _reference({"rows": [{"n": 1}, {"n": 2}], "empty": []})
    )
    assert made == [1, 1]


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"b": [], "a": {}},
        {"x": math.nan},
        [math.inf],
        {"x": -math.inf},
        [Decimal("1.5")],
        {"a": object()},
        OrderedDict([("b", 1), ("a", 2)]),
        {"k": OrderedDict([("b", 1)])},
        [_Level.LOW, True, False, None, 1.0, -0.0, 1e300],
        {1: "a", "b": 2},
        {None: 1, True: 2},
        {1.5: "x"},
    ],
    ids=repr,
)
def test_unusual_values_are_written_or_refused_as_json_dumps_does(value: Any) -> None:
    _same(value)


def test_deep_nesting_fails_or_writes_as_json_dumps_does() -> None:
    value: Any = "leaf"
    for _ in range(5000):
        value = [value]
    with pytest.raises(RecursionError):
        _reference(value)
    with pytest.raises(RecursionError):
        to_json(value)


def test_a_large_report_comes_in_chunks_that_join_to_the_same_text() -> None:
    """A report too long to hold twice is written chunk by chunk: the chunks, joined, are
    `json.dumps`'s text, and none of them is the whole."""
    rows = [{"id": f"S{index:06d}", "cost": index, "ok": index % 3 == 0} for index in range(70_000)]
    value = {"rows": rows, "nested": [[{"a": [1, 2]}, "x"] for _ in range(40_000)]}
    chunks = json_chunks(value)
    assert len(chunks) > 2
    assert "".join(chunks) == to_json(value) == _reference(value)
    assert json_chunks({"a": 1}) == [_reference({"a": 1})]  # a small report: one chunk
