"""The raters' view of an answer: its `final` object only, under an anonymous ID.

No arm, cost, reconciliation or score is included; exclusion reasons are part of `final`
and stay visible. The bytes are canonical JSON, so their sha256 identifies exactly what a
rater saw.
"""

from __future__ import annotations

from typing import Any

from engine.freeze.canonical import canonical_json


def blind_bytes(answer_id: str, final: Any) -> bytes:
    """The exact bytes of one blinded answer file."""
    return canonical_json({"answer_id": answer_id, "final": final}) + b"\n"


def write_blind_view(bundle: Any, out: Any) -> list[str]:
    """Write every blinded answer and `index.json` (IDs in seed-shuffled order) to `out`."""
    import json
    from pathlib import Path

    from engine.bundle.campaign import answer_final
    from engine.bundle.ordering import BLIND_ORDER, seeded_order

    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    seed = bundle.documents["manifest"]["trial_seed"]
    sessions = {s["session_id"]: s for s in bundle.documents["sessions"]}
    ids = []
    for entry in bundle.documents["blind"]:
        final = answer_final(bundle.root, sessions[entry["session_id"]]["answer"])
        (target / f"{entry['answer_id']}.json").write_bytes(blind_bytes(entry["answer_id"], final))
        ids.append(entry["answer_id"])
    ordered = seeded_order(seed, BLIND_ORDER, ids)
    (target / "index.json").write_text(json.dumps({"answers": ordered}, indent=2) + "\n")
    return ordered
