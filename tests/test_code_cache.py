"""The generated-code cache (engine/codecache.py): a code object read from it is the one
`compile` gives for the same text and name; a process compiling nothing new leaves the
file alone; a broken file, a folder others may write and a cache turned off all compile
as if there were no cache; the file keeps a bounded number of code objects."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
import types
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
    assert codecache._codes is not None and len(_kept(codecache._codes)) > 100  # rewritten


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
    assert sorted(code.co_consts[0] for code in _kept(codecache._codes)) == [7, 8, 9]


def _kept(codes: codecache._Codes) -> list[types.CodeType]:
    """Every code object of a cache file as this process sees it: those it made and
    those still marshalled."""
    return [*codes.codes.values(), *(marshal.loads(data) for data in codes.marshalled.values())]


def test_a_code_object_read_from_the_file_is_made_only_when_used(folder: Path) -> None:
    sources = [f"y = {number}\n" for number in range(3)]
    for source in sources:
        codecache.compiled(source, "<rulecheck test>")
    assert codecache._codes is not None
    codecache._codes.save()
    codecache._codes = None  # as a new process would
    assert codecache.compiled(sources[1], "<rulecheck test>").co_consts[0] == 1
    codes = codecache._codes
    assert codes is not None and not codes.added
    assert (len(codes.codes), len(codes.marshalled)) == (1, 2)  # the two others not made
    codecache.compiled("y = 3\n", "<rulecheck test>")  # something new: the file is written
    codes.save()
    codecache._codes = None
    codecache.compiled("y = 3\n", "<rulecheck test>")
    assert codecache._codes is not None
    assert sorted(code.co_consts[0] for code in _kept(codecache._codes)) == [0, 1, 2, 3]


def test_a_broken_entry_is_compiled_again(folder: Path) -> None:
    codecache.compiled(SOURCE, "<rulecheck test>")
    assert codecache._codes is not None
    codecache._codes.save()
    (written,) = _files(folder)
    entries = marshal.loads(written.read_bytes())
    written.write_bytes(marshal.dumps({key: b"not a code object" for key in entries}))
    codecache._codes = None
    again = codecache.compiled(SOURCE, "<rulecheck test>")
    assert again == compile(SOURCE, "<rulecheck test>", "exec")
    assert codecache._codes is not None and codecache._codes.added  # made again, kept


# ---- the methods `dataclasses` writes for the engine's classes -----------------------------

CLASS = '''
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True)
class Probe:
    """A class of the engine's kind: frozen, slotted, with a default and a span."""

    name: str
    count: int = 0
    span: tuple[int, int] = field(default=(0, 0), compare=False, hash=False, repr=False)
'''
METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


def _probe(module: str, monkeypatch: pytest.MonkeyPatch) -> type:
    """`Probe` made by `dataclasses` in a fresh module named `module`."""
    namespace = types.ModuleType(module)
    monkeypatch.setitem(sys.modules, module, namespace)
    exec(CLASS, namespace.__dict__)
    made: type = namespace.__dict__["Probe"]
    return made


@pytest.fixture
def methods(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache of methods in `folder`, read anew by this process."""
    monkeypatch.setattr(codecache, "_methods", None)
    monkeypatch.setitem(dataclasses.__dict__, "exec", codecache._exec_as_dataclasses_does)
    return folder


def test_an_engine_class_made_from_kept_methods_is_the_class_dataclasses_makes(
    methods: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled_now = _probe("engine.probe_compiled", monkeypatch)
    assert codecache._methods is not None and codecache._methods.added
    codecache._methods.save()
    codecache._methods = None  # as a new process would
    from_the_file = _probe("engine.probe_kept", monkeypatch)
    assert codecache._methods is not None and not codecache._methods.added  # all were kept
    monkeypatch.delitem(dataclasses.__dict__, "exec")  # dataclasses' own `exec` again
    plain = _probe("engine.probe_plain", monkeypatch)
    for made in (compiled_now, from_the_file):
        for name in METHODS:
            ours, theirs = getattr(made, name), getattr(plain, name)
            assert ours.__code__ == theirs.__code__, name
            assert ours.__annotations__ == theirs.__annotations__, name
        probe = made("x", 2)
        assert (probe, repr(probe), hash(probe)) == (
            made("x", 2, (5, 5)),
            "Probe(name='x', count=2)",
            hash(plain("x", 2)),
        )
        with pytest.raises(dataclasses.FrozenInstanceError):
            probe.count = 3  # type: ignore[misc]


def test_only_the_engine_s_classes_go_through_the_cache(
    methods: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _probe("someone_else.probe", monkeypatch)
    assert codecache._methods is None  # not even read
    _probe("engine.probe", monkeypatch)
    assert codecache._methods is not None and codecache._methods.codes  # compiled and kept


def test_the_cache_turned_off_leaves_dataclasses_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(dataclasses.__dict__, "exec", raising=False)
    monkeypatch.setenv("RULECHECK_PARSE_CACHE", "off")
    codecache.keep_dataclass_methods()
    assert "exec" not in dataclasses.__dict__
    monkeypatch.delenv("RULECHECK_PARSE_CACHE")
    codecache.keep_dataclass_methods()
    assert dataclasses.__dict__["exec"] is codecache._exec_as_dataclasses_does


def test_a_second_lint_reads_the_kept_methods_and_writes_nothing(folder: Path) -> None:
    env = {**os.environ, "RULECHECK_CACHE_DIR": str(folder)}
    command = [sys.executable, "-m", "engine.cli", "lint", "rules", "--format", "json"]
    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False)
    (written,) = sorted(folder.glob("methods-*.marshal"))
    before = written.stat().st_mtime_ns
    again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    assert written.stat().st_mtime_ns == before
