"""`rulecheck export BUNDLE TABLE --out DIR`: one file per row of a table.

A protocol's rules can say what a bundle's readers receive, as a table with a `file`
column (a plain file name) and a `content` column (any JSON value): the raters' blinded
view of a campaign is one. Each row is written as canonical JSON plus a newline, so a
file's sha256 is `json_sha256(content)` as the rules compute it, and `index.json` lists
the files in sorted order (sorted by name, which tells nothing of the rows' order). Nothing
here knows any protocol.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.gates import TableResult
from engine.freeze.canonical import canonical_json
from engine.graph.build import Graph
from engine.pointer import pointer_of, pointer_tokens

FILE_COLUMN = "file"
CONTENT_COLUMN = "content"
INDEX = "index.json"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")


@dataclass(frozen=True, slots=True)
class ExportedFile:
    """One file to write: its name and exact bytes."""

    name: str
    data: bytes


def export_files(table: TableResult, nodes: Graph | None) -> list[ExportedFile]:
    """The files a table's rows describe, sorted by name.

    Raises:
        RulecheckError: exit 1 when the table lacks a `file` or `content` column, a name is
            not a plain file name or repeats (`index.json` included), or a cell has no value.
    """
    from engine.evaluate.protocol import cell_data

    where = Location(table.name)
    missing = [c for c in (FILE_COLUMN, CONTENT_COLUMN) if c not in table.columns]
    if missing:
        message = f"table `{table.name}` has no column {', '.join(f'`{c}`' for c in missing)}"
        hint = "an exported table has a `file` column (a file name) and a `content` column"
        raise RulecheckError(
            [Diagnostic("EXPORT_TABLE", message, where, hint=hint, rule=table.name)],
            ExitCode.USAGE,
        )
    name_at, content_at = table.columns.index(FILE_COLUMN), table.columns.index(CONTENT_COLUMN)
    files: dict[str, bytes] = {INDEX: b""}
    problems = []
    for ids, values in table.rows:
        try:
            name = cell_data(values[name_at], nodes)
            content = cell_data(values[content_at], nodes)
        except ValueError as error:
            problems.append(_problem(table, ids, f"a row has no value: {error}"))
            continue
        if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name) or name in files:
            shown = name if isinstance(name, str) else repr(name)
            problems.append(_problem(table, ids, f"`{shown}` is not a new plain file name"))
            continue
        files[name] = canonical_json(content) + b"\n"
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    del files[INDEX]
    names = sorted(files)
    index = canonical_json({"table": table.name, "files": names}) + b"\n"
    return [ExportedFile(name, files[name]) for name in names] + [ExportedFile(INDEX, index)]


def _problem(table: TableResult, ids: tuple[str, ...], message: str) -> Diagnostic:
    return Diagnostic(
        "EXPORT_ROW",
        f"table `{table.name}`: {message}",
        Location(table.name),
        rule=table.name,
        rule_hash=table.hash,
        ids=ids,
    )


def write_files(out: Path, files: list[ExportedFile]) -> None:
    """Write the files into `out` (created with its parents); an `out` that exists and is
    not an empty folder is refused, so nothing a reader was given is overwritten.

    Raises:
        RulecheckError: exit 2 when `out` cannot be used or written.
    """
    try:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            message = f"`{out}` exists and is not an empty folder"
            raise RulecheckError(
                [Diagnostic("OUTPUT_EXISTS", message, Location(str(out)))], ExitCode.USAGE
            )
        out.mkdir(parents=True, exist_ok=True)
        for exported in files:
            (out / exported.name).write_bytes(exported.data)
    except OSError as error:
        reason = (error.strerror or type(error).__name__).lower()
        message = f"cannot write `{out}`: {reason}"
        raise RulecheckError(
            [Diagnostic("FILE_UNREADABLE", message, Location(str(out)))], ExitCode.USAGE
        ) from None


def seal_bytes(table: TableResult, nodes: Graph | None) -> bytes:
    """The bytes of a seal: the canonical JSON list of the table's rows, each an object of
    its columns, and a newline (the derived document of the same table holds these rows).

    Raises:
        RulecheckError: exit 1 when a cell has no value.
    """
    from engine.evaluate.protocol import first_per_row, table_records

    rows, missing = table_records(table, nodes)
    if missing:
        problems = [
            _problem(table, cell.ids, f"a row has no value: {cell.why}")
            for cell in first_per_row(missing)
        ]
        raise RulecheckError(problems, ExitCode.REFUSED)
    return canonical_json(rows) + b"\n"


def replaced_at(document: Any, pointer: str, value: Any, file: str) -> Any:
    """`document` with the member at `pointer` (`/a/b`) set to `value`; its parents must
    be objects that exist.

    Raises:
        RulecheckError: exit 1 when a parent is missing or not an object.
    """
    tokens = pointer_tokens(pointer)
    if not isinstance(document, dict):
        where = Location(file, pointer="")
        raise RulecheckError(
            [Diagnostic("FREEZE_TARGET", "the document is not an object", where)],
            ExitCode.REFUSED,
        )
    copied = dict(document)
    parent = copied
    for depth, token in enumerate(tokens[:-1]):
        child = parent.get(token)
        if not isinstance(child, dict):
            where = Location(file, pointer=pointer_of(tokens[: depth + 1]))
            message = f"`{where.pointer}` is not an object to write `{pointer}` into"
            raise RulecheckError([Diagnostic("FREEZE_TARGET", message, where)], ExitCode.REFUSED)
        parent[token] = dict(child)
        parent = parent[token]
    parent[tokens[-1]] = value
    return copied


def document_bytes(value: Any, file_format: str) -> bytes:
    """A document written back: YAML block style in its own key order, or JSON indented by
    two spaces, UTF-8 with a final newline (comments and layout are not kept)."""
    if file_format == "yaml":
        import yaml

        text = yaml.safe_dump(value, sort_keys=False, allow_unicode=True)
        return text.encode("utf-8")
    import json

    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
