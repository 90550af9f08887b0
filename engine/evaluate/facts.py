"""What rules may know about an evaluation beyond the graph: the files it was read from.

Derived facts (a file's sha256, a JSON Lines record's bytes and line, the ruleset the run
evaluates with) are builtins of the language (`engine/builtins.py`), computed here from
what the loader kept, never written into the user's records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engine.bundle import paths


@dataclass(frozen=True, slots=True)
class Facts:
    """The bundle folder (None when the inputs were named one by one), the ruleset hash,
    and, per JSON Lines document, each record's physical line and bytes."""

    ruleset_hash: str = ""
    root: Path | None = None
    records: Mapping[str, tuple[tuple[int, bytes], ...]] = field(default_factory=dict)

    def file_sha256(self, relative: str) -> str | None:
        """The sha256 of a file inside the bundle; None when it is absent or outside it."""
        if self.root is None:
            return None
        path = paths.inside(self.root, relative, strict_segments=True)
        if path is None or not path.is_file():
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()

    def record(self, document: str, pointer: str) -> tuple[int, bytes] | None:
        """The line and bytes of the JSON Lines record at `pointer` (`/N...`) of `document`."""
        lines = self.records.get(document)
        head = pointer.split("/")[1] if pointer.count("/") else ""
        if lines is None or not head.isdigit() or int(head) >= len(lines):
            return None
        return lines[int(head)]
