"""The generated-code cache (engine/codecache.py): a code object read from it is the one
`compile` gives for the same text and name; a process compiling nothing new leaves the
file alone; a broken file, a folder others may write and a cache turned off all compile
as if there were no cache; the file keeps a bounded number of code objects."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import codecache

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "def twice(x):\n    return 2 * x\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RULECHECK_CACHE_DIR", str(cache))
    monkeypatch.delenv("RULECHECK_PARSE_CACHE", raising=False)
    monkeypatch.setattr(codecache, "_codes", None)  # this process reads the cache anew
    monkeypatch.setattr(codecache.atexit, "register", lambda function: function)
    return cache


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("code-*.marshal"))


def _check(folder: Path, bundle: str = "controls/campaign") -> bytes:
    """`rulecheck check BUNDLE --format json` in a process of its own, on this cache."""
    env = {**os.environ, "RULECHECK_CACHE_DIR": str(folder)}
    run = subprocess.run(
        [sys.executable, "-m", "engine.cli", "check", bundle, "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr.decode()
    return run.stdout


def test_a_kept_code_object_is_the_one_compile_gives(folder: Path) -> None:
    first = codecache.compiled(SOURCE, "<rulecheck test>")
    assert first == compile(SOURCE, "<rulecheck test>", "exec")
    assert codecache._codes is not None
    codecache._codes.save()
    codecache._codes = None  # as a new process would
    kept = codecache.compiled(SOURCE, "<rulecheck test>")
    assert kept == first
    namespace: dict[str, object] = {}
    exec(kept, namespace)
    assert namespace["twice"](21) == 42  # type: ignore[operator]


def test_the_name_is_part_of_the_key(folder: Path) -> None:
    one = codecache.compiled(SOURCE, "<rulecheck one>")
    other = codecache.compiled(SOURCE, "<rulecheck other>")
    assert one.co_filename == "<rulecheck one>" and other.co_filename == "<rulecheck other>"


def test_a_second_check_reads_the_cache_and_leaves_it_alone(folder: Path) -> None:
    first = _check(folder)
    (written,) = _files(folder)
    before = written.stat().st_mtime_ns
    assert _check(folder) == first  # the same report from the kept code
    assert written.stat().st_mtime_ns == before  # nothing new compiled, nothing written


def test_a_broken_file_is_compiled_past_and_replaced(folder: Path) -> None:
    first = _check(folder)
    (written,) = _files(folder)
    written.write_bytes(b"not marshal data")
    assert _check(folder) == first
    codecache._codes = None
    codecache.compiled(SOURCE, "<rulecheck test>")
    assert codecache._codes is not None and len(codecache._codes.codes) > 100  # rewritten


def test_a_folder_others_may_write_is_neither_read_nor_written(folder: Path) -> None:
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o777)
    _check(folder)
    assert _files(folder) == []


def test_the_cache_turned_off_writes_nothing(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULECHECK_PARSE_CACHE", "off")
    codecache.compiled(SOURCE, "<rulecheck test>")
    assert codecache._codes is not None and codecache._codes.path is None
    codecache._codes.save()
    assert not folder.exists() or _files(folder) == []


def test_the_file_keeps_the_latest_code_objects_within_its_bound(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codecache, "_KEPT", 3)
    for number in range(10):
        codecache.compiled(f"x = {number}\n", "<rulecheck test>")
    assert codecache._codes is not None
    assert len(codecache._codes.codes) <= 2 * 3 + 1  # memory bounded too
    codecache._codes.save()
    codecache._codes = None
    codecache.compiled("x = 9\n", "<rulecheck test>")
    assert codecache._codes is not None
    kept = codecache._codes.codes.values()
    assert sorted(code.co_consts[0] for code in kept) == [7, 8, 9]
