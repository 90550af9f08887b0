"""Report of `rulecheck controls`: one row per accepted run and control, then the
mutation-to-owning-control attribution table, then `N passed, N failed` last."""

from __future__ import annotations

from typing import Any

from engine.cases.controls import ControlTable, Row, row_counts


def _status(row: Row) -> str:
    return "PASS" if row.passed else "FAIL"


def _codes(row: Row) -> str:
    return ", ".join(row.codes) or "-"


def controls_text(table: ControlTable, rows: list[Row]) -> str:
    """The report as text: controls first, attribution second, the counts last."""
    lines = [f"CONTROLS {table.path}"]
    for row in rows:
        if row.kind == "mutation":
            continue
        lines.append(f"{_status(row)} {row.id:4} {row.title}")
        lines.append(f"       expected  {row.expected}")
        lines.append(f"       observed  {row.observed}")
        lines.append(f"       codes     {_codes(row)}")
        if row.reason:
            lines.append(f"       why       {row.reason}")
    lines.append("ATTRIBUTION mutation -> owning control, the code it must produce")
    for row in rows:
        if row.kind != "mutation":
            continue
        lines.append(f"{_status(row)} {row.id:4} {row.title}: {row.expected}")
        lines.append(f"       observed  {row.observed}; codes {_codes(row)}")
        if row.reason:
            lines.append(f"       why       {row.reason}")
    passed, failed = row_counts(rows)
    lines.append(f"{passed} passed, {failed} failed")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def controls_markdown(table: ControlTable, rows: list[Row]) -> str:
    """The report as markdown: the table's notes, then the controls and the attribution
    (docs/controls.md is this output)."""
    lines = [table.notes.rstrip("\n"), ""] if table.notes else []
    lines += [
        "## Controls",
        "",
        "| id | specimen | required | observed | codes | result |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if row.kind in ("accepted", "control", "case"):
            cells = (row.id, row.title, row.expected, row.observed, _codes(row), _status(row))
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += [
        "",
        "## Attribution",
        "",
        "| mutation | owning control | required code | observed | codes | result |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        if row.kind == "mutation":
            cells = (row.title, row.id, row.expected, row.observed, _codes(row), _status(row))
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    passed, failed = row_counts(rows)
    lines += ["", f"{passed} passed, {failed} failed"]
    return "\n".join(lines) + "\n"


def controls_json(table: ControlTable, rows: list[Row]) -> dict[str, Any]:
    """The report as data, every row with its kind."""
    passed, failed = row_counts(rows)
    return {
        "table": str(table.path),
        "rows": [
            {
                "kind": row.kind,
                "id": row.id,
                "title": row.title,
                "expected": row.expected,
                "observed": row.observed,
                "codes": list(row.codes),
                "passed": row.passed,
                "reason": row.reason,
            }
            for row in rows
        ],
        "passed": passed,
        "failed": failed,
    }
