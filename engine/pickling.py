"""Pickling by fields, for the dataclasses that `--jobs N` sends between processes.

`pickle` stores a slotted dataclass through the `__getstate__` and `__setstate__` that
`dataclasses` writes: a Python-level loop over the fields on each side, each field then
set with `object.__setattr__`. Every job and every result of `--jobs N` crosses a process
boundary, so that loop ran four times an answer. Pickled as a call of the class with its
fields, in order, the same value costs a fraction of it.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, TypeVar

Cls = TypeVar("Cls", bound=type)


def by_fields(cls: Cls) -> Cls:
    """Make dataclass `cls` pickle as `cls(*fields)`; its `__init__` must take every
    field, positionally, in declaration order (checked here, once)."""
    fields = dataclasses.fields(cls)
    if len(fields) < 2 or any(not item.init or item.kw_only for item in fields):
        raise TypeError(f"{cls.__name__}: pickling by fields needs two or more positional fields")
    values = operator.attrgetter(*(item.name for item in fields))

    def __reduce__(self: Any) -> tuple[Any, tuple[Any, ...]]:
        return cls, values(self)

    __reduce__.__qualname__ = f"{cls.__qualname__}.__reduce__"
    type.__setattr__(cls, "__reduce__", __reduce__)
    return cls
