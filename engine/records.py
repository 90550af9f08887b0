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

from collections.abc import Callable
from typing import Any


def record_maker() -> Callable[[], dict[str, Any]]:
    """A maker of empty plain dicts that share one key table: one per kind of record
    (each maker is a class, about 2 KB: never one per record or per container)."""
    holder = type("Record", (), {})

    def new_record() -> dict[str, Any]:
        values: dict[str, Any] = holder().__dict__
        return values

    return new_record
