"""Records read from JSON Lines and YAML lists are the values written, in their order.

The loaders share member names, short texts and, for the records of one list, the
dictionaries' key table (`engine/bundle/documents.py`, `engine/bundle/yamlevents.py`).
Sharing saves memory only: whatever the records' shapes and member orders, each is a plain
`dict` equal to what the standard decoder gives, members in the order written, and
changing one record changes no other.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import records
from engine.bundle import yamldoc, yamlevents
from engine.bundle.documents import load_document
from engine.bundle.yamlevents import load_yaml
from engine.gcpolicy import collector_paused

NAMES = st.sampled_from(["id", "a", "b", "c", "role", "x" * 40, "é"])
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(["J1", "J2", "primary", "z" * 200]),
    st.lists(st.integers(0, 3), max_size=2),
)
RECORDS = st.lists(st.dictionaries(NAMES, VALUES, max_size=6), min_size=1, max_size=12)


def _same(loaded: list[Any], written: list[dict[str, Any]]) -> None:
    assert loaded == written
    assert [list(r) for r in loaded] == [list(r) for r in written]  # member order
    assert all(r.__class__ is dict for r in loaded)
    loaded[0]["added"] = 1  # a record is its own: the others keep their members
    assert all("added" not in r for r in loaded[1:])


@settings(max_examples=150, deadline=None)
@given(RECORDS)
def test_json_lines_records_are_the_lines_decoded(records: list[dict[str, Any]]) -> None:
    raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    loaded = load_document("records", Path("records.jsonl"), "jsonl", raw)
    _same(loaded.value, records)


@settings(max_examples=150, deadline=None)
@given(RECORDS)
def test_yaml_list_items_are_the_mappings_written(records: list[dict[str, Any]]) -> None:
    raw = yaml.safe_dump({"records": records}, sort_keys=False, allow_unicode=True).encode()
    value, _unquoted = load_yaml(raw, "records.yaml", "INPUT")
    _same(value["records"], records)


def test_a_document_of_many_lists_makes_a_bounded_number_of_key_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(records, "_makers", {})  # this process's kinds so far set aside
    # each list in a place of its own: without a bound, a class (about 2 KB) for each
    count = 2 * records._MAKERS_KEPT
    raw = "".join(f"k{i}:\n- a: {i}\n  b: x\n" for i in range(count)).encode()
    value, _unquoted = load_yaml(raw, "doc.yaml", "INPUT")
    assert value == {f"k{i}": [{"a": i, "b": "x"}] for i in range(count)}
    assert len(records._makers) == records._MAKERS_KEPT
    # lists in the same place (under the same name, as deep) share one
    raw = "".join(f"- items:\n  - n: {i}\n" for i in range(1000)).encode()
    builder = yamlevents._EventBuilder(yamldoc.strict_loader(raw.decode()))
    value, _unquoted = builder.document()
    assert value == [{"items": [{"n": i}]} for i in range(1000)]
    assert len(builder._makers) == 2


def test_loading_leaves_no_class_to_collect() -> None:
    # a maker's class is a reference cycle: made once per kind of record, never garbage
    raw = "".join(json.dumps({"id": str(n), "n": n}) + "\n" for n in range(10)).encode()
    for _ in range(3):
        load_document("ratings", Path("r.jsonl"), "jsonl", raw)
        load_yaml(b"records:\n- a: 1\n- a: 2\n", "doc.yaml", "INPUT")
    gc.collect()
    with collector_paused():
        load_document("ratings", Path("r.jsonl"), "jsonl", raw)
        load_yaml(b"records:\n- a: 1\n- a: 2\n", "doc.yaml", "INPUT")
        assert gc.collect() == 0


def test_a_bundle_s_documents_share_their_short_texts() -> None:
    """A rating's ID in the ratings and in the manifest that lists it is one text when the
    two are loaded together (memory only: the values are those written)."""
    texts: dict[str, str] = {}
    lines = "".join(
        json.dumps({"record_id": f"J{n}", "verdict": "correct"}) + "\n" for n in range(3)
    )
    listed = "records:\n" + "".join(f"- record_id: J{n}\n  sha256: '{n}'\n" for n in range(3))
    ratings = load_document("ratings", Path("r.jsonl"), "jsonl", lines.encode(), texts=texts)
    manifest = load_document("manifest", Path("m.yaml"), "yaml", listed.encode(), texts=texts)
    entries = manifest.value["records"]
    assert [r["record_id"] for r in ratings.value] == [e["record_id"] for e in entries]
    assert all(
        r["record_id"] is e["record_id"] for r, e in zip(ratings.value, entries, strict=True)
    )
    alone = load_document("manifest", Path("m.yaml"), "yaml", listed.encode())
    assert alone.value == manifest.value
    assert alone.value["records"][0]["record_id"] is not ratings.value[0]["record_id"]
