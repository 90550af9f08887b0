"""Benchmark of `rulecheck replay`: bundles re-checked under two rule sets.

`section(small, campaigns)` returns the markdown section of `docs/performance.md`;
`.venv/bin/python tests/bench/replay_bench.py [--small 1000] [--campaigns 40]` prints it
(progress goes to stderr). Not a test.

* `small` copies of the three model_eval bundles of tests/data/protocol (accepted, just
  below the bar, refused), cycled, replayed under `eval.rules` and a copy whose pass-rate
  bar is 90 % (every accepted copy flips), with `--jobs 1` and `--jobs 2`, and a tenth of
  them with `--jobs 1` to see whether peak memory grows with the number of bundles;
* `campaigns` copies of the shipped campaign, replayed under the shipped rules and a copy
  with a stricter quality bar (every copy flips: the campaign binds its rules.lock), with
  `--jobs 2`. A campaign check takes about a second of CPU per rule set, so 1,000 copies
  (2,000 checks) take tens of minutes on the 2-core machine: the section measures fewer and
  gives the per-bundle figure, from which 1,000 is extrapolated.

Each run is a child process measured with `answers_bench.run_child` (wall, CPU of the
child and the workers it reaped, `ru_maxrss`: the largest single process, and the sampled
peak of the summed RSS of the process tree). Every run must print one row per bundle and
the expected number of flips, or the section fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answers_bench import ChildRun, rulecheck_command, run_child  # tests/bench/answers_bench.py

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "tests" / "data" / "protocol"
SMALL = ("accepted", "just_below_bar", "refused")
MIB = 1024 * 1024


def _log(message: str) -> None:
    print(f"[replay_bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _edited_copy(source: Path, target: Path, file: str, old: str, new: str) -> Path:
    shutil.copytree(source, target)
    path = target / file
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise RuntimeError(f"{path}: `{old}` is not there exactly once")
    path.write_text(text.replace(old, new), encoding="utf-8")
    return target


def _small_rules(root: Path) -> Path:
    folder = root / "eval90"
    folder.mkdir()
    shutil.copy(PROTOCOL / "answer.schema.json", folder)
    text = (PROTOCOL / "eval.rules").read_text(encoding="utf-8")
    (folder / "eval.rules").write_text(
        text.replace("const min_pass_rate = 80 %", "const min_pass_rate = 90 %"), encoding="utf-8"
    )
    return folder


def _campaign_rules(root: Path) -> Path:
    rules = _edited_copy(
        ROOT / "rules",
        root / "stricter" / "rules",
        "000_quality_gates.rules",
        "const min_macro_task_median_R = 0.90",
        "const min_macro_task_median_R = 0.95",
    )
    shutil.copytree(ROOT / "manifests" / "schemas", root / "stricter" / "manifests" / "schemas")
    return rules


def _copies(sources: list[Path], count: int, folder: Path) -> list[Path]:
    folder.mkdir()
    made = []
    for number in range(count):
        target = folder / f"b{number:05d}"
        shutil.copytree(sources[number % len(sources)], target)
        made.append(target)
    return made


@dataclass(frozen=True)
class Measured:
    """One replay run: what ran, over how many bundles, and what it cost."""

    label: str
    bundles: int
    jobs: int
    run: ChildRun


def _replay(old: Path, new: Path, bundles: list[Path], jobs: int, flips: int) -> ChildRun:
    command = [*rulecheck_command(), "replay", "--old", str(old), "--new", str(new)]
    command += [*map(str, bundles), "--jobs", str(jobs), "--format", "json"]
    run = run_child(command, ROOT)
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    summary = lines[-1] if lines else {}
    rows = sum("bundle" in line for line in lines)
    if rows != len(bundles) or summary.get("flipped") != flips:
        raise RuntimeError(
            f"replay of {len(bundles)} bundles printed {rows} rows and {summary}:\n"
            + run.stderr.decode(errors="replace")[-2000:]
        )
    return run


def measure(small: int, campaigns: int) -> list[Measured]:
    """Every run of the section, in order."""
    found: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as scratch:
        root = Path(scratch)
        strict_small = _small_rules(root)
        bundles = _copies([PROTOCOL / name for name in SMALL], small, root / "small")
        flips = len(range(0, small, len(SMALL)))  # every accepted copy
        tenth = bundles[: small // 10]
        tenth_flips = len(range(0, len(tenth), len(SMALL)))
        for label, chosen, expected, jobs in (
            ("model_eval", bundles, flips, 1),
            ("model_eval", bundles, flips, 2),
            ("model_eval", tenth, tenth_flips, 1),
        ):
            _log(f"{label}: {len(chosen)} bundles, --jobs {jobs}")
            run = _replay(PROTOCOL / "eval.rules", strict_small, chosen, jobs, expected)
            found.append(Measured(label, len(chosen), jobs, run))
        if campaigns:
            strict = _campaign_rules(root)
            copies = _copies([ROOT / "controls" / "campaign"], campaigns, root / "campaigns")
            for count in (campaigns // 2, campaigns):
                _log(f"campaign: {count} copies, --jobs 2")
                run = _replay(ROOT / "rules", strict, copies[:count], 2, count)
                found.append(Measured("campaign", count, 2, run))
    return found


def section(small: int = 1000, campaigns: int = 40) -> str:
    """The markdown section: one row per run, then the campaign extrapolation."""
    runs = measure(small, campaigns)
    lines = [
        "## Replay: bundles re-checked under two rule sets (`rulecheck replay`)",
        "",
        "`tests/bench/replay_bench.py`: each bundle checked under the old rules and under the "
        "new, streamed (`docs/replay.md`). Memory is `ru_maxrss` of the largest single "
        "process, and the sampled peak of the summed RSS of the process tree (workers "
        "included).",
        "",
        "| bundles | protocol | jobs | wall | CPU (all processes) | per bundle (wall) "
        "| peak RSS, largest process | peak RSS, process tree |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for item in runs:
        run = item.run
        lines.append(
            f"| {item.bundles:,} | {item.label} | {item.jobs} | {run.wall:,.1f} s "
            f"| {run.cpu:,.1f} s | {run.wall / item.bundles * 1000:,.0f} ms "
            f"| {run.max_rss / MIB:,.0f} MiB | {run.tree_rss / MIB:,.0f} MiB |"
        )
    campaign = [m for m in runs if m.label == "campaign"]
    if len(campaign) == 2:
        fewer, more = campaign
        added = more.bundles - fewer.bundles
        per_cpu = (more.run.cpu - fewer.run.cpu) / added
        # wall time of a shared machine is noisy: a campaign costs at least half its CPU
        # time of wall time on two cores, whatever the difference of two wall times says
        per = max((more.run.wall - fewer.run.wall) / added, per_cpu / 2)
        start = max(more.run.wall - per * more.bundles, 0.0)
        lines += [
            "",
            f"1,000 copies of the shipped campaign were not replayed: that would hold both "
            f"cores of this shared machine for about {(start + per * 1000) / 60:,.0f} minutes. "
            f"Each further campaign costs {per_cpu:,.2f} s of CPU (two checks: the difference "
            f"between the two campaign runs above), so about {per:,.2f} s of wall time with "
            f"`--jobs 2`; the rest of a run, about {start:,.0f} s, is start-up (the parent and "
            "each worker load and compile both rule sets). Memory does not grow with the "
            "number of bundles: each is checked on its own and only its summary is kept.",
        ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--campaigns", type=int, default=40)
    args = parser.parse_args()
    print(section(args.small, args.campaigns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
