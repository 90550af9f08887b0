"""Generate a synthetic campaign of valid B answers for benchmarks (deterministic)."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

ITEMS = 12
LINES_PER_ITEM = 5


def make_packet(task: int) -> dict[str, Any]:
    """A 12-item packet over one synthetic file."""
    items = []
    for index in range(1, ITEMS + 1):
        start = (index - 1) * LINES_PER_ITEM + 1
        text = "".join(f"const v{task}_{index}_{k} = {k};\n" for k in range(LINES_PER_ITEM))
        items.append(
            {
                "id": f"E{index}",
                "path": f"src/module{task}.ts",
                "start_line": start,
                "end_line": start + LINES_PER_ITEM - 1,
                "file_sha256": hashlib.sha256(f"file{task}".encode()).hexdigest(),
                "text": text,
            }
        )
    return {
        "packet_id": f"P{task}",
        "task_id": f"T{task}",
        "repository": f"synthetic/repo{(task + 1) // 2}",
        "commit": f"{task:040x}",
        "items": items,
    }


def make_answer(task: int, rng: random.Random) -> dict[str, Any]:
    """A valid B answer: 12 claims, 8 actions, 6 verifications, 3 uncertainties,
    2 exclusions, 24 citations, 8 obligations and 12 dispositions (75 records)."""
    path = f"src/module{task}.ts"

    def text(kind: str, n: int) -> str:
        return f"{kind} {n} about module {task}, variant {rng.randint(0, 10**6)}."

    claims = [
        {
            "id": f"C{i}",
            "text": text("claim", i),
            "status": "source_backed",
            "evidence_ids": [f"E{i}"],
            "uncertainty_id": None,
        }
        for i in range(1, 13)
    ]
    actions = [
        {
            "id": f"A{i}",
            "action": text("action", i),
            "rationale": text("rationale", i),
            "support_basis": "source",
            "evidence_ids": [f"E{i}"],
            "verification_ids": [f"V{(i - 1) % 6 + 1}"],
            "verification_limitation": None,
        }
        for i in range(1, 9)
    ]
    verifications = [
        {
            "id": f"V{i}",
            "expected_behavior": text("behaviour", i),
            "method": text("method", i),
            "support_basis": "source",
            "evidence_ids": [f"E{i}"],
            "uncertainty_id": None,
        }
        for i in range(1, 7)
    ]
    uncertainties = [
        {
            "id": f"U{i}",
            "missing_information": text("missing", i),
            "consequence": text("consequence", i),
            "verification_step": text("step", i),
        }
        for i in range(1, 4)
    ]
    exclusions = [
        {
            "id": f"X{i}",
            "scope_item": text("scope", i),
            "reason": text("reason", i),
            "evidence_ids": [f"E{10 + i}"],
        }
        for i in range(1, 3)
    ]
    citations = []
    for i in range(1, 13):
        start = (i - 1) * LINES_PER_ITEM + 1
        supports = [f"C{i}"] + ([f"A{i}"] if i <= 8 else []) + ([f"V{i}"] if i <= 6 else [])
        citations.append(
            {
                "evidence_id": f"E{i}",
                "path": path,
                "start_line": start,
                "end_line": start + 1,
                "supports": supports,
            }
        )
        citations.append(
            {
                "evidence_id": f"E{i}",
                "path": path,
                "start_line": start + 2,
                "end_line": start + LINES_PER_ITEM - 1,
                "supports": [f"C{i}"],
            }
        )
    obligations = [
        {
            "id": f"O{i}",
            "text": text("obligation", i),
            "basis": "source",
            "status": "addressed",
            "evidence_ids": [f"E{i}"],
            "final_ids": [f"C{i}", f"A{i}", f"V{(i - 1) % 6 + 1}"],
        }
        for i in range(1, 9)
    ]
    dispositions = [
        {"evidence_id": f"E{i}", "status": "used", "final_ids": [f"C{i}"]} for i in range(1, 10)
    ]
    dispositions.append({"evidence_id": "E10", "status": "unresolved", "final_ids": ["U1"]})
    dispositions += [
        {"evidence_id": f"E{10 + i}", "status": "excluded", "final_ids": [f"X{i}"]}
        for i in range(1, 3)
    ]
    return {
        "final": {
            "claims": claims,
            "implementation_plan": actions,
            "verification_plan": verifications,
            "uncertainties": uncertainties,
            "exclusions": exclusions,
            "citations": citations,
        },
        "reconciliation": {"obligations": obligations, "evidence_dispositions": dispositions},
    }


def generate(root: Path, answers: int, tasks: int = 8, seed: int = 741) -> Path:
    """Write packets, answers and an index (JSON Lines) under `root`; returns the index."""
    rng = random.Random(seed)
    (root / "packets").mkdir(parents=True, exist_ok=True)
    (root / "answers").mkdir(parents=True, exist_ok=True)
    for task in range(1, tasks + 1):
        (root / "packets" / f"P{task}.json").write_text(json.dumps(make_packet(task)))
    index = root / "index.jsonl"
    with index.open("w", encoding="utf-8") as stream:
        for number in range(answers):
            task = number % tasks + 1
            name = f"answers/a{number:06d}.json"
            (root / name).write_text(json.dumps(make_answer(task, rng), indent=1))
            entry = {"answer": name, "packet": f"packets/P{task}.json", "role": "B"}
            stream.write(json.dumps(entry) + "\n")
    return index
