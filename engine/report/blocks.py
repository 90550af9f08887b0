"""A report as blocks (a heading, nested items, a table), written as aligned text or as
valid markdown from the same blocks, so the two forms never say different things."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

# Characters markdown would read as markup outside a code span.
_MARKUP = re.compile(r"([\\*_\[\]<>|#~])")


@dataclass(frozen=True, slots=True)
class Block:
    """One part of a report: an optional title, then items (depth, text), then an
    optional table (its header row first). `text` lines are shown as they are (the
    title line of a report); in markdown they become a paragraph each."""

    title: str | None = None
    items: tuple[tuple[int, str], ...] = ()
    table: tuple[tuple[str, ...], ...] = ()
    text: tuple[str, ...] = field(default=())


def escape(text: str) -> str:
    """`text` with markdown markup escaped, code spans (`...`) left as they are."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code spans at all
        return _MARKUP.sub(r"\\\1", text).replace("`", "\\`")
    return "`".join(part if i % 2 else _MARKUP.sub(r"\\\1", part) for i, part in enumerate(parts))


def _text(block: Block) -> list[str]:
    lines = list(block.text)
    if block.title is not None:
        lines.append(block.title)
    lines += [f"{'  ' * (depth + 1)}{item}" for depth, item in block.items]
    if block.table:
        widths = [max(len(row[i]) for row in block.table) for i in range(len(block.table[0]))]
        for row in block.table:
            cells = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row))
            lines.append(f"  {cells}".rstrip())
    return lines


def _cell(text: str) -> str:
    return escape(text).replace("\n", " ")


def _markdown(block: Block, level: int) -> list[str]:
    lines: list[str] = []
    for line in block.text:
        lines += [escape(line), ""]
    if block.title is not None:
        lines += [f"{'#' * level} {escape(block.title)}", ""]
    if block.items:
        lines += [f"{'  ' * depth}- {escape(item)}" for depth, item in block.items]
        lines.append("")
    if block.table:
        header, *rows = block.table
        lines.append("| " + " | ".join(_cell(c) for c in header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
        lines.append("")
    return lines


def render(blocks: Sequence[Block], markdown: bool, level: int = 2) -> str:
    """The blocks as text (a blank line between blocks) or as markdown (`level` is the
    heading level of block titles)."""
    if markdown:
        lines = [line for block in blocks for line in _markdown(block, level)]
        return "\n".join(lines).rstrip("\n") + "\n"
    parts = ["\n".join(_text(block)) for block in blocks]
    return "\n\n".join(part for part in parts if part) + "\n"
