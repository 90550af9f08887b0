"""The cached LALR tables of the rule grammar (engine/syntax/tables.py): a parser loaded
from the cache parses exactly as one built from the grammar, and the cache is trusted
only when it is private, falling back to building whenever it cannot be used."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine.syntax import tables
from engine.syntax.parse import _Builder, _Callbacks, _unplace, grammar_text

RULES = sorted((Path(__file__).parent.parent / "rules").glob("*.rules"))
OPTIONS: dict[str, Any] = {"lexer": "contextual", "keep_all_tokens": True}


def _parse(lark: Any, builder: _Builder, path: Path) -> Any:
    builder.path = str(path)
    return _unplace(lark.parse(path.read_text(encoding="utf-8")))


def _parser(folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, _Builder]:
    monkeypatch.setenv("RULECHECK_CACHE_DIR", str(folder))
    builder = _Builder()
    options = {**OPTIONS, "maybe_placeholders": True}
    return tables.lalr_parser(grammar_text(), _Callbacks(builder), **options), builder


def _cached(folder: Path) -> list[Path]:
    return sorted(folder.glob("grammar-*.tables"))


def test_loaded_tables_parse_like_built_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    built, built_with = _parser(folder, monkeypatch)
    assert len(_cached(folder)) == 1
    assert _cached(folder)[0].stat().st_mode & 0o077 == 0
    loaded, loaded_with = _parser(folder, monkeypatch)
    assert loaded is not built
    for path in RULES:
        assert _parse(loaded, loaded_with, path) == _parse(built, built_with, path)


def test_a_changed_grammar_gets_tables_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RULECHECK_CACHE_DIR", str(tmp_path))
    first = tables.cache_file(grammar_text(), OPTIONS)
    second = tables.cache_file(grammar_text() + "\n// another\n", OPTIONS)
    assert first is not None and second is not None and first != second


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_tables_others_may_write_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    _parser(folder, monkeypatch)
    (cached,) = _cached(folder)
    cached.write_bytes(b"not tables")  # were it read, the load would fail and rebuild
    cached.chmod(0o666)
    calls: list[Any] = []
    real_load = tables._load

    def spy(path: Path, transformer: Any) -> Any:
        found = real_load(path, transformer)
        calls.append(found)
        return found

    monkeypatch.setattr(tables, "_load", spy)
    parser, builder = _parser(folder, monkeypatch)
    assert calls == [None]
    assert _parse(parser, builder, RULES[0]) is not None


def test_broken_tables_are_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    _parser(folder, monkeypatch)
    (cached,) = _cached(folder)
    cached.write_bytes(cached.read_bytes()[:100])  # cut short
    parser, builder = _parser(folder, monkeypatch)
    assert _parse(parser, builder, RULES[0]) is not None
    assert cached.stat().st_size > 100  # written anew


def test_an_unusable_cache_folder_only_costs_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    parser, builder = _parser(blocked / "cache", monkeypatch)
    assert _parse(parser, builder, RULES[0]) is not None
