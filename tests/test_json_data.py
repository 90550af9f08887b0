"""`json_data`: a rule value as JSON data. Parsed JSON is returned as it is; anything
inside it that is not JSON (an exact number, a set, a node, a key that is not text) is
still converted, however deep it sits."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.evaluate.runtime import json_data
from engine.graph.build import Graph

_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_parsed_json_is_its_own_json_data(value: Any) -> None:
    assert json_data(value) == value


def _deep(leaf: Any) -> Any:
    return {"final": {"claims": [{"id": "C1", "score": leaf}], "note": "n"}}


@pytest.mark.parametrize(
    ("leaf", "expected"),
    [
        (Fraction(3, 2), Decimal("1.5")),
        (Fraction(4, 2), 2),
        (frozenset({"b", "a"}), ["a", "b"]),
        ((1, 2), [1, 2]),
        ({1: "x"}, {"1": "x"}),
        ([Fraction(1, 4)], [Decimal("0.25")]),
    ],
    ids=repr,
)
def test_values_that_are_not_json_are_converted_however_deep(leaf: Any, expected: Any) -> None:
    assert json_data(_deep(leaf)) == _deep(expected)


def test_a_node_deep_inside_is_its_id_or_an_error() -> None:
    node = ("claim", 0)
    graph = Graph({"claim": [node]}, {node: {"id": "C1"}}, {}, {})
    assert json_data(_deep(node), graph) == _deep("C1")
    keyed = Graph({"claim": [node]}, {node: {"claim_id": "C2", "id": "x"}}, {}, {})
    keyed.keys["claim"] = "claim_id"  # the id is read through the kind's key
    assert json_data(_deep(node), keyed) == _deep("C2")
    with pytest.raises(ValueError, match="a node is not a JSON value"):
        json_data(_deep(node))


def test_an_exact_number_without_a_decimal_form_is_an_error_however_deep() -> None:
    with pytest.raises(ValueError, match="no finite decimal form"):
        json_data(_deep(Fraction(1, 3)))
