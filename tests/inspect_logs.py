"""Write real inspect_ai logs for the tests, offline (a script, not a test module).

`python tests/inspect_logs.py DIR` runs small arithmetic tasks once per case with
inspect_ai's own `mockllm` provider, answering through functions defined here, so no
network and no model are needed, and writes each log as `DIR/CASE.eval` (some also as
`DIR/CASE.json`; a case of several tasks as `DIR/CASE-TASK.eval`). It runs in its own
process, so inspect_ai's logging, registry and warnings stay out of the test process.

The cases are what users produce: retries, sample errors, runs that stop with an error,
several epochs, several scorers (text, numeric and dict values), a grader model, tool
calls and tool errors, token, message and time limits, a run of two tasks, three arms
(models) on the same samples, a run cancelled from outside (inspect_ai writes `cancelled`)
and a results block edited after the run.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, eval_async
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import (
    Score,
    Scorer,
    Target,
    includes,
    match,
    mean,
    model_graded_qa,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, use_tools
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util._display import init_display_type

QUESTIONS = {"q1": (1, 1), "q2": (2, 2), "q3": (3, 3), "q4": (4, 4)}
EXTRA = {"q5": (5, 5)}  # only the case of an extra sample asks it
HARD = {"h1": (10, 20), "h2": (30, 40)}  # the second task of the two-task run
ALL = {**QUESTIONS, **EXTRA, **HARD}


@scorer(metrics=[mean()])
def closeness() -> Scorer:
    """A numeric score: 1 for the right sum, 1/2 when one off, else 0."""

    async def score(state: TaskState, target: Target) -> Score:
        try:
            off = abs(int(state.output.completion.strip()) - int(target.text))
        except ValueError:
            off = 99
        return Score(value={0: 1.0, 1: 0.5}.get(off, 0.0))

    return score


@scorer(metrics={"*": [mean()]})
def parts() -> Scorer:
    """A score whose value is a dict, as many inspect_ai scorers write."""

    async def score(state: TaskState, target: Target) -> Score:
        right = state.output.completion.strip() == target.text
        return Score(value={"exact": 1 if right else 0, "length": len(state.output.completion)})

    return score


@solver
def interrupt_at(sample_id: str) -> Solver:
    """Stops the whole run at `sample_id`, as a user's Ctrl-C does."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == sample_id:
            raise KeyboardInterrupt
        return state

    return solve


_RUNNING: dict[str, anyio.CancelScope] = {}


@solver
def cancel_at(sample_id: str) -> Solver:
    """Cancels the scope the run was started in at `sample_id`, as a supervisor that stops
    a run from outside does: inspect_ai then finishes the log with status `cancelled`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == sample_id:
            _RUNNING["scope"].cancel()
            await anyio.sleep(30)  # cancelled here, long before it ends
        return state

    return solve


@tool
def add(slow: bool = False) -> Tool:
    async def execute(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: the first number
            b: the second number
        """
        if a == 2:
            raise ToolError("the adder refuses 2")
        if slow and a == 4:
            await anyio.sleep(3)  # slow enough for the time limit of its case
        return a + b

    return execute


def _task(
    version: int = 1,
    ids: tuple[str, ...] = tuple(QUESTIONS),
    name: str = "arith",
    scorers: list[Scorer] | None = None,
    tools: bool = False,
    slow: bool = False,
    stop_at: str | None = None,
    cancel: str | None = None,
) -> Task:
    dataset = [
        Sample(id=i, input=f"{a}+{b}=?", target=str(a + b)) for i, (a, b) in ALL.items() if i in ids
    ]
    solver: Any = [use_tools(add(slow)), generate()] if tools else generate()
    if stop_at is not None:
        solver = [interrupt_at(stop_at), generate()]
    if cancel is not None:
        solver = [cancel_at(cancel), generate()]
    return Task(
        dataset=dataset,
        solver=solver,
        scorer=scorers or match(),
        name=name,
        version=version,
    )


def _usage(tokens: int) -> ModelUsage:
    return ModelUsage(
        input_tokens=tokens - 5,
        output_tokens=5,
        total_tokens=tokens,
        input_tokens_cache_read=3,
        reasoning_tokens=2,
    )


def _answerer(
    wrong: frozenset[str] = frozenset(),
    failing: frozenset[str] = frozenset(),
    flaky: frozenset[str] = frozenset(),
    heavy: frozenset[str] = frozenset(),
    wrong_again: frozenset[str] = frozenset(),
    model: str = "mockllm/model",
    tools: bool = False,
    chatty: frozenset[str] = frozenset(),
) -> Callable[..., ModelOutput]:
    """A model that adds the two numbers: wrong for `wrong` (for `wrong_again` from its
    second epoch on), always failing for `failing`, failing once for `flaky`, reporting 500
    tokens for `heavy` (25 otherwise). With `tools` it first asks the tool `add` (once,
    or, for `chatty`, again and again)."""
    seen: dict[str, int] = {}

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        first = next(m for m in messages if m.role == "user").text
        sample = next(i for i, (a, b) in ALL.items() if first == f"{a}+{b}=?")
        if sample in failing or (sample in flaky and sample not in seen):
            seen[sample] = 0
            raise RuntimeError(f"provider unavailable for {sample}")
        a, b = ALL[sample]
        asked = any(isinstance(m, ChatMessageTool) for m in messages)
        if tools and (sample in chatty or not asked):
            output = ModelOutput.for_tool_call(model, "add", {"a": a, "b": b})
        else:
            if messages[-1].role == "user" and not asked:
                seen[sample] = seen.get(sample, 0) + 1
            off = 1 if sample in wrong or (sample in wrong_again and seen[sample] > 1) else 0
            output = ModelOutput.from_content(model, str(a + b + off))
        output.usage = _usage(500 if sample in heavy else 25)
        return output

    return answer


def _grader(grade: str = "C") -> Callable[..., ModelOutput]:
    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/grader", f"GRADE: {grade}")
        output.usage = _usage(40)
        return output

    return answer


def _cases() -> dict[str, dict[str, Any]]:
    graded = [match(), model_graded_qa()]
    return {
        "admitted": {"formats": ("eval", "json")},
        "retried": {"answer": _answerer(flaky=frozenset({"q2"}))},
        "below_bar": {"answer": _answerer(wrong=frozenset({"q1", "q2"}))},
        "sample_error": {"answer": _answerer(failing=frozenset({"q3"}))},
        "other_model": {"model": "mockllm/other"},
        "other_temperature": {"temperature": 0.7},
        "token_overrun": {"answer": _answerer(heavy=frozenset({"q4"}))},
        "missing_sample": {"task": _task(ids=("q1", "q2", "q3"))},
        "other_version": {"task": _task(version=2)},
        "other_retry_policy": {"retry_on_error": 3},
        # what users produce beyond the first cases
        "run_error": {
            "answer": _answerer(failing=frozenset({"q3"})),
            "fail_on_error": True,
            "formats": ("eval", "json"),
        },
        "epochs": {"epochs": 2, "answer": _answerer(wrong_again=frozenset({"q1"}))},
        "scorers": {
            "task": _task(scorers=[match(), includes(), closeness(), parts()]),
            "answer": _answerer(wrong=frozenset({"q2"})),
        },
        "grader": {"task": _task(scorers=graded), "roles": {"grader": ("mockllm/grader", "C")}},
        "other_grader": {
            "task": _task(scorers=graded),
            "roles": {"grader": ("mockllm/judge", "I")},
        },
        "tools": {"task": _task(tools=True), "answer": _answerer(tools=True)},
        "token_limit": {
            "task": _task(tools=True),
            "answer": _answerer(tools=True, chatty=frozenset({"q1"})),
            "limits": {"token_limit": 60},
        },
        "message_limit": {
            "task": _task(tools=True),
            "answer": _answerer(tools=True, chatty=frozenset({"q1"})),
            "limits": {"message_limit": 5},
        },
        "time_limit": {
            "task": _task(tools=True, slow=True),
            "answer": _answerer(tools=True),
            "limits": {"time_limit": 1},
        },
        "two_tasks": {
            "task": [_task(), _task(name="hard", ids=tuple(HARD))],
            "answer": _answerer(wrong=frozenset({"h2"})),
        },
        # two arms (models) on the same samples
        "arm_base": {
            "model": "mockllm/base",
            "answer": _answerer(wrong=frozenset({"q1", "q2"}), model="mockllm/base"),
        },
        "arm_cand": {
            "model": "mockllm/cand",
            "answer": _answerer(wrong=frozenset({"q2"}), model="mockllm/cand"),
        },
        "arm_third": {
            "model": "mockllm/third",
            "answer": _answerer(wrong=frozenset({"q1"}), model="mockllm/third"),
        },
        "arm_cand_missing": {
            "model": "mockllm/cand",
            "task": _task(ids=("q1", "q2", "q3")),
            "answer": _answerer(model="mockllm/cand"),
        },
        "arm_cand_extra": {
            "model": "mockllm/cand",
            "task": _task(ids=(*QUESTIONS, *EXTRA)),
            "answer": _answerer(model="mockllm/cand"),
        },
        # a run cancelled from outside at q3: inspect_ai writes status `cancelled`
        "cancelled": {"task": _task(cancel="q3"), "sequential": True, "cancelled": True},
        # last: a run stopped by the user, its log left with status `started`
        "interrupted": {"task": _task(stop_at="q3"), "sequential": True},
    }


def _run_case(name: str, case: dict[str, Any], log_format: str, work: Path, out: Path) -> None:
    model_name = case.get("model", "mockllm/model")
    model = get_model(model_name, custom_outputs=case.get("answer", _answerer(model=model_name)))
    roles = {
        role: get_model(grader, custom_outputs=_grader(grade))
        for role, (grader, grade) in case.get("roles", {}).items()
    }
    log_dir = work / f"{name}-{log_format}"
    if case.get("cancelled"):
        anyio.run(_cancelled, case, model, log_dir, log_format)
        (log_file,) = log_dir.glob(f"*.{log_format}")
        shutil.move(log_file, out / f"{name}.{log_format}")
        return
    try:
        logs = _eval(case, model, roles, log_dir, log_format)
    except KeyboardInterrupt:  # the run stopped: its log is as inspect_ai left it
        (partial,) = log_dir.glob(f"*.{log_format}")
        shutil.move(partial, out / f"{name}.{log_format}")
        return
    if len(logs) == 1:
        shutil.move(logs[0].location, out / f"{name}.{log_format}")
        return
    for log in logs:
        shutil.move(log.location, out / f"{name}-{log.eval.task}.{log_format}")


def _eval(
    case: dict[str, Any], model: Any, roles: dict[str, Any], log_dir: Path, log_format: str
) -> list[Any]:
    return inspect_eval(
        case.get("task", _task()),
        model=model,
        model_roles=roles or None,
        log_dir=str(log_dir),
        log_format=log_format,
        display="none",
        fail_on_error=case.get("fail_on_error", False),
        retry_on_error=case.get("retry_on_error", 1),
        temperature=case.get("temperature", 0.0),
        epochs=case.get("epochs", 1),
        max_samples=1 if case.get("sequential") else None,
        **case.get("limits", {}),
    )


async def _cancelled(case: dict[str, Any], model: Any, log_dir: Path, log_format: str) -> None:
    """Run the case's task inside a scope that its solver cancels (`cancel_at`)."""
    init_display_type("none")
    async with anyio.create_task_group() as group:
        _RUNNING["scope"] = group.cancel_scope

        async def run() -> None:
            await eval_async(
                case["task"],
                model=model,
                log_dir=str(log_dir),
                log_format=log_format,
                retry_on_error=1,
                temperature=0.0,
                max_samples=1,
            )

        group.start_soon(run)


def _tampered_results(source: Path, target: Path) -> None:
    """The log at `source` with the accuracy of its results block set to 1/2, as an edit
    after the run leaves it, written by inspect_ai's own writer."""
    log = read_eval_log(str(source))
    assert log.results is not None
    log.results.scores[0].metrics["accuracy"].value = 0.5
    write_eval_log(log, str(target))


def _without_usage(source: Path, target: Path) -> None:
    """The log at `source` with the token count of its first model call removed, as a
    provider that reports none leaves it, written by inspect_ai's own writer."""
    log = read_eval_log(str(source))
    first = next(e for e in (log.samples or [])[0].events if e.event == "model")
    first.output.usage = None
    write_eval_log(log, str(target))


def _repeated_sample(source: Path, target: Path) -> None:
    """The log at `source` (two epochs) with q2's second epoch replaced by a copy of its
    first: every sample and epoch count still adds up, one (sample, epoch) is there twice
    and one is missing. Written by inspect_ai's own writer, as JSON: an `.eval` file keeps
    one entry per sample and epoch, where the copy would replace its original."""
    log = read_eval_log(str(source))
    samples = log.samples or []
    first = next(s for s in samples if s.id == "q2" and s.epoch == 1)
    second = next(i for i, s in enumerate(samples) if s.id == "q2" and s.epoch == 2)
    samples[second] = first.model_copy(deep=True)
    write_eval_log(log, str(target), format="json")


def write_logs(out: Path, only: list[str] | None = None) -> None:
    """Run every case (or those named) and write its logs into `out`."""
    work = out / "raw"
    for name, case in _cases().items():
        if only and name not in only:
            continue
        for log_format in case.get("formats", ("eval",)):
            _run_case(name, case, log_format, work, out)
    if (out / "admitted.eval").exists():
        _without_usage(out / "admitted.eval", out / "no_usage.eval")
        _tampered_results(out / "admitted.eval", out / "tampered_results.eval")
    if (out / "epochs.eval").exists():
        _repeated_sample(out / "epochs.eval", out / "repeated_sample.json")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    write_logs(Path(sys.argv[1]), sys.argv[2:] or None)
