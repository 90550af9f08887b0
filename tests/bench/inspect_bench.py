"""Benchmark `rulecheck import inspect` and `rulecheck check` on a 10,000-sample log.

The log is written by inspect_ai's own writer (`write_eval_log`) from an `EvalLog` built
here: a real 4-sample run of the test suite's arithmetic task (`tests/inspect_logs.py`,
offline, `mockllm`) whose samples are copied under 10,000 new ids, inputs and targets.
Running 10,000 samples through inspect_ai itself would measure inspect_ai, not rulecheck.
The pack is `rules/inspect/` with its constants set to the generated run, as a user sets
them from a pilot import, so the run is admitted and every rule runs over every record.

    python tests/bench/inspect_bench.py --samples 10000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BIN = Path(sys.executable).parent
RULECHECK = BIN / "rulecheck"
sys.path.insert(0, str(HERE))

from answers_bench import run_child  # noqa: E402

_BUILD = """
import sys
from inspect_ai.log import read_eval_log, write_eval_log

source, target, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
log = read_eval_log(source)
templates = log.samples
samples = []
for n in range(count):
    template = templates[n % len(templates)]
    sample_id = f"s{n:05d}"
    samples.append(
        template.model_copy(
            update={"id": sample_id, "input": f"{n}+{n}=?", "target": str(2 * n)}, deep=True
        )
    )
log.samples = samples
log.eval.dataset.samples = count
log.eval.dataset.sample_ids = [s.id for s in samples]
if log.results is not None:
    log.results.total_samples = log.results.completed_samples = count
write_eval_log(log, target, format="eval")
"""


@dataclass(frozen=True)
class Measured:
    wall: float
    cpu: float
    peak_mib: float
    exit_code: int


def _measured(args: list[str], env: dict[str, str] | None = None) -> Measured:
    """Wall and CPU seconds and peak RSS of one child process (its own rusage)."""
    run = run_child(args, ROOT, env)
    return Measured(run.wall, run.cpu, run.max_rss / 2**20, run.exit_code)


def _pack(folder: Path, bundle: Path, count: int) -> Path:
    """rules/inspect/ with the constants of the generated run (from its pilot import)."""
    (run,) = [json.loads(line) for line in (bundle / "runs.jsonl").read_text().splitlines()]
    ids = ", ".join(f'"s{n:05d}"' for n in range(count))
    constants = {
        "pinned_dataset_sha256": f'{{"arith": "{run["dataset_sha256"]}"}}',
        "planned_samples": f'{{"arith": {{{ids}}}}}',
        "max_total_tokens": f"{count * 100} tokens",
        "max_total_cost": f"{Decimal(count * 2).scaleb(-4)} USD",  # 200 µUSD a sample
        "min_mean_score": '{"arith": 75 %}',
    }
    pack = folder / "pack"
    shutil.copytree(ROOT / "rules" / "inspect", pack)
    path = pack / "inspect_eval.rules"
    text = path.read_text()
    for name, value in constants.items():
        text = re.sub(rf"^const {name} = .*$", f"const {name} = {value}", text, flags=re.M)
    path.write_text(text)
    return pack


def section(count: int = 10_000) -> str:
    """The markdown section: generation, import and check of a `count`-sample log."""
    with tempfile.TemporaryDirectory(prefix="rulecheck-inspect-") as name:
        folder = Path(name)
        env = {**os.environ, "HOME": str(folder / "home"), "NO_COLOR": "1"}
        subprocess.run(
            [sys.executable, str(ROOT / "tests" / "inspect_logs.py"), str(folder), "admitted"],
            check=True,
            capture_output=True,
            env=env,
        )
        log = folder / "big.eval"
        generate = _measured(
            [sys.executable, "-c", _BUILD, str(folder / "admitted.eval"), str(log), str(count)],
            env,
        )
        pilot = folder / "pilot"
        subprocess.run(
            [str(RULECHECK), "import", "inspect", str(log), "--out", str(pilot)],
            check=True,
            capture_output=True,
        )
        pack = _pack(folder, pilot, count)
        out = folder / "imported"
        imported = _measured([str(RULECHECK), "import", "inspect", str(log), "--out", str(out)])
        checked = _measured([str(RULECHECK), "check", str(out), "--rules", str(pack)])
        report = subprocess.run(
            [str(RULECHECK), "check", str(out), "--rules", str(pack), "--format", "json"],
            capture_output=True,
            text=True,
        )
        verdict = json.loads(report.stdout)["verdict"]
        size = log.stat().st_size
        sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
        lines = {p: sum(1 for _ in (out / p).open()) for p in sizes if p.endswith(".jsonl")}
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = [
        ("build the log (inspect_ai's `write_eval_log`)", generate),
        ("`rulecheck import inspect big.eval --out DIR`", imported),
        ("`rulecheck check DIR --rules pack/`", checked),
    ]
    table = [
        "| step | wall (s) | CPU (s) | peak RSS (MiB) | exit |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {n} | {m.wall:.1f} | {m.cpu:.1f} | {m.peak_mib:.0f} | {m.exit_code} |"
            for n, m in rows
        ),
    ]
    records = ", ".join(f"{name} {count_:,}" for name, count_ in lines.items())
    return "\n".join(
        [
            f"## inspect_ai: import and check of a {count:,}-sample log",
            "",
            "Command: `python tests/bench/inspect_bench.py` (each figure one run of a child "
            "process; CPU is its user + system time and peak RSS its own maximum resident "
            "set, from `wait4`).",
            "",
            f"The log ({size / 2**20:.1f} MiB, `.eval`) is written by inspect_ai's own "
            "`write_eval_log` from an `EvalLog` built from a real 4-sample offline run of the "
            f"test suite's task, its samples copied under {count:,} new ids, inputs and "
            "targets: running that many samples through inspect_ai would time inspect_ai. "
            "The pack is `rules/inspect/` with the run's dataset hash, sample ids and token "
            "and cost ceilings set from a pilot import, so every rule runs, the price of each "
            "call and inspect_ai's reported accuracy against the exact mean included; "
            f"the verdict is `{verdict}`. Records imported: "
            f"{records}.",
            "",
            *table,
            "",
            f"Machine load during the run (`uptime`): `{uptime}`.",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10_000)
    sys.stdout.write(section(parser.parse_args().samples) + "\n")


if __name__ == "__main__":
    main()
