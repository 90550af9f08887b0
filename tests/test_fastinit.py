"""The cheaper `__init__` of frozen dataclasses (engine/fastinit.py) does what the one
`dataclasses` writes does: the same parameters and defaults, the same refusals."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.check.types import Type
from engine.fastinit import faster_init
from engine.syntax import ast


@dataclass(frozen=True, slots=True)
class _Written:
    name: str
    size: int
    note: str | None = None
    tags: tuple[str, ...] = ()


@faster_init
@dataclass(frozen=True, slots=True)
class _Fast:
    name: str
    size: int
    note: str | None = None
    tags: tuple[str, ...] = ()


def _fields(value: Any) -> tuple[Any, ...]:
    return tuple(getattr(value, item.name) for item in dataclasses.fields(value))


def _outcome(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return _fields(cls(*args, **kwargs))
    except TypeError:
        return TypeError


_VALUES = st.one_of(st.text(max_size=3), st.integers(), st.none(), st.tuples(st.text()))


@given(
    st.lists(_VALUES, max_size=5),
    st.dictionaries(st.sampled_from(["name", "size", "note", "tags", "other"]), _VALUES),
)
def test_same_values_and_refusals_as_the_written_init(
    args: list[Any], kwargs: dict[str, Any]
) -> None:
    assert _outcome(_Fast, tuple(args), kwargs) == _outcome(_Written, tuple(args), kwargs)


def test_same_signature_and_still_frozen() -> None:
    assert inspect.signature(_Fast.__init__) == inspect.signature(_Written.__init__)
    made = _Fast("a", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.size = 2  # type: ignore[misc]
    assert dataclasses.replace(made, size=3) == _Fast("a", 3)
    assert (
        hash(made) == hash(_Fast("a", 1))
        and repr(made) == "_Fast(name='a', size=1, note=None, tags=())"
    )


@dataclass(frozen=True, slots=True)
class _PostInit:
    name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name.upper())


@dataclass(frozen=True, slots=True)
class _Factory:
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _KeywordOnly:
    name: str = field(kw_only=True)


@dataclass(frozen=True)
class _NoSlots:
    name: str


@pytest.mark.parametrize("cls", [_PostInit, _Factory, _KeywordOnly, _NoSlots])
def test_an_init_that_does_more_is_kept(cls: type) -> None:
    written = cls.__init__
    assert faster_init(cls) is cls and cls.__init__ is written


def _node_types() -> list[type]:
    return [
        value
        for value in vars(ast).values()
        if isinstance(value, type) and dataclasses.is_dataclass(value)
    ]


@pytest.mark.parametrize("cls", [*_node_types(), Type], ids=lambda cls: cls.__name__)
def test_every_ast_node_and_type_has_the_cheaper_init(cls: type) -> None:
    assert cls.__init__.__code__.co_filename == f"<faster_init {cls.__name__}>"
