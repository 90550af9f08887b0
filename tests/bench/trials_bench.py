"""Benchmark `rulecheck evaluate trials` and `rulecheck check` on large generated trial sets.

The synthetic trial set of seed 001 (tests/trials_builder.py) is scaled by repeating its
trials with fresh trial IDs, seeds and trees until the set holds the wanted number of
trials; every trial keeps its results (one per hidden-check execution). Rules that compare
every record of a kind with every other grow with the square of the set, so the sizes are
the point.

    python tests/bench/trials_bench.py --trials 1000 2000 4000 10000 [--timeout 600]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from trials_builder import bundle, write  # noqa: E402

RULECHECK = ROOT / ".venv" / "bin" / "rulecheck"


def scaled_trials(trials: int) -> dict[str, Any]:
    """The seed 001 documents with their trials repeated up to `trials` trials."""
    documents = bundle()
    originals, results = documents["trials"], documents["results"]
    by_trial: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        by_trial.setdefault(result["trial"], []).append(result)
    scaled_trials_list: list[dict[str, Any]] = []
    scaled_results: list[dict[str, Any]] = []
    copy = 0
    while len(scaled_trials_list) < trials:
        for trial in originals:
            if len(scaled_trials_list) >= trials:
                break
            new_id = trial["trial_id"] if copy == 0 else f"{trial['trial_id']}-x{copy}"
            tree = f"tree-{new_id.lower()}"
            scaled_trials_list.append(
                {**trial, "trial_id": new_id, "seed": f"seed-{new_id.lower()}", "final_tree": tree}
            )
            scaled_results += [
                {**result, "trial": new_id, "candidate_tree": tree}
                for result in by_trial[trial["trial_id"]]
            ]
        copy += 1
    documents["trials"], documents["results"] = scaled_trials_list, scaled_results
    return documents


def _run(args: list[str], timeout: float) -> tuple[float | None, float | None, int | None]:
    """Wall and CPU seconds and the exit code of one run; (None, None, None) on a timeout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(args, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, None, None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.returncode


def _seconds(value: float | None, timeout: float) -> str:
    return f"> {timeout:,.0f} s (stopped)" if value is None else f"{value:,.1f} s"


def section(sizes: tuple[int, ...], timeout: float = 600.0) -> str:
    """A markdown table: evaluate and check of each trial-set size, one run each."""
    lines = [
        "## Trial sets",
        "",
        "`rulecheck evaluate trials` and `rulecheck check` on trial sets generated from seed",
        "001's synthetic set (tests/bench/trials_bench.py), one run of each.",
        "",
        "| trials | results | step | wall | CPU | exit |",
        "|---:|---:|---|---:|---:|---:|",
    ]
    for size in sizes:
        documents = scaled_trials(size)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "trials"
            paths = write(folder, documents)
            evaluate = [str(RULECHECK), "evaluate", "trials"]
            evaluate += [f"--input={name}={path}" for name, path in paths.items()]
            steps = {"evaluate": evaluate, "check": [str(RULECHECK), "check", str(folder)]}
            for step, args in steps.items():
                wall, cpu, code = _run(args, timeout)
                lines.append(
                    f"| {size:,} | {len(documents['results']):,} | {step} "
                    f"| {_seconds(wall, timeout)} | {_seconds(cpu, timeout)} "
                    f"| {'-' if code is None else code} |"
                )
                print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[1_000, 2_000, 4_000, 10_000])
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    args = parser.parse_args()
    print(section(tuple(args.trials), args.timeout))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
