"""A command over one protocol whose options are named after the protocol's documents
(`rulecheck answer ANSWER --packet P --role R`), and one input to check through it.

Kept apart from the checker so that the command line can declare aliases without
loading the engine."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import Location


@dataclass(frozen=True, slots=True)
class FilesAlias:
    """A command over one protocol, its options named after the protocol's documents."""

    protocol: str
    subject: str  # the document named by the command's argument
    files: tuple[str, ...]  # documents named by `--NAME PATH`
    values: Mapping[str, tuple[str, str]]  # `--OPTION TEXT` -> (given document, its member)
    folder: tuple[str, str] | None  # `--OPTION DIR` -> the given document it names
    shown: tuple[str, ...]  # the options a report names, after the argument
    schema_key: str  # the report's key for the sha256 of the subject's schema
    passed_note: str
    failed_note: str

    def options(self) -> tuple[str, ...]:
        """Every key of an index entry: the argument's document and each option."""
        folder = (self.folder[0],) if self.folder else ()
        return (self.subject, *self.files, *self.values, *folder)


@dataclass(frozen=True, slots=True)
class FilesJob:
    """One input to check: the file of each document, each value option, and the folder."""

    files: Mapping[str, Path]
    values: Mapping[str, str] = field(default_factory=dict)
    folder: Path | None = None
    entry: Location | None = None  # the index line it was read from, if any

    def shown(self, alias: FilesAlias) -> dict[str, str]:
        """What a report names: the argument's file, then the shown options given."""
        named = {alias.subject: str(self.files[alias.subject])}
        for option in alias.shown:
            if option in self.files:
                named[option] = str(self.files[option])
            elif option in self.values:
                named[option] = self.values[option]
        return named

    def __reduce__(self) -> tuple[Any, ...]:
        # `--jobs N` sends every job to a worker. Pickled field by field, each `Path` as its
        # parts, a job cost 35 us to send and receive; as plain strings, 11 us.
        files = tuple((document, str(path)) for document, path in self.files.items())
        folder = None if self.folder is None else str(self.folder)
        return _received_job, (files, dict(self.values), folder, self.entry)


def _received_job(
    files: tuple[tuple[str, str], ...],
    values: dict[str, str],
    folder: str | None,
    entry: Location | None,
) -> FilesJob:
    """A job as `FilesJob.__reduce__` sent it."""
    return FilesJob(
        {document: Path(path) for document, path in files},
        values,
        None if folder is None else Path(folder),
        entry,
    )
