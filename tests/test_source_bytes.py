"""A large document's bytes are not held: they are read again, and checked, to locate.

`engine/bundle/documents.py` keeps the bytes of a document of up to `HELD_BYTES`; a
larger one keeps their sha256 (and, for JSON Lines, each record's) and reads the file
again when a finding in it is located. These tests set the bound to 0 so that small
files take the large path, and compare with what the held bytes give.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_run import REPO, CliRun

from engine.bundle import documents
from engine.bundle.documents import load_document
from engine.limits import read_again, read_input, recording_reads

RECORDS = [{"id": "J1", "n": 1}, {"id": "J2", "n": [1, 2]}, {"id": "J3", "n": {"deep": True}}]


@pytest.fixture
def nothing_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "HELD_BYTES", 0)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _jsonl(tmp_path: Path) -> Path:
    lines = [json.dumps(r) for r in RECORDS]
    return _write(tmp_path, "records.jsonl", lines[0] + "\n\n" + "\n".join(lines[1:]) + "\r\n")


# Each format's document and a pointer to a value deep inside it (records.jsonl: `_jsonl`).
DOCUMENTS = pytest.mark.parametrize(
    ("name", "kind", "text", "pointer"),
    [
        ("records.jsonl", "jsonl", None, "/2/n/deep"),
        ("doc.json", "json", '{"a": [1, {"b": "x"}]}\n', "/a/1/b"),
        ("doc.yaml", "yaml", "a:\n  - 1\n  - b: x\n", "/a/1/b"),
    ],
)


@DOCUMENTS
def test_a_document_not_held_is_located_as_one_held(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    kind: str,
    text: str | None,
    pointer: str,
) -> None:
    path = _jsonl(tmp_path) if text is None else _write(tmp_path, name, text)
    held = load_document("d", path, kind)
    monkeypatch.setattr(documents, "HELD_BYTES", 0)
    let_go = load_document("d", path, kind)
    assert held.source.held and not let_go.source.held
    assert let_go.sha256 == held.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert let_go.locate(pointer) == held.locate(pointer)
    assert let_go.locate(pointer).line is not None


def test_each_records_sha256_is_taken_while_reading(tmp_path: Path, nothing_held: None) -> None:
    path = _jsonl(tmp_path)
    lines = load_document("d", path, "jsonl").record_lines
    assert isinstance(lines, documents.RecordLines)
    written = path.read_bytes().split(b"\n")
    expected = [written[0], written[2], written[3].rstrip(b"\r")]
    assert [lines.sha256(i) for i in range(3)] == [
        hashlib.sha256(line).hexdigest() for line in expected
    ]
    assert [lines.line(i) for i in range(3)] == [1, 3, 4]
    path.write_text("changed\n", encoding="utf-8")
    assert lines.sha256(2) == hashlib.sha256(expected[2]).hexdigest()  # what was judged
    with pytest.raises(IndexError):
        lines.sha256(3)


@DOCUMENTS
def test_a_file_changed_since_it_was_read_is_not_located_in(
    tmp_path: Path, nothing_held: None, name: str, kind: str, text: str | None, pointer: str
) -> None:
    path = _jsonl(tmp_path) if text is None else _write(tmp_path, name, text)
    document = load_document("d", path, kind)
    path.write_bytes(path.read_bytes().replace(b"1", b"7"))
    where = document.locate(pointer)
    assert where.column is None  # never a position in bytes that were not judged
    assert where.line == (4 if kind == "jsonl" else None)  # a record's line is known


def test_a_changed_file_is_read_again_once_for_every_finding(
    tmp_path: Path, nothing_held: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _jsonl(tmp_path)
    document = load_document("d", path, "jsonl")
    path.write_text("changed\n", encoding="utf-8")
    reads: list[Path] = []
    monkeypatch.setattr(
        documents, "read_again", lambda p, sha: reads.append(p) or read_again(p, sha)
    )
    for index in range(3):
        assert document.locate(f"/{index}/n").column is None
    assert reads == [path]


def test_reading_again_is_not_recorded_as_an_input(tmp_path: Path) -> None:
    path = _write(tmp_path, "doc.json", "{}\n")
    digest = hashlib.sha256(b"{}\n").hexdigest()
    with recording_reads() as log:
        assert read_again(path, digest) == b"{}\n"
        assert read_again(path, "0" * 64) is None
        assert read_again(tmp_path / "absent.json", digest) is None
    assert log == {}
    with recording_reads() as log:
        read_input(path)
    assert log == {str(path): digest}


def test_a_finding_in_a_document_not_held_is_reported_where_it_was_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = REPO / "tests" / "data" / "order"
    args = ["evaluate", "jobs", "--rules", str(folder / "order.rules")]
    args += ["--input", f"jobs={folder / 'overlap.jsonl'}", "--format", "json"]
    held = CliRun(args)
    monkeypatch.setattr(documents, "HELD_BYTES", 0)
    let_go = CliRun(args)
    let_go.assert_clean()
    assert let_go.exit_code == held.exit_code == 1
    assert let_go.stdout == held.stdout
    assert let_go.data["violations"][0]["location"]["column"] >= 1


def test_a_yaml_document_locates_its_first_findings_one_by_one(tmp_path: Path) -> None:
    text = "".join(f"- id: r{n}\n  n: {n}\n" for n in range(20))
    path = _write(tmp_path, "records.yaml", text)
    document = load_document("records", path, "yaml")
    positions = document.yaml_positions
    assert positions is not None
    assert positions["/3/n"] == (8, 6)
    assert positions["/3"] == (7, 3) and positions[""] == (1, 1)  # read with it
    assert positions.get("/99") is None
    assert positions._passes == 2 and positions._found is None  # no map of every value yet
    for n in range(10):
        assert positions[f"/{n}/id"] == (2 * n + 1, 7)
    assert positions._found is not None and len(positions) == 61  # the whole map, past 8


def test_many_findings_in_a_yaml_document_are_located_in_one_reading(tmp_path: Path) -> None:
    items = "".join(f"  - id: I{n}\n    size: {n}\n" for n in range(30))
    path = _write(tmp_path, "items.yaml", f"# items\nitems:\n{items}")
    wanted = [f"/items/{n}/size" for n in range(0, 30, 2)] + ["/items/3/absent", "/nowhere"]

    one_by_one = load_document("items", path, "yaml")
    expected = [one_by_one.locate(pointer) for pointer in wanted]
    assert expected[0].line == 4 and expected[-2].line == 9  # an absent key: its record

    prepared = load_document("items", path, "yaml")
    prepared.prepare_locations(wanted)
    assert [prepared.locate(pointer) for pointer in wanted] == expected
    positions = prepared.yaml_positions
    assert isinstance(positions, documents.YamlPositions)
    # one reading for all of them, and never the map of every position
    assert positions._passes == 1 and positions._found is None
