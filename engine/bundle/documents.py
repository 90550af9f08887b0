"""Named input documents for `rulecheck evaluate`: strict JSON, JSON Lines or YAML files.

The rules say which documents a graph reads (`kind claim of answer records answer "/claims"`);
the user names a file for each (`--input answer=run1.json`). Nothing here knows any
protocol: a document is parsed strictly, kept as data, and can say where a JSON pointer
into it was written, so a finding about `/claims/3` is reported at its line and column.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from engine.bundle.strictjson import loads_strict, locate
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.freeze.canonical import canonical_json
from engine.gcpolicy import collector_paused
from engine.limits import MAX_RECORDS, MAX_VALUES, read_again, read_input, too_many_values
from engine.records import SHARED_TEXT_CHARS, record_maker

FORMATS = {".json": "json", ".jsonl": "jsonl", ".yaml": "yaml", ".yml": "yaml"}
# The format of a document derived from a table: its records were computed, not written,
# so a finding about one is located by its pointer (and ids), never by a line.
DERIVED_FORMAT = "table"


# A document's bytes up to this size are held with it; a larger document's are read again
# (and checked against their sha256) only when something in it is located. A campaign's
# JSON Lines and YAML records are tens of MiB, held for the whole evaluation otherwise.
HELD_BYTES = 1 << 20


class SourceBytes:
    """The bytes a document was parsed from: their sha256, and the bytes themselves, held
    (a small or computed document) or read again from the file when first asked for."""

    __slots__ = ("_gone", "_held", "_sha256", "file", "size")

    def __init__(self, raw: bytes, file: str, *, held: bool = False) -> None:
        self.file = file
        self.size = len(raw)
        held = held or len(raw) <= HELD_BYTES
        self._held: bytes | None = raw if held else None
        self._sha256 = "" if held else hashlib.sha256(raw).hexdigest()
        self._gone = False  # read again once and found changed or unreadable

    @property
    def sha256(self) -> str:
        """The sha256 of the bytes parsed."""
        if not self._sha256:
            assert self._held is not None  # a digest is taken whenever the bytes are let go
            self._sha256 = hashlib.sha256(self._held).hexdigest()
        return self._sha256

    @property
    def held(self) -> bool:
        """Whether the bytes are in memory now."""
        return self._held is not None

    def read(self) -> bytes | None:
        """The bytes parsed; None when they were let go and the file no longer holds them
        (it changed since it was read, or cannot be read). The file is read again once
        at most: every finding located in a changed file would read it again otherwise."""
        if self._held is None and not self._gone:
            self._held = read_again(Path(self.file), self._sha256)
            self._gone = self._held is None
        return self._held

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceBytes):
            return NotImplemented
        return (self.file, self.size, self.sha256) == (other.file, other.size, other.sha256)

    def __hash__(self) -> int:
        return hash((self.file, self.size, self.sha256))

    def __repr__(self) -> str:
        return f"SourceBytes({self.file!r}, {self.size} bytes)"


class RecordLines(Sequence[tuple[int, bytes]]):
    """Each JSON Lines record's physical line and bytes, as `(line, bytes)`, cut from the
    document's bytes when asked for: a record's bytes are not held twice (as part of the
    file and on their own), only three numbers per record. Where the document's bytes are
    not held, each record's sha256 is taken while reading (`sha256`), so hashing records
    needs no second read."""

    __slots__ = ("_digests", "_source", "_spans")

    def __init__(
        self, source: SourceBytes, spans: Iterable[tuple[int, int, int]] = (), digests: bytes = b""
    ) -> None:
        self._source = source
        self._spans = array("q", [number for span in spans for number in span])
        self._digests = digests  # 32 bytes per record, or none when the bytes are held

    def __len__(self) -> int:
        return len(self._spans) // 3

    @overload
    def __getitem__(self, index: int) -> tuple[int, bytes]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[int, bytes]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        """A record's line and bytes (empty bytes when the file changed since it was
        read, and the document's bytes were not held)."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        line, start, end = self._span(index)
        raw = self._source.read()
        return line, raw[start:end] if raw is not None else b""

    def line(self, index: int) -> int:
        """The physical line of record `index`."""
        return self._span(index)[0]

    def sha256(self, index: int) -> str:
        """The sha256 of record `index`'s bytes, without its line end."""
        if self._digests:
            self._span(index)  # the index is checked
            return self._digests[32 * index : 32 * index + 32].hex()
        return hashlib.sha256(self[index][1].rstrip(b"\r")).hexdigest()

    def _span(self, index: int) -> tuple[int, int, int]:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("record index out of range")
        line, start, end = self._spans[3 * index : 3 * index + 3]
        return line, start, end

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"RecordLines({len(self)} records)"


_LOCATED_ONE_BY_ONE = 8  # findings located in a YAML document before its whole map is made


class YamlPositions(Mapping[str, tuple[int, int]]):
    """`yaml_positions` of a YAML document's bytes, computed when a position is first
    asked for (to locate a finding): most documents are never asked, and the positions of
    every value of a large document take more memory than its data."""

    __slots__ = ("_asked", "_found", "_passes", "_source")

    def __init__(self, source: SourceBytes) -> None:
        self._source = source
        self._found: dict[str, tuple[int, int]] | None = None
        self._asked: dict[str, tuple[int, int] | None] = {}  # read one by one: or absent
        self._passes = 0

    def _positions(self, wanted: Collection[str] | None = None) -> dict[str, tuple[int, int]]:
        raw = self._source.read()  # it parsed before, unless it changed since
        from engine.bundle.yamlevents import yaml_positions_of  # see `load_document`

        return {} if raw is None else yaml_positions_of(raw, self._source.file, wanted)

    def _every(self) -> dict[str, tuple[int, int]]:
        if self._found is None:
            self._found = self._positions()
        return self._found

    def __getitem__(self, pointer: str) -> tuple[int, int]:
        # The first few findings are located one by one, each reading the document up
        # to it: most documents have none or one, and the map of a large document's every
        # position would be the largest thing a run holds. Past them, the whole map.
        if self._found is None and (pointer in self._asked or self._passes < _LOCATED_ONE_BY_ONE):
            if pointer not in self._asked:  # the value, and the values that hold it
                self._read_for((pointer,))
            found = self._asked[pointer]
            if found is None:
                raise KeyError(pointer)
            return found
        return self._every()[pointer]

    def prepare(self, pointers: Collection[str]) -> None:
        """Locate the values at `pointers`, and those that hold them, in one reading of
        the document, before they are asked for one by one: the findings of a report in
        one large document would otherwise make the map of its every position."""
        wanted = [p for p in dict.fromkeys(pointers) if p not in self._asked]
        if self._found is None and wanted:
            self._read_for(wanted)

    def _read_for(self, wanted: Collection[str]) -> None:
        self._passes += 1
        self._asked.update(self._positions(wanted))
        for pointer in wanted:
            self._asked.setdefault(pointer, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._every())

    def __len__(self) -> int:
        return len(self._every())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return dict(self) == dict(other)

    def __hash__(self) -> int:
        return hash(self._source)

    def __repr__(self) -> str:
        return f"YamlPositions({self._source.file!r})"


@dataclass(frozen=True, slots=True)
class Document:
    """One parsed input file.

    `value` is what the rules read: the parsed JSON or YAML value, or for JSON Lines the
    list of records (blank lines skipped). `source` is the bytes it was parsed from; for JSON
    Lines, `record_lines` holds each record's line number and bytes, for YAML,
    `yaml_positions` where each value was written (both serve `position`), and
    `yaml_unquoted` the unquoted scalars YAML reads as a boolean, number or date.
    """

    name: str
    file: str
    format: str
    value: Any
    source: SourceBytes
    record_lines: Sequence[tuple[int, bytes]] = ()
    yaml_positions: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    yaml_unquoted: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # A document of many files (`notes/*.yaml`): one per file, in path order; `value` is
    # the list of their values and `source` the canonical list of their paths and sha256.
    members: tuple[Document, ...] = ()
    relative: str = ""  # the path inside the bundle, for a member

    @property
    def sha256(self) -> str:
        """The sha256 of the bytes the document was parsed from."""
        return self.source.sha256

    def locate(self, pointer: str) -> Location:
        """Where the value at `pointer` was written: its file, line and column, and the
        pointer into that file (for a document of many files, into the member's file)."""
        if self.members:
            head, slash, rest = pointer.lstrip("/").partition("/")
            if head.isdigit() and int(head) < len(self.members):
                return self.members[int(head)].locate(slash + rest)
            return Location(self.file, pointer=pointer)
        line, column = self.position(pointer)
        return Location(self.file, line, column, pointer=pointer)

    def prepare_locations(self, pointers: Iterable[str]) -> None:
        """Get ready to `locate` many values at once (see `YamlPositions.prepare`)."""
        if not self.members:
            if isinstance(self.yaml_positions, YamlPositions):
                self.yaml_positions.prepare(list(pointers))
            return
        by_member: dict[int, list[str]] = {}
        for pointer in pointers:  # as `locate` finds a member's pointer
            head, slash, rest = pointer.lstrip("/").partition("/")
            if head.isdigit() and int(head) < len(self.members):
                by_member.setdefault(int(head), []).append(slash + rest)
        for index, wanted in by_member.items():
            self.members[index].prepare_locations(wanted)

    def member_unquoted(self) -> Mapping[str, tuple[str, str]]:
        """`yaml_unquoted` of the document as the rules read it (members under `/N`)."""
        if not self.members:
            return self.yaml_unquoted
        return {
            f"/{index}{pointer}": found
            for index, member in enumerate(self.members)
            for pointer, found in member.yaml_unquoted.items()
        }

    def position(self, pointer: str) -> tuple[int | None, int | None]:
        """The line and column where the value at `pointer` was written, when known."""
        if self.format == DERIVED_FORMAT:
            return None, None
        if self.format == "yaml":
            while pointer not in self.yaml_positions and pointer:
                pointer = pointer.rsplit("/", 1)[0]  # a missing key: point at its parent
            return self.yaml_positions.get(pointer, (None, None))
        if self.format == "jsonl":
            head, slash, rest = pointer.lstrip("/").partition("/")
            if not head.isdigit() or int(head) >= len(self.record_lines):
                return None, None
            line, record = self.record_lines[int(head)]
            found = locate(record, slash + rest)
            return line, found[1] if found is not None else None
        raw = self.source.read()
        found = locate(raw, pointer) if raw is not None else None
        return found if found is not None else (None, None)


def parse_input_option(text: str) -> tuple[str, Path]:
    """`NAME=FILE` from the command line.

    Raises:
        RulecheckError: exit 2 when `text` has no `=` or an empty name or file.
    """
    name, equals, file = text.partition("=")
    if not equals or not name or not file:
        raise RulecheckError(
            [
                Diagnostic(
                    "USAGE_INPUT",
                    f"`{text}` is not NAME=FILE",
                    hint="name each input document, as in `--input answer=run1.json`",
                )
            ],
            ExitCode.USAGE,
        )
    return name, Path(file)


def load_documents(named: Iterable[tuple[str, Path]]) -> dict[str, Document]:
    """Parse every named file; malformed ones are all reported together.

    Raises:
        RulecheckError: exit 2 for a file that cannot be read, a name given twice or a file
            whose suffix is none of .json, .jsonl, .yaml, .yml; exit 1 for malformed content.
    """
    with collector_paused():  # see engine/gcpolicy.py: records are bulk work
        return _load_documents(named)


def _load_documents(named: Iterable[tuple[str, Path]]) -> dict[str, Document]:
    documents: dict[str, Document] = {}
    problems: list[Diagnostic] = []
    for name, path in named:
        if name in documents:
            raise _usage("USAGE_INPUT", f"input `{name}` is given twice", str(path))
        kind = FORMATS.get(path.suffix.lower())
        if kind is None:
            raise _usage(
                "USAGE_INPUT",
                f"`{path}` is not a .json, .jsonl, .yaml or .yml file",
                str(path),
            )
        try:
            documents[name] = load_document(name, path, kind)
        except RulecheckError as error:
            if error.exit_code == ExitCode.USAGE:
                raise
            problems += error.diagnostics
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    return documents


def _usage(code: str, message: str, file: str) -> RulecheckError:
    return RulecheckError([Diagnostic(code, message, Location(file))], ExitCode.USAGE)


def load_document(
    name: str,
    path: Path | str,
    kind: str,
    raw: bytes | None = None,
    texts: dict[str, str] | None = None,
) -> Document:
    """Parse one file as document `name` in format `kind` (`json`, `jsonl` or `yaml`); its
    bytes `raw` when the caller read them already (within the same input limits). The
    short texts of a JSON Lines or YAML document are shared with those of the other
    documents loaded with the same `texts` (a bundle's: a rating's ID is also its
    manifest entry's), else with its own only.

    Raises:
        RulecheckError: exit 2 when the file cannot be read; exit 1 for malformed content.
    """
    file = str(path)
    if raw is None:
        raw = read_input(path)
    if kind == "yaml":
        # PyYAML and cerberus are imported by the first YAML document: checking JSON
        # answers (`rulecheck answers`) needs neither, and they are a tenth of its start-up.
        from engine.bundle.yamlevents import load_yaml

        value, unquoted = load_yaml(raw, file, "INPUT", texts)
        source = SourceBytes(raw, file)
        return Document(
            name,
            file,
            kind,
            value,
            source,
            yaml_positions=YamlPositions(source),
            yaml_unquoted=unquoted,
        )
    if kind == "json":
        return Document(name, file, kind, loads_strict(raw, file), SourceBytes(raw, file))
    too_many = too_many_values(raw, file) if len(raw) > MAX_VALUES else None
    if too_many is not None:
        raise too_many
    if raw.count(b"\n") >= MAX_RECORDS:  # C-fast; blank lines count, which only errs safe
        diagnostic = Diagnostic(
            "INPUT_TOO_MANY_RECORDS",
            f"more than {MAX_RECORDS} lines, the limit of records per document",
            Location(file, MAX_RECORDS + 1, 1),
        )
        raise RulecheckError([diagnostic], ExitCode.REFUSED)
    records: list[Any] = []
    spans: list[tuple[int, int, int]] = []
    problems: list[Diagnostic] = []
    shared: dict[str, str] = {} if texts is None else texts
    new_record = record_maker(("jsonl", name))  # one key table for the document's records
    source = SourceBytes(raw, file)
    digests = bytearray() if not source.held else None  # else hashed when asked for
    for number, begin, end in _line_spans(raw):
        line = raw[begin:end]
        if not line or line.isspace():  # blank: strip() would copy every line
            continue
        try:
            records.append(_sharing(loads_strict(line, file), shared, new_record))
            spans.append((number, begin, end))
            if digests is not None:
                digests += hashlib.sha256(line.rstrip(b"\r")).digest()
        except RulecheckError as error:
            problems += [
                Diagnostic(
                    d.code,
                    d.message,
                    Location(file, number, d.location.column if d.location else None),
                )
                for d in error.diagnostics
            ]
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    lines = RecordLines(source, spans, bytes(digests or b""))
    return Document(name, file, kind, records, source, record_lines=lines)


def _line_spans(raw: bytes) -> Iterator[tuple[int, int, int]]:
    """Each line's number, start and end offset in `raw` (a line is cut only when read:
    a list of every line's bytes would hold the file a second time)."""
    number, begin = 1, 0
    while True:
        end = raw.find(b"\n", begin)
        if end < 0:
            yield number, begin, len(raw)
            return
        yield number, begin, end
        number, begin = number + 1, end + 1


def _sharing(record: Any, shared: dict[str, str], new_record: Callable[[], dict[str, Any]]) -> Any:
    """`record` with its member names and short text values shared with the document's
    earlier records, and its key table too (`engine.records`). The JSON decoder makes a
    new string for each, so records of the same shape (every JSON Lines file) would hold
    each name and each repeated ID or hash once per record: most of such a document's
    memory."""
    if record.__class__ is not dict:
        return record
    values = new_record()
    for key, value in record.items():
        values[shared.setdefault(key, key)] = (
            shared.setdefault(value, value)
            if value.__class__ is str and len(value) <= SHARED_TEXT_CHARS
            else value
        )
    return values


def document_of_files(name: str, pattern: str, kind: str, members: list[Document]) -> Document:
    """One document of many files (`notes/*.yaml`): the members in the order given."""
    listing = [{"path": m.relative, "sha256": m.sha256} for m in members]
    source = SourceBytes(canonical_json(listing), pattern, held=True)
    value = [m.value for m in members]
    return Document(name, pattern, kind, value, source, members=tuple(members))
