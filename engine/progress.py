"""Progress of long runs (a campaign's rules, a batch of answers), drawn on stderr only
when stderr is a terminal and the user did not ask for `--quiet`.

Nothing is drawn otherwise, so redirected output, CI logs and reports are never touched;
the evaluation only calls `advance`, which costs a context lookup when no bar is shown.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TextIO

WIDTH = 24  # cells of the bar
INTERVAL = 0.1  # seconds between redraws


class Progress:
    """One progress line on a terminal stream, redrawn at most every INTERVAL seconds."""

    def __init__(self, stream: TextIO, label: str) -> None:
        self.stream = stream
        self.label = label
        self.drawn = False
        self._last = float("-inf")

    def update(self, done: int, total: int | None, what: str = "") -> None:
        """Show `done` of `total` (a count alone when the total is not known)."""
        now = time.monotonic()
        if now - self._last < INTERVAL and (total is None or done < total):
            return
        self._last = now
        if total:
            filled = WIDTH * min(done, total) // total
            bar = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total}"
        else:
            bar = f"{done}"
        line = f"{self.label} {bar} {what}"[:100]
        self.stream.write(f"\r\x1b[K{line}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Erase the line, so what follows on the terminal starts clean."""
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


_CURRENT: ContextVar[Progress | None] = ContextVar("rulecheck_progress", default=None)


@contextmanager
def showing_progress(stream: TextIO, label: str, quiet: bool) -> Iterator[None]:
    """Within the block, `advance` draws on `stream` if it is a terminal and not `quiet`."""
    if quiet or not stream.isatty():
        yield
        return
    progress = Progress(stream, label)
    token = _CURRENT.set(progress)
    try:
        yield
    finally:
        _CURRENT.reset(token)
        progress.close()


def advance(done: int, total: int | None, what: str = "") -> None:
    """Report progress to the bar being shown, if any."""
    progress = _CURRENT.get()
    if progress is not None:
        progress.update(done, total, what)
