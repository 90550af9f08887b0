"""engine.limits: the one way to read an input file, and what an output may not overwrite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.errors import ExitCode, RulecheckError
from engine.limits import (
    MAX_FILE_BYTES,
    InputRefused,
    number_too_large,
    output_conflict,
    read_input,
)


def _code(path: Path) -> str:
    with pytest.raises(RulecheckError) as info:
        read_input(path)
    assert info.value.exit_code is ExitCode.USAGE
    [diagnostic] = info.value.diagnostics
    assert diagnostic.location is not None and diagnostic.location.file == str(path)
    return diagnostic.code


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"{}\n")
    assert read_input(path) == b"{}\n"


def test_a_file_larger_than_a_read_block_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    payload = bytes(range(256)) * 1000  # several blocks of `_read_all`
    path.write_bytes(payload)
    assert read_input(path) == payload


def test_a_file_that_grew_after_its_stat_is_read_on_but_never_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import limits

    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"x" * 5000)
    handle = os.open(path, os.O_RDONLY)
    try:  # fstat said 10 bytes: what is there is read all the same
        assert limits._read_all(handle, 10) == b"x" * 5000
    finally:
        os.close(handle)
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 1000)
    handle = os.open(path, os.O_RDONLY)
    try:  # one byte past the limit is enough to refuse; no more is read
        assert limits._read_all(handle, 10) == b"x" * 1001
    finally:
        os.close(handle)


def test_a_file_read_whole_by_its_first_read_takes_no_second_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import limits

    path = tmp_path / "a.json"
    path.write_bytes(b"x" * 5000)
    asked: list[int] = []
    real_read = os.read

    def counted(handle: int, count: int) -> bytes:
        asked.append(count)
        return real_read(handle, count)

    monkeypatch.setattr(limits.os, "read", counted)
    assert read_input(path) == b"x" * 5000
    assert asked == [5001]  # the byte more than fstat's size was not there: the end
    handle = os.open(path, os.O_RDONLY)
    try:  # fstat said 4000 bytes: 4001 came, so the file grew and is read on
        asked.clear()
        assert limits._read_all(handle, 4000) == b"x" * 5000
        assert len(asked) == 3 and asked[0] == 4001
    finally:
        os.close(handle)


def test_what_is_not_a_regular_file_is_refused_before_reading(tmp_path: Path) -> None:
    assert _code(tmp_path / "missing.json") == "FILE_UNREADABLE"
    assert _code(tmp_path) == "FILE_UNREADABLE"
    assert _code(tmp_path / ("x" * 5000)) == "FILE_UNREADABLE"
    assert _code(Path("a\0b")) == "FILE_UNREADABLE"
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        assert _code(tmp_path / "fifo") == "INPUT_NOT_REGULAR"
    if Path("/dev/zero").exists():
        assert _code(Path("/dev/zero")) == "INPUT_NOT_REGULAR"


def test_a_refusal_says_why_without_the_file_name(tmp_path: Path) -> None:
    with pytest.raises(InputRefused) as info:
        read_input(tmp_path / "missing.json")
    assert info.value.reason == "No such file or directory"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputRefused) as info:
        read_input(tmp_path / "fifo")
    assert info.value.reason == "it is a FIFO (named pipe), not a regular file"


def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as stream:
        stream.truncate(MAX_FILE_BYTES + 1)
    assert _code(path) == "INPUT_TOO_LARGE"


def test_number_limits() -> None:
    assert number_too_large("1" * 1000, 999) is None
    assert number_too_large("1" * 1001, 0) is not None
    assert number_too_large("1", 1001) is not None
    assert number_too_large("1", -1001) is not None


def test_an_output_may_not_overwrite_an_input_or_land_in_the_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "B"
    bundle.mkdir()
    manifest = bundle / "manifest.yaml"
    manifest.write_text("a: 1\n", encoding="utf-8")
    rules = tmp_path / "r.rules"
    rules.write_text("", encoding="utf-8")
    (tmp_path / "link.rules").symlink_to(rules)

    def code(out: Path) -> str | None:
        error = output_conflict(out, inputs=[rules], folders=[bundle])
        return None if error is None else error.diagnostics[0].code

    assert code(manifest) == "OUTPUT_IS_INPUT"
    assert code(bundle / "new.json") == "OUTPUT_IS_INPUT"
    assert code(bundle / "." / "sub" / ".." / "manifest.yaml") == "OUTPUT_IS_INPUT"
    assert code(bundle) == "OUTPUT_IS_INPUT"
    assert code(rules) == "OUTPUT_IS_INPUT"
    assert code(tmp_path / "link.rules") == "OUTPUT_IS_INPUT"
    assert code(tmp_path / "report.json") is None
    assert code(tmp_path / "B2" / "report.json") is None


NESTED = Path(__file__).resolve().parent / "data" / "nested"


@pytest.mark.parametrize(
    ("limit", "value", "code"),
    [
        ("MAX_DOCUMENT_FILES", 1, "INPUT_TOO_MANY_FILES"),
        ("MAX_DOCUMENT_BYTES", 10, "INPUT_TOO_LARGE"),
    ],
)
def test_a_document_of_many_files_is_bounded_before_it_is_read(
    limit: str, value: int, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The accepted bundle's `tasks/*.yaml` matches two files of some hundred bytes: with the
    # limit lowered, the document is refused at its pattern, before any file is parsed.
    from engine.bundle import protocol_bundle
    from tests.cli_run import CliRun

    rules = str(NESTED / "review.rules")
    bundle = str(NESTED / "accepted")
    assert CliRun(["check", bundle, "--rules", rules]).exit_code == 0
    monkeypatch.setattr(protocol_bundle, limit, value)
    run = CliRun(["check", bundle, "--rules", rules, "--format", "json"])
    assert run.exit_code == 1
    [diagnostic] = run.data["diagnostics"]
    assert diagnostic["code"] == code
    assert diagnostic["location"]["file"].endswith("tasks/*.yaml")
