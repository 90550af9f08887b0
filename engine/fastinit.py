"""A cheaper `__init__` for frozen, slotted dataclasses built in bulk.

The `__init__` that `dataclasses` writes for a frozen class sets each field with
`object.__setattr__`, looked up anew per field. Parsing 20,000 declarations builds some
800,000 AST nodes and spans, and those look-ups were a tenth of the parse. The `__init__`
made here does the same work (the same parameters, defaults and order; each field stored
in its slot, bypassing the frozen class's refusing `__setattr__`, as the original does)
through each slot's own descriptor, bound once. It is made only for classes whose
`__init__` does nothing else: no `__post_init__`, no field left out of `__init__`, no
default factory, no keyword-only field.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from engine.codecache import kept_method

Cls = TypeVar("Cls", bound=type)


def faster_init(cls: Cls) -> Cls:
    """Give `cls` (a frozen dataclass with slots) an `__init__` equivalent to the one
    `dataclasses` wrote, that stores each field through its slot's descriptor; a class
    whose `__init__` does more than store its parameters is returned unchanged."""
    if not _plain_init(cls):
        return cls
    fields = dataclasses.fields(cls)
    namespace: dict[str, Any] = {}
    parameters, body = [], []
    for position, item in enumerate(fields):
        setter, default = f"_set{position}", f"_default{position}"
        namespace[setter] = cls.__dict__[item.name].__set__
        if item.default is dataclasses.MISSING:
            parameters.append(item.name)
        else:
            namespace[default] = item.default
            parameters.append(f"{item.name}={default}")
        body.append(f"    {setter}(self, {item.name})")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + "\n".join(body or ["    pass"])
    exec(kept_method(source + "\n", f"<faster_init {cls.__name__}>", inherit=True), namespace)
    init, written = namespace["__init__"], cls.__dict__["__init__"]
    init.__qualname__ = written.__qualname__
    init.__annotations__ = written.__annotations__
    init.__doc__ = written.__doc__
    type.__setattr__(cls, "__init__", init)
    return cls


def _plain_init(cls: type) -> bool:
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init or "__slots__" not in cls.__dict__:
        return False
    if hasattr(cls, "__post_init__"):
        return False
    return all(
        item.init
        and not item.kw_only
        and item.default_factory is dataclasses.MISSING
        and isinstance(cls.__dict__.get(item.name), _SLOT)
        for item in dataclasses.fields(cls)
    )


class _Slotted:
    __slots__ = ("value",)


_SLOT = type(_Slotted.__dict__["value"])  # the descriptor type of a `__slots__` member
