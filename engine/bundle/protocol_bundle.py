"""Load a bundle as a protocol declares it: each `document` clause names a file in the
bundle, its format and its schema. Nothing here knows any protocol.

Every path stays inside the bundle (links included); a missing document is an error unless
declared `optional`; each document is parsed strictly and checked against its schema, and
every problem of every file is reported together.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from engine.bundle import paths
from engine.bundle.documents import Document, document_of_files, load_document
from engine.bundle.schemac import Validator
from engine.bundle.strictjson import locate
from engine.check.protocols import load_schema, schema_path
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.limits import MAX_DOCUMENT_BYTES, MAX_DOCUMENT_FILES, MAX_FINDINGS
from engine.syntax import ast

PROTOCOL_FILE = "rulecheck.yaml"


@dataclass(frozen=True, slots=True)
class ProtocolBundle:
    """A bundle's documents, as its protocol declares them (absent optional ones left out)."""

    root: Path
    protocol: ast.ProtocolDecl
    documents: dict[str, Document]
    schemas: dict[str, str]  # document name -> sha256 of its schema

    def measured(self) -> dict[str, str]:
        """The sha256 of every measured document present."""
        return {
            d.name.text: self.documents[d.name.text].sha256
            for d in self.protocol.documents
            if d.measured and d.name.text in self.documents
        }


def load_protocol_bundle(root: Path, protocol: ast.ProtocolDecl) -> ProtocolBundle:
    """Read every document of `protocol` from the bundle folder `root`.

    Raises:
        RulecheckError: exit 2 if `root` is not a folder; exit 1 listing every missing,
            escaping, malformed or schema-violating document.
    """
    if not root.is_dir():
        message = f"`{root}` is not a bundle folder"
        raise RulecheckError(
            [Diagnostic("FILE_UNREADABLE", message, Location(str(root)))], ExitCode.USAGE
        )
    documents: dict[str, Document] = {}
    schemas: dict[str, str] = {}
    problems: list[Diagnostic] = []
    texts: dict[str, str] = {}  # the documents' short texts, each held once (`load_document`)
    for clause in protocol.documents:
        if not clause.from_file:
            continue
        document = _read_clause(root, clause, problems, texts)
        if document is None:
            continue
        documents[clause.name.text] = document
        schema = _schema(clause, problems)
        if schema is not None:
            digest, validate = schema
            schemas[clause.name.text] = digest
            for member in document.members or (document,):
                problems += schema_problems(member, validate, schema_code(clause))
    if problems:
        unreadable = any(problem.code in _UNREADABLE for problem in problems)
        raise RulecheckError(problems, ExitCode.USAGE if unreadable else ExitCode.REFUSED)
    return ProtocolBundle(root, protocol, documents, schemas)


# A document that cannot be read at all (a folder, a FIFO, no permission) is an unreadable
# file, exit 2, as any input the user names; every other problem is the bundle's, exit 1.
_UNREADABLE = frozenset({"FILE_UNREADABLE", "INPUT_NOT_REGULAR"})


def _read_clause(
    root: Path, clause: ast.DocumentClause, problems: list[Diagnostic], texts: dict[str, str]
) -> Document | None:
    """The document of one clause (of every file its pattern matches), or None, with every
    problem added to `problems`."""
    name = clause.name.text
    if clause.glob:
        return _read_files(root, clause, problems, texts)
    path = paths.inside(root, clause.path, strict_segments=True)
    shown = str(root / clause.path)
    if path is None:
        message = f"document `{name}` at `{clause.path}` leaves the bundle"
        problems.append(Diagnostic("BUNDLE_PATH_OUTSIDE", message, Location(shown)))
        return None
    if not path.exists():
        if not clause.optional:
            message = f"the bundle has no `{clause.path}` (document `{name}`)"
            problems.append(Diagnostic("BUNDLE_FILE_MISSING", message, Location(shown)))
        return None
    try:
        return load_document(name, root / clause.path, clause.format.text, texts=texts)
    except RulecheckError as error:
        problems += error.diagnostics
        return None


def bundle_has(root: Path, path: str) -> bool:
    """Whether the bundle holds the file `path` (for a pattern, at least one match)."""
    if "*" not in path:
        found = paths.inside(root, path, strict_segments=True)
        return found is not None and found.exists()
    return bool(matching_files(root, path))


def matching_files(root: Path, path: str) -> list[str] | None:
    """The bundle paths a pattern (`truth/*.yaml`: `*` in the file name) matches, sorted;
    hidden files never match. None when the pattern's folder leaves the bundle."""
    folder, _, pattern = path.rpartition("/")
    base = paths.inside(root, folder, strict_segments=True) if folder else root
    if base is None:
        return None
    try:
        names = os.listdir(base)
    except OSError:  # no such folder, or not a folder: nothing matches
        return []
    matched = sorted(n for n in names if fnmatch.fnmatchcase(n, pattern) and n[:1] != ".")
    return [f"{folder}/{n}" if folder else n for n in matched]


def _read_files(
    root: Path, clause: ast.DocumentClause, problems: list[Diagnostic], texts: dict[str, str]
) -> Document | None:
    """A document of many files: every file the pattern's last segment matches in its
    folder (hidden files never), in path order. None matching is an error unless the
    document is optional; an empty list is still a document."""
    name = clause.name.text
    shown = str(root / clause.path)
    names = matching_files(root, clause.path)
    if names is None:
        message = f"document `{name}` at `{clause.path}` leaves the bundle"
        problems.append(Diagnostic("BUNDLE_PATH_OUTSIDE", message, Location(shown)))
        return None
    too_many = _too_many_files(root, clause, names)
    if too_many is not None:
        problems.append(too_many)
        return None
    members = []
    for relative in names:
        if paths.inside(root, relative, strict_segments=True) is None:
            message = f"`{relative}` (document `{name}`) is a link that leads outside the bundle"
            problems.append(
                Diagnostic("BUNDLE_PATH_OUTSIDE", message, Location(str(root / relative)))
            )
            continue
        try:
            member = load_document(name, root / relative, clause.format.text, texts=texts)
        except RulecheckError as error:
            problems += error.diagnostics
            continue
        members.append(dataclasses.replace(member, relative=relative))
    if not names and not clause.optional:
        message = f"no file of the bundle matches `{clause.path}` (document `{name}`)"
        problems.append(Diagnostic("BUNDLE_FILE_MISSING", message, Location(shown)))
        return None
    return document_of_files(name, shown, clause.format.text, members)


def _too_many_files(root: Path, clause: ast.DocumentClause, names: list[str]) -> Diagnostic | None:
    """A problem when the files a pattern matches are more, or hold more bytes together,
    than one document may (measured before any is read)."""
    shown = str(root / clause.path)
    name = clause.name.text
    if len(names) > MAX_DOCUMENT_FILES:
        message = (
            f"`{clause.path}` matches {len(names)} files (document `{name}`): more than "
            f"{MAX_DOCUMENT_FILES}, the limit of files per document"
        )
        return Diagnostic("INPUT_TOO_MANY_FILES", message, Location(shown))
    total = 0
    for relative in names:
        try:
            total += os.stat(root / relative).st_size
        except OSError:  # read (and reported) with the file itself
            continue
        if total > MAX_DOCUMENT_BYTES:
            message = (
                f"the files `{clause.path}` matches hold more than {MAX_DOCUMENT_BYTES} bytes "
                f"together (document `{name}`), the size limit of a document"
            )
            return Diagnostic("INPUT_TOO_LARGE", message, Location(shown))
    return None


def _schema(clause: ast.DocumentClause, problems: list[Diagnostic]) -> tuple[str, Validator] | None:
    try:
        return schema_validator(clause)
    except ValueError:
        message = f"the schema `{clause.schema}` changed since the rules were checked"
        problems.append(
            Diagnostic("SCHEMA_UNREADABLE", message, Location(str(schema_path(clause))))
        )
        return None


def schema_validator(clause: ast.DocumentClause) -> tuple[str, Validator] | None:
    """The sha256 and compiled validator of a document's schema (compiled once per
    process); None when the document declares none.

    Raises:
        ValueError: when the schema can no longer be read or compiled.
    """
    path = schema_path(clause)
    if path is None:
        return None
    try:
        raw, validate = load_schema(path)  # compiled once per process for the same bytes
    except (OSError, ValueError, RecursionError) as error:
        raise ValueError(f"the schema `{path}` cannot be read: {error}"[:300]) from None
    return hashlib.sha256(raw).hexdigest(), validate


def schema_code(clause: ast.DocumentClause) -> str:
    """The code of a violation of the clause's schema: its `else reject CODE`, if given."""
    return clause.schema_code.text if clause.schema_code is not None else "DOCUMENT_SCHEMA"


def schema_problems(
    document: Document, validate: Validator, code: str = "DOCUMENT_SCHEMA"
) -> list[Diagnostic]:
    """Every schema violation as a `code` diagnostic, located: a JSON Lines document is
    checked record by record."""
    if document.format == "jsonl":
        found: list[Diagnostic] = []
        for index, record in enumerate(document.value):
            problems = validate(record)
            if not problems:
                continue
            line, raw = document.record_lines[index]
            if len(found) >= MAX_FINDINGS:
                message = (
                    f"more than {MAX_FINDINGS:,} schema violations: the records from this one "
                    "on are not checked"
                )
                found.append(Diagnostic(code, message, Location(document.file, line)))
                break
            for pointer, _keyword, message in problems:
                position = locate(raw, pointer)
                column = position[1] if position else None
                where = Location(document.file, line, column, pointer=f"/{index}{pointer}")
                found.append(Diagnostic(code, message, where))
        return found
    return [
        Diagnostic(code, message, _where(document, pointer))
        for pointer, _keyword, message in validate(document.value)
    ]


def _where(document: Document, pointer: str) -> Location:
    return document.locate(pointer)


def read_protocol_file(root: Path) -> Document | None:
    """The bundle's `rulecheck.yaml` (`protocol: NAME`, optional `ruleset_hash`), if any,
    as a document (its value checked; its positions locate what it names).

    Raises:
        RulecheckError: exit 1 when the file is malformed.
    """
    path = root / PROTOCOL_FILE
    if not os.path.lexists(path):  # a FIFO or a folder of that name is read, and refused
        return None
    if paths.inside(root, PROTOCOL_FILE) is None:  # a fixed name is contained like the others
        message = f"`{PROTOCOL_FILE}` is a link that leads outside the bundle"
        raise RulecheckError(
            [Diagnostic("BUNDLE_PATH_OUTSIDE", message, Location(str(path)))], ExitCode.REFUSED
        )
    document = load_document("protocol", path, "yaml")
    value = document.value
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("protocol"), str)
        or set(value) - {"protocol", "ruleset_hash"}
        or not isinstance(value.get("ruleset_hash", ""), str)
    ):
        message = "`rulecheck.yaml` holds `protocol: NAME` and optionally `ruleset_hash: HEX`"
        raise RulecheckError(
            [Diagnostic("PROTOCOL_FILE", message, Location(str(path)))], ExitCode.REFUSED
        )
    return document
