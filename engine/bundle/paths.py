"""Resolving user-given relative paths without ever leaving the folder they belong to."""

from __future__ import annotations

from pathlib import Path, PurePosixPath


def inside(root: Path, relative: object, *, strict_segments: bool = False) -> Path | None:
    """`root/relative` if it is a relative path that stays inside `root` after resolving
    links, else None. Absolute paths, `..`, NUL bytes, over-long names and symbolic-link
    loops give None, never an exception. With `strict_segments`, empty and `.` segments are
    refused too (bundle paths are written exactly; packet paths may be spelt `./src/a.ts`)."""
    if not isinstance(relative, str) or not relative or relative.startswith("/"):
        return None
    if strict_segments and any(part in ("", ".") for part in relative.split("/")):
        return None
    parts = PurePosixPath(relative).parts
    if not parts or ".." in parts:
        return None
    try:
        candidate = (root / Path(*parts)).resolve()
        candidate.relative_to(root.resolve())
    except (OSError, ValueError, RuntimeError):
        return None
    return candidate
