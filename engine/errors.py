"""One diagnostic type for every stage: rule files, data files and the engine itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Literal

from engine.pickling import by_fields

Severity = Literal["error", "warning"]


class ExitCode(IntEnum):
    """Process exit codes shared by every command."""

    OK = 0
    REFUSED = 1  # the input was judged and refused, or a check failed
    USAGE = 2  # usage error or a file that cannot be read


@by_fields
@dataclass(frozen=True, slots=True, order=True)
class Location:
    """Where a problem is: a file plus a line:column span and/or a JSON pointer."""

    file: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    pointer: str | None = None

    def render(self) -> str:
        """`file:line:col` (or `file` / `file#pointer`) for messages."""
        text = self.file
        if self.line is not None:
            text += f":{self.line}"
            if self.column is not None:
                text += f":{self.column}"
        if self.pointer is not None:
            text += f" ({self.pointer or '/'})"
        return text


@by_fields
@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem found in user input, with a stable code and a location.

    `message` is lowercase, with user input in backticks. `hint` carries an
    "expected ..." or "did you mean ..." line. `rule`/`rule_hash` name the rule
    that produced the finding, when a rule did.
    """

    code: str
    message: str
    location: Location | None = None
    severity: Severity = "error"
    hint: str | None = None
    rule: str | None = None
    rule_hash: str | None = None
    ids: tuple[str, ...] = field(default=())

    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Stable order: by file, position, code, then message."""
        loc = self.location
        return (
            loc.file if loc else "",
            (loc.line or 0) if loc else 0,
            (loc.column or 0) if loc else 0,
            self.code,
            self.message,
        )


def sorted_diagnostics(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> list[Diagnostic]:
    """Diagnostics in their stable reporting order."""
    return sorted(diagnostics, key=Diagnostic.sort_key)


class RulecheckError(Exception):
    """Raised when a stage cannot continue; carries located diagnostics and an exit code."""

    def __init__(
        self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...], exit_code: ExitCode
    ) -> None:
        self.diagnostics = tuple(sorted_diagnostics(diagnostics))
        self.exit_code = exit_code
        first = self.diagnostics[0].message if self.diagnostics else "error"
        super().__init__(first)

    def __reduce__(self) -> tuple[type[RulecheckError], tuple[tuple[Diagnostic, ...], ExitCode]]:
        return (RulecheckError, (self.diagnostics, self.exit_code))


def unwritable(path: str, reason: str) -> RulecheckError:
    """An output file that cannot be written (exit 2)."""
    return RulecheckError(
        [Diagnostic("FILE_UNWRITABLE", f"cannot write `{path}`: {reason}", Location(path))],
        ExitCode.USAGE,
    )


def unreadable(path: str, reason: str) -> RulecheckError:
    """An input file that cannot be read at all (exit 2)."""
    return RulecheckError(
        [Diagnostic("FILE_UNREADABLE", f"cannot read `{path}`: {reason}", Location(path))],
        ExitCode.USAGE,
    )
