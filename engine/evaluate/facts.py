"""What rules may know about an evaluation beyond the graph: the files it was read from.

Derived facts (a file's sha256, a JSON Lines record's bytes and line, the ruleset the run
evaluates with) are builtins of the language (`engine/builtins.py`), computed here from
what the loader kept, never written into the user's records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from engine.bundle import paths
from engine.bundle.strictjson import loads_strict
from engine.errors import RulecheckError
from engine.limits import read_input

T = TypeVar("T")

_FILES_KEPT = 64
_PARSED_KEPT = 16


@dataclass(frozen=True, slots=True)
class Facts:
    """The bundle folder (None when the inputs were named one by one), the ruleset hash,
    and, per JSON Lines document, each record's physical line and bytes."""

    ruleset_hash: str = ""
    root: Path | None = None
    records: Mapping[str, Sequence[tuple[int, bytes]]] = field(default_factory=dict)
    # per document of many files, the sha256 of each of its files, in its order
    members: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # `check(PROTOCOL, files, given)`: runs a protocol on files of this bundle (None outside one)
    nested: Callable[[str, Mapping[str, Any], Mapping[str, Any]], Any] | None = field(
        default=None, compare=False, repr=False
    )
    _read: dict[str, bytes | None] = field(default_factory=dict, compare=False, repr=False)
    _parsed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _digests: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)
    _real_root: list[str | None] = field(default_factory=list, compare=False, repr=False)

    def file_path(self, relative: str) -> Path | None:
        """A regular file inside the bundle; None when it is absent or would leave it."""
        if self.root is None:
            return None
        if not self._real_root:  # the bundle folder resolved once per evaluation
            self._real_root.append(paths.real_root(self.root))
        return paths.regular_file(self.root, relative, self._real_root[0])

    def file_bytes(self, relative: str) -> bytes | None:
        """The bytes of a file inside the bundle, read within the input limits (the last
        few read are kept: rules read a file in a few places at once, and a campaign's
        files together would not fit); None when it is absent, would leave the bundle or
        cannot be read."""
        if relative not in self._read:
            if len(self._read) >= _FILES_KEPT:
                self._read.pop(next(iter(self._read)))
            path = self.file_path(relative)
            try:
                self._read[relative] = None if path is None else read_input(path)
            except RulecheckError:
                self._read[relative] = None
        return self._read[relative]

    def json_document(self, relative: str) -> Any:
        """The strictly parsed JSON file inside the bundle (once); None when it is absent,
        would leave the bundle or does not parse."""
        if relative not in self._parsed:
            if len(self._parsed) >= _PARSED_KEPT:  # rules read a file in a few places at once
                self._parsed.pop(next(iter(self._parsed)))
            raw = self.file_bytes(relative)
            try:
                self._parsed[relative] = None if raw is None else loads_strict(raw, relative)
            except RulecheckError:
                self._parsed[relative] = None
        return self._parsed[relative]

    def file_sha256(self, relative: str) -> str | None:
        """The sha256 of a file inside the bundle (computed once); None when it is absent
        or outside it."""
        if relative not in self._digests:
            raw = self.file_bytes(relative)
            self._digests[relative] = None if raw is None else hashlib.sha256(raw).hexdigest()
        return self._digests[relative]

    def member(self, document: str, pointer: str) -> str | None:
        """The sha256 of the file of document `document` that holds `pointer` (`/N...`)."""
        return _entry_at(self.members.get(document), pointer)

    def record(self, document: str, pointer: str) -> tuple[int, bytes] | None:
        """The line and bytes of the JSON Lines record at `pointer` (`/N...`) of `document`."""
        return _entry_at(self.records.get(document), pointer)


def _entry_at(entries: Sequence[T] | None, pointer: str) -> T | None:
    """The entry of a document's list (its files, its records) that holds `pointer`: the
    one its first reference token `/N` indexes; None when there is no such entry."""
    head = pointer.split("/")[1] if pointer.count("/") else ""
    if entries is None or not head.isdigit() or int(head) >= len(entries):
        return None
    return entries[int(head)]
