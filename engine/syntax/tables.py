"""Lark's LALR tables for the rule grammar, built once per machine instead of per process.

Building the tables from the grammar costs more than reading most rule files (about
0.15 s of every command; loading them is a tenth of that). They are kept in a cache
folder of the user's (`RULECHECK_CACHE_DIR`, else `$XDG_CACHE_HOME/rulecheck`, else
`~/.cache/rulecheck`) under a name keyed by the sha256 of the grammar, Lark's version and
Python's, so a changed grammar never meets old tables. The tables are plain data written
with `marshal` (never pickle), read only from a regular file and folder that the current
user owns and that nobody else may write, and written atomically. When the folder cannot
be made or written, or the file is unusable, the tables are built from the grammar as
before: the cache only ever saves time.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.gcpolicy import collector_paused

if TYPE_CHECKING:  # Lark is imported when tables are needed, not by every command
    from lark import Lark

_FORMAT = "1"
_GIVEN = frozenset(
    {"postlex", "transformer", "lexer_callbacks", "use_bytes", "debug", "g_regex_flags"}
    | {"regex", "propagate_positions", "tree_class", "_plugins"}
)


def enabled() -> bool:
    """Whether the caches of this folder are used: not when `RULECHECK_PARSE_CACHE` is
    `off` (or `0`, `no`, `false`), the one switch for all of them."""
    return os.environ.get("RULECHECK_PARSE_CACHE", "").lower() not in ("off", "0", "no", "false")


def cache_folder() -> Path | None:
    """Where the tables are kept; None when no folder can be named."""
    explicit = os.environ.get("RULECHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "rulecheck"
    try:
        return Path.home() / ".cache" / "rulecheck"
    except (RuntimeError, KeyError, OSError):
        return None


def cache_file(grammar: str, options: dict[str, Any]) -> Path | None:
    """The file of the tables for this grammar and options, under `cache_folder()`."""
    from lark import __version__ as lark_version

    folder = cache_folder()
    if folder is None:
        return None
    key = "\x1f".join(
        [
            _FORMAT,
            grammar,
            repr(sorted(options.items())),
            lark_version,
            sys.version,
            str(marshal.version),
        ]
    )
    return folder / f"grammar-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:40]}.tables"


def _private(status: os.stat_result) -> bool:
    """Owned by the current user and writable by no one else."""
    getuid = getattr(os, "getuid", None)
    owner_ok = getuid is None or status.st_uid == getuid()
    return owner_ok and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_private(path: Path) -> bytes | None:
    """The bytes of a cache file, or None when there is none to trust: the file and its
    folder must be owned by the current user, writable by no one else, and the file a
    regular file (a link is not followed)."""
    try:
        folder = os.lstat(path.parent)
        if not stat.S_ISDIR(folder.st_mode) or not _private(folder):
            return None
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode) or not _private(status):
                return None
            return handle.read()
    except OSError:
        return None


def read_marshalled(path: Path) -> Any:
    """The value a cache file holds as written by `marshal`, or None when there is none
    to trust (see `read_private`) or the file is broken or foreign."""
    payload = read_private(path)
    if payload is None:
        return None
    try:
        with collector_paused():  # see engine/gcpolicy.py: a third of a large load otherwise
            return marshal.loads(payload)
    except Exception:  # a broken or foreign entry is as if there were none
        return None


def write_private(path: Path, payload: bytes) -> None:
    """Write a cache file atomically in a private folder; give up quietly on any failure."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = os.lstat(path.parent)
        if not stat.S_ISDIR(folder.st_mode) or not _private(folder):
            return
        import tempfile  # only a cache miss writes: every other run is spared the import

        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".cache-")
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(payload)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return


def _load(path: Path, transformer: Any) -> Lark | None:
    """The parser from the cached tables, or None when there are none to trust."""
    from lark import Lark

    payload = read_private(path)
    if payload is None:
        return None
    try:
        data, memo = marshal.loads(payload)
        return Lark._load_from_dict(data, memo, transformer=transformer)  # type: ignore[no-untyped-call,no-any-return]
    except Exception:  # unreadable or stale tables: build them anew
        return None


def _save(path: Path, lark: Lark) -> None:
    """Write the tables of `lark` to `path` atomically; give up quietly on any failure."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    try:
        data, memo = lark.memo_serialize([TerminalDef, Rule])
        # what a load is given again (the transformer, ...), as Lark's own cache leaves out
        data["options"] = {
            name: value for name, value in data["options"].items() if name not in _GIVEN
        }
        payload = marshal.dumps((data, memo))
    except ValueError:
        return
    write_private(path, payload)


def lalr_parser(grammar: str, transformer: Any, **options: Any) -> Lark:
    """`Lark(grammar, parser="lalr", transformer=..., **options)`, its tables read from
    the cache when they are there and trusted, else built and cached."""
    from lark import Lark

    options = {"parser": "lalr", **options}
    path = cache_file(grammar, options)
    if path is not None:
        cached = _load(path, transformer)
        if cached is not None:
            return cached
    lark = Lark(grammar, transformer=transformer, **options)
    if path is not None:
        _save(path, lark)
    return lark


def prune_private(folder: Path, prefix: str, suffix: str, keep: int) -> None:
    """Remove all but the `keep` most recently written cache files named PREFIX...SUFFIX."""
    entries = []
    try:
        with os.scandir(folder) as found:
            for item in found:
                if item.name.startswith(prefix) and item.name.endswith(suffix):
                    try:
                        entries.append((item.stat(follow_symlinks=False).st_mtime_ns, item.path))
                    except OSError:  # pruned meanwhile by another process sharing the folder
                        continue
    except OSError:
        return
    for _, stale in sorted(entries, reverse=True)[keep:]:
        try:
            os.unlink(stale)
        except OSError:  # as above; the others are still pruned
            continue
