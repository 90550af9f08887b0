"""Giving the memory an evaluation lets go back to the system.

A large campaign's evaluation builds caches of tens of thousands of entries and lets them
go when no later rule reads them (engine/evaluate/release.py). Python returns what they
held to the C allocator, which keeps it: the rules that follow allocate their own results
at other addresses, so the process's peak was that of the caches and the results
together (about 8 MiB more at the peak of a 10,002-session campaign). After a large
release the free pages are handed back (glibc's `malloc_trim`). Only memory depends on
this; where the C library has no such call, nothing happens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

# Entries let go at once from which the free pages are worth handing back: a trim walks
# the whole C heap (0.1-3 ms on a 10,002-session campaign), an answer's caches hold dozens.
LARGE_RELEASE = 10_000


def released(entries: int) -> None:
    """Note that `entries` entries of caches were let go; after a large release, give the
    C allocator's free pages back to the system."""
    if entries >= LARGE_RELEASE:
        trim = _malloc_trim()
        if trim is not None:
            trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's `malloc_trim`, looked up once (ctypes is imported only for a
    release that large: no small input pays for it)."""
    try:
        import ctypes

        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # no C library to name, or not glibc
        return None
    return trim
