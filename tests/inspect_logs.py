"""Write real inspect_ai logs for the tests, offline (a script, not a test module).

`python tests/inspect_logs.py DIR` runs a small arithmetic task once per case with
inspect_ai's own `mockllm/model` provider, answering through a function defined here, so no
network and no model are needed, and writes each log as `DIR/CASE.eval` (the admitted run
also as `DIR/admitted.json`). It runs in its own process, so inspect_ai's logging, registry
and warnings stay out of the test process.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

QUESTIONS = {"q1": (1, 1), "q2": (2, 2), "q3": (3, 3), "q4": (4, 4)}


def _task(version: int = 1, ids: tuple[str, ...] = tuple(QUESTIONS)) -> Task:
    dataset = [
        Sample(id=i, input=f"{a}+{b}=?", target=str(a + b))
        for i, (a, b) in QUESTIONS.items()
        if i in ids
    ]
    return Task(dataset=dataset, solver=generate(), scorer=match(), name="arith", version=version)


def _answerer(
    wrong: frozenset[str] = frozenset(),
    failing: frozenset[str] = frozenset(),
    flaky: frozenset[str] = frozenset(),
    heavy: frozenset[str] = frozenset(),
) -> Callable[..., ModelOutput]:
    """A model that adds the two numbers: wrong for `wrong`, always failing for `failing`,
    failing once for `flaky`, and reporting 500 tokens for `heavy` (25 otherwise)."""
    failed_once: set[str] = set()

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        text = messages[-1].text
        sample = next(i for i, (a, b) in QUESTIONS.items() if text == f"{a}+{b}=?")
        if sample in failing or (sample in flaky and sample not in failed_once):
            failed_once.add(sample)
            raise RuntimeError(f"provider unavailable for {sample}")
        a, b = QUESTIONS[sample]
        output = ModelOutput.from_content(
            "mockllm/model", str(a + b + (1 if sample in wrong else 0))
        )
        tokens = 500 if sample in heavy else 25
        output.usage = ModelUsage(
            input_tokens=tokens - 5,
            output_tokens=5,
            total_tokens=tokens,
            input_tokens_cache_read=3,
            reasoning_tokens=2,
        )
        return output

    return answer


def _cases() -> dict[str, dict[str, Any]]:
    return {
        "admitted": {},
        "retried": {"answer": _answerer(flaky=frozenset({"q2"}))},
        "below_bar": {"answer": _answerer(wrong=frozenset({"q1", "q2"}))},
        "sample_error": {"answer": _answerer(failing=frozenset({"q3"}))},
        "other_model": {"model": "mockllm/other"},
        "other_temperature": {"temperature": 0.7},
        "token_overrun": {"answer": _answerer(heavy=frozenset({"q4"}))},
        "missing_sample": {"task": _task(ids=("q1", "q2", "q3"))},
        "other_version": {"task": _task(version=2)},
        "other_retry_policy": {"retry_on_error": 3},
    }


def write_logs(out: Path) -> None:
    """Run every case and write its log as `out/CASE.eval` (and `out/admitted.json`)."""
    work = out / "raw"
    for name, case in _cases().items():
        formats = ("eval", "json") if name == "admitted" else ("eval",)
        for log_format in formats:
            model = get_model(
                case.get("model", "mockllm/model"),
                custom_outputs=case.get("answer", _answerer()),
            )
            logs = inspect_eval(
                case.get("task", _task()),
                model=model,
                log_dir=str(work / f"{name}-{log_format}"),
                log_format=log_format,
                display="none",
                fail_on_error=False,
                retry_on_error=case.get("retry_on_error", 1),
                temperature=case.get("temperature", 0.0),
            )
            shutil.move(logs[0].location, out / f"{name}.{log_format}")
    shutil.rmtree(work)


if __name__ == "__main__":
    write_logs(Path(sys.argv[1]))
