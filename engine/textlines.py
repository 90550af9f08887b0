"""Physical lines, as the seeds define them: a line ends at `\\n`, and a final `\\n` does not
start another line. (Python's `str.splitlines` also splits at form feeds and other
separators, which would invent lines that no editor shows.)"""

from __future__ import annotations


def physical_lines(text: str) -> list[str]:
    """The lines of `text`, each with its line ending."""
    if not text:
        return []
    lines = text.split("\n")
    with_endings = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        with_endings.append(lines[-1])
    return with_endings


def line_count(text: str) -> int:
    """How many physical lines `text` holds."""
    return text.count("\n") + (0 if text == "" or text.endswith("\n") else 1)


def excerpt(text: str, start_line: int, end_line: int) -> str:
    """The exact text of the inclusive 1-based lines `start_line..end_line` (short if absent)."""
    return "".join(physical_lines(text)[start_line - 1 : end_line])


def normalize_newlines(text: str) -> str:
    """`text` with every `\\r\\n` and every lone `\\r` made a `\\n`.

    Rule files are read this way: a line ends at `\\n`, `\\r\\n` or a lone `\\r`, as editors
    show them, so the parser, the formatter and every line number agree on the lines.
    """
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")
