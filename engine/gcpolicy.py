"""When the cyclic garbage collector runs: not in the middle of bulk work.

Loading a bundle, building its graphs, evaluating the rules and hashing a ruleset
allocate millions of small objects that live until the end of the step; reference
counting frees what dies sooner. Nearly none of them forms a cycle, so each pass of the
cyclic collector would only walk the growing heap again (a quarter of `check` on a large
campaign, a third of a parse, docs/performance.md). The collector is paused for the step
and restored afterwards; nested pauses leave it to the outermost one.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from types import TracebackType
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Pause:
    """One pause of the collector: a context manager, or a decorator pausing it for every
    call (a class, not `contextlib.contextmanager`: a generator per call cost more than
    a small function it decorates, and `check_files` runs once per answer)."""

    __slots__ = ("_enabled",)

    def __init__(self) -> None:
        self._enabled = False

    def __enter__(self) -> None:
        self._enabled = gc.isenabled()
        gc.disable()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._enabled:
            _promote_to_oldest()
            gc.enable()

    def __call__(self, function: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(function)
        def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            enabled = gc.isenabled()
            gc.disable()
            try:
                return function(*args, **kwargs)
            finally:
                if enabled:
                    _promote_to_oldest()
                    gc.enable()

        return paused


def collector_paused() -> _Pause:
    """Pause the cyclic garbage collector for the block (or for each call of the function
    it decorates); restore its state afterwards."""
    return _Pause()


def _promote_to_oldest() -> None:
    """Move every tracked object to the oldest generation, without a collection.

    The objects the step allocated are all in the youngest generation, and the first
    collection after the pause would walk every one of them (0.15 s for three million).
    Freezing and unfreezing moves them to the oldest generation in constant time: what
    is garbage in a cycle is still found, by the next full collection."""
    gc.freeze()
    gc.unfreeze()
