"""Serialising command results: canonical JSON and small text tables."""

from __future__ import annotations

import json
from typing import Any


def to_json(value: Any) -> str:
    """Canonical, byte-stable JSON text: sorted keys, two-space indent, final newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
