"""Benchmark `rulecheck evaluate trials` and `rulecheck check` on large generated trial sets.

The synthetic trial set of seed 001 (tests/trials_builder.py) is scaled by repeating its
trials with fresh trial IDs, seeds and trees until the set holds the wanted number of
trials; every trial keeps its results (one per hidden-check execution). Rules that compare
every record of a kind with every other grow with the square of the set, so the sizes are
the point.

    python tests/bench/trials_bench.py --trials 1000 10000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from answers_bench import MIB, ChildRun, rulecheck_command, run_child  # noqa: E402
from trials_builder import bundle, write  # noqa: E402


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


@dataclass(frozen=True)
class TrialsRun:
    """`evaluate trials` and `check` of one generated trial set, beside the floor."""

    trials: int
    results: int
    evaluate: ChildRun
    check: ChildRun
    floor: ChildRun  # tests/bench/floor.py: every file of the set read and parsed


def measure(sizes: tuple[int, ...]) -> list[TrialsRun]:
    """One run of `evaluate trials`, `check` and the floor on a set of each size."""
    runs = []
    rulecheck = rulecheck_command()
    for size in sizes:
        documents = scaled_trials(size)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "trials"
            paths = write(folder, documents)
            evaluate = [*rulecheck, "evaluate", "trials"]
            evaluate += [f"--input={name}={path}" for name, path in paths.items()]
            run = TrialsRun(
                size,
                len(documents["results"]),
                run_child(evaluate, ROOT),
                run_child([*rulecheck, "check", str(folder)], ROOT),
                run_child([sys.executable, str(HERE / "floor.py"), str(folder)], ROOT),
            )
        if run.floor.exit_code != 0:
            raise RuntimeError(f"the floor failed: {run.floor.stderr.decode(errors='replace')}")
        print(f"trials {size:,}: evaluate {run.evaluate.cpu:.1f} s CPU", file=sys.stderr)
        runs.append(run)
    return runs


def render(runs: list[TrialsRun]) -> str:
    """A markdown table: evaluate and check of each trial-set size, one run each."""
    lines = [
        "## Trial sets",
        "",
        "`rulecheck evaluate trials` and `rulecheck check` on trial sets generated from seed",
        "001's synthetic set (`tests/bench/trials_bench.py`), one run of each as a child",
        "process; the *floor* is `tests/bench/floor.py` reading and parsing the same files.",
        "",
        "| trials | results | step | wall | CPU | peak RSS | exit |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for run in runs:
        for step, child in (("evaluate", run.evaluate), ("check", run.check), ("floor", run.floor)):
            lines.append(
                f"| {run.trials:,} | {run.results:,} | {step} | {child.wall:,.1f} s "
                f"| {child.cpu:,.1f} s | {child.max_rss / MIB:,.0f} MiB | {child.exit_code} |"
            )
    return "\n".join(lines) + "\n"


def section(sizes: tuple[int, ...]) -> str:
    """The markdown section for the sizes given."""
    return render(measure(sizes))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[1_000, 10_000])
    args = parser.parse_args()
    print(section(tuple(args.trials)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
