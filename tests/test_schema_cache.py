"""The schema cache (engine/check/schemacache.py): lint compiles a protocol's schema once
and afterwards reads back only that it compiled; a schema that does not compile, a broken
or foreign entry, a changed schema and a cache turned off all compile the schema as if
there were no cache."""

from __future__ import annotations

import marshal
import os
from pathlib import Path
from typing import Any

import pytest

from engine.check import protocols, schemacache
from engine.ruleset import lint_paths

RULES = """ruleset p version "1"
kind item of inventory
  records items ""
  attr n: number
gate small for i in item require i.n <= 4
decision verdict when small => OK otherwise => NO
protocol shop
  graph inventory
  document items path "items.jsonl" format jsonl schema "{schema}"
"""
GOOD_JSON = b'{"type": "object", "required": ["n"], "properties": {"n": {"type": "number"}}}'
BAD_JSON = b'{"type": "object", "patternProperties": {"^x": {}}}'
GOOD_CERBERUS = b"n:\n  type: number\n"
BAD_CERBERUS = b"n:\n  type: no_such_type\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULECHECK_CACHE_DIR", str(cache))
    monkeypatch.delenv("RULECHECK_PARSE_CACHE", raising=False)
    return cache


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The schema compiles lint runs (the kind of each: True for cerberus)."""
    seen: list[bool] = []
    compiled = protocols._compiled

    def counted(raw: bytes, cerberus: bool) -> Any:
        seen.append(cerberus)
        return compiled.__wrapped__(raw, cerberus)  # past the in-process memo

    monkeypatch.setattr(protocols, "_compiled", counted)
    return seen


def _rules(folder: Path, name: str, schema: bytes) -> Path:
    work = folder.parent / "work"
    work.mkdir(exist_ok=True)
    (work / name).write_bytes(schema)
    path = work / "p.rules"
    path.write_text(RULES.format(schema=name), encoding="utf-8")
    return path


def _codes(path: Path) -> list[str]:
    _, diagnostics = lint_paths([path])
    return [d.code for d in diagnostics if d.severity == "error"]


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("schema-*.ok"))


@pytest.mark.parametrize(("name", "schema"), [("s.json", GOOD_JSON), ("s.yaml", GOOD_CERBERUS)])
def test_a_schema_that_compiled_is_not_compiled_again(
    folder: Path, compiles: list[bool], name: str, schema: bytes
) -> None:
    path = _rules(folder, name, schema)
    assert _codes(path) == [] and len(compiles) == 1
    assert _codes(path) == [] and len(compiles) == 1  # read back
    assert len(_entries(folder)) == 1


@pytest.mark.parametrize(("name", "schema"), [("s.json", BAD_JSON), ("s.yaml", BAD_CERBERUS)])
def test_a_schema_that_does_not_compile_is_never_kept(
    folder: Path, compiles: list[bool], name: str, schema: bytes
) -> None:
    path = _rules(folder, name, schema)
    assert _codes(path) == ["SCHEMA_INVALID"]
    assert _codes(path) == ["SCHEMA_INVALID"]
    assert len(compiles) == 2 and not _entries(folder)


def test_a_changed_schema_is_compiled_again(folder: Path, compiles: list[bool]) -> None:
    path = _rules(folder, "s.json", GOOD_JSON)
    assert _codes(path) == []
    (path.parent / "s.json").write_bytes(BAD_JSON)
    assert _codes(path) == ["SCHEMA_INVALID"]
    assert len(compiles) == 2


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\x00broken",
        marshal.dumps(("another engine", "json", "0" * 64)),
        marshal.dumps(["a list", "json"]),
    ],
)
def test_a_broken_or_foreign_entry_is_ignored(
    folder: Path, compiles: list[bool], payload: bytes
) -> None:
    path = _rules(folder, "s.json", GOOD_JSON)
    assert _codes(path) == []
    (entry,) = _entries(folder)
    entry.write_bytes(payload)
    assert not schemacache.compiled_before(GOOD_JSON, "json")
    assert _codes(path) == [] and len(compiles) == 2  # compiled again, entry written anew
    assert schemacache.compiled_before(GOOD_JSON, "json")
    assert not schemacache.compiled_before(GOOD_JSON, "cerberus")  # the kind is in the key


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_an_entry_others_may_write_is_not_read(folder: Path) -> None:
    schemacache.remember_compiled(GOOD_JSON, "json")
    (entry,) = _entries(folder)
    entry.chmod(0o666)
    assert not schemacache.compiled_before(GOOD_JSON, "json")
    entry.chmod(0o600)
    assert schemacache.compiled_before(GOOD_JSON, "json")


def test_the_cache_can_be_turned_off(
    folder: Path, compiles: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RULECHECK_PARSE_CACHE", "off")
    path = _rules(folder, "s.json", GOOD_JSON)
    assert _codes(path) == [] and _codes(path) == []
    assert len(compiles) == 2
    assert not folder.exists() or not _entries(folder)


def test_the_cache_keeps_a_bounded_number_of_entries(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schemacache, "KEEP", 2)
    for index in range(4):
        schemacache.remember_compiled(b'{"minLength": %d}' % index, "json")
    assert len(_entries(folder)) == 2
