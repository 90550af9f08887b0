"""The schema compiler agrees with the jsonschema reference implementation.

Two implementations of one specification must agree: every shipped JSON Schema is compiled
by `engine.bundle.schemac` and by `jsonschema` (Draft 7), and both must give the same
verdict on the valid specimens and on random mutations of them. The one intended
difference is strictness about integers: `10.0` and `true` are never integers here.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from builders import make_answer, make_packet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from engine.bundle.schemac import PATTERN_IDIOMS, STOPPED, SchemaCompileError, compile_schema
from engine.limits import MAX_FINDINGS

SCHEMAS = Path(__file__).resolve().parent.parent / "manifests" / "schemas"


def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return loaded


SPECIMENS = {
    "response_contract": [make_answer("B"), make_answer("A")],
    "evidence_packet": [make_packet()],
}
ALL_SCHEMAS = sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 200_000),
    st.sampled_from(["", " ", "C1", "C01", "E7", "U0", "src/a.ts", "../a", "a\n", "😀" * 3]),
    st.text(max_size=12),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _mutate(document: Any, path: tuple[Any, ...], action: str, scalar: Any) -> Any:
    copied = copy.deepcopy(document)
    if not path:
        return scalar
    parent = copied
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    elif action == "extra" and isinstance(parent[last], dict):
        parent[last]["unexpected"] = scalar
    else:
        parent[last] = scalar
    return copied


@pytest.mark.parametrize("name", ALL_SCHEMAS)
def test_every_shipped_schema_compiles(name: str) -> None:
    validate = compile_schema(_schema(name))
    assert callable(validate)


@pytest.mark.parametrize("name", sorted(SPECIMENS))
def test_valid_specimens_are_valid_for_both(name: str) -> None:
    validate = compile_schema(_schema(name))
    reference = Draft7Validator(_schema(name))
    for specimen in SPECIMENS[name]:
        assert validate(specimen) == []
        assert reference.is_valid(specimen)


@pytest.mark.parametrize("name", sorted(SPECIMENS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_verdicts_agree_on_mutations(name: str, data: st.DataObject) -> None:
    specimen = data.draw(st.sampled_from(SPECIMENS[name]))
    path = data.draw(st.sampled_from(_paths(specimen)))
    action = data.draw(st.sampled_from(["replace", "delete", "duplicate", "extra"]))
    if action == "delete" and not path:
        action = "replace"
    mutated = _mutate(specimen, path, action, data.draw(SCALARS))
    ours = compile_schema(_schema(name))(mutated)
    theirs = sorted(
        "/" + "/".join(str(p) for p in error.absolute_path)
        for error in Draft7Validator(_schema(name)).iter_errors(mutated)
    )
    assert (ours == []) == (theirs == []), (ours, theirs)


def test_integers_are_strict() -> None:
    validate = compile_schema({"type": "integer", "minimum": 1})
    assert validate(3) == []
    assert validate(10.0)[0][1] == "type"
    assert validate(True)[0][1] == "type"
    assert validate(0)[0][1] == "minimum"


@pytest.mark.parametrize(
    "value",
    [{}, {"ab": 1}, {"AB": 1}, {"": 1}, {"ab": 1, "A/b~": 2}, {"abcdef": 1}, [], "ab"],
)
def test_property_names_agree_with_the_reference(value: Any) -> None:
    schema = {"type": "object", "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 4}}
    found = compile_schema(schema)(value)
    assert bool(found) == (not Draft7Validator(schema).is_valid(value))
    if isinstance(value, dict) and "A/b~" in value:  # each key located at its own entry
        assert [(pointer, keyword) for pointer, keyword, _ in found] == [("/A~1b~0", "pattern")]


@pytest.mark.parametrize("value", ["ab", "abc", "a", "AB", 3, None])
def test_all_of_agrees_with_the_reference(value: Any) -> None:
    schema = {"allOf": [{"type": "string", "maxLength": 2}, {"pattern": "^[a-z]+$"}]}
    assert bool(compile_schema(schema)(value)) == (not Draft7Validator(schema).is_valid(value))


def test_every_error_is_reported_with_its_pointer() -> None:
    answer = make_answer("B")
    answer["final"]["claims"][0]["id"] = "C01"
    answer["final"]["claims"][1]["extra"] = 1
    del answer["final"]["citations"][0]["supports"]
    answer["final"]["claims"][2]["text"] = "x" * 2049
    errors = compile_schema(_schema("response_contract"))(answer)
    assert sorted((pointer, keyword) for pointer, keyword, _ in errors) == [
        ("/final/citations/0", "required"),
        ("/final/claims/0/id", "pattern"),
        ("/final/claims/1", "additionalProperties"),
        ("/final/claims/2/text", "maxLength"),
    ]


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"format": "date"}, "unsupported keyword"),
        ({"$ref": "http://example.com/x"}, "only local"),
        ({"$ref": "#/definitions/missing"}, "names no definition"),
        ({"type": "decimal"}, "unknown type"),
        ({"items": [{"type": "string"}]}, "single `items`"),
        ({"minLength": "1 +"}, "non-negative integer"),
        ({"maxItems": -1}, "non-negative integer"),
        ({"maximum": float("inf")}, "finite number"),
        ({"pattern": "("}, "not a regular expression"),
        ({"required": "ab"}, "array of strings"),
        ({"enum": "ab"}, "must be an array"),
        ({"allOf": {"type": "string"}}, "must be an array"),
        ({"type": [{}]}, "unknown type"),
        ({"$ref": 3}, "must be a string"),
    ],
)
def test_unsupported_schemas_are_refused_at_compile_time(
    schema: dict[str, Any], message: str
) -> None:
    with pytest.raises(SchemaCompileError, match=message):
        compile_schema(schema)


def test_names_and_values_with_quotes_are_checked_not_written_into_the_code() -> None:
    # The checks' code is compiled on first use: what lint accepted must compile then.
    validate = compile_schema(
        {"required": ["it's", 'a"b'], "properties": {"k": {"enum": ["it's", "\\n"]}}}
    )
    assert validate({"it's": 1, 'a"b': 2, "k": "it's"}) == []
    assert validate({"k": "x"}) == [
        ("", "required", "`it's` is a required property"),
        ("", "required", '`a"b` is a required property'),
        ("/k", "enum", '`"x"` is not one of "it\'s", "\\\\n"'),
    ]


def test_enum_const_and_unique_checks_take_any_depth() -> None:
    from engine.valuekey import value_key

    deep: list[object] = []
    inner = deep
    for _ in range(50_000):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    assert isinstance(value_key(deep), tuple)
    assert value_key([True, {"b": [1, False], "a": None}]) == (
        "[",
        ("bool", True),
        ("{", ("a", None), ("b", ("[", 1, ("bool", False)))),
    )
    assert value_key(True) == ("bool", True) and value_key(1) == 1


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_s_key_is_the_decimal_it_is_written_as(number: float) -> None:
    """`0.1` read from a document is one tenth, at the top and inside a list: the key a
    rule's exact `0.1` has too (Python's own `==` would compare the float's binary value)."""
    from fractions import Fraction

    from engine.valuekey import value_key

    written = Fraction(json.dumps(number))
    assert value_key(number) == written and hash(value_key(number)) == hash(written)
    assert value_key([number]) == value_key([written])


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name.removesuffix(".schema.json")
        for p in (Path(__file__).resolve().parents[1] / "manifests" / "schemas").glob(
            "*.schema.json"
        )
    ),
)
def test_every_shipped_json_schema_compiles(name: str) -> None:
    # A keyword the compiler does not implement would surface as an internal error at the
    # first document it checks; a shipped schema must never do that.
    from engine.bundle.jsonschemas import compiled_schema

    compiled_schema(name)


@given(st.lists(st.sampled_from(["E1", "E2", "E10", "X1", "e1", "E1 ", "E01x", ""]), max_size=12))
def test_a_pattern_that_remembers_its_matches_agrees_with_a_search(texts: list[str]) -> None:
    schema = {"type": "array", "items": {"type": "string", "pattern": "^E[1-9][0-9]*$"}}
    validate = compile_schema(schema)
    expected = [i for i, text in enumerate(texts) if not re.search("^E[1-9][0-9]*$", text)]
    for _ in range(2):  # the second pass meets every matched text remembered
        found = [pointer for pointer, keyword, _message in validate(texts)]
        assert found == [f"/{i}" for i in expected]


def test_a_pattern_remembers_a_bounded_number_of_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.bundle import schemac

    monkeypatch.setattr(schemac, "_MATCHED_KEPT", 2)
    validate = compile_schema({"type": "array", "items": {"type": "string", "pattern": "^a"}})
    texts = [f"a{i}" for i in range(10)] + ["b"] + ["a" * 1000]
    assert [p for p, _k, _m in validate(texts)] == ["/10"]
    assert [p for p, _k, _m in validate(texts)] == ["/10"]


def test_str_isspace_is_what_a_pattern_s_backslash_s_matches_at_every_code_point() -> None:
    # what the idioms of PATTERN_IDIOMS rest on
    every = "".join(map(chr, range(0x110000)))
    by_regex = {match.start() for match in re.finditer(r"\s", every)}
    assert by_regex == {point for point, char in enumerate(every) if char.isspace()}


_IDIOM_TEXTS = st.text(
    alphabet=st.one_of(
        st.sampled_from(
            [" ", "\t", "\n", "\r", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", "\u3000"]
        ),
        st.characters(),
    ),
    max_size=8,
)


@pytest.mark.parametrize("source", sorted(PATTERN_IDIOMS))
@given(texts=st.lists(_IDIOM_TEXTS, max_size=6))
def test_a_pattern_idiom_decides_as_its_regex(source: str, texts: list[str]) -> None:
    validate = compile_schema({"type": "array", "items": {"type": "string", "pattern": source}})
    expected = [f"/{i}" for i, text in enumerate(texts) if not re.search(source, text)]
    assert [pointer for pointer, _keyword, _message in validate(texts)] == expected


def test_a_value_with_more_violations_than_the_bound_stops_at_it() -> None:
    validate = compile_schema({"type": "array", "items": {"type": "integer"}})
    errors = validate(["x"] * (MAX_FINDINGS * 5))
    assert len(errors) == MAX_FINDINGS + 1
    assert [pointer for pointer, _, _ in errors[:3]] == ["/0", "/1", "/2"]
    assert errors[-1][:2] == ("", STOPPED) and "more than 1,000" in errors[-1][2]
    assert validate(list(range(MAX_FINDINGS * 5))) == []


def test_a_branch_past_the_bound_fails_alone_and_another_may_hold() -> None:
    many = {"type": "array", "items": {"type": "integer"}}
    texts = {"type": "array", "items": {"type": "string"}}
    for keyword in ("anyOf", "oneOf"):
        validate = compile_schema({keyword: [many, texts]})
        assert validate(["x"] * (MAX_FINDINGS * 2)) == []  # the texts' branch holds
        errors = validate([["x"]] * (MAX_FINDINGS * 2))  # neither does
        assert [(pointer, word) for pointer, word, _ in errors] == [("", keyword)]
        assert errors[0][2].endswith("does not match any allowed shape")
