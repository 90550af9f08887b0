"""Orders and keys derived from a frozen seed, reproducibly.

The algorithm is fixed and documented so anyone can re-derive an order by hand:

* `seeded_key(seed, label, item)` = sha256 of the UTF-8 text `seed + "\\x1f" + label +
  "\\x1f" + item`, as 64 hex digits.
* An order of items is the items sorted by `seeded_key(seed, label, item)` (ties, which
  need a sha256 collision, by the item itself).

Which labels a protocol uses, and which IDs it derives from the keys, its rules say.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

_SEPARATOR = "\x1f"


def seeded_key(seed: str, label: str, item: str) -> str:
    """The sha256 (hex) of seed, label and item joined by the unit separator."""
    text = _SEPARATOR.join((seed, label, item))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seeded_order(seed: str, label: str, items: Iterable[str]) -> list[str]:
    """`items` in the order fixed by the seed and the label."""
    return sorted(items, key=lambda item: (seeded_key(seed, label, item), item))
