"""What rules may know about an evaluation beyond the graph: the files it was read from.

Derived facts (a file's sha256, a JSON Lines record's bytes and line, the ruleset the run
evaluates with) are builtins of the language (`engine/builtins.py`), computed here from
what the loader kept, never written into the user's records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bundle import paths
from engine.bundle.documents import RecordLines
from engine.bundle.strictjson import loads_strict, loads_verified
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.limits import read_input

_FILES_KEPT = 64
# Bytes kept at most, over the files kept: a rule hashing a sealed 9 MB JSON Lines file
# reads it once, and holding such files for the rest of the run was a tenth of a
# campaign's peak memory. A larger file is never kept (read again if asked again).
_BYTES_KEPT = 4 << 20
_PARSED_KEPT = 16


@dataclass(slots=True)
class BundleFiles:
    """The files of one bundle folder as one evaluation reads them, shared by every rule
    and every `check(...)` inside it: each path is resolved once, each file's sha256 and
    size are known from its first read (a campaign reads each answer to check it, to hash
    it and to measure it, and the answer hashed is then the answer checked), and the last
    few files read and parsed are kept (a campaign's files together would not fit). A
    file read again once its bytes were let go must be what it was: else `INPUT_CHANGED`
    (exit 2), never a rule that reads other bytes than another judged."""

    root: Path | None
    _paths: dict[str, str | None] = field(default_factory=dict)
    _read: dict[str, bytes | None] = field(default_factory=dict)
    _bytes_kept: int = 0
    _parsed: dict[str, Any] = field(default_factory=dict)
    # the files whose bytes (those of their sha256 in `_digests`) parsed as strict JSON
    _strict: set[str] = field(default_factory=set)
    _digests: dict[str, tuple[str, int] | None] = field(default_factory=dict)
    _real_root: list[str | None] = field(default_factory=list)

    def path(self, relative: str) -> Path | None:
        """A regular file inside the bundle; None when it is absent or would leave it."""
        found = self.path_text(relative)
        return None if found is None else Path(found)

    def path_text(self, relative: str) -> str | None:
        """`path(relative)` as text, as it is kept: a Path object is several times the
        size, for every file, and a check reads a few files of each session by it."""
        if self.root is None:
            return None
        if relative not in self._paths:
            if not self._real_root:  # the bundle folder resolved once per evaluation
                self._real_root.append(paths.real_root(self.root))
            path = paths.regular_file(self.root, relative, self._real_root[0])
            self._paths[relative] = None if path is None else str(path)
        return self._paths[relative]

    def read(self, relative: str) -> bytes | None:
        """The bytes of a file inside the bundle, read within the input limits; None when
        it is absent, would leave the bundle or cannot be read.

        Raises:
            RulecheckError: exit 2 with `INPUT_CHANGED` when the file, read again, is not
                what it was when first read.
        """
        if relative in self._read:
            return self._read[relative]
        path = self.path_text(relative)
        try:
            raw = None if path is None else read_input(path)
        except RulecheckError:
            raw = None
        digest = _digest(raw)
        if relative not in self._digests:
            self._digests[relative] = digest
        elif digest != self._digests[relative]:
            raise _changed(relative, path)
        self._keep(relative, raw)
        return raw

    def _keep(self, relative: str, raw: bytes | None) -> None:
        """Keep `raw` as the last file read, letting the first kept go while there are
        too many files or bytes kept."""
        size = 0 if raw is None else len(raw)
        if size > _BYTES_KEPT:
            return
        kept = self._read
        while kept and (len(kept) >= _FILES_KEPT or self._bytes_kept + size > _BYTES_KEPT):
            first = kept.pop(next(iter(kept)))
            self._bytes_kept -= 0 if first is None else len(first)
        kept[relative] = raw
        self._bytes_kept += size

    def json(self, relative: str) -> Any:
        """The strictly parsed JSON file inside the bundle; None when it is absent, would
        leave the bundle or does not parse."""
        if relative not in self._parsed:
            raw = self.read(relative)
            try:
                if raw is None:
                    value = None
                elif relative in self._strict:  # `read` made sure the bytes are those
                    value = loads_verified(raw)
                else:
                    value = loads_strict(raw, relative)
                    self._strict.add(relative)
            except RulecheckError:
                value = None
            self._keep_parsed(relative, value)
        return self._parsed[relative]

    def _keep_parsed(self, relative: str, value: Any) -> None:
        if len(self._parsed) >= _PARSED_KEPT:  # rules read a file in a few places at once
            self._parsed.pop(next(iter(self._parsed)))
        self._parsed[relative] = value

    def parsed_strictly(self, relative: str, value: Any) -> None:
        """Note that the bytes `read(relative)` gives parsed as strict JSON elsewhere (a
        nested check's document) to `value`, which no one changes: asked for a moment
        later, the file is that value (a campaign's raters' view hashes each answer its
        check has just parsed: see `gates.run_tables`), and parsed again once no longer
        kept, its bytes need not be searched again for what strict JSON refuses."""
        if self._digests.get(relative) is not None:
            self._strict.add(relative)
            self._keep_parsed(relative, value)

    def sha256_and_size(self, relative: str) -> tuple[str, int] | None:
        """The sha256 and byte count of a file inside the bundle, as first read; None when
        it is absent or outside it."""
        if relative not in self._digests:
            self.read(relative)
        return self._digests[relative]


def _digest(raw: bytes | None) -> tuple[str, int] | None:
    return None if raw is None else (hashlib.sha256(raw).hexdigest(), len(raw))


def _changed(relative: str, path: str | None) -> RulecheckError:
    """A file read again (its bytes were no longer kept) that is not what it was: what
    one rule judged and another would read differ, so nothing is judged."""
    message = (
        f"`{relative}` changed while it was being checked: read again, it is not the file "
        "read first (its sha256, size or presence differ)"
    )
    hint = "check a bundle that nothing writes to meanwhile"
    where = Location(str(path if path is not None else relative))
    return RulecheckError([Diagnostic("INPUT_CHANGED", message, where, hint=hint)], ExitCode.USAGE)


@dataclass(frozen=True, slots=True)
class Facts:
    """The bundle folder (None when the inputs were named one by one), the ruleset hash,
    and, per JSON Lines document, each record's physical line and bytes."""

    ruleset_hash: str = ""
    root: Path | None = None
    records: Mapping[str, RecordLines] = field(default_factory=dict)
    # per document of many files, the sha256 of each of its files, in its order
    members: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # `check(PROTOCOL, files, given)`: runs a protocol on files of this bundle (None outside one)
    nested: Callable[[str, Mapping[str, Any], Mapping[str, Any]], Any] | None = field(
        default=None, compare=False, repr=False
    )
    # the bundle's files as this evaluation reads them (made for `root` when not given)
    files: BundleFiles | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.files is None or self.files.root != self.root:
            object.__setattr__(self, "files", BundleFiles(self.root))

    @property
    def _files(self) -> BundleFiles:
        assert self.files is not None  # set in __post_init__
        return self.files

    def file_path(self, relative: str) -> Path | None:
        """A regular file inside the bundle; None when it is absent or would leave it."""
        return self._files.path(relative)

    def file_bytes(self, relative: str) -> bytes | None:
        """The bytes of a file inside the bundle (see `BundleFiles.read`)."""
        return self._files.read(relative)

    def json_document(self, relative: str) -> Any:
        """The strictly parsed JSON file inside the bundle (see `BundleFiles.json`)."""
        return self._files.json(relative)

    def file_sha256(self, relative: str) -> str | None:
        """The sha256 of a file inside the bundle, as first read; None when it is absent
        or outside it."""
        found = self._files.sha256_and_size(relative)
        return None if found is None else found[0]

    def file_size(self, relative: str) -> int | None:
        """The byte count of a file inside the bundle, as first read; None when it is
        absent or outside it."""
        found = self._files.sha256_and_size(relative)
        return None if found is None else found[1]

    def member(self, document: str, index: int) -> str | None:
        """The sha256 of file `index` of document `document` (see `Graph.entry`)."""
        files = self.members.get(document)
        return None if files is None or index >= len(files) else files[index]

    def record(self, document: str, index: int) -> tuple[RecordLines, int] | None:
        """The records of JSON Lines document `document` and `index`, when it holds a
        record `index` (see `Graph.entry`)."""
        lines = self.records.get(document)
        return None if lines is None or index >= len(lines) else (lines, index)
