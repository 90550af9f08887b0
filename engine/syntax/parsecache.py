"""Parsed rule files kept between processes, so that an unchanged file is not parsed again.

Parsing is most of `rulecheck lint` on the shipped rules. The AST of a file that parsed
is kept in the cache folder of the grammar tables (`engine/syntax/tables.py`: private,
written atomically, never pickle) as plain data written with `marshal`: a list of
operations that rebuild the tree in one loop (each node from its fields, by its type's
name index) and the texts and numbers they read. An entry is used only when
it was made from the same bytes at the same path, by the same grammar, the same engine
sources and the same Python; anything else (a changed file, an edited engine, a broken or
foreign entry) parses the file as before and writes the entry again. One entry is kept
per path, and at most `KEEP` in all (the least recently written go first), so linting
many places never fills the disk. Files that do not parse are never kept, so every
diagnostic comes from a parse. `RULECHECK_PARSE_CACHE=off` turns the cache off.
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import sys
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from engine.gcpolicy import collector_paused
from engine.resources import engine_source_digest
from engine.syntax import ast
from engine.syntax.tables import (
    cache_folder,
    enabled,
    prune_private,
    read_marshalled,
    write_private,
)

_FORMAT = "2"  # 2: a program for a stack machine (1: nested lists)
KEEP = 256
# Every dataclass of the AST, by name: a node's type is its index here (see `_encode`).
_TYPES: tuple[type, ...] = tuple(
    sorted(
        (
            value
            for value in vars(ast).values()
            if isinstance(value, type)
            and dataclasses.is_dataclass(value)
            and value.__module__ == ast.__name__
        ),
        key=lambda node_type: node_type.__name__,
    )
)
_INDEX = {node_type: index for index, node_type in enumerate(_TYPES)}
_FIELDS = tuple(tuple(f.name for f in dataclasses.fields(t)) for t in _TYPES)
_ARITY = tuple(len(fields) for fields in _FIELDS)
_ATOMS = (str, int, bool, type(None))


@cache
def _versions(grammar: str) -> str:
    """sha256 of what an AST depends on besides its text: the grammar, every engine source
    file, Python and marshal. Read once per process."""
    digest = hashlib.sha256()
    for part in (_FORMAT, grammar, sys.version, str(marshal.version)):
        digest.update(part.encode("utf-8") + b"\x00")
    digest.update(engine_source_digest()["sha256"].encode("utf-8"))
    return digest.hexdigest()


def _entry(path: str, grammar: str) -> tuple[Path, str] | None:
    """The cache file for rule file `path`, and the key an entry must carry."""
    folder = cache_folder()
    if folder is None:
        return None
    versions = _versions(grammar)
    name = hashlib.sha256(f"{versions}\x00{path}".encode()).hexdigest()[:40]
    return folder / f"parse-{name}.ast", versions


# A tree is kept as a program for a stack machine, in post-order: `ops` says what to do
# and `atoms` holds the texts, numbers, booleans and nulls it reads, in order. An op is a
# node type's index (make a node of that type from the last values pushed, one per
# field), that index plus `_FROM_ATOMS` (make it from the next atoms: a node whose fields
# are all atoms, as every span is), or one of these; a tuple of n items is `_TUPLE - n`.
_ATOM = -1
_FRACTION = -2
_TUPLE = -3
_FROM_ATOMS = 1 << 16


def _encode(value: Any, ops: list[int], atoms: list[Any]) -> None:
    """Append the program that pushes `value` to `ops` and `atoms`."""
    kind = type(value)
    if kind in _ATOMS:
        ops.append(_ATOM)
        atoms.append(value)
        return
    if kind is tuple:
        for item in value:
            _encode(item, ops, atoms)
        ops.append(_TUPLE - len(value))
        return
    if kind is Fraction:
        atoms += (value.numerator, value.denominator)
        ops += (_ATOM, _ATOM, _FRACTION)
        return
    index = _INDEX.get(kind)
    if index is None:
        raise TypeError(f"no cache form for {kind.__name__}")
    fields = [getattr(value, name) for name in _FIELDS[index]]
    if all(type(field) in _ATOMS for field in fields):
        ops.append(index + _FROM_ATOMS)
        atoms += fields
        return
    for field in fields:
        _encode(field, ops, atoms)
    ops.append(index)


def _decode(ops: list[int], atoms: list[Any]) -> Any:
    """The value the program pushes: one loop over the ops, where a recursive decode made
    a Python call per node and per field (a third of `rulecheck lint rules/`)."""
    stack: list[Any] = []
    push = stack.append
    types, arity, from_atoms = _TYPES, _ARITY, _FROM_ATOMS
    position = 0
    for op in ops:
        if op >= from_atoms:
            op -= from_atoms
            end = position + arity[op]
            push(types[op](*atoms[position:end]))
            position = end
        elif op == -1:  # _ATOM
            push(atoms[position])
            position += 1
        elif op >= 0:
            count = arity[op]
            fields = stack[-count:]
            del stack[-count:]
            push(types[op](*fields))
        elif op == -2:  # _FRACTION
            denominator = stack.pop()
            stack[-1] = Fraction(stack[-1], denominator)
        elif op == -3:  # _TUPLE: an empty tuple
            push(())
        else:
            count = _TUPLE - op
            items = tuple(stack[-count:])
            del stack[-count:]
            push(items)
    (value,) = stack
    return value


def load(path: str, raw: bytes, grammar: str) -> ast.RuleFile | None:
    """The AST kept for these bytes at `path`, or None when there is none to use."""
    if not enabled():
        return None
    entry = _entry(path, grammar)
    if entry is None:
        return None
    kept = read_marshalled(entry[0])
    if kept is None:
        return None
    try:
        key, content, ops, atoms = kept
        if key != entry[1] or content != hashlib.sha256(raw).hexdigest():
            return None
        with collector_paused():  # see engine/gcpolicy.py: a third of the load otherwise
            rule_file = _decode(ops, atoms)
    except Exception:  # a broken or foreign entry: parse as if there were none
        return None
    return rule_file if isinstance(rule_file, ast.RuleFile) else None


def save(path: str, raw: bytes, grammar: str, rule_file: ast.RuleFile) -> None:
    """Keep the AST parsed from these bytes at `path`; give up quietly on any failure."""
    if not enabled():
        return
    entry = _entry(path, grammar)
    if entry is None:
        return
    ops: list[int] = []
    atoms: list[Any] = []
    try:
        _encode(rule_file, ops, atoms)
        payload = marshal.dumps((entry[1], hashlib.sha256(raw).hexdigest(), ops, atoms))
    except (TypeError, ValueError, RecursionError):
        return
    write_private(entry[0], payload)
    prune_private(entry[0].parent, "parse-", ".ast", KEEP)
