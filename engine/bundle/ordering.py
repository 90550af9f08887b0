"""Orders and anonymous IDs derived from the frozen trial seed, reproducibly.

The algorithm is fixed and documented so anyone can re-derive an order by hand:

* `seeded_key(seed, label, item)` = sha256 of the UTF-8 text `seed + "\\x1f" + label +
  "\\x1f" + item`, as 64 hex digits.
* An order of items is the items sorted by `seeded_key(seed, label, item)` (ties, which
  need a sha256 collision, by the item itself). The task order uses the label
  `task-order`; the order of blinded answers uses `blind-order`.
* A blinded answer's ID is `ANS-` followed by the first 16 hex digits of
  `seeded_key(seed, "blind-id", session_id)`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

TASK_ORDER = "task-order"
BLIND_ORDER = "blind-order"
BLIND_ID = "blind-id"
_SEPARATOR = "\x1f"


def seeded_key(seed: str, label: str, item: str) -> str:
    """The sha256 (hex) of seed, label and item joined by the unit separator."""
    text = _SEPARATOR.join((seed, label, item))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seeded_order(seed: str, label: str, items: Iterable[str]) -> list[str]:
    """`items` in the order fixed by the seed and the label."""
    return sorted(items, key=lambda item: (seeded_key(seed, label, item), item))


def task_order(seed: str, task_ids: Iterable[str]) -> list[str]:
    """The evaluation task order derived from the trial seed."""
    return seeded_order(seed, TASK_ORDER, task_ids)


def blind_answer_id(seed: str, session_id: str) -> str:
    """The anonymous ID under which adjudicators see a session's final answer."""
    return "ANS-" + seeded_key(seed, BLIND_ID, session_id)[:16]
