"""The cyclic collector is paused during bulk work (engine/gcpolicy.py), so what that work
leaves in a reference cycle stays in memory until the work is done: loading a document
must leave none."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.bundle.documents import load_document
from engine.gcpolicy import collector_paused

YAML = """\
frozen_at: '2026-10-01T12:42:39Z'
records:
- record_id: J0001
  sha256: d9ade06a36d22fa639dcab6147c23c2f5b74a5df2d1699a3690d790761273b57
  rated: 2026-10-01
- {record_id: J0002, sha256: a3790ab072e92b37ac2153b1216264ed733bf86fc8fcde7808ab795b0c3b6c0d}
"""


@pytest.fixture
def paused() -> Iterator[None]:
    gc.collect()
    with collector_paused():
        yield


@pytest.mark.usefixtures("paused")
@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("m.yaml", YAML, "yaml"),
        ("m.json", '{"a": [1, 2.5, {"b": null}], "c": "d"}', "json"),
        ("m.jsonl", '{"a": 1}\n{"a": 2, "b": [true]}\n', "jsonl"),
    ],
)
def test_loading_a_document_leaves_no_reference_cycle(
    tmp_path: Path, name: str, text: str, kind: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    document = load_document("m", path, kind)
    assert document.value  # loaded, and kept
    assert gc.collect() == 0
