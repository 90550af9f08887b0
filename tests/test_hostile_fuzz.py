"""The hostile-input fuzz targets of `tests/hostile_fuzz.py`, bounded for `make test`:
no mutated input may reach `INTERNAL_ERROR`, run over 10 s, or make `fmt` rewrite its own
output. (`make fuzz` runs the same targets for as long as asked.)"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile_fuzz import TARGETS, Tally, run_one

# About 70 inputs a second: the five targets together stay under half a minute.
_EXAMPLES = {"rules": 300, "json": 250, "jsonl": 250, "yaml": 250, "bundle": 200}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_no_mutated_input_reaches_internal_error_or_hangs(target: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)

        @settings(
            max_examples=_EXAMPLES[target],
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(seed=st.integers(0, 2**32 - 1))
        def one(seed: int) -> None:
            tally = Tally()
            run_one(target, random.Random(seed), folder, tally)
            assert (tally.internal, tally.hangs, tally.fmt) == (0, 0, 0), tally.examples

        one()
