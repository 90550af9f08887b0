"""Serialising command results: canonical JSON and small text tables."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring
from typing import Any

from engine.gcpolicy import collector_paused

_INDENT = "  "
_INT_TEXT = int.__repr__
_FLOAT_TEXT = float.__repr__
_INFINITY = float("inf")


# A large report is millions of small texts before they are joined (about 100 MiB for
# the 19 MB report of a 10,000-session campaign): they are joined into a chunk as they
# accumulate, in the long lists that make them. The chunks are kept apart, so that the
# text is never copied whole while it is written: a report written out chunk by chunk
# (`json_chunks`) is held once, and never twice.
_PIECES_KEPT = 1 << 16


class _Pieces(list[str]):
    """The texts written since the last chunk (appended as to any list), and the chunks
    joined before them."""

    __slots__ = ("chunks",)

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []

    def join_chunk(self) -> None:
        """The pieces written since the last chunk, joined into the next chunk."""
        self.chunks.append("".join(self))
        self.clear()


class StreamedArray:
    """A JSON array whose items are made as the writer reaches them, each written and let
    go: a long array of report data made all at once is held whole beside what it is made
    from (a large campaign's tables: 27 MiB at its peak)."""

    __slots__ = ("_items", "_length")

    def __init__(self, items: Callable[[], Iterator[Any]], length: int) -> None:
        self._items = items
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[Any]:
        return self._items()


def _listed(value: Any) -> list[Any]:
    """`json.dumps`'s `default`: a streamed array as the list of its items."""
    if isinstance(value, StreamedArray):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _Unusual(Exception):
    """A value the fast writer leaves to `json.dumps` (which writes it or says why not)."""


def to_json(value: Any) -> str:
    """Canonical, byte-stable JSON text: sorted keys, two-space indent, final newline
    (`json_chunks` joined)."""
    return "".join(json_chunks(value))


@collector_paused()  # see engine/gcpolicy.py: a large report's texts are bulk work
def json_chunks(value: Any) -> list[str]:
    """Canonical, byte-stable JSON text: sorted keys, two-space indent, final newline, as
    consecutive chunks to write one after the other (a large report is never one text).

    The text is exactly `json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False,
    allow_nan=False)`. The standard library writes an indented text in pure Python, a
    generator per container, which was most of the time of writing a large report; plain
    dicts, lists, texts, integers, booleans and finite floats are written here, and
    anything else (another key type, a subclass, NaN, a value JSON has no form for) by
    `json.dumps`, which writes it or raises as it always did.
    """
    out = _Pieces()
    try:
        _write(value, "\n", out)
    except (_Unusual, RecursionError):
        text = json.dumps(
            value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False, default=_listed
        )
        return [text + "\n"]
    out.append("\n")
    out.join_chunk()
    return out.chunks


def _write(value: Any, newline: str, out: _Pieces) -> None:
    """Append the indented text of `value` to `out`; `newline` is a new line and the
    indent of the line `value` starts on."""
    cls = value.__class__
    if cls is str:
        out.append(encode_basestring(value))
    elif cls is dict:
        _write_object(value, newline, out)
    elif cls is list or cls is tuple or cls is StreamedArray:
        _write_array(value, newline, out)
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif cls is int:
        out.append(_INT_TEXT(value))
    elif cls is float and value == value and value not in (_INFINITY, -_INFINITY):
        out.append(_FLOAT_TEXT(value))
    else:
        raise _Unusual


def _write_object(value: dict[Any, Any], newline: str, out: _Pieces) -> None:
    if not value:
        out.append("{}")
        return
    inner = newline + _INDENT
    separator = "," + inner
    out.append("{" + inner)
    first = True
    for key in sorted(value):
        if key.__class__ is not str:
            raise _Unusual  # json.dumps writes numbers and null as keys, or refuses a mix
        if first:
            first = False
        else:
            out.append(separator)
        out.append(encode_basestring(key))
        out.append(": ")
        item = value[key]
        # the common leaves inline: a call per member was most of what is left
        if item.__class__ is str:
            out.append(encode_basestring(item))
        elif item.__class__ is int:
            out.append(_INT_TEXT(item))
        else:
            _write(item, inner, out)
    out.append(newline + "}")


def _write_array(
    value: list[Any] | tuple[Any, ...] | StreamedArray, newline: str, out: _Pieces
) -> None:
    if not value:
        out.append("[]")
        return
    inner = newline + _INDENT
    separator = "," + inner
    out.append("[" + inner)
    first = True
    for item in value:
        if first:
            first = False
        else:
            out.append(separator)
            if len(out) > _PIECES_KEPT:
                out.join_chunk()
        if item.__class__ is str:
            out.append(encode_basestring(item))
        else:
            _write(item, inner, out)
    out.append(newline + "]")
