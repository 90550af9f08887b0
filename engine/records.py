"""Records that share one key table.

A bundle holds tens of thousands of records of one shape: the lines of a JSON Lines file,
the items of a YAML list, the rows of a derived table, the graph's converted copies. As
dicts of their own, each holds its member names' table again. The `__dict__` of an
instance of a class is a plain `dict` whose key table the class's instances share (PEP
412): a third of the size for a record of a dozen members, read as fast. Where a record
differs in shape the interpreter gives it a table of its own, so only memory ever depends
on this, never a value, a type or an order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

# Texts up to this many characters are shared between the records that repeat them (IDs,
# hashes, labels): a longer text is rarely repeated, and looking it up costs its hash.
SHARED_TEXT_CHARS = 128

# A class is about 2 KB and a reference cycle: made once per kind of record and kept for
# the process, it is never garbage for the paused collector (engine/gcpolicy.py) to hold;
# past this many kinds (a hostile document's many lists), records are dicts of their own.
_MAKERS_KEPT = 1024
_makers: dict[Hashable, Callable[[], dict[str, Any]]] = {}


def record_maker(kind: Hashable) -> Callable[[], dict[str, Any]]:
    """A maker of empty plain dicts that share one key table with every record of `kind`
    (records of one shape: a document's lines, a list's items at one place, a table's
    rows); `dict` itself once too many kinds were made."""
    maker = _makers.get(kind)
    if maker is None:
        if len(_makers) >= _MAKERS_KEPT:
            return dict
        maker = _makers[kind] = _new_maker()
    return maker


def _new_maker() -> Callable[[], dict[str, Any]]:
    holder = type("Record", (), {})

    def new_record() -> dict[str, Any]:
        values: dict[str, Any] = holder().__dict__
        return values

    return new_record
