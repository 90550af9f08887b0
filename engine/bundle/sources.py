"""A source snapshot folder: the real bytes behind each evidence item of a packet."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from engine.bundle.paths import inside
from engine.errors import RulecheckError
from engine.limits import read_input
from engine.textlines import excerpt


def _file_inside(root: Path, relative: str) -> Path | None:
    candidate = inside(root, relative)
    try:
        return candidate if candidate is not None and candidate.is_file() else None
    except OSError:  # e.g. a name too long for the file system
        return None


def _read(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return read_input(path)  # a FIFO, device or file over the size limit is not found
    except RulecheckError:
        return None


def source_document(packet: Any, root: Path) -> dict[str, Any]:
    """The `source` document: per evidence item, whether its file exists, its sha256 and the
    exact text of the item's line range in the snapshot."""
    excerpts = []
    items = packet.get("items") if isinstance(packet, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        record: dict[str, Any] = {"evidence_id": item.get("id"), "found": False}
        path = item.get("path")
        target = _file_inside(root, path) if isinstance(path, str) else None
        raw = _read(target)
        if raw is not None:
            start, end = item.get("start_line"), item.get("end_line")
            record["found"] = True
            record["file_sha256"] = hashlib.sha256(raw).hexdigest()
            if isinstance(start, int) and isinstance(end, int):
                text = raw.decode("utf-8", errors="replace")
                record["text"] = excerpt(text, start, end)
        excerpts.append(record)
    return {"excerpts": excerpts}
