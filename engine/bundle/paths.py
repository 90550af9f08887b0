"""Resolving user-given relative paths without ever leaving the folder they belong to."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath


def real_root(root: Path) -> str | None:
    """The folder `root` with every link resolved (what `inside` compares with), or None
    when it cannot be resolved; a caller reading many paths of one folder resolves it once."""
    try:
        return str(root.resolve())
    except (OSError, ValueError, RuntimeError):
        return None


def inside(
    root: Path, relative: object, *, strict_segments: bool = False, real: str | None = None
) -> Path | None:
    """`root/relative` if it is a relative path that stays inside `root` after resolving
    links, else None. Absolute paths, `..`, NUL bytes, over-long names and symbolic-link
    loops give None, never an exception. With `strict_segments`, empty and `.` segments are
    refused too (bundle paths are written exactly; packet paths may be spelt `./src/a.ts`).
    `real` is `real_root(root)`, when the caller has it."""
    found = _inside(root, relative, strict_segments, real)
    return found[0] if found is not None else None


def _inside(
    root: Path, relative: object, strict_segments: bool, real: str | None
) -> tuple[Path, os.stat_result | None] | None:
    """`inside`, and the `lstat` of the path found when its walk made one (no link)."""
    if not isinstance(relative, str) or not relative or relative.startswith("/"):
        return None
    if "\0" in relative:
        return None
    segments = relative.split("/")
    if strict_segments and any(part in ("", ".") for part in segments):
        return None
    # Without an empty or `.` segment the segments are the path's parts, as PurePosixPath
    # would make them at several times the cost (a campaign resolves every answer's path).
    parts = tuple(segments) if strict_segments else PurePosixPath(relative).parts
    if not parts or ".." in parts:
        return None
    if real is None:
        real = real_root(root)
        if real is None:
            return None
    walked = _walk(real, parts)
    if walked is not None:
        return walked
    try:  # a link on the way: resolve it, and see where it leads
        candidate = (root / Path(*parts)).resolve()
        candidate.relative_to(real)
    except (OSError, ValueError, RuntimeError):
        return None
    return candidate, None


def _walk(real: str, parts: tuple[str, ...]) -> tuple[Path, os.stat_result | None] | None:
    """`real/parts...` when no step of it is a link (then it cannot leave `real`, which
    has none), with the last step's `lstat` if every step exists; None at a link, which
    only a full resolution can follow. A step that cannot be looked up (absent, under a
    file, a name too long) ends the walk: nothing below it exists, so no link either."""
    path = real
    found: os.stat_result | None = None
    missing = False
    for part in parts:
        path = f"{path}/{part}" if path != "/" else f"/{part}"
        if missing:
            continue
        try:
            found = os.lstat(path)
        except OSError:
            found, missing = None, True
            continue
        if stat.S_ISLNK(found.st_mode):
            return None
    return Path(path), found


def regular_file(root: Path, relative: object, real: str | None = None) -> Path | None:
    """`inside(root, relative, strict_segments=True)` when it names a regular file (links
    followed), else None: also for a name the file system refuses (too long), never an
    exception. `real` is `real_root(root)`, when the caller has it."""
    found = _inside(root, relative, True, real)
    if found is None:
        return None
    path, status = found
    if status is not None:  # no link on the way: the walk's lstat is the file's stat
        return path if stat.S_ISREG(status.st_mode) else None
    try:
        return path if path.is_file() else None
    except OSError:
        return None
