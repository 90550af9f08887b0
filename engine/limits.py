"""The limits rulecheck holds every input to, in one place, and the one way to read a file.

Every input is untrusted: a rule file under review, a bundle, an answer. Whatever it holds,
rulecheck answers with a typed, located diagnostic and a nonzero exit within bounded time
and memory, never with a crash or a hang. These limits are the declared policy that makes
that so; `docs/reliability.md` lists them with their codes.

- `MAX_FILE_BYTES`: no input file larger than this is read (checked from `stat` before
  the file is opened): `INPUT_TOO_LARGE`.
- Only regular files are read: a FIFO would block forever, `/dev/zero` never ends, a socket
  or device is no document: `INPUT_NOT_REGULAR` (a folder is `FILE_UNREADABLE`).
- Every `OSError` of opening or reading (a missing file, no permission, a name too long
  for the file system) is `FILE_UNREADABLE`, located at the file.
- `MAX_NESTING`: JSON and YAML values nest at most this deep: `INPUT_TOO_DEEP`.
- `MAX_STRING_CHARS`: one JSON or YAML string (or key) holds at most this many
  characters: `INPUT_STRING_TOO_LONG`.
- `MAX_NUMBER_DIGITS` and `MAX_EXPONENT`: a number (in a rule file or in data) has at most
  this many digits, and its decimal exponent at most this magnitude, so that every number
  is held exactly and printed back in bounded time (`RULE_NUMBER_RANGE` in rule files,
  `JSON_NUMBER_RANGE` / `YAML_NUMBER_RANGE` in data).
- `MAX_RECORDS`: a JSON Lines document has at most this many lines, and `MAX_VALUES`: a
  JSON, JSON Lines or YAML document at most this many values, bounded before parsing by
  counting separators (so memory stays bounded): `INPUT_TOO_MANY_RECORDS`.
- `MAX_RULE_DEPTH`: a rule expression nests at most this deep (`not not ...`, a chain of
  `+`, nested `{...}` or `if`): `RULE_TOO_DEEP`, at the expression that goes too deep.
- `MAX_RULE_BINDINGS`: a rule has at most this many `for` clauses (each is a loop nested
  in the one before): `RULE_TOO_MANY_BINDINGS`, at the first clause beyond the limit.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import BinaryIO, Final

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError

# 64 MiB: ten times the largest bundle document seen in practice, and small enough that
# parsing it stays well under 1 GiB of memory.
MAX_FILE_BYTES: Final = 64 * 1024 * 1024
MAX_NESTING: Final = 200
MAX_STRING_CHARS: Final = 1_000_000
MAX_NUMBER_DIGITS: Final = 1_000
MAX_EXPONENT: Final = 1_000
MAX_RECORDS: Final = 5_000_000
# Values (records, objects, arrays, scalars) one document may hold, bounded before parsing
# by counting separators: parsing and graph building cost about 1 KB per value.
MAX_VALUES: Final = 2_000_000
# Findings one check of one document lists (its schema's, say); beyond, one last finding
# says the check stopped there: a document of a million bad values is refused as surely,
# in bounded time and memory (each finding is a located message, a report line).
MAX_FINDINGS: Final = 1_000
MAX_RULE_DEPTH: Final = 100
# Python compiles at most 20 nested blocks in a function: a rule's clauses are loops, with
# room left for the loops of its conditions. The seeds' rules bind at most four.
MAX_RULE_BINDINGS: Final = 16
# Files one document of many files (`truth/*.yaml`) may match, and the bytes they may hold
# together: a document of one file or of many is bounded alike.
MAX_DOCUMENT_FILES: Final = 100_000
MAX_DOCUMENT_BYTES: Final = MAX_FILE_BYTES

# How a path is shown in a message: a 5,000-character name is cut.
_SHOWN_PATH_CHARS: Final = 200


def shown_path(path: Path | str) -> str:
    """A path as messages show it: cut to a readable length."""
    text = str(path)
    if len(text) <= _SHOWN_PATH_CHARS:
        return text
    half = _SHOWN_PATH_CHARS // 2
    return f"{text[:half]}...{text[-half:]}"


class InputRefused(RulecheckError):
    """A file `read_input` refuses (exit 2); `reason` says why without naming the file."""

    def __init__(self, diagnostic: Diagnostic, reason: str) -> None:
        super().__init__([diagnostic], ExitCode.USAGE)
        self.reason = reason


def _refused(
    code: str, path: Path | str, message: str, hint: str | None = None, reason: str = ""
) -> InputRefused:
    diagnostic = Diagnostic(code, message, Location(str(path)), hint=hint)
    return InputRefused(diagnostic, reason or message)


def os_error(path: Path | str, error: OSError) -> InputRefused:
    """`FILE_UNREADABLE` (exit 2) for an OSError met while reading `path`."""
    reason = error.strerror or type(error).__name__
    message = f"cannot read `{shown_path(path)}`: {reason}"
    return _refused("FILE_UNREADABLE", path, message, reason=reason)


def open_input(path: Path) -> BinaryIO:
    """One input file opened for reading as a stream, within the limits above.

    Refuses, before opening it, anything that is not a regular file and any file larger
    than `MAX_FILE_BYTES`; it is opened with `O_NONBLOCK`, so that a FIFO put in its place
    in the meantime cannot block, and checked again once open.

    Raises:
        RulecheckError: exit 2 with `FILE_UNREADABLE`, `INPUT_NOT_REGULAR` or
            `INPUT_TOO_LARGE`, located at the file. No other exception escapes.
    """
    handle, _size = _open_regular(path)
    try:
        os.set_blocking(handle, True)
        return os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise


def _open_regular(path: Path | str) -> tuple[int, int]:
    """A descriptor of `path` opened with `O_NONBLOCK` and the file's size, once a stat
    before and a stat of the open file both found a regular file within the size limit
    (see `open_input`)."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise os_error(path, error) from None
    except ValueError:  # a NUL byte in the name
        raise _refused(
            "FILE_UNREADABLE", path, f"cannot read `{shown_path(path)}`: invalid file name"
        ) from None
    _check_regular(path, info.st_mode)
    _check_size(path, info.st_size)
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise os_error(path, error) from None
    try:
        opened = os.fstat(handle)
        _check_regular(path, opened.st_mode)  # replaced between stat and open
        _check_size(path, opened.st_size)
    except BaseException:
        os.close(handle)
        raise
    return handle, opened.st_size


def read_input(path: Path | str) -> bytes:
    """The bytes of one input file, read within the limits above (see `open_input`); the
    one way every reader of rule files and data reads a file. Never more than
    `MAX_FILE_BYTES` are read, even from a file that grows meanwhile.

    Raises:
        RulecheckError: exit 2 with `FILE_UNREADABLE`, `INPUT_NOT_REGULAR` or
            `INPUT_TOO_LARGE`, located at the file. No other exception escapes.
    """
    raw = _read_within_limits(path)
    log = _READ_LOG.get()
    if log is not None:
        log[os.path.abspath(path)] = hashlib.sha256(raw).hexdigest()
    return raw


def read_again(path: Path | str, sha256: str) -> bytes | None:
    """The bytes of an input file read before, read again (as `read_input`) to locate
    something in them; None when the file cannot be read or its bytes are no longer
    those whose sha256 was taken. Not recorded as an input: what was judged is what was
    read the first time."""
    try:
        raw = _read_within_limits(path)
    except RulecheckError:
        return None
    return raw if hashlib.sha256(raw).hexdigest() == sha256 else None


def _read_within_limits(path: Path | str) -> bytes:
    # Read through the descriptor, not a stream: a campaign reads thousands of small
    # files, and a buffered stream's set-up costs as much as the read.
    handle, size = _open_regular(path)
    try:
        os.set_blocking(handle, True)  # a regular file now: no read may fail with EAGAIN
        raw = _read_all(handle, size)
    except OSError as error:
        raise os_error(path, error) from None
    finally:
        os.close(handle)
    _check_size(path, len(raw))  # grew while being read
    return raw


_READ_BLOCK = 1 << 16


def _read_all(handle: int, expected: int) -> bytes:
    """Everything a descriptor gives until its end, never more than `MAX_FILE_BYTES + 1`
    bytes. No read asks for the limit: a read allocates what it asks for, so the first
    asks for the size fstat gave plus one (to see growth) and the next ones for a block.
    A first read that gives exactly the size fstat gave, and not the byte more it asked
    for, found the end: no read is made to be told so (one system call per file)."""
    chunks: list[bytes] = []
    total = 0
    wanted = min(expected, MAX_FILE_BYTES) + 1
    while total <= MAX_FILE_BYTES:
        chunk = os.read(handle, wanted)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total == expected < wanted:  # a short read of a regular file is its end
            break
        wanted = min(_READ_BLOCK, MAX_FILE_BYTES + 1 - total)  # the end, or it grew since
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# While `recording_reads()` is active: every file `read_input` returned, by absolute path,
# with the sha256 of the bytes returned (what an evaluation receipt lists as its inputs).
_READ_LOG: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "read_log", default=None
)


@contextlib.contextmanager
def recording_reads() -> Iterator[dict[str, str]]:
    """Record every file read through `read_input` inside the block: absolute path ->
    sha256 of the bytes read (the last read wins when a file is read twice). Inside an
    outer block, the outer record is the one added to."""
    outer = _READ_LOG.get()
    if outer is not None:
        yield outer
        return
    log: dict[str, str] = {}
    token = _READ_LOG.set(log)
    try:
        yield log
    finally:
        _READ_LOG.reset(token)


def _check_regular(path: Path | str, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise os_error(path, IsADirectoryError(21, "Is a directory"))
    if stat.S_ISFIFO(mode):
        what = "a FIFO (named pipe)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        what = "a device"
    elif stat.S_ISSOCK(mode):
        what = "a socket"
    else:  # pragma: no cover - every file type is one of the above
        what = "not a regular file"
    raise _refused(
        "INPUT_NOT_REGULAR",
        path,
        f"`{shown_path(path)}` is {what}, not a regular file",
        hint="give a regular file; rulecheck never reads pipes, devices or sockets",
        reason=f"it is {what}, not a regular file",
    )


def _check_size(path: Path | str, size: int) -> None:
    if size > MAX_FILE_BYTES:
        raise _refused(
            "INPUT_TOO_LARGE",
            path,
            f"`{shown_path(path)}` holds {size} bytes, more than the limit of "
            f"{MAX_FILE_BYTES} bytes",
            reason=f"{size} bytes, more than the limit of {MAX_FILE_BYTES}",
        )


def too_many_values(raw: bytes, file: str, *, yaml: bool = False) -> RulecheckError | None:
    """`INPUT_TOO_MANY_RECORDS` (exit 1) when `raw` may hold more than `MAX_VALUES` values.

    Every value but the first follows a `,`, opens with `[` or `{`, or (in YAML) follows a
    `:`, a `-` or a line end; counting them is C-fast and never undercounts, so a document
    is refused before it is parsed into millions of objects.
    """
    bound = raw.count(b",") + raw.count(b"[") + raw.count(b"{") + 1
    if yaml:
        bound += raw.count(b":") + raw.count(b"-") + raw.count(b"\n")
    if bound <= MAX_VALUES:
        return None
    diagnostic = Diagnostic(
        "INPUT_TOO_MANY_RECORDS",
        f"the document may hold more than {MAX_VALUES} values, the limit per document",
        Location(file),
    )
    return RulecheckError([diagnostic], ExitCode.REFUSED)


# A decimal written with at most this many characters (so at most 15 significant digits)
# and within the float's normal range is the shortest decimal of its float: held as
# written without comparing the two.
_AS_WRITTEN_CHARS: Final = 15
_NORMAL_MIN: Final = sys.float_info.min


def held_as_written(text: str, value: float) -> bool:
    """Whether `value`, the finite 64-bit float of the decimal number `text` (JSON or
    YAML), is read as the number written: a number with a fraction or an exponent is read
    as its float's shortest decimal (`repr`, then exactly), so one with more significant
    digits than a float keeps, or below its range, would silently become another. An
    exponent beyond even Decimal's holds as written only as a zero."""
    if len(text) <= _AS_WRITTEN_CHARS and abs(value) >= _NORMAL_MIN:
        return True
    try:
        return Decimal(text) == Decimal(repr(value))
    except ArithmeticError:
        return value == 0.0 and not text.lower().partition("e")[0].strip("-+0.")


def number_too_large(digits: str, exponent: int) -> str | None:
    """Why a number written with these significant `digits` (no sign, no point, no `_`)
    and decimal `exponent` cannot be held exactly within the limits, or None when it can."""
    if len(digits) > MAX_NUMBER_DIGITS:
        return f"it has {len(digits)} digits, more than the limit of {MAX_NUMBER_DIGITS}"
    if abs(exponent) > MAX_EXPONENT:
        return f"its decimal exponent {exponent} is beyond the limit of +-{MAX_EXPONENT}"
    return None


def output_conflict(
    out: Path, inputs: Iterable[Path] = (), folders: Iterable[Path] = (), option: str = "--out"
) -> RulecheckError | None:
    """`OUTPUT_IS_INPUT` (exit 2) when writing `out` (given as `option`) would overwrite
    what the run reads: a file in `inputs`, or anything inside one of `folders` (a
    bundle); else None.

    Paths are compared after resolving links, so `B/./manifest.yaml`, a relative spelling
    or a link to the input are caught too. A path that cannot be resolved is compared as
    written.
    """
    target = _resolved(out)
    for path in inputs:
        if _resolved(path) == target:
            return _refused(
                "OUTPUT_IS_INPUT",
                out,
                f"`{option} {shown_path(out)}` would overwrite the input `{shown_path(path)}`",
                hint="write the output to a path outside every input",
            )
    for folder in folders:
        root = _resolved(folder)
        if target == root or root in target.parents:
            return _refused(
                "OUTPUT_IS_INPUT",
                out,
                f"`{option} {shown_path(out)}` is inside the bundle `{shown_path(folder)}` "
                "this run reads",
                hint="write the output to a path outside the bundle",
            )
    return None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path.absolute()
