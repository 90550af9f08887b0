"""`near_name`: what a misspelt attribute looks like beside the members records hold.

`ATTR_ABSENT` warns only when a declared name is one edit from a member the records
hold (two for names of six characters or more), letter case aside; a looser likeness
would warn about optional fields that merely share a prefix (`model`, `model_calls`).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.check.symbols import near_name

NAMES = st.text(alphabet="abcdefghij_", min_size=2, max_size=12)


@pytest.mark.parametrize(
    ("name", "members", "near"),
    [
        ("ammount", ["amount", "id"], "amount"),  # a letter doubled
        ("amunt", ["amount"], "amount"),  # a letter dropped
        ("Amount", ["amount"], "amount"),  # case alone
        ("sessoin_id", ["session_id"], "session_id"),  # two letters swapped
        ("cost", ["costs"], "costs"),
        ("model", ["model_calls", "model_cost_usd"], None),  # a shared prefix only
        ("seconds", ["minutes", "hours"], None),
        ("amount", ["amount"], None),  # the name itself is no near name
        ("ab", ["xy"], None),
    ],
)
def test_near_names(name: str, members: list[str], near: str | None) -> None:
    assert near_name(name, members) == near


@given(NAMES, st.integers(0, 11))
def test_one_letter_dropped_is_near(name: str, where: int) -> None:
    where %= len(name)
    dropped = name[:where] + name[where + 1 :]
    assert near_name(name, [dropped]) == (dropped if dropped != name else None)


@given(NAMES, NAMES)
def test_near_is_symmetric_for_names_of_one_length(a: str, b: str) -> None:
    if len(a) == len(b) and (len(a) < 6) == (len(b) < 6):
        assert (near_name(a, [b]) is None) == (near_name(b, [a]) is None)
