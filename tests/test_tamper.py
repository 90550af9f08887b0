"""Tampering as a property: one byte of any file of the shipped campaign, edited with or
without re-hashing the manifest (as a freezer would), is never admitted.

A sample of the corpus that `tests/tamper_corpus.py` runs whole (every file, both ways;
docs/reliability.md has its counts). No file of the campaign is exempt.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_run import CliRun
from tests.tamper_corpus import campaign_files, tampered_copy

FILES = campaign_files()


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(relative=st.sampled_from(FILES), seed=st.integers(0, 2**32 - 1), rehash=st.booleans())
def test_a_one_byte_edit_is_refused(relative: str, seed: int, rehash: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = tampered_copy(relative, random.Random(seed), rehash, Path(folder))
        run = CliRun(["check", str(root), "--format", "json"])
    # refused (1), or not a bundle of a protocol these rules know (2): never admitted
    assert run.exit_code in (1, 2), f"{relative} (re-hashed: {rehash}): exit {run.exit_code}"
    codes = {v["code"] for v in run.data.get("violations", [])}
    codes |= {d["code"] for d in run.data.get("diagnostics", [])}
    assert codes, "a refusal names its reason"
    assert "INTERNAL_ERROR" not in codes


def test_the_corpus_covers_every_kind_of_file() -> None:
    folders = {f.split("/")[0] for f in FILES if "/" in f}
    assert folders >= {"answers", "packets", "prompts", "sources", "truth", "schemas"}
    assert {"manifest.yaml", "seal.json", "receipts.jsonl", "rules.lock"} <= set(FILES)
