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


def regular_file(root: Path, relative: object) -> Path | None:
    """`inside(root, relative, strict_segments=True)` when it names a regular file (links
    followed), else None: also for a name the file system refuses (too long), never an
    exception."""
    path = inside(root, relative, strict_segments=True)
    try:
        return path if path is not None and path.is_file() else None
    except OSError:
        return None
