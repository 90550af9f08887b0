"""`rulecheck import inspect LOG... --out DIR`: inspect_ai logs as rulecheck input documents.

Each log is read with inspect_ai's own reader (an optional dependency, imported only here
and only when a log is converted) from the bytes whose sha256 is recorded, so the
documents describe exactly the file that was hashed. The layout is in `docs/inspect.md`:
`runs.jsonl`, `samples.jsonl`, `scores.jsonl`, `metrics.jsonl`, `usage.jsonl`, `tools.jsonl`,
`sources.jsonl` and a `rulecheck.yaml` naming the protocol. Every line is canonical JSON,
every document is sorted, so the same logs always give the same bytes. This module knows
inspect_ai's format and nothing of any protocol: the thresholds live in rule files.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.freeze.canonical import canonical_json
from engine.limits import read_input, shown_path
from engine.report.export import ExportedFile

DEFAULT_PROTOCOL = "inspect_eval"
PAIRED_PROTOCOL = "inspect_paired"
DOCUMENTS = ("runs", "samples", "scores", "metrics", "usage", "tools", "sources")
_FORMATS = {".eval": "eval", ".json": "json"}
_USAGE_FIELDS = (
    ("input_tokens", "input_tokens"),
    ("output_tokens", "output_tokens"),
    ("total_tokens", "total_tokens"),
    ("cache_read_tokens", "input_tokens_cache_read"),
    ("cache_write_tokens", "input_tokens_cache_write"),
    ("reasoning_tokens", "reasoning_tokens"),
)


@dataclass(frozen=True, slots=True)
class Converted:
    """The records one log gives, per document."""

    runs: list[dict[str, Any]]
    samples: list[dict[str, Any]]
    scores: list[dict[str, Any]]
    metrics: list[dict[str, Any]]
    usage: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    sources: list[dict[str, Any]]


def _refused(code: str, path: Path, message: str, hint: str | None = None) -> RulecheckError:
    diagnostic = Diagnostic(code, message, Location(shown_path(path)), hint=hint)
    return RulecheckError([diagnostic], ExitCode.USAGE)


def _reader() -> Any:
    """inspect_ai's `read_eval_log`, or exit 2 with how to install it."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        message = "reading inspect_ai logs needs the optional package `inspect_ai`"
        hint = "install it with `pip install rulecheck[inspect]`"
        raise RulecheckError(
            [Diagnostic("INSPECT_NOT_INSTALLED", message, Location("inspect_ai"), hint=hint)],
            ExitCode.USAGE,
        ) from None
    return read_eval_log


def read_log(path: Path) -> tuple[Any, bytes]:
    """The parsed log at `path` and the exact bytes it was parsed from.

    Raises:
        RulecheckError: exit 2, located at the file: `INSPECT_NOT_INSTALLED`,
            `FILE_UNREADABLE` / `INPUT_NOT_REGULAR` / `INPUT_TOO_LARGE` (a missing file, a
            FIFO...), `INSPECT_LOG_FORMAT` (a name that is neither `.eval` nor `.json`) or
            `INSPECT_LOG_UNREADABLE` (inspect_ai cannot read it as a log).
    """
    log_format = _FORMATS.get(path.suffix.lower())
    if log_format is None:
        raise _refused(
            "INSPECT_LOG_FORMAT",
            path,
            f"`{shown_path(path)}` is not an inspect_ai log",
            hint="an inspect_ai log is a `.eval` or `.json` file",
        )
    read_eval_log = _reader()
    data = read_input(path)
    try:
        log = read_eval_log(io.BytesIO(data), format=log_format)
    except Exception as error:  # the reader's errors are its own; none may escape as a crash
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise _refused(
            "INSPECT_LOG_UNREADABLE",
            path,
            f"inspect_ai cannot read `{shown_path(path)}` as a `.{log_format}` log: {reason[:300]}",
        ) from None
    return log, data


def _dump(value: Any) -> Any:
    """A pydantic model (or a plain value) as JSON data, None where there is nothing."""
    if value is None:
        return None
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    return json.loads(json.dumps(value, default=str))


def decimal_text(value: Any) -> str | None:
    """A number as exact decimal text (`0.7`, never `7e-1`), the form `attr ... as text`
    reads; None for anything else, a boolean, NaN and the infinities included."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".") or "0"
    return text


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _generate_config(log: Any) -> dict[str, Any]:
    """The generation config the run used: the model's, then the eval's settings over it."""
    merged: dict[str, Any] = dict(_dump(log.eval.model_generate_config) or {})
    plan_config = _dump(getattr(log.plan, "config", None)) or {}
    merged.update(plan_config)
    return merged


def _dataset_sha256(log: Any) -> str | None:
    """The sha256 of the canonical JSON list of `[id, input, target]` of each distinct
    sample, sorted by id: what the run was asked, whatever the order or the epochs."""
    samples = log.samples or []
    if not samples:
        return None
    distinct = {str(s.id): [str(s.id), _dump(s.input), _dump(s.target)] for s in samples}
    items = [distinct[key] for key in sorted(distinct)]
    return hashlib.sha256(canonical_json(items)).hexdigest()


def _model_roles(spec: Any) -> dict[str, str]:
    """Each model role of the run (`grader`...) and the model it was bound to."""
    roles = spec.model_roles or {}
    return {str(role): str(getattr(bound, "model", bound)) for role, bound in roles.items()}


def _solver(log: Any) -> str | None:
    """The solver chain the run used: its plan's solver names, in order, joined by `, `."""
    steps = getattr(log.plan, "steps", None) or []
    return ", ".join(str(step.solver) for step in steps) or None


def _run(log: Any, run_id: str, source: str, digest: str, arm: str | None) -> dict[str, Any]:
    spec = log.eval
    config = _generate_config(log)
    revision = spec.revision
    results = log.results
    limits = {
        name: _dump(getattr(spec.config, name, None))
        for name in ("message_limit", "token_limit", "turn_limit", "time_limit", "working_limit")
    }
    return {
        "id": run_id,
        "arm": arm,
        "source": source,
        "source_sha256": digest,
        "status": log.status,
        "error": log.error.message if log.error is not None else None,
        "task": spec.task,
        "task_id": spec.task_id,
        "task_version": _text(spec.task_version),
        "task_file": spec.task_file,
        "revision_commit": revision.commit if revision is not None else None,
        "revision_dirty": revision.dirty if revision is not None else None,
        "model": spec.model,
        "model_roles": _model_roles(spec),
        "solver": _solver(log),
        "temperature": decimal_text(config.get("temperature")),
        "generate_config": config,
        "dataset_name": spec.dataset.name,
        "dataset_location": spec.dataset.location,
        "dataset_samples": spec.dataset.samples,
        "dataset_sample_ids": [str(i) for i in spec.dataset.sample_ids or []],
        "dataset_sha256": _dataset_sha256(log),
        "epochs": spec.config.epochs,
        "retry_on_error": spec.config.retry_on_error,
        "fail_on_error": _dump(spec.config.fail_on_error),
        "inspect_ai_version": (spec.packages or {}).get("inspect_ai"),
        "headline_scorer": _headline(log),
        "scorers": sorted({str(s.scorer) for s in (results.scores if results else [])}),
        "total_samples": results.total_samples if results is not None else None,
        "completed_samples": results.completed_samples if results is not None else None,
        "limits": {name: value for name, value in limits.items() if value is not None},
        "tags": [str(tag) for tag in spec.tags or []],
        "metadata": _dump(spec.metadata) or {},
    }


def _headline(log: Any) -> str | None:
    results = log.results
    if results is None or not results.scores:
        return None
    return str(results.scores[0].name)


def _metrics(log: Any, run_id: str) -> list[dict[str, Any]]:
    """Each metric inspect_ai reported in `results.scores`, as it reported it: the value
    it computed in binary floating point, written as exact decimal text."""
    results = log.results
    records: list[dict[str, Any]] = []
    for score in results.scores if results is not None else []:
        for name, metric in sorted((score.metrics or {}).items()):
            records.append(
                {
                    "id": f"{run_id}/{score.name}/{name}",
                    "run": run_id,
                    "score": str(score.name),
                    "scorer": str(score.scorer),
                    "reducer": score.reducer,
                    "name": str(name),
                    "value": decimal_text(metric.value),
                    "params": _dump(metric.params) or {},
                    "scored_samples": score.scored_samples,
                    "unscored_samples": score.unscored_samples,
                }
            )
    return records


def _usage_record(sample_key: str, attempt: int, order: int, event: Any) -> dict[str, Any]:
    usage = event.output.usage if event.output is not None else None
    record: dict[str, Any] = {
        "id": f"{sample_key}/{attempt}/{order}",
        "sample": sample_key,
        "attempt": attempt,
        "order": order,
        "model": event.model,
        "role": event.role,
        "error": _text(event.error),
        "cache": event.cache,
        "provider_retries": event.retries,
        "working_time": decimal_text(event.working_time),
    }
    for name, field in _USAGE_FIELDS:
        record[name] = getattr(usage, field, None) if usage is not None else None
    record["reported_cost"] = decimal_text(getattr(usage, "total_cost", None))
    return record


def _tool_record(sample_key: str, attempt: int, order: int, event: Any) -> dict[str, Any]:
    error = event.error
    return {
        "id": f"{sample_key}/{attempt}/{order}",
        "sample": sample_key,
        "attempt": attempt,
        "order": order,
        "function": event.function,
        "error_type": error.type if error is not None else None,
        "error": error.message if error is not None else None,
        "working_time": decimal_text(event.working_time),
    }


def _events(events: Any, kind: str) -> list[Any]:
    return [e for e in events or [] if getattr(e, "event", None) == kind]


def _numbered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for sequence, record in enumerate(records, start=1):  # the order they happened in
        record["sequence"] = sequence
    return records


@dataclass(frozen=True, slots=True)
class _Sample:
    record: dict[str, Any]
    scores: list[dict[str, Any]]
    usage: list[dict[str, Any]]
    tools: list[dict[str, Any]]


def _sample(run: dict[str, Any], sample: Any) -> _Sample:
    run_id = run["id"]
    key = f"{run_id}/{sample.id}/{sample.epoch}"
    retries = sample.error_retries or []
    attempts = [*(failed.events for failed in retries), sample.events]
    usage: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for attempt, events in enumerate(attempts, start=1):
        models, calls = _events(events, "model"), _events(events, "tool")
        usage += [_usage_record(key, attempt, n, e) for n, e in enumerate(models, start=1)]
        tools += [_tool_record(key, attempt, n, e) for n, e in enumerate(calls, start=1)]
        counts.update(str(getattr(e, "event", "unknown")) for e in events or [])
    limit = sample.limit
    scores = [
        {
            "id": f"{key}/{name}",
            "sample": key,
            "run": run_id,
            "scorer": name,
            "value": _dump(score.value),
            "value_text": _text(score.value) if isinstance(score.value, str) else None,
            "value_number": decimal_text(score.value),
        }
        for name, score in sorted((sample.scores or {}).items())
    ]
    record = {
        "id": key,
        "run": run_id,
        "arm": run["arm"],
        "task": run["task"],
        "sample_id": str(sample.id),
        "epoch": sample.epoch,
        "error": sample.error.message if sample.error is not None else None,
        "retries": len(retries),
        "retry_errors": [r.message for r in retries],
        "attempts": len(retries) + 1,
        "limit": _dump(limit),
        "limit_type": str(limit.type) if limit is not None else None,
        "scorers": [s["scorer"] for s in scores],
        "total_tokens": sum(u["total_tokens"] or 0 for u in usage),
        "model_calls": len(usage),
        "tool_calls": len(tools),
        "tool_errors": sum(1 for t in tools if t["error_type"] is not None),
        "events": dict(sorted(counts.items())),
        "total_time": decimal_text(sample.total_time),
        "working_time": decimal_text(sample.working_time),
    }
    return _Sample(record, scores, _numbered(usage), _numbered(tools))


def convert(path: Path, arm: str | None = None) -> Converted:
    """The records of the log at `path`, its run and samples marked with `arm` (see
    `read_log` for what is refused)."""
    log, data = read_log(path)
    digest = hashlib.sha256(data).hexdigest()
    run_id = str(log.eval.eval_id)
    run = _run(log, run_id, path.name, digest, arm)
    converted = Converted([run], [], [], _metrics(log, run_id), [], [], [])
    for sample in log.samples or []:
        found = _sample(run, sample)
        converted.samples.append(found.record)
        converted.scores.extend(found.scores)
        converted.usage.extend(found.usage)
        converted.tools.extend(found.tools)
    converted.sources.append(
        {"id": run_id, "file": path.name, "sha256": digest, "bytes": len(data)}
    )
    return converted


def parse_arms(given: tuple[str, ...] | list[str]) -> dict[Path, str]:
    """The arm of each log, from `--arm ARM=LOG` options.

    Raises:
        RulecheckError: exit 2 (`INSPECT_ARM`) for an option without `=`, an empty or
            malformed arm name, or one log given two arms.
    """
    arms: dict[Path, str] = {}
    for option in given:
        name, sep, log = option.partition("=")
        if not sep or not log or not name or not name.replace("_", "").replace("-", "").isalnum():
            message = f"`--arm {option}` is not ARM=LOG with a plain arm name"
            raise RulecheckError(
                [
                    Diagnostic(
                        "INSPECT_ARM",
                        message,
                        Location("--arm"),
                        hint="name each arm with letters, digits, `_` or `-`: "
                        "`--arm baseline=runs/base.eval`",
                    )
                ],
                ExitCode.USAGE,
            )
        path = Path(log)
        if path in arms and arms[path] != name:
            raise _refused(
                "INSPECT_ARM",
                path,
                f"`{shown_path(path)}` is given as the arm `{arms[path]}` and as `{name}`",
                hint="a log is one arm",
            )
        arms[path] = name
    return arms


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    ordered = sorted(records, key=lambda r: str(r["id"]))
    return b"".join(canonical_json(r) + b"\n" for r in ordered)


def import_files(
    logs: list[Path],
    protocol: str = DEFAULT_PROTOCOL,
    arms: dict[Path, str] | None = None,
) -> list[ExportedFile]:
    """The files of the imported folder, for `engine.report.export.write_files`; `arms`
    names the arm of each log it holds (the others have none).

    Raises:
        RulecheckError: exit 2 for the first log that cannot be read, or for two logs of one
            run (the same eval id), which would make every record of it twice.
    """
    merged = Converted([], [], [], [], [], [], [])
    seen: dict[str, Path] = {}
    for path in logs:
        converted = convert(path, (arms or {}).get(path))
        run_id = converted.runs[0]["id"]
        if run_id in seen:
            raise _refused(
                "INSPECT_LOG_DUPLICATE",
                path,
                f"`{shown_path(path)}` holds the run `{run_id}` that "
                f"`{shown_path(seen[run_id])}` holds too",
                hint="import each run once",
            )
        seen[run_id] = path
        for name in DOCUMENTS:
            getattr(merged, name).extend(getattr(converted, name))
    documents = {f"{name}.jsonl": _jsonl(getattr(merged, name)) for name in DOCUMENTS}
    documents["rulecheck.yaml"] = f"protocol: {protocol}\n".encode()
    return [ExportedFile(name, documents[name]) for name in sorted(documents)]
