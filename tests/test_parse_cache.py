"""The parse cache (engine/syntax/parsecache.py): a rule file read from it is the AST a
parse gives, spans included; a changed file, a broken entry, an entry others may write,
a file that does not parse and a cache turned off all parse the file as if there were no
cache."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from rulegen import rulesets

from engine.errors import RulecheckError
from engine.syntax import parsecache
from engine.syntax.parse import grammar_text, parse_file, parse_text

RULES = sorted((Path(__file__).parent.parent / "rules").glob("*.rules"))


def _exact(node: Any) -> Any:
    """The whole tree as plain data, spans included (AST equality leaves them out)."""
    if isinstance(node, tuple):
        return tuple(_exact(item) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        fields = dataclasses.fields(node)
        return (type(node).__name__, *(_exact(getattr(node, f.name)) for f in fields))
    return node


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("parse-*.ast"))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULECHECK_CACHE_DIR", str(cache))
    monkeypatch.delenv("RULECHECK_PARSE_CACHE", raising=False)
    return cache


def _copy(path: Path, folder: Path) -> Path:
    target = folder.parent / path.name
    target.write_bytes(path.read_bytes())
    return target


def test_a_kept_file_is_the_tree_a_parse_gives(folder: Path) -> None:
    for path in RULES:
        parsed = parse_file(path)
        kept = parse_file(path)
        fresh = parse_text(path.read_text(encoding="utf-8"), str(path))
        assert _exact(parsed) == _exact(kept) == _exact(fresh)
    assert len(_entries(folder)) == len(RULES)


def test_a_changed_file_is_parsed_again(folder: Path) -> None:
    path = _copy(RULES[0], folder)
    parse_file(path)
    path.write_text(path.read_text(encoding="utf-8") + "\nconst added_later = 1\n")
    names = [decl.name.text for decl in parse_file(path).declarations]
    assert names[-1] == "added_later"
    assert len(_entries(folder)) == 1  # one entry per path, written anew


def test_a_broken_entry_is_parsed_again(folder: Path) -> None:
    path = _copy(RULES[0], folder)
    expected = _exact(parse_file(path))
    (entry,) = _entries(folder)
    entry.write_bytes(entry.read_bytes()[:100])  # cut short
    assert _exact(parse_file(path)) == expected
    assert entry.stat().st_size > 100  # written anew


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_an_entry_others_may_write_is_not_read(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(RULES[0], folder)
    parse_file(path)
    (entry,) = _entries(folder)
    entry.chmod(0o666)
    raw = path.read_bytes()
    assert parsecache.load(str(path), raw, grammar_text()) is None
    entry.chmod(0o600)
    assert parsecache.load(str(path), raw, grammar_text()) is not None


def test_a_file_that_does_not_parse_is_never_kept(folder: Path) -> None:
    path = folder.parent / "broken.rules"
    path.write_text('ruleset broken version "1"\nconst = 1\n', encoding="utf-8")
    for _ in range(2):
        with pytest.raises(RulecheckError) as raised:
            parse_file(path)
        assert [d.code for d in raised.value.diagnostics] == ["SYNTAX_ERROR"]
    assert not _entries(folder)


def test_the_cache_can_be_turned_off(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULECHECK_PARSE_CACHE", "off")
    parse_file(RULES[0])
    assert not folder.exists() or not _entries(folder)


def test_the_cache_keeps_a_bounded_number_of_entries(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parsecache, "KEEP", 2)
    for index in range(4):
        path = folder.parent / f"copy_{index}.rules"
        path.write_bytes(RULES[0].read_bytes())
        parse_file(path)
    assert len(_entries(folder)) == 2


LOCK = Path(__file__).parent.parent / "controls" / "campaign" / "rules.lock"


def test_a_lock_read_again_takes_its_declarations_from_the_cache(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.freeze import lock

    first = lock.read_lock(LOCK)
    monkeypatch.setattr(lock, "parse_text", _no_parse)
    again = lock.read_lock(LOCK)
    assert _exact(first.declarations) == _exact(again.declarations)
    assert first.hashes == again.hashes


def test_a_lock_whose_text_changed_after_it_was_kept_is_parsed_and_refused(folder: Path) -> None:
    from engine.freeze import lock

    copy = _copy(LOCK, folder)
    lock.read_lock(copy)
    text = copy.read_text(encoding="utf-8")
    marker = '  text: "metric uncached_input(r: receipt) = if '
    assert marker in text
    changed = '  text: "metric uncached_input(r: receipt) = if not '
    copy.write_text(text.replace(marker, changed, 1), encoding="utf-8")
    with pytest.raises(RulecheckError) as refused:
        lock.read_lock(copy)
    assert {d.code for d in refused.value.diagnostics} == {"LOCK_TAMPERED"}


def test_a_verified_lock_is_not_verified_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.freeze import lock

    copy = _copy(LOCK, folder)
    expected = lock.read_lock(copy).ruleset_hash
    assert lock.verified_ruleset_hash(copy) == expected
    assert len(list(folder.glob("lock-*.ok"))) == 1

    def no_verify(path: Path) -> Any:
        raise AssertionError(f"{path} was verified again")

    monkeypatch.setattr(lock, "read_lock", no_verify)
    assert lock.verified_ruleset_hash(copy) == expected


def test_a_lock_changed_after_its_verdict_was_kept_is_verified_and_refused(folder: Path) -> None:
    from engine.freeze import lock

    copy = _copy(LOCK, folder)
    lock.verified_ruleset_hash(copy)
    text = copy.read_text(encoding="utf-8")
    recorded = lock.read_lock(copy).ruleset_hash
    copy.write_text(text.replace(recorded, "ab" * 32, 1), encoding="utf-8")
    with pytest.raises(RulecheckError) as refused:
        lock.verified_ruleset_hash(copy)
    assert {d.code for d in refused.value.diagnostics} == {"LOCK_TAMPERED"}
    assert len(list(folder.glob("lock-*.ok"))) == 1  # the refused bytes are never kept


def test_a_lock_verdict_is_not_kept_with_the_cache_off(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.freeze import lock

    monkeypatch.setenv("RULECHECK_PARSE_CACHE", "off")
    copy = _copy(LOCK, folder)
    assert lock.verified_ruleset_hash(copy) == lock.read_lock(copy).ruleset_hash
    assert not list(folder.glob("lock-*.ok"))


def _no_parse(text: str, path: str) -> Any:
    raise AssertionError(f"{path} was parsed again")


def test_pruning_goes_on_when_another_process_prunes_the_same_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkouts share the cache folder: a file another process removes between listing
    and reading it is skipped, the folder's listing is closed, and the rest is pruned."""
    from collections.abc import Iterator

    from engine.syntax import tables

    for age in range(4):
        entry = tmp_path / f"p{age}.s"
        entry.write_bytes(b"x")
        os.utime(entry, ns=(age * 10**9, age * 10**9))
    listing = os.scandir
    closed: list[bool] = []

    class RacingListing:
        def __init__(self, folder: Path) -> None:
            self.inner = listing(folder)

        def __enter__(self) -> RacingListing:
            return self

        def __exit__(self, *_: object) -> None:
            self.inner.close()
            closed.append(True)

        def __iter__(self) -> Iterator[os.DirEntry[str]]:
            for entry in self.inner:
                (tmp_path / "p0.s").unlink(missing_ok=True)  # the other process
                yield entry

    monkeypatch.setattr(tables.os, "scandir", RacingListing)
    tables.prune_private(tmp_path, "p", ".s", keep=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p3.s"]
    assert closed == [True]


def _rebuilt(tree: Any) -> Any:
    """`tree` kept (`_encode`) and rebuilt from what was kept (`_decode`)."""
    ops: list[int] = []
    atoms: list[Any] = []
    parsecache._encode(tree, ops, atoms)
    return parsecache._decode(ops, atoms)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=rulesets())
def test_every_tree_comes_back_from_its_kept_form(text: str) -> None:
    """The kept form of any rule file's tree (empty and nested tuples, fractions, nodes of
    atoms only and nodes of nodes) rebuilds exactly that tree, spans included."""
    tree = parse_text(text, "generated.rules")
    assert _exact(_rebuilt(tree)) == _exact(tree)


def test_the_shipped_rules_come_back_from_their_kept_form() -> None:
    for path in RULES:
        tree = parse_file(path)
        assert _exact(_rebuilt(tree)) == _exact(tree), path.name
