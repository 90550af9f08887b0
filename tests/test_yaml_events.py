"""The YAML read from the event stream is the YAML the composing reader reads.

`engine/bundle/yamlevents.py` builds a document's value without its node tree and leaves
anything but the plain shape to `engine/bundle/yamldoc.py`. Whatever the text, the value,
the unquoted scalars, the refusal and the positions must be the composing reader's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bundle import yamldoc, yamlevents
from engine.errors import RulecheckError

# Scalars as a user might write them: texts, numbers in YAML 1.1's many spellings,
# booleans, nulls, dates, and texts that only look like those.
SCALARS = st.sampled_from(
    [
        "text",
        "a b",
        "0",
        "-12",
        "1_000",
        "0x1F",
        "0o17",
        "0755",
        "1:30",
        "3.25",
        "1e3",
        ".inf",
        "-.inf",
        ".nan",
        "1" * 40,
        "true",
        "False",
        "yes",
        "no",
        "on",
        "~",
        "null",
        "",
        "2024-01-01",
        "2024-01-01T10:00:00Z",
        "2024-1-1",
        "1234-",
        "<<",
        "=",
        "!!int 3",
        "!!str 3",
        "!!float",
        "!custom x",
        "&a 1",
        "*a",
        '"quoted"',
        "'single'",
        '"2024-01-01"',
        "x: y",
        "- z",
        # texts whose first character starts no YAML 1.1 type (read without asking PyYAML)
        # beside texts that start as a number, boolean or null would
        "d9ade06a36",
        "9dde1118ba",
        "J0001",
        "f00d",
        "n0",
        "O1",
        "''",
    ]
)
KEYS = st.sampled_from(
    ["a", "b", "id", "x/y", "t~1", "1", "true", "<<", "? [k]", "'q'", "a", "0x1F", "no", "off"]
)


def _node(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return SCALARS
    child = _node(depth - 1)
    return st.one_of(
        SCALARS,
        st.lists(st.tuples(KEYS, child), max_size=4).map(lambda pairs: ("map", pairs)),
        st.lists(child, max_size=4).map(lambda items: ("seq", items)),
        st.lists(SCALARS, max_size=3).map(lambda items: ("flow", items)),
    )


def _render(node: Any, indent: int) -> list[str]:
    """Block YAML lines for a generated node (a scalar renders on its own line)."""
    pad = " " * indent
    if isinstance(node, str):
        return [pad + node]
    shape, parts = node
    if shape == "flow":
        return [pad + "[" + ", ".join(parts) + "]"]
    if not parts:
        return [pad + ("{}" if shape == "map" else "[]")]
    lines: list[str] = []
    for part in parts:
        key, value = part if shape == "map" else ("-", part)
        head = pad + (f"{key}:" if shape == "map" else "-")
        if isinstance(value, str) or value[0] == "flow" or not value[1]:
            lines.append(head + " " + _render(value, 0)[0])
        else:
            lines.append(head)
            lines += _render(value, indent + 2)
    return lines


def _composed(raw: bytes) -> Any:
    try:
        data, _root, unquoted = yamldoc.parse_yaml_unquoted(raw, "doc.yaml", "INPUT")
    except RulecheckError as error:
        return ("refused", list(error.diagnostics))
    return (data, unquoted)


def _streamed(raw: bytes) -> Any:
    try:
        return yamlevents.load_yaml(raw, "doc.yaml", "INPUT")
    except RulecheckError as error:
        return ("refused", list(error.diagnostics))


@settings(max_examples=400, deadline=None)
@given(_node(3), st.sampled_from(["", "---\n", "%YAML 1.1\n---\n"]), st.sampled_from(["", "\n"]))
def test_the_streamed_document_is_the_composed_one(node: Any, start: str, end: str) -> None:
    raw = (start + "\n".join(_render(node, 0)) + end).encode("utf-8")
    composed = _composed(raw)
    assert repr(_streamed(raw)) == repr(composed)
    if composed[0] != "refused":
        _value, root = yamldoc.parse_yaml(raw, "doc.yaml", "INPUT")
        every = yamldoc.yaml_positions(root)
        assert yamlevents.yaml_positions_of(raw, "doc.yaml") == every
        wanted = [*list(every)[:3], *list(every)[-2:], "/no/such/value"]
        for pointer in wanted:
            one = yamlevents.yaml_positions_of(raw, "doc.yaml", (pointer,))
            held = {p: at for p, at in every.items() if p == pointer or pointer.startswith(p + "/")}
            assert one == held  # the value and the values that hold it
        together = yamlevents.yaml_positions_of(raw, "doc.yaml", wanted)  # in one reading
        assert together == {
            p: at for p, at in every.items() if any(p == w or w.startswith(p + "/") for w in wanted)
        }


def test_the_plain_shape_is_built_from_events_without_a_node_tree() -> None:
    raw = b"records:\n- id: J1\n  n: 0755\n  ok: yes\n- {id: J2, at: 2024-01-01, q: '2024'}\n"
    built = yamlevents._EventBuilder(yamldoc.strict_loader(raw.decode())).document()
    assert built == (
        {
            "records": [
                {"id": "J1", "n": 0o755, "ok": True},
                {"id": "J2", "at": "2024-01-01", "q": "2024"},
            ]
        },
        {
            "/records/0/n": ("number", "0755"),
            "/records/0/ok": ("boolean", "yes"),
            "/records/1/at": ("date", "2024-01-01"),
        },
    )
    assert yamlevents.yaml_positions_of(raw, "doc.yaml")["/records/1/at"] == (5, 16)


def test_what_is_not_the_plain_shape_is_refused_as_before() -> None:
    refused = (b"a: 1\na: 2\n", b"a: &x 1\nb: *x\n", b"? [k]\n: v\n", b"", b"a: 1\n---\nb: 2\n")
    for raw in refused:
        assert _streamed(raw)[0] == "refused"
        assert _streamed(raw) == _composed(raw)


# Numbers: a YAML float is read through a 64-bit float as its shortest decimal, so one
# beyond the float's range, below it or with more digits than it keeps is refused, by
# both readers alike; any other spelling of a float is read as written.
_REFUSED_NUMBERS = {
    "1.0e+400": "is outside the range of a 64-bit float",
    "1.0e-400": "cannot be held as written by a 64-bit float (it would be read as `0.0`)",
    "0.1000000000000000055511151231257827": "(it would be read as `0.1`)",
    "-9007199254740993.0": "(it would be read as `-9007199254740992.0`)",
}


def test_a_float_not_held_as_written_is_refused_by_both_readers() -> None:
    for written, words in _REFUSED_NUMBERS.items():
        raw = f"a: 1\nb: {written}\n".encode()
        streamed = _streamed(raw)
        assert streamed == _composed(raw)
        assert streamed[0] == "refused", written
        (diagnostic,) = streamed[1]
        assert diagnostic.code == "YAML_NUMBER_RANGE"
        assert diagnostic.location is not None and diagnostic.location.line == 2
        assert words in diagnostic.message


def test_floats_held_as_written_are_read_by_both_readers() -> None:
    raw = b"a: 0.5\nb: 1_000.25\nc: .5\nd: -1.\ne: 6.8523015e+5\nf: 190:20:30.15\ng: 1e-400\n"
    streamed = _streamed(raw)
    assert streamed == _composed(raw)
    data = streamed[0]
    assert data == {
        "a": 0.5,
        "b": 1000.25,
        "c": 0.5,
        "d": -1.0,
        "e": 685230.15,
        "f": 685230.15,
        "g": "1e-400",
    }
