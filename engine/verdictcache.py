"""Verdicts about exact bytes, remembered between processes.

Some checks give the same answer for the same bytes every time and cost far more than
reading a small file: that a schema compiles (`engine/check/schemacache.py`), that a rules
lock verifies and which ruleset hash it records (`engine/freeze/lock.py`). Such a verdict
is kept as an entry named by, and holding, the sha256 of the bytes, the kind of verdict
and the sha256 of everything the verdict depends on besides the bytes (the engine's
sources, Python, the libraries involved), with the value the check gave. Only verdicts
that passed are kept, so every refusal comes from the check itself; a broken or foreign
entry, or one in a folder others may write, is ignored and the check runs again. Entries
sit beside the parse cache (`engine/syntax/parsecache.py`: same private folder, same off
switch `RULECHECK_PARSE_CACHE=off`), at most a bounded number per kind of verdict.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.resources import engine_source_digest
from engine.syntax.tables import (
    cache_folder,
    enabled,
    prune_private,
    read_marshalled,
    write_private,
)


def depends_on(*parts: str) -> str:
    """The sha256 of what a verdict depends on besides its bytes: Python, marshal, every
    engine source file and the `parts` the caller names (a grammar, a library's sources).
    Callers compute it once per process."""
    digest = hashlib.sha256()
    for part in (sys.version, str(marshal.version), engine_source_digest()["sha256"], *parts):
        digest.update(part.encode("utf-8") + b"\x00")
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class VerdictCache:
    """The entries of one kind of verdict: files `PREFIX<name>.ok` in the cache folder."""

    prefix: str

    def _entry(self, raw: bytes, kind: str, depends: str) -> tuple[Path, tuple[str, ...]] | None:
        folder = cache_folder()
        if folder is None:
            return None
        key = (depends, kind, hashlib.sha256(raw).hexdigest())
        name = hashlib.sha256("\x00".join(key).encode("utf-8")).hexdigest()[:40]
        return folder / f"{self.prefix}{name}.ok", key

    def recall(self, raw: bytes, kind: str, depends: str) -> tuple[bool, Any]:
        """Whether a passing verdict of this kind is kept for these bytes (given what it
        `depends` on), and the value it gave (None when there is none)."""
        if not enabled():
            return False, None
        entry = self._entry(raw, kind, depends)
        if entry is None:
            return False, None
        kept = read_marshalled(entry[0])  # a broken or foreign entry: as if there were none
        if type(kept) is tuple and len(kept) == len(entry[1]) + 1 and kept[:-1] == entry[1]:
            return True, kept[-1]
        return False, None

    def keep(self, raw: bytes, kind: str, depends: str, value: Any, limit: int) -> None:
        """Keep a passing verdict and its value (marshal-able), with at most `limit`
        entries of this cache; give up quietly on any failure."""
        if not enabled():
            return
        entry = self._entry(raw, kind, depends)
        if entry is None:
            return
        write_private(entry[0], marshal.dumps((*entry[1], value)))
        prune_private(entry[0].parent, self.prefix, ".ok", limit)
