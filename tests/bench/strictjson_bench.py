"""Micro-benchmark: `loads_strict` against plain `json.loads` on a ~20 KB answer-like document.

Not a test. Run with `.venv/bin/python tests/bench/strictjson_bench.py [--rounds N]`.
Timings alternate between the two loaders and keep the best round of each, which is the
most stable figure on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from engine.bundle.strictjson import loads_strict

_TEXT = (
    "the claim is supported by evidence from packet section table figure result value "
    "measured baseline variance cohort protocol deviation analysis naïve café µg/mL "
    "dose response — which therefore suggests however because"
)
_WORDS = _TEXT.split(" ")


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _paragraphs(rng: random.Random, count: int) -> str:
    return "\n\n".join(
        " ".join(_sentence(rng, rng.randint(8, 20)) for _ in range(rng.randint(3, 6)))
        for _ in range(count)
    )


def answer_document(seed: int = 7) -> dict[str, Any]:
    """A deterministic LLM-answer-like document (~20 KB once dumped with indent=2)."""
    rng = random.Random(seed)
    claims = [
        {
            "id": f"claim-{index:03d}",
            "text": _sentence(rng, rng.randint(15, 35)),
            "evidence": [f"ev-{rng.randint(1, 999):04d}" for _ in range(rng.randint(1, 4))],
            "confidence": round(rng.random(), 3),
            "page": rng.randint(1, 300),
            "verified": rng.random() < 0.5,
            "notes": None,
        }
        for index in range(16)
    ]
    return {
        "schema": "answer/v1",
        "answer_id": "ans-0001234",
        "model": {"name": "example-model", "temperature": 0.2, "max_tokens": 4096},
        "prompt_hash": "sha256:" + "".join(rng.choice("0123456789abcdef") for _ in range(64)),
        "final": {
            "summary": _paragraphs(rng, 3),
            "claims": claims,
            "verdict": "supported",
        },
        "reasoning": _paragraphs(rng, 20) + " \U0001f4ca",
        "usage": {"prompt_tokens": 5123, "completion_tokens": 2210, "latency_s": 12.7},
    }


def _best_rate(loader: Callable[[], object], number: int, rounds: list[float]) -> None:
    start = time.perf_counter()
    for _ in range(number):
        loader()
    rounds.append(number / (time.perf_counter() - start))


def main() -> None:
    """Print the documents-per-second rate of both loaders and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--number", type=int, default=200, help="parses per round")
    parser.add_argument(
        "--style",
        choices=["indent-ascii", "compact-utf8"],
        default="indent-ascii",
        help="indent=2 with \\u escapes (json.dumps defaults), or compact raw UTF-8",
    )
    args = parser.parse_args()

    if args.style == "indent-ascii":
        text = json.dumps(answer_document(), indent=2)
    else:
        text = json.dumps(answer_document(), ensure_ascii=False, separators=(",", ":"))
    raw = text.encode("utf-8")
    if loads_strict(raw, "bench.json") != json.loads(raw):
        raise SystemExit("loaders disagree")
    plain: list[float] = []
    strict: list[float] = []
    for _ in range(args.rounds):
        _best_rate(lambda: json.loads(raw), args.number, plain)
        _best_rate(lambda: loads_strict(raw, "bench.json"), args.number, strict)
    plain_rate, strict_rate = max(plain), max(strict)
    size_mb = len(raw) / 1e6
    print(f"document: {len(raw)} bytes")
    print(f"json.loads:   {plain_rate:9.0f} docs/s  {plain_rate * size_mb:7.1f} MB/s")
    print(f"loads_strict: {strict_rate:9.0f} docs/s  {strict_rate * size_mb:7.1f} MB/s")
    print(f"loads_strict takes {plain_rate / strict_rate:.2f}x the time of json.loads")


if __name__ == "__main__":
    main()
