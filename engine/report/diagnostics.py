"""Render diagnostics: text with a caret under the offending source, or canonical JSON."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.errors import Diagnostic, RulecheckError
from engine.limits import read_input
from engine.textlines import normalize_newlines


def _source_lines(file: str) -> tuple[str, ...]:
    """The lines of `file` as it is now (cached while its size and mtime stay the same)."""
    try:
        stat = Path(file).stat()
    except OSError:
        return ()
    return _read_lines(file, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _read_lines(file: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    try:
        raw = read_input(Path(file))  # never a FIFO or device, never beyond the size limit
    except RulecheckError:
        return ()
    text = normalize_newlines(raw.decode("utf-8", errors="replace"))
    # Lines end at `\n`, `\r\n` or a lone `\r`, as the parser counts them (`str.splitlines`
    # would also split at form feeds or U+2028 inside a string and shift every later line).
    return tuple(text.split("\n"))


def render_text(diagnostic: Diagnostic) -> str:
    """`file:line:col: error[CODE]: message`, the source line with a caret, and the hint."""
    loc = diagnostic.location
    where = loc.render() if loc else "<input>"
    rule = f" (rule `{diagnostic.rule}`)" if diagnostic.rule else ""
    lines = [f"{where}: {diagnostic.severity}[{diagnostic.code}]: {diagnostic.message}{rule}"]
    if loc and loc.line and loc.column and loc.file.endswith(".rules"):
        source = _source_lines(loc.file)
        if 0 < loc.line <= len(source):
            width = 1
            if loc.end_line == loc.line and loc.end_column and loc.end_column > loc.column:
                width = loc.end_column - loc.column
            text, column, width = _excerpt(source[loc.line - 1], loc.column, width)
            gutter = f"{loc.line:>5} | "
            lines.append(gutter + text)
            lines.append(" " * (len(gutter) - 2) + "| " + " " * (column - 1) + "^" * width)
    if diagnostic.hint:
        lines.append(f"  = {diagnostic.hint}")
    return "\n".join(lines)


# Characters of a source line shown under a finding: a longer line (a generated rule, a
# hostile file of one megabyte-long line) is cut to this many around the finding, so that
# each finding prints a bounded excerpt, however many findings a line has.
EXCERPT_WIDTH = 200
_BEFORE = 60  # of them, shown before the finding's column
_CUT = "…"


def _excerpt(text: str, column: int, width: int) -> tuple[str, int, int]:
    """The part of a source line shown, and the caret's column and width in it: the whole
    line when it is at most `EXCERPT_WIDTH` characters, else that many from `_BEFORE`
    before the column, each cut end marked with `…`."""
    if len(text) <= EXCERPT_WIDTH:
        return text, column, width
    start = max(0, min(column - 1 - _BEFORE, len(text) - EXCERPT_WIDTH))
    end = start + EXCERPT_WIDTH
    shown = (_CUT if start else "") + text[start:end] + (_CUT if end < len(text) else "")
    caret = column - start + (1 if start else 0)
    return shown, caret, max(1, min(width, end - (column - 1)))


def diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    """A JSON-compatible form of a diagnostic (absent fields left out)."""
    form: dict[str, Any] = {
        "code": diagnostic.code,
        "severity": diagnostic.severity,
        "message": diagnostic.message,
    }
    loc = diagnostic.location
    if loc is not None:
        form["location"] = {
            key: value
            for key, value in (
                ("file", loc.file),
                ("line", loc.line),
                ("column", loc.column),
                ("end_line", loc.end_line),
                ("end_column", loc.end_column),
                ("pointer", loc.pointer),
            )
            if value is not None
        }
    for key in ("hint", "rule", "rule_hash"):
        if getattr(diagnostic, key):
            form[key] = getattr(diagnostic, key)
    if diagnostic.ids:
        form["ids"] = list(diagnostic.ids)
    return form


def render_all_text(diagnostics: Iterable[Diagnostic]) -> str:
    """Every diagnostic in text form, separated by blank lines."""
    return "\n\n".join(render_text(d) for d in diagnostics)
