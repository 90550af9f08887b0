"""A bundle's files as one evaluation reads them: a file read again, once its bytes were
let go, must be the file read first (else `INPUT_CHANGED`, exit 2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.errors import ExitCode, RulecheckError
from engine.evaluate import facts
from engine.evaluate.facts import BundleFiles

# More files than an evaluation keeps the bytes of: reading them all lets `answer.json` go.
_OTHERS = 100


def _bundle(tmp_path: Path) -> BundleFiles:
    (tmp_path / "answer.json").write_bytes(b'{"final": 1}\n')
    for index in range(_OTHERS):
        (tmp_path / f"other{index}.json").write_bytes(b"{}\n")
    return BundleFiles(tmp_path)


def _read_others(files: BundleFiles) -> None:
    for index in range(_OTHERS):
        files.read(f"other{index}.json")


def test_a_file_read_again_unchanged_gives_its_bytes_and_digest(tmp_path: Path) -> None:
    files = _bundle(tmp_path)
    first = files.read("answer.json")
    digest = files.sha256_and_size("answer.json")
    _read_others(files)
    assert files.read("answer.json") == first == b'{"final": 1}\n'
    assert files.json("answer.json") == {"final": 1}
    assert files.sha256_and_size("answer.json") == digest


def _rewritten(path: Path) -> None:
    path.write_bytes(b'{"final": 2}\n')


def _removed(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize("change", [_rewritten, _removed], ids=["rewritten", "removed"])
def test_a_file_changed_between_two_reads_is_refused(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    files = _bundle(tmp_path)
    files.read("answer.json")
    _read_others(files)
    change(tmp_path / "answer.json")
    with pytest.raises(RulecheckError) as raised:
        files.json("answer.json")
    assert raised.value.exit_code == ExitCode.USAGE
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "INPUT_CHANGED"
    assert diagnostic.location is not None
    assert diagnostic.location.file == str(tmp_path / "answer.json")
    assert "`answer.json` changed while it was being checked" in diagnostic.message


def test_a_file_absent_at_first_stays_absent_for_the_evaluation(tmp_path: Path) -> None:
    files = _bundle(tmp_path)
    assert files.read("late.json") is None
    _read_others(files)
    (tmp_path / "late.json").write_bytes(b"{}\n")
    assert files.read("late.json") is None
    assert files.sha256_and_size("late.json") is None


def test_a_file_beyond_the_bytes_kept_is_read_again_and_must_be_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts, "_BYTES_KEPT", 8)  # `answer.json` is 13 bytes
    files = _bundle(tmp_path)
    assert files.read("answer.json") == b'{"final": 1}\n'
    assert files.read("answer.json") == b'{"final": 1}\n'  # read again: unchanged
    _rewritten(tmp_path / "answer.json")
    with pytest.raises(RulecheckError) as raised:
        files.read("answer.json")
    assert [d.code for d in raised.value.diagnostics] == ["INPUT_CHANGED"]


def test_files_are_let_go_first_read_first_once_their_bytes_pass_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts, "_BYTES_KEPT", 8)  # two files of three bytes, not three files
    files = _bundle(tmp_path)
    _read_others(files)
    (tmp_path / "other98.json").write_bytes(b"[]\n")  # kept: read from memory
    (tmp_path / "other97.json").write_bytes(b"[]\n")  # let go: read again, refused
    assert files.read("other98.json") == b"{}\n"
    with pytest.raises(RulecheckError) as raised:
        files.read("other97.json")
    assert [d.code for d in raised.value.diagnostics] == ["INPUT_CHANGED"]


def _parse_others(files: BundleFiles) -> None:
    for index in range(_OTHERS):
        files.json(f"other{index}.json")


def test_a_file_a_nested_check_parsed_is_its_value_while_kept(tmp_path: Path) -> None:
    files = _bundle(tmp_path)
    raw = files.read("answer.json")
    assert raw is not None
    value = {"final": 1}
    files.parsed_strictly("answer.json", value)  # what a nested check says once its load passed
    assert files.json("answer.json") is value  # not read, nor parsed, again
    (tmp_path / "answer.json").write_bytes(b'{"final": 2}\n')
    assert files.json("answer.json") is value  # the bytes the nested check judged


def test_a_file_a_nested_check_parsed_loads_again_the_same(tmp_path: Path) -> None:
    files = _bundle(tmp_path)
    raw = files.read("answer.json")
    assert raw is not None
    files.parsed_strictly("answer.json", {"final": 1})
    _read_others(files)
    _parse_others(files)  # the value let go too: read and parsed again
    assert files.json("answer.json") == {"final": 1}


def test_a_file_a_nested_check_parsed_then_changed_is_refused(tmp_path: Path) -> None:
    files = _bundle(tmp_path)
    files.read("answer.json")
    files.parsed_strictly("answer.json", {"final": 1})
    _read_others(files)
    _parse_others(files)
    (tmp_path / "answer.json").write_bytes(b'{"final": 1, "final": 2}\n')
    with pytest.raises(RulecheckError) as raised:
        files.json("answer.json")
    assert [d.code for d in raised.value.diagnostics] == ["INPUT_CHANGED"]


def test_a_file_never_read_is_parsed_strictly_whatever_was_said(tmp_path: Path) -> None:
    files = _bundle(tmp_path)
    (tmp_path / "twice.json").write_bytes(b'{"final": 1, "final": 2}\n')
    files.parsed_strictly("twice.json", {"final": 2})  # not read through this bundle: not kept
    assert files.json("twice.json") is None
