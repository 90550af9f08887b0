"""Fixture builders for answers and packets: one valid specimen, mutated per test case.

The committed specimens under controls/answer/ are produced by `write_controls()`;
`tests/test_answer_controls.py` asserts they stay in sync with these builders.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from engine.textlines import excerpt

CONTROLS = Path(__file__).resolve().parent.parent / "controls" / "answer"
SOURCE = CONTROLS / "source"

PACKET_ITEMS = [
    ("E1", "src/cache.ts", 6, 8),
    ("E2", "src/cache.ts", 9, 13),
    ("E3", "src/cache.ts", 15, 25),
    ("E4", "src/cache.ts", 27, 29),
    ("E5", "src/store.ts", 3, 3),
    ("E6", "src/store.ts", 9, 11),
]


def make_packet(items: list[tuple[str, str, int, int]] = PACKET_ITEMS) -> dict[str, Any]:
    """A packet whose items are the exact lines of the synthetic source snapshot."""
    records = []
    for evidence_id, path, start, end in items:
        raw = (SOURCE / path).read_bytes()
        records.append(
            {
                "id": evidence_id,
                "path": path,
                "start_line": start,
                "end_line": end,
                "file_sha256": hashlib.sha256(raw).hexdigest(),
                "text": excerpt(raw.decode("utf-8"), start, end),
            }
        )
    return {
        "packet_id": "P1",
        "task_id": "T1",
        "repository": "synthetic/ttl-cache",
        "commit": "0" * 39 + "1",
        "items": records,
    }


def _final() -> dict[str, Any]:
    return {
        "claims": [
            {
                "id": "C1",
                "text": "get() treats an entry as expired once expiresAt <= now and deletes it.",
                "status": "source_backed",
                "evidence_ids": ["E3", "E1"],
                "uncertainty_id": None,
            },
            {
                "id": "C2",
                "text": "set() records expiresAt as the clock's now plus ttlMs.",
                "status": "source_backed",
                "evidence_ids": ["E4"],
                "uncertainty_id": None,
            },
            {
                "id": "C3",
                "text": "An entry set at time t is unavailable from t + ttlMs onwards.",
                "status": "inference",
                "evidence_ids": ["E3", "E4"],
                "uncertainty_id": None,
            },
            {
                "id": "C4",
                "text": "Whether callers rely on size() counting expired entries is unknown.",
                "status": "unknown",
                "evidence_ids": [],
                "uncertainty_id": "U1",
            },
        ],
        "implementation_plan": [
            {
                "id": "A1",
                "action": "Add purgeExpired() that deletes every entry with expiresAt <= now.",
                "rationale": "get() only removes expired entries lazily, so size() overcounts.",
                "support_basis": "source",
                "evidence_ids": ["E3"],
                "verification_ids": ["V1"],
                "verification_limitation": None,
            },
            {
                "id": "A2",
                "action": "Document in the class comment that expiry is inclusive at ttlMs.",
                "rationale": "The task asks for the expiry boundary to be explained to callers.",
                "support_basis": "task",
                "evidence_ids": [],
                "verification_ids": [],
                "verification_limitation": "A comment change is checked by review, not by a test.",
            },
        ],
        "verification_plan": [
            {
                "id": "V1",
                "expected_behavior": "size() is 0 once every entry expired and purgeExpired() ran.",
                "method": "Unit test with a fake Clock advanced past ttlMs.",
                "support_basis": "source",
                "evidence_ids": ["E3", "E2"],
                "uncertainty_id": None,
            },
            {
                "id": "V2",
                "expected_behavior": "Callers of size() keep their current behaviour.",
                "method": "List the callers of size() and run their tests.",
                "support_basis": "missing_source",
                "evidence_ids": [],
                "uncertainty_id": "U1",
            },
        ],
        "uncertainties": [
            {
                "id": "U1",
                "missing_information": "No caller of size() is in the packet.",
                "consequence": "The impact of purging on size() callers cannot be judged.",
                "verification_step": "Search the repository for size() calls on TtlCache.",
            }
        ],
        "exclusions": [
            {
                "id": "X1",
                "scope_item": "The session store wiring in store.ts.",
                "reason": "describe() only formats size(); the change needs nothing there.",
                "evidence_ids": ["E6"],
            }
        ],
        "citations": [
            {
                "evidence_id": "E3",
                "path": "src/cache.ts",
                "start_line": 20,
                "end_line": 23,
                "supports": ["C1", "A1", "V1"],
            },
            {
                "evidence_id": "E1",
                "path": "src/cache.ts",
                "start_line": 7,
                "end_line": 7,
                "supports": ["C1"],
            },
            {
                "evidence_id": "E4",
                "path": "src/cache.ts",
                "start_line": 28,
                "end_line": 28,
                "supports": ["C2"],
            },
            {
                "evidence_id": "E2",
                "path": "src/cache.ts",
                "start_line": 10,
                "end_line": 12,
                "supports": ["V1"],
            },
        ],
    }


def _reconciliation() -> dict[str, Any]:
    return {
        "obligations": [
            {
                "id": "O1",
                "text": "Explain exactly when a cached entry stops being returned.",
                "basis": "task",
                "status": "addressed",
                "evidence_ids": ["E3", "E4"],
                "final_ids": ["C1", "C2", "V1"],
            },
            {
                "id": "O2",
                "text": "Propose a bounded change so that size() stops counting expired entries.",
                "basis": "source",
                "status": "addressed",
                "evidence_ids": ["E3"],
                "final_ids": ["A1", "V1"],
            },
            {
                "id": "O3",
                "text": "State the impact of the change on callers of size().",
                "basis": "task",
                "status": "unresolved",
                "evidence_ids": [],
                "final_ids": ["U1"],
            },
            {
                "id": "O4",
                "text": "Leave the session store wiring unchanged.",
                "basis": "source",
                "status": "excluded",
                "evidence_ids": ["E6"],
                "final_ids": ["X1"],
            },
        ],
        "evidence_dispositions": [
            {"evidence_id": "E1", "status": "used", "final_ids": ["C1"]},
            {"evidence_id": "E2", "status": "used", "final_ids": ["V1"]},
            {"evidence_id": "E3", "status": "used", "final_ids": ["C1", "A1"]},
            {"evidence_id": "E4", "status": "used", "final_ids": ["C2"]},
            {"evidence_id": "E5", "status": "unresolved", "final_ids": ["U1"]},
            {"evidence_id": "E6", "status": "excluded", "final_ids": ["X1"]},
        ],
    }


def make_answer(role: str = "B") -> dict[str, Any]:
    """A structurally valid answer for `role` (B carries the reconciliation record)."""
    return {"final": _final(), "reconciliation": _reconciliation() if role == "B" else None}


def make_draft() -> dict[str, Any]:
    """The common draft D: a claim and an action that the reviews later renumber or drop."""
    final = _final()
    final["implementation_plan"].append(
        {
            "id": "A3",
            "action": "Replace the Map with an LRU list.",
            "rationale": "A draft idea that the review drops.",
            "support_basis": "task",
            "evidence_ids": [],
            "verification_ids": [],
            "verification_limitation": "Not verified in the draft.",
        }
    )
    return {"final": final, "reconciliation": None}


def mutated(document: dict[str, Any], pointer: str, value: Any) -> dict[str, Any]:
    """A deep copy of `document` with the value at `pointer` replaced (or appended with `-`)."""
    copied = copy.deepcopy(document)
    *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]
    target: Any = copied
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        if last == "-":
            target.append(value)
        else:
            target[int(last)] = value
    else:
        target[last] = value
    return copied


def removed(document: dict[str, Any], pointer: str) -> dict[str, Any]:
    """A deep copy of `document` without the value at `pointer`."""
    copied = copy.deepcopy(document)
    *parents, last = pointer[1:].split("/")
    target: Any = copied
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    del target[int(last) if isinstance(target, list) else last]
    return copied


def dump(document: Any) -> str:
    """The committed JSON layout of a specimen."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_controls() -> None:
    """Regenerate the committed specimens under controls/answer/."""
    (CONTROLS / "packet.json").write_text(dump(make_packet()), encoding="utf-8")
    (CONTROLS / "draft.json").write_text(dump(make_draft()), encoding="utf-8")
    for role in ("D", "A", "B"):
        (CONTROLS / f"answer_{role}.json").write_text(dump(make_answer(role)), encoding="utf-8")


if __name__ == "__main__":
    write_controls()
