"""When the cyclic garbage collector runs: not in the middle of bulk work.

Loading a bundle, building its graphs, evaluating the rules and hashing a ruleset
allocate millions of small objects that live until the end of the step; reference
counting frees what dies sooner. Nearly none of them forms a cycle, so each pass of the
cyclic collector would only walk the growing heap again (a quarter of `check` on a large
campaign, a third of a parse, docs/performance.md). The collector is paused for the step
and restored afterwards; nested pauses leave it to the outermost one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; restore its state afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            _promote_to_oldest()
            gc.enable()


def _promote_to_oldest() -> None:
    """Move every tracked object to the oldest generation, without a collection.

    The objects the step allocated are all in the youngest generation, and the first
    collection after the pause would walk every one of them (0.15 s for three million).
    Freezing and unfreezing moves them to the oldest generation in constant time: what
    is garbage in a cycle is still found, by the next full collection."""
    gc.freeze()
    gc.unfreeze()
