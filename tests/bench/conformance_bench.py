"""Benchmark the replay of a generated controller trace and `rulecheck conformance` on it.

The reference run of tests/conformance_builder.py (a root, a node and an attempt from
dispatch to settlement, with decisions, usage, accesses, snapshots and a ledger) is
repeated with fresh entity and record IDs until the trace holds the wanted number of
events; every copy conforms. Two figures: the replay alone (the three lifecycle tables
over the built graph, in process: one sort and one pass each), and the whole command as
a child process (reading, the graph, every rule of the conformance suites).

    python tests/bench/conformance_bench.py --events 10000 100000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from engine.bundle.documents import load_document  # noqa: E402
from engine.evaluate.replay import machine, replay  # noqa: E402
from engine.graph.build import build_graph, graph_spec  # noqa: E402
from engine.ruleset import load_ruleset  # noqa: E402
from engine.syntax import ast  # noqa: E402
from tests.conformance_builder import Trace, reference  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answers_bench import rulecheck_command, run_child  # noqa: E402

RENAMED = ("id", "entity", "node", "attempt", "subject", "ref", "cause", "decision_ref")


def scaled_trace(events: int) -> list[dict[str, Any]]:
    """The reference run repeated, each copy with its own IDs, until `events` events."""
    base = Trace()
    reference(base)
    records: list[dict[str, Any]] = []
    counted, copy = 0, 0
    while counted < events:
        for record in base.records:
            if record["type"] == "event":
                if counted >= events:
                    break
                counted += 1
            fresh = {**record, "seq": len(records) + 1}
            for name in RENAMED:
                if isinstance(record.get(name), str):
                    fresh[name] = f"{record[name]}-{copy}"
            for name in ("idempotency_key", "request", "worktree"):
                if isinstance(record.get(name), str):
                    fresh[name] = f"{copy}/{record[name]}"
            if "path" in record and record["type"] == "access":
                fresh["path"] = f"{copy}/{record['path']}"
            if record["type"] == "ledger":  # the ledger holds every copy settled so far
                fresh["settled_usd"] = str(Decimal(record["settled_usd"]) * (copy + 1))
            records.append(fresh)
        copy += 1
    return records


def write_bundle(folder: Path, events: int) -> int:
    """Write a trace bundle of `events` events; returns its number of records."""
    records = scaled_trace(events)
    lines = (json.dumps(r, sort_keys=True) for r in records)
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")
    return len(records)


def replay_seconds(folder: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of replaying every lifecycle table over the trace's graph."""
    ruleset = load_ruleset([ROOT / "rules"])
    checked = ruleset.checked
    document = load_document("trace", folder / "trace.jsonl", "jsonl")
    graph = build_graph(graph_spec(checked, "conformance"), {"trace": document.value})
    tables = [
        decl
        for decl in checked.symbols.of_type(ast.TransitionsDecl).values()
        if decl.replay is not None
    ]
    start, start_cpu = time.perf_counter(), time.process_time()
    steps = 0
    for decl in tables:
        kind = checked.symbols.kinds[decl.replay.kind.text] if decl.replay else None
        steps += len(replay(graph, machine(decl, kind)).steps)
    return time.perf_counter() - start, time.process_time() - start_cpu, steps


def command_seconds(folder: Path) -> tuple[float, float, int, int]:
    """Wall and CPU seconds, peak memory (KiB) and exit code of `rulecheck conformance`."""
    run = run_child([*rulecheck_command(), "conformance", str(folder)], ROOT)
    return run.wall, run.cpu, run.max_rss // 1024, run.exit_code


def section(sizes: tuple[int, ...]) -> str:
    """A markdown table: replay and whole command at each trace size, one run each."""
    lines = [
        "## conformance: replaying a controller trace",
        "",
        "Input: the reference run of `tests/conformance_builder.py` repeated with fresh IDs "
        "(`tests/bench/conformance_bench.py`) up to the number of events; every copy "
        "conforms. *replay*: the three lifecycle tables of `rules/001_controller.rules` "
        "replayed over the built graph, in process (one sort and one pass per table). "
        "*command*: `rulecheck conformance TRACE` as a child process (reading, the graph, "
        "every rule of the suites). Load average at start: "
        + ", ".join(f"{v:.2f}" for v in os.getloadavg())
        + ".",
        "",
        "| events | records | replay wall | replay CPU | command wall | command CPU "
        "| peak RSS | exit |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for events in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            records = write_bundle(folder, events)
            wall, cpu, steps = replay_seconds(folder)
            assert steps == events, (steps, events)
            c_wall, c_cpu, rss, code = command_seconds(folder)
        lines.append(
            f"| {events:,} | {records:,} | {wall:.2f} s | {cpu:.2f} s | {c_wall:.1f} s | "
            f"{c_cpu:.1f} s | {rss / 1024:,.0f} MiB | {code} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--events", type=int, nargs="+", default=[10_000, 100_000])
    print(section(tuple(parser.parse_args().events)))


if __name__ == "__main__":
    main()
