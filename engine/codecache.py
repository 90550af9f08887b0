"""Generated Python compiled once per machine, not once per process.

The engine writes Python for the rules it evaluates (`engine/evaluate/compile.py`), the
JSON Schemas it checks (`engine/bundle/schemac.py`) and the kinds it builds graphs of
(`engine/graph/build.py`), and Python's `compile` of that text was the largest single
part of a small bundle's `check` (about 70 ms of half a second for the shipped campaign's
521 functions) and a tenth of `answers`' start-up. The same text always compiles to the
same code, so each code object is kept under the sha256 of its file name and text, in one
file per Python, marshal version and engine source beside the parse cache (same private
folder, same trust checks, same off switch `RULECHECK_PARSE_CACHE=off`:
`engine/syntax/tables.py`). The file is read whole on the first compile of a process and
written once at its exit when that process compiled anything new; a broken, foreign or
untrusted file is as if there were none, and any failure to write it only costs the next
process the compiling. One file per engine source, since every process reads the whole
file: one shared by all engines kept the code of engines long replaced (1,764 code
objects, 3 MB, where a campaign's check uses about 800), about 4 MB of each check's
peak memory.

The methods `dataclasses` writes for the engine's own classes (`__init__`, `__eq__`,
`__hash__`, `__repr__`, the frozen `__setattr__`...) are compiled from their text the
same way at every import: some 650 texts, about 60 ms of each command's start-up, a
quarter of `rulecheck lint`. `keep_dataclass_methods` has `dataclasses` compile them
through a second file of this cache (`methods-*.marshal`), with the flags and file name
its own `exec` of the text uses, so each class is the one it always was; the `__init__`
that `engine/fastinit.py` writes for the AST's classes is kept there too.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import marshal
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from engine.resources import engine_source_digest
from engine.syntax.tables import (
    cache_folder,
    enabled,
    prune_private,
    read_marshalled,
    write_private,
)

_FORMAT = "2"  # each code object marshalled on its own (format 1: the code objects)
# Code objects kept in the file at most (the file is read whole by every process that
# compiles: about 1 KB each, marshalled): the shipped rules and schemas are about 520 of
# them, the engine's classes about 1,000 methods. Past this many, the file keeps those
# the last writer used, its latest last.
_KEPT = 2048
_FILES_KEPT = 4  # files of other Python versions are let go past this many


class _Codes:
    """This process's view of the cache file: its code objects by key, and which of them
    this process compiled or used. A code object read from the file stays marshalled
    until it is used: a process uses only some of the file's (the methods of the classes
    it imports, the code of the rules it runs), and a code object takes several times
    its marshalled size (all of them made at once were 7 MB of an `answers` start-up's
    37)."""

    def __init__(self, kind: str, version: str) -> None:
        self.kind = kind  # the first part of the file's name
        self.path = _cache_path(kind, version) if enabled() else None
        found = None if self.path is None else read_marshalled(self.path)
        self.marshalled: dict[bytes, bytes] = {}  # read from the file, not yet used
        if isinstance(found, dict):
            self.marshalled = {
                key: data
                for key, data in found.items()
                if isinstance(key, bytes) and isinstance(data, bytes)
            }
        self.codes: dict[bytes, CodeType] = {}  # compiled or used by this process
        self.used: dict[bytes, None] = {}  # in the order of their last use
        self.added = False

    def code(self, key: bytes, source: str, filename: str, inherit: bool = True) -> CodeType:
        """The code object kept under `key`, else `source` compiled (and kept); noted as
        used last."""
        code = self.codes.get(key) or self._unmarshalled(key)
        if code is None:
            code = compile(source, filename, "exec", dont_inherit=not inherit)
            self.keep(key, code)
        self.used.pop(key, None)
        self.used[key] = None
        return code

    def _unmarshalled(self, key: bytes) -> CodeType | None:
        """The code object the file holds under `key`, made now; None when it holds none
        (or a broken or foreign one: compiled again)."""
        data = self.marshalled.pop(key, None)
        if data is None:
            return None
        try:
            code = marshal.loads(data)
        except Exception:  # a broken entry is as if there were none
            return None
        if not isinstance(code, CodeType):
            return None
        self.codes[key] = code
        return code

    def keep(self, key: bytes, code: CodeType) -> None:
        """Hold a newly compiled code object; past twice the file's bound, only the
        latest used stay in memory too (a long process compiling many rule sets)."""
        self.codes[key] = code
        self.added = True
        if len(self.codes) > 2 * _KEPT:
            self.codes = {**self._latest(), key: code}
            self.used = dict.fromkeys(self.codes)

    def _latest(self) -> dict[bytes, CodeType]:
        """The code objects of the `_KEPT` keys used last, in the order of their use."""
        return {key: self.codes[key] for key in list(self.used)[-_KEPT:] if key in self.codes}

    def save(self) -> None:
        """Write the file if this process compiled anything new (at its exit): the code
        objects it compiled or used and those it left marshalled, or past the bound those
        it used last."""
        if self.path is None or not self.added:
            return
        if len(self.codes) + len(self.marshalled) <= _KEPT:
            entries = {**self.marshalled, **_marshalled(self.codes)}
        else:
            entries = _marshalled(self._latest())
        write_private(self.path, marshal.dumps(entries))
        prune_private(self.path.parent, f"{self.kind}-", ".marshal", _FILES_KEPT)


def _marshalled(codes: dict[bytes, CodeType]) -> dict[bytes, bytes]:
    return {key: marshal.dumps(code) for key, code in codes.items()}


_codes: _Codes | None = None


def compiled(source: str, filename: str) -> CodeType:
    """`compile(source, filename, "exec")`, taken from the cache when this text was
    compiled under this name before (by any process of this user on this machine)."""
    global _codes
    _codes = _opened(_codes, "code")
    return _codes.code(_key(filename, source), source, filename)


def _opened(codes: _Codes | None, kind: str) -> _Codes:
    """The cache file of `kind` as this process sees it, read on first use (one file per
    engine: no code of another is kept, or read) and written at the process's exit."""
    if codes is None:
        codes = _Codes(kind, engine_source_digest()["sha256"])
        atexit.register(codes.save)
    return codes


def _key(*parts: str) -> bytes:
    """The key of a code object: the sha256 of what it was compiled from."""
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).digest()


def _cache_path(kind: str, version: str) -> Path | None:
    """The cache file of this kind of code objects for this Python (and `version` of what
    makes them), or None when no cache folder can be named."""
    folder = cache_folder()
    if folder is None:
        return None
    versions = f"{_FORMAT}\x00{sys.version}\x00{marshal.version}\x00{version}"
    name = hashlib.sha256(versions.encode("utf-8")).hexdigest()[:32]
    return folder / f"{kind}-{name}.marshal"


_methods: _Codes | None = None
_ENGINE_MODULES = "engine."


def keep_dataclass_methods() -> None:
    """Have `dataclasses` compile the methods of the engine's classes through this cache
    from now on (see the module's docstring); a cache turned off changes nothing."""
    if enabled():
        dataclasses.__dict__["exec"] = _exec_as_dataclasses_does


def _exec_as_dataclasses_does(
    source: Any, globals_: dict[str, Any] | None = None, locals_: Any = None
) -> None:
    """`exec(source, globals_, locals_)`, the only call `dataclasses` makes of `exec`;
    the text of a method of an engine class (its class's module's namespace is
    `globals_`) compiled once per machine, as `exec` compiles a text for a module
    without `__future__` imports, as `dataclasses` is: file name `<string>`, no
    inherited flags."""
    name = "" if globals_ is None else globals_.get("__name__")
    if source.__class__ is str and isinstance(name, str) and name.startswith(_ENGINE_MODULES):
        source = kept_method(source, "<string>", inherit=False)
    exec(source, globals_, locals_)


def kept_method(source: str, filename: str, inherit: bool) -> CodeType:
    """`compile(source, filename, "exec", dont_inherit=not inherit)` of a method the
    engine makes for one of its classes at import (`dataclasses`, `engine/fastinit.py`),
    taken from the file of such methods when compiled before; `inherit` takes this
    module's `__future__` flags, as a caller with the same imports would have them."""
    global _methods
    _methods = _opened(_methods, "methods")
    return _methods.code(_key(filename, str(int(inherit)), source), source, filename, inherit)
