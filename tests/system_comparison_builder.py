"""The synthetic system-comparison bundle of seed 000 §6 in `controls/system-comparison/`.

    python tests/system_comparison_builder.py      # rewrite controls/system-comparison/

Three systems (`native`, `madar`, `serena`), six tasks in three repositories, two
repetitions each, the provider order of each repetition taken in turn from the six
permutations. Every figure is written from the profile of its system (`PROFILES`), so what
the rules must conclude can be worked out by hand (docs/system-comparison-format.md,
"The synthetic bundle"): Madar within every gate, Native below the R_sys floors, Serena
at them. The output is deterministic: the same bytes on every run.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "controls" / "system-comparison"
SYSTEMS = ("native", "madar", "serena")
REPOSITORIES = ("R1", "R2", "R3")
TASKS_PER_REPOSITORY = 2
REPETITIONS = 2
MODEL = "gpt-5.6-sol"
START_UTC = "2026-10-01T09:00:00Z"
RESERVED_USD = "0.52"  # the worst case of one session: 90,000 uncached input + 8,000 output
# The integrity of a package tarball, in npm's form: sha512 of the (here synthetic) bytes.
MADAR_INTEGRITY = (
    "sha512-" + base64.b64encode(hashlib.sha512(b"synthetic package").digest()).decode()
)
ORDINARY_TOOLS = ["read_file", "list_files", "search_text"]
MADAR_TOOLS = [
    "retrieve",
    "impact",
    "call_chain",
    "community_overview",
    "pr_impact",
    "graph_stats",
    "graph_summary",
]
SERENA_TOOLS = [
    "initial_instructions",
    "get_symbols_overview",
    "find_symbol",
    "find_referencing_symbols",
    "find_declaration",
    "find_implementations",
    "search_for_pattern",
]


@dataclass(frozen=True)
class Operation:
    """One tool operation a system's investigation makes, in completion order."""

    channel: str
    tool: str
    tokens: int
    coordinates: bool  # whether the provider gives source coordinates
    setup: bool = False


@dataclass(frozen=True)
class Profile:
    """What one system's workflow costs and returns."""

    investigation_uncached: int
    investigation_seconds: int
    warm_seconds: int
    cold_seconds: int
    cold_cost: str
    operations: tuple[Operation, ...]
    missed: frozenset[str]  # obligations (by their number in the task) not addressed


PROFILES: dict[str, Profile] = {
    "native": Profile(
        60_000,
        300,
        0,
        5,
        "0.00",
        (
            Operation("ordinary", "search_text", 600, False),
            Operation("ordinary", "read_file", 900, False),
            Operation("ordinary", "read_file", 800, False),
        ),
        frozenset({"3"}),
    ),
    "madar": Profile(
        34_000,
        190,
        5,
        60,
        "0.02",
        (
            Operation("mcp", "retrieve", 1_200, True),
            Operation("mcp", "impact", 700, True),
            Operation("ordinary", "read_file", 800, False),
        ),
        frozenset(),
    ),
    "serena": Profile(
        36_000,
        200,
        10,
        90,
        "0.03",
        (
            Operation("mcp", "initial_instructions", 1_500, False, setup=True),
            Operation("mcp", "find_symbol", 900, True),
            Operation("mcp", "find_implementations", 100, False),
            Operation("ordinary", "read_file", 800, False),
        ),
        frozenset(),
    ),
}
CACHED_INPUT = 5_000
INVESTIGATION_OUTPUT = 3_000
REVIEW_UNCACHED = 15_000
REVIEW_OUTPUT = 2_000
REVIEW_SECONDS = 100
PREPARATION_SECONDS = 60
# With the 71 dispatched sessions of the workflows, the campaign is on its 90-session cap.
PREPARATION_SESSIONS = 19
# One Serena workflow makes exactly the 60 operations its cap allows.
FULL_WORKFLOW = "W03"
FULL_WORKFLOW_EXTRA = Operation("mcp", "search_for_pattern", 20, True)
# One investigation that times out on the eight-minute cap: its charges stay, its review is
# not launched, and it scores R_sys = U = 0 with critical_completion_failed.
TIMED_OUT = "W36"
INVESTIGATION_CAP_SECONDS = 480


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _tasks() -> list[dict[str, Any]]:
    return [
        {"task_id": f"K{i * TASKS_PER_REPOSITORY + j + 1}", "repository": r, "order": j + 1}
        for i, r in enumerate(REPOSITORIES)
        for j in range(TASKS_PER_REPOSITORY)
    ]


def _blocks(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks = []
    for task in tasks:
        for repetition in range(1, REPETITIONS + 1):
            number = len(blocks) + 1
            blocks.append(
                {"block_id": f"B{number:02d}", "task_id": task["task_id"], "repetition": repetition}
            )
    return blocks


def _workflows(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    orders = list(itertools.permutations(SYSTEMS))
    workflows = []
    for index, block in enumerate(blocks):
        for position, system in enumerate(orders[index % len(orders)], start=1):
            workflows.append(
                {
                    "workflow_id": f"W{len(workflows) + 1:02d}",
                    "block_id": block["block_id"],
                    "system": system,
                    "position": position,
                }
            )
    return workflows


def _response(workflow: str, seq: int, op: Operation, status: str) -> str:
    """The raw bytes a tool returned: neutral synthetic source text, or nothing."""
    if status == "empty":
        return ""
    if status == "unsupported":
        return f"{op.tool}: not supported for this language server\n"
    if status == "setup_error":
        return f"{op.tool}: the provider could not open its project index for this call\n"
    if status == "readiness_timeout":
        return f"{op.tool}: the language server was not ready within its frozen readiness timeout\n"
    lines = [f"// {workflow} observation {seq} from {op.tool}"]
    lines += [
        f"export function step{n}(input: number): number {{ return input + {n}; }}"
        for n in range(3)
    ]
    if status == "truncated":
        lines.append("... output truncated by the provider ...")
    return "\r\n".join(lines) + "\n" if op.channel == "ordinary" else "\n".join(lines) + "\n"


def _status(system: str, op: Operation, block_number: int) -> str:
    if op.tool == "find_implementations":
        return "unsupported"  # an honest capability outcome after valid setup (C19)
    if system == "native" and op.tool == "search_text" and block_number == 3:
        return "empty"
    if system == "madar" and op.tool == "impact" and block_number == 5:
        return "error"
    if system == "serena" and op.tool == "find_symbol" and block_number == 7:
        return "truncated"
    # Provider outcomes after valid setup (C19): neither evidence nor infrastructure failure.
    if system == "madar" and op.tool == "impact" and block_number == 9:
        return "setup_error"
    if system == "serena" and op.tool == "find_symbol" and block_number == 11:
        return "readiness_timeout"
    return "ok"


def build() -> dict[str, Any]:
    """Every file of the bundle, as {relative path: text}."""
    tasks = _tasks()
    blocks = _blocks(tasks)
    workflows = _workflows(blocks)
    block_of = {b["block_id"]: b for b in blocks}
    task_of = {t["task_id"]: t for t in tasks}
    files: dict[str, Any] = {}
    sessions: list[dict[str, Any]] = []
    operations: list[dict[str, Any]] = []
    setups: list[dict[str, Any]] = []
    scores: list[dict[str, Any]] = []
    clock = 0
    for number in range(1, PREPARATION_SESSIONS + 1):  # smoke fixture and preflight
        sessions.append(
            _session(
                f"P{number}", None, "preparation", False, clock, PREPARATION_SECONDS, 8_000, 500
            )
        )
        clock += PREPARATION_SECONDS
    for workflow in workflows:
        wid, system = workflow["workflow_id"], workflow["system"]
        profile = PROFILES[system]
        block = block_of[workflow["block_id"]]
        task = task_of[block["task_id"]]
        block_number = int(block["block_id"][1:])
        if task["order"] == 1 and block["repetition"] == 1:
            setups.append(
                _setup(
                    f"C-{system}-{task['repository']}",
                    system,
                    task,
                    "cold",
                    wid,
                    profile.cold_seconds,
                    profile.cold_cost,
                )
            )
            clock += profile.cold_seconds
        setups.append(_setup(f"H-{wid}", system, task, "warm", wid, profile.warm_seconds, "0.00"))
        clock += profile.warm_seconds
        investigation = f"{wid}-I"
        failed = wid == TIMED_OUT
        seconds = INVESTIGATION_CAP_SECONDS if failed else profile.investigation_seconds
        sessions.append(
            _session(
                investigation,
                wid,
                "investigation",
                True,
                clock,
                seconds,
                profile.investigation_uncached,
                INVESTIGATION_OUTPUT,
            )
        )
        if failed:
            sessions[-1]["outcome"] = "timed_out"
        items = []
        ops = profile.operations
        if wid == FULL_WORKFLOW:
            ops += (FULL_WORKFLOW_EXTRA,) * (60 - len(ops))
        for seq, op in enumerate(ops, start=1):
            status = _status(system, op, block_number)
            response = _response(wid, seq, op, status)
            path = f"toollog/{wid}-{seq}.txt"
            files[path] = response
            record = {
                "op_id": f"{wid}-O{seq}",
                "workflow_id": wid,
                "session_id": investigation,
                "channel": op.channel,
                "tool": op.tool,
                "arguments": {"query": f"{task['task_id']} step {seq}"},
                "metadata": {"duration_ms": 40 * seq, "status": status},
                "coordinates": (
                    {"path": "src/steps.ts", "start_line": 2, "end_line": 4}
                    if op.coordinates
                    else None
                ),
                "seq": seq,
                "status": status,
                "setup": op.setup,
                "tokens": op.tokens,
                "response_path": path,
                "response_sha256": _sha(response),
            }
            operations.append(record)
            if not op.setup:
                items.append(
                    {
                        "evidence_id": f"E{len(items) + 1}",
                        "op_id": record["op_id"],
                        "tool": op.tool,
                        "arguments": record["arguments"],
                        "metadata": record["metadata"],
                        "coordinates": record["coordinates"],
                        "response": response,
                    }
                )
        clock += seconds
        if failed:
            sessions.append(_not_dispatched(f"{wid}-R", wid))
        else:
            sessions.append(
                _session(
                    f"{wid}-R",
                    wid,
                    "review",
                    True,
                    clock,
                    REVIEW_SECONDS,
                    REVIEW_UNCACHED,
                    REVIEW_OUTPUT,
                )
            )
            clock += REVIEW_SECONDS
        tokens = sum(op.tokens for op in ops if not op.setup)
        files[f"packets/{wid}.json"] = {
            "workflow_id": wid,
            "tokens": tokens,
            "outcome": "delivered",
            "items": items,
        }
        support = [i["evidence_id"] for i in items if _supports(i, operations)]
        for n in ("1", "2", "3", "4"):
            answerable = n != "4"
            addressed = answerable and n not in profile.missed and not failed
            scores.append(
                {
                    "workflow_id": wid,
                    "obligation_id": f"O{task['task_id'][1:]}{n}",
                    "addressed": addressed,
                    "packet_supported": addressed and n != "3" and bool(support),
                    "support": support[:1] if addressed and n != "3" and support else [],
                    "u_credit": not answerable and not failed,
                    "critical_wrong_claim": False,
                }
            )
    files["design.yaml"] = {
        "campaign_id": "system-comparison-synthetic-1",
        "synthetic": True,
        "seed": "synthetic-seed-1",
        "model": MODEL,
        "started_at": START_UTC,
        "ended_at": _utc_after(clock),
        "price_card": {
            "identity": "codex-work-reference-2026-09-05",
            "date": "2026-09-05",
            "usd_per_million": {"uncached_input": "4", "cached_input": "0.40", "output": "20"},
        },
        "systems": [
            {"system": s, "provider": p}
            for s, p in zip(
                SYSTEMS,
                ("ordinary tools only", "@lubab/madar@0.32.1 core", "oraios/serena LSP"),
                strict=True,
            )
        ],
        "repositories": [
            {
                "repository": r,
                "commit": hashlib.sha1(r.encode()).hexdigest(),
                "source_tree_sha256": _sha(f"tree {r}"),
            }
            for r in REPOSITORIES
        ],
        "tasks": tasks,
        "blocks": blocks,
        "workflows": workflows,
    }
    files["preflight.yaml"] = _preflight(tasks)
    files["truth.yaml"] = {
        "obligations": [
            {
                "obligation_id": f"O{t['task_id'][1:]}{n}",
                "task_id": t["task_id"],
                "answer_set": "unanswerable" if n == "4" else "repository",
                "critical": n == "1",
            }
            for t in tasks
            for n in ("1", "2", "3", "4")
        ]
    }
    files["sessions.jsonl"] = sessions
    files["operations.jsonl"] = operations
    files["setup.jsonl"] = setups
    files["scores.jsonl"] = scores
    files["rulecheck.yaml"] = {"protocol": "system_comparison"}
    return files


def _supports(item: dict[str, Any], operations: list[dict[str, Any]]) -> bool:
    op = next(o for o in operations if o["op_id"] == item["op_id"])
    return bool(op["status"] == "ok")


def _session(
    sid: str,
    wid: str | None,
    stage: str,
    planned: bool,
    start: int,
    seconds: int,
    uncached: int,
    output: int,
) -> dict[str, Any]:
    return {
        "session_id": sid,
        "workflow_id": wid,
        "stage": stage,
        "planned": planned,
        "outcome": "completed",
        "validity": "valid",
        "model": MODEL,
        "start_s": start,
        "end_s": start + seconds,
        "uncached_input": uncached,
        "cached_input": CACHED_INPUT,
        "output": output,
        "reserved_usd": RESERVED_USD,
    }


def _not_dispatched(sid: str, wid: str) -> dict[str, Any]:
    """A review that was not launched: its record, with no charge or time invented."""
    record = _session(sid, wid, "review", True, 0, 0, 0, 0)
    record.update(
        outcome="not_dispatched",
        start_s=None,
        end_s=None,
        cached_input=0,
        reserved_usd=None,
    )
    return record


def _setup(
    sid: str, system: str, task: dict[str, Any], condition: str, wid: str, seconds: int, cost: str
) -> dict[str, Any]:
    steps = (
        ["install", "index", "readiness"]
        if condition == "cold"
        else ["server_activation", "first_query"]
    )
    return {
        "setup_id": sid,
        "system": system,
        "repository": task["repository"],
        "condition": condition,
        "workflow_id": wid,
        "seconds": seconds,
        "cost_usd": cost,
        "steps": steps,
    }


def _preflight(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    mcp = {"native": [], "madar": MADAR_TOOLS, "serena": SERENA_TOOLS}
    return {
        "exposures": [
            {
                "system": s,
                "ordinary_tools": ORDINARY_TOOLS,
                "mcp_tools": mcp[s],
                "mcp_resources": [],
                "mcp_prompts": [],
                "mcp_completions": [],
            }
            for s in SYSTEMS
        ],
        "serena": [
            {
                "task_id": t["task_id"],
                "source_commit": "13ac8c5b1d51873bd148aea440dcb22f85d3a439",
                "global_fixed_tools": SERENA_TOOLS,
                "project_fixed_tools": SERENA_TOOLS,
                "read_only": True,
                "activation_command": None,
                "initial_prompt": "",
                "global_excluded_tools": [],
                "global_included_optional_tools": [],
                "project_excluded_tools": [],
                "project_included_optional_tools": [],
                "base_modes": [],
                "default_modes": [],
                "modes": ["planning", "no-memories"],
                "context": "codex",
                "language_backend": "LSP",
                "language_servers": ["typescript"],
                "project_path": f"/snapshots/{t['repository']}",
                "serena_home": f"/runtime/{t['task_id']}/serena-home",
                "project_data_folder": f"/runtime/{t['task_id']}/project-data",
                "onboarding": False,
                "typescript_version": "5.9.3",
                "typescript_source": "bundled",
            }
            for t in tasks
        ],
        "madar": {
            "package": "@lubab/madar",
            "version": "0.32.1",
            "source_commit": "06b373a447acfce895412ac10eb4e5228c5df0b7",
            "integrity": MADAR_INTEGRITY,
            "installed_integrity": MADAR_INTEGRITY,
            "tool_profile": "core",
            "auto_refresh": False,
            "optional_downloads": False,
            "resolved_compiler": "typescript 6.0.3",
        },
        "snapshots": [
            {
                "system": s,
                "repository": r,
                "before_sha256": _sha(f"tree {r}"),
                "after_sha256": _sha(f"tree {r}"),
            }
            for r in REPOSITORIES
            for s in SYSTEMS
        ],
    }


def _utc_after(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"2026-10-01T{9 + hours:02d}:{minutes:02d}:{secs:02d}Z"


def _text(value: Any, path: str) -> str:
    if isinstance(value, str):
        return value
    if path.endswith(".jsonl"):
        return "".join(json.dumps(r, sort_keys=True) + "\n" for r in value)
    if path.endswith(".json"):
        return json.dumps(value, indent=2, sort_keys=True) + "\n"
    return yaml.dump(value, Dumper=_NoAliases, sort_keys=False)


class _NoAliases(yaml.SafeDumper):
    """A dumper that writes every value out: the bundle loader refuses YAML aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write(files: dict[str, Any], folder: Path) -> None:
    """Write the bundle's files into `folder`, replacing what was there."""
    if folder.exists():
        shutil.rmtree(folder)
    for path, value in sorted(files.items()):
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8", newline="") as handle:
            handle.write(_text(value, path))


def main(argv: list[str]) -> int:
    """Rewrite controls/system-comparison/ (or the folder given)."""
    write(build(), Path(argv[0]) if argv else BUNDLE)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
