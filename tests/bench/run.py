"""Benchmarks of rulecheck, written as one markdown document (`make bench`).

    .venv/bin/python tests/bench/run.py --out docs/performance.md
    .venv/bin/python tests/bench/run.py --quick --out /tmp/performance.md
    .venv/bin/python tests/bench/run.py --only rules

The document is regenerated whole: the machine, then issue 12's targets table (each
figure beside a floor measured in the same run, its ratio to that floor, its growth from
the smaller to the larger size, and whether the target holds; the reason for a missed
target comes from `tests/bench/notes.yaml`), then one section per workload. Each section
is a function of the run's `Bench` that returns markdown and records the targets it
measures; register it with `@section("name")`. `--quick` runs every section at small sizes
(a minute or two): it exercises every code path, and its figures judge nothing.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import datetime as dt
import hashlib
import os
import platform
import random
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
for _folder in (ROOT, HERE):  # run as a script from anywhere
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from answers_bench import MIB, rulecheck_command  # noqa: E402

NOTES = HERE / "notes.yaml"
# "Flat" and "linear" in the table: the per-item time of the larger size at most
# this many times that of the smaller (CPU times of one run vary by a few per cent).
FLAT_TIME = 1.10


# ---- sizes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """The sizes of one run: the issue's sizes, or small ones for `--quick`."""

    rules: tuple[int, int] = (2_000, 20_000)
    answers: tuple[int, int] = (10_000, 50_000)
    agreement: int = 1_000
    sessions: tuple[int, int] = (1_000, 10_000)
    trials: tuple[int, int] = (1_000, 10_000)
    inspect_samples: int = 10_000
    replay_bundles: int = 1_000
    replay_campaigns: int = 20
    events: tuple[int, int] = (10_000, 100_000)
    repeats: int = 3
    counted_answers: tuple[int, int] = (200, 600)  # answers whose instructions are counted


FULL = Scale()
QUICK = Scale(
    rules=(200, 400),
    answers=(100, 300),
    agreement=200,
    sessions=(100, 200),
    trials=(50, 200),
    inspect_samples=20,
    replay_bundles=20,
    replay_campaigns=2,
    events=(300, 1_000),
    repeats=1,
    counted_answers=(10, 30),
)


# ---- the targets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One row of issue 12's targets table: what is measured and what it must meet."""

    id: str
    workload: str  # with {answers0}, {sessions1}, ... for the run's sizes (`_labels`)
    goal: str


TARGETS = (
    Target("answers_small", "`answers --jobs 1`, {answers0} answers, CPU", "≤ 1.5× floor"),
    Target("answers_large", "`answers --jobs 1`, {answers1} answers, CPU", "≤ 1.5× floor"),
    Target("answers_rss", "`answers --jobs 1`, peak RSS", "growth ≤ 1.05×"),
    Target("check_cpu", "`check`, {sessions1} sessions, CPU", "≤ 12 s"),
    Target("check_rss", "`check`, {sessions1} sessions, peak RSS", "≤ 250 MiB"),
    Target("check_flat", "`check`, CPU per session", f"growth ≤ {FLAT_TIME:.2f}×"),
    Target(
        "trials_evaluate",
        "`evaluate trials`, {trials1} trials, CPU",
        f"≤ 5 s, growth ≤ {FLAT_TIME:.2f}×",
    ),
    Target("trials_check", "`check`, {trials1} trials, CPU", f"≤ 5 s, growth ≤ {FLAT_TIME:.2f}×"),
    Target(
        "lint_hash",
        "lint + hash, {rules1} declarations, CPU",
        f"≤ 4 s, growth ≤ {FLAT_TIME:.2f}×",
    ),
    Target("lint_rules", "`rulecheck lint rules/`, whole process, CPU", "≤ 0.25 s"),
    Target(
        "jobs2",
        "`answers --jobs 2` vs `--jobs 1`, {answers1} answers, wall",
        "≤ 0.55×, identical output, no process left behind",
    ),
)


@dataclass(frozen=True)
class Figure:
    """What one run measured for a target."""

    measured: str
    floor: str
    ratio: float
    growth: str
    holds: bool


@dataclass
class Bench:
    """One run: its sizes, and the figures its sections record for the targets table."""

    scale: Scale
    figures: dict[str, Figure] = field(default_factory=dict)

    def record(self, target: str, figure: Figure) -> None:
        """Record the figure of a target of `TARGETS` (once per run)."""
        if target not in {t.id for t in TARGETS}:
            raise ValueError(f"no target {target!r} in TARGETS")
        if target in self.figures:
            raise ValueError(f"target {target!r} is recorded twice")
        self.figures[target] = figure


SECTIONS: dict[str, Callable[[Bench], str]] = {}


def section(name: str) -> Callable[[Callable[[Bench], str]], Callable[[Bench], str]]:
    """Register a benchmark section: a function of the run returning its markdown."""

    def register(function: Callable[[Bench], str]) -> Callable[[Bench], str]:
        if name in SECTIONS:
            raise ValueError(f"section {name!r} is registered twice")
        SECTIONS[name] = function
        return function

    return register


def load_notes(path: Path = NOTES) -> dict[str, str]:
    """The engineers' reasons for missed targets, keyed by target id; unknown ids refused."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
    data = data or {}
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise SystemExit(f"{path}: expected a mapping of target id to reason text")
    unknown = sorted(data.keys() - {t.id for t in TARGETS})
    if unknown:
        raise SystemExit(f"{path}: no target {', '.join(unknown)} (ids: see TARGETS in run.py)")
    return {k: " ".join(v.split()) for k, v in data.items()}


def _labels(scale: Scale) -> dict[str, str]:
    return {
        "answers0": f"{scale.answers[0]:,}",
        "answers1": f"{scale.answers[1]:,}",
        "sessions1": f"{scale.sessions[1]:,}",
        "trials1": f"{scale.trials[1]:,}",
        "rules1": f"{scale.rules[1]:,}",
    }


def targets_table(bench: Bench, notes: dict[str, str]) -> str:
    """Issue 12's targets as measured by this run, with the reasons for those missed."""
    labels = _labels(bench.scale)
    lines = [
        "## Issue 12's targets",
        "",
        "Each figure is measured in this run beside its floor (named in the row; the sections",
        "below give the details), as CPU time unless the row says wall. *Growth* is the",
        "per-item figure of the larger size over that of the smaller (start-up included).",
        "",
        "| target | workload | measured | floor | ratio to floor | growth | target | holds |",
        "|---|---|---:|---|---:|---|---|---|",
    ]
    missed = []
    for target in TARGETS:
        workload = target.workload.format(**labels)
        figure = bench.figures.get(target.id)
        if figure is None:
            lines.append(
                f"| `{target.id}` | {workload} | not run | | | | {target.goal} | not measured |"
            )
            continue
        lines.append(
            f"| `{target.id}` | {workload} | {figure.measured} | {figure.floor} "
            f"| {figure.ratio:.2f}× | {figure.growth} | {target.goal} "
            f"| {'yes' if figure.holds else '**no**'} |"
        )
        if not figure.holds:
            missed.append(target.id)
    if missed:
        lines += ["", "Why a target is missed (from `tests/bench/notes.yaml`):", ""]
        for target_id in missed:
            reason = notes.get(target_id, "no reason recorded yet in `tests/bench/notes.yaml`.")
            lines.append(f"- `{target_id}`: {reason}")
    return "\n".join(lines)


# ---- timing helpers ------------------------------------------------------------------------


@dataclass(frozen=True)
class Times:
    """Wall-clock and CPU seconds of repeated runs (CPU time is steadier on a busy machine)."""

    wall: list[float]
    cpu: list[float]


def timed(function: Callable[[], object], repeats: int = 5) -> Times:
    """Times of `repeats` calls in this process."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        function()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return Times(wall, cpu)


def timed_process(args: list[str], repeats: int = 3, env: dict[str, str] | None = None) -> Times:
    """Times of `repeats` runs of a child process (CPU: the child's user + system time);
    `env` is added to this process's environment."""
    wall, cpu = [], []
    child_env = {**os.environ, **(env or {})}
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, env=child_env)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return Times(wall, cpu)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def row(name: str, times: Times, note: str = "") -> str:
    wall, cpu = times.wall, times.cpu
    return (
        f"| {name} | {ms(min(wall))} | {ms(statistics.median(wall))} | {ms(min(cpu))} "
        f"| {ms(statistics.median(cpu))} | {len(wall)} | {note} |"
    )


def growth(small: float, small_size: int, large: float, large_size: int) -> float:
    """The per-item figure of the larger size over that of the smaller."""
    return (large / large_size) / (small / small_size)


def _growth_text(value: float, small: int, large: int) -> str:
    return f"{value:.2f}× ({small:,} → {large:,})"


TABLE_HEAD = (
    "| step | wall best | wall median | CPU best | CPU median | runs | note |\n"
    "|---|---:|---:|---:|---:|---:|---|"
)


# ---- the machine ---------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head} with uncommitted changes" if dirty else head


@dataclass(frozen=True)
class SectionRun:
    """When a section ran and the load average around it."""

    name: str
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float]
    wall: float


def _load(values: tuple[float, float, float]) -> str:
    return ", ".join(f"{x:.2f}" for x in values)


SPEED_LOOP = 20_000_000


def _speed() -> float:
    """CPU seconds of a fixed pure-Python loop, the best of three: how fast this machine
    runs Python, so that absolute figures from two machines can be compared."""

    def loop() -> None:
        total = 0
        for number in range(SPEED_LOOP):
            total += number

    return min(timed(loop, repeats=3).cpu)


def machine(command: str, started: dt.datetime, runs: list[SectionRun], quick: bool) -> str:
    """The header: what ran where, when, and the load around each section."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    lines = [
        "# Performance",
        "",
        "Generated whole by `make bench` (`tests/bench/run.py`) on the machine below; do not",
        "edit it by hand (reasons for missed targets go in `tests/bench/notes.yaml`).",
        "Wall-clock time depends on what else the machine runs (see the load averages); CPU",
        "time much less so.",
        "",
    ]
    if quick:
        lines += [
            "**`--quick` run: small sizes that exercise every section; its figures judge no "
            "target.**",
            "",
        ]
    lines += [
        f"- date: {started.strftime('%Y-%m-%d %H:%M UTC')}",
        f"- command: `{command}`",
        f"- commit: {_commit()}",
        f"- OS: {platform.platform()}",
        f"- CPU: {_cpu_model()}, {cores} cores usable (of {os.cpu_count()})",
        f"- RAM: {_memory()}",
        f"- Python: {platform.python_implementation()} {platform.python_version()}",
        f"- speed: {_speed():.2f} s CPU for {SPEED_LOOP:,} additions in a Python loop (compare "
        "figures across machines by this)",
        "- `engine/` byte-compiled before measuring, as an installed package is",
        "",
        "| section | load average at start (1/5/15 min) | at end | wall |",
        "|---|---|---|---:|",
        *(
            f"| {r.name} | {_load(r.load_start)} | {_load(r.load_end)} | {r.wall:,.0f} s |"
            for r in runs
        ),
    ]
    return "\n".join(lines)


# ---- section "rules" -----------------------------------------------------------------------

KINDS = 100


def generate_rules(count: int = 2000, seed: int = 2026) -> str:
    """A realistic rule file of `count` declarations that lints clean.

    Per 20 declarations, roughly: 6 constants (units, %, a map, a set, derived arithmetic),
    1.5 metrics, 1 kind with attributes and edges, 1 code, 4 links with nested
    quantifiers, 4 gates with aggregates, 2 budgets, and now and then a decision table or a
    transition table.
    """
    rng = random.Random(seed)
    out = ['ruleset bench version "1"', ""]
    made = 0

    def emit(text: str) -> None:
        nonlocal made
        out.append(text)
        made += 1

    for k in range(KINDS):
        parent = f"\n  edge parent_{k} -> item_{k - 1}" if k else ""
        emit(
            f"kind item_{k} of campaign\n"
            f'  source "bench §{k}"\n'
            f"  attr R: number\n  attr tokens: tokens\n  attr wall: s\n  attr cost: USD\n"
            f"  attr label: text\n  attr ok: bool\n  attr share: number"
            f"{parent}\n  edge peer_{k} -> item_{k}"
        )
    consts: dict[str, list[str]] = {"R": [], "tokens": [], "wall": [], "usd": [], "share": []}
    metrics: list[str] = []
    codes: list[str] = []
    gates: list[str] = []
    i = 0
    while made < count - 60:
        i += 1
        consts["R"].append(f"min_R_{i}")
        emit(f'const min_R_{i} = 0.{rng.randint(50, 95)}  source "seed §4 gate {i}"')
        consts["tokens"].append(f"cap_tokens_{i}")
        emit(f"const cap_tokens_{i} = {rng.randint(10, 900)}_000 tokens")
        consts["wall"].append(f"wall_{i}")
        unit = rng.choice(["s", "min", "h"])
        emit(f"const wall_{i} = {rng.randint(1, 90)} {unit}")
        consts["usd"].append(f"budget_{i}")
        emit(f"const budget_{i} = {rng.randint(1, 300)}.{rng.randint(0, 99):02d} USD")
        consts["share"].append(f"share_{i}")
        emit(f"const share_{i} = {rng.randint(1, 99)} %")
        if i % 2:
            emit(f"const rate_{i} = {rng.randint(1, 40)} USD/Mtokens")
            emit(
                f"metric cost_{i}(used: tokens, cached: tokens) = "
                f"rate_{i} * used + rate_{i} * cached / 10"
            )
            metrics.append(f"cost_{i}")
        else:
            emit(f"const doubled_{i} = cap_tokens_{i} * 2 + cap_tokens_{i - 1}")
            consts["tokens"].append(f"doubled_{i}")
            emit(
                f'const workers_{i} = {{"DIRECT": 1, "CONCURRENT": {rng.randint(2, 8)}}}'
                if i % 4
                else f'const arms_{i} = {{"A", "B", "C{i}"}}'
            )
        code = f"REJECT_{i}"
        codes.append(code)
        emit(f'code {code} "record {i} breaks its link rule"')
        for j in range(4):
            k = rng.randrange(1, KINDS)
            emit(
                f"link link_{i}_{j}\n"
                f"  for a in item_{k} where a.ok\n"
                f"  for b in a -> parent_{k}\n"
                f"  require all(c in item_{k} where c.label == a.label: "
                f"c.R >= {rng.choice(consts['R'])} or exists(d in c -> peer_{k}: d.ok))"
                f" and b.tokens <= {rng.choice(consts['tokens'])}\n"
                f"  else reject {rng.choice(codes)}"
            )
        for j in range(4):
            k = rng.randrange(KINDS)
            metric = rng.choice(metrics) if metrics else None
            spend = (
                f"sum({metric}(t.tokens, t.tokens) for t in item_{k} where t.ok)"
                if metric
                else f"sum(t.cost for t in item_{k})"
            )
            emit(
                f"gate gate_{i}_{j}\n"
                f"  require median(t.R for t in item_{k} where t.ok) >= {rng.choice(consts['R'])}"
                f" and {spend} <= {rng.choice(consts['usd'])}"
                f" and count(t in item_{k} where t.share > {rng.choice(consts['share'])}) >= 1"
                f" and max(t.wall for t in item_{k}) < {rng.choice(consts['wall'])}"
            )
            gates.append(f"gate_{i}_{j}")
        for j in range(2):
            k = rng.randrange(KINDS - 1)
            emit(
                f"budget budget_{i}_{j}\n"
                f"  for t in item_{k}\n"
                f"  ledger a in t <- parent_{k + 1} where a.ok order by a.wall\n"
                f"  total a.tokens <= {rng.choice(consts['tokens'])}"
            )
    d = 0
    while made < count:
        d += 1
        if d % 2:
            a, b, c = rng.sample(gates, 3)
            emit(
                f"decision verdict_{d}\n"
                f"  when {a} and {b} and {c} => ACCEPT\n"
                f"  when not {a} => REJECT\n"
                f"  when {a} and not {b} => PARTIAL\n"
                f"  otherwise => INCONCLUSIVE"
            )
        else:
            emit(
                f"transitions attempt_{d}\n"
                "  initial PENDING\n  terminal ACCEPTED, FAILED\n  settlement SETTLED\n"
                "  event dispatch applies PENDING\n  event finish applies RUNNING\n"
                "  event fail applies RUNNING, PENDING\n  event settle applies ACCEPTED, FAILED\n"
                "  from PENDING on dispatch to RUNNING\n  from PENDING on fail to FAILED\n"
                "  from RUNNING on finish to ACCEPTED\n  from RUNNING on fail to FAILED\n"
                "  from ACCEPTED on settle to SETTLED\n  from FAILED on settle to SETTLED\n"
                "  outcome ACCEPTED => ACCEPTANCE_CLAIMED\n  outcome FAILED => FAILURE"
            )
    return "\n\n".join(out) + "\n"


def _declaration_hashes(path: Path) -> int:
    """The floor of lint + hash: read the file, split it into declarations, sha256 each."""
    text = path.read_text(encoding="utf-8")
    return len([hashlib.sha256(part.encode()).digest() for part in text.split("\n\n")])


@dataclass(frozen=True)
class RulesRun:
    """Lint and hash of one generated rule file, in process, beside the floor."""

    declarations: int
    lines: int
    size: int
    lint: Times
    hashing: Times
    parse: Times
    check: Times
    floor: Times
    hash_process: Times
    lint_cached: Times  # the parse read back from the parse cache
    hash_process_cached: Times


def _measure_rules(counts: tuple[int, ...], repeats: int) -> list[RulesRun]:
    """Lint and hash of one generated rule file per count, in this process.

    The in-process steps run in rounds: each round times every step of every size
    before the next round begins (small, large, small, large, ...), so that a slow phase
    of the machine weighs on both sizes alike and their growth compares like with like;
    each figure is then the least of its rounds. A size's steps hold only what that
    size made (hashing the lint's result, checking the parse's), let go before the next
    size runs: the heap each step sees is its own size's, as in a process of its own.
    """
    from engine.check import check_rules
    from engine.freeze.hashing import hash_ruleset
    from engine.ruleset import lint_paths
    from engine.syntax.parse import grammar_version, parse_file

    version = grammar_version()
    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / f"bench{count}.rules" for count in counts]
        declarations = []
        for count, path in zip(counts, paths, strict=True):
            path.write_text(generate_rules(count), encoding="utf-8")
            found, diagnostics = lint_paths([path])  # also warms the parser
            errors = [d for d in diagnostics if d.severity == "error"]
            if errors:  # usage warnings (gates no decision reads) are expected of them
                raise SystemExit(f"generated rules do not lint: {errors[0]}")
            declarations.append(len(found.declarations()))
            del found
        steps: list[dict[str, Times]] = [{} for _ in counts]

        def time_step(size: int, step: str, function: Callable[..., Any], *args: Any) -> Any:
            result: list[Any] = []
            once = timed(lambda: result.append(function(*args)), 1)
            times = steps[size].setdefault(step, Times([], []))
            times.wall.extend(once.wall)
            times.cpu.extend(once.cpu)
            return result[0]

        for _ in range(repeats):
            for size, path in enumerate(paths):
                time_step(size, "lint_cached", lint_paths, [path])
        with parse_cache_off():  # every file parsed
            for _ in range(repeats):
                for size, path in enumerate(paths):
                    checked, _ = time_step(size, "lint", lint_paths, [path])
                    time_step(size, "hashing", hash_ruleset, checked, version)
                    del checked
                    rule_file = time_step(size, "parse", parse_file, path)
                    time_step(size, "check", check_rules, [rule_file])
                    del rule_file
                    time_step(size, "floor", _declaration_hashes, path)
        runs = []
        for size, path in enumerate(paths):
            hash_command = [*rulecheck_command(), "hash", str(path)]
            runs.append(
                RulesRun(
                    declarations=declarations[size],
                    lines=path.read_text(encoding="utf-8").count("\n"),
                    size=path.stat().st_size,
                    hash_process=timed_process(hash_command, 1, PARSE_CACHE_OFF),
                    hash_process_cached=timed_process(hash_command, 1),
                    **steps[size],
                )
            )
        return runs


PARSE_CACHE_OFF = {"RULECHECK_PARSE_CACHE": "off"}


@contextlib.contextmanager
def parse_cache_off() -> Iterator[None]:
    """Every rule file parsed, none read back from the parse cache, in this process."""
    before = os.environ.get("RULECHECK_PARSE_CACHE")
    os.environ["RULECHECK_PARSE_CACHE"] = "off"
    try:
        yield
    finally:
        if before is None:
            del os.environ["RULECHECK_PARSE_CACHE"]
        else:
            os.environ["RULECHECK_PARSE_CACHE"] = before


@section("rules")
def rules_section(bench: Bench) -> str:
    """Lint (parse + check) and hash of generated rule files, and `lint rules/`."""
    repeats = bench.scale.repeats
    small, large = _measure_rules(bench.scale.rules, repeats)
    lint_shipped = [*rulecheck_command(), "lint", str(ROOT / "rules")]
    shipped = timed_process(lint_shipped, repeats + 2)  # the first run fills the parse cache
    shipped_parsed = timed_process(lint_shipped, repeats + 2, PARSE_CACHE_OFF)
    interpreter = timed_process([sys.executable, "-c", "pass"], repeats + 2)

    def lint_hash(run: RulesRun) -> float:
        return min(run.lint.cpu) + min(run.hashing.cpu)

    spent = lint_hash(large)
    rise = growth(lint_hash(small), small.declarations, spent, large.declarations)
    floor = min(large.floor.cpu)
    cached = min(large.lint_cached.cpu) + min(large.hashing.cpu)
    bench.record(
        "lint_hash",
        Figure(
            f"{spent:,.2f} s parsed ({cached:,.2f} s with the parse read from its cache)",
            f"read + sha256 per declaration: {ms(floor)}",
            spent / floor,
            _growth_text(rise, small.declarations, large.declarations),
            spent <= 4.0 and rise <= FLAT_TIME,
        ),
    )
    lint_rules = statistics.median(shipped.cpu)
    lint_rules_parsed = statistics.median(shipped_parsed.cpu)
    start_up = statistics.median(interpreter.cpu)
    bench.record(
        "lint_rules",
        Figure(
            f"{ms(lint_rules)} (parse cache warm; {ms(lint_rules_parsed)} with "
            "`RULECHECK_PARSE_CACHE=off`)",
            f"`python -c pass`: {ms(start_up)}",
            lint_rules / start_up,
            "one size",
            lint_rules <= 0.25,
        ),
    )
    lines = [
        "## rules: lint and hash of generated rule files",
        "",
        "Input: one generated file per size (`generate_rules()` in `tests/bench/run.py`): "
        "constants with units, %, maps, sets and derived arithmetic; metrics; kinds with "
        "attributes and edges; codes; links with nested quantifiers; gates with aggregates; "
        "budgets; decision tables and transition tables. In process, parser already built "
        "(as in a long-running process). Every row parses the file (`RULECHECK_PARSE_CACHE=off`) "
        "except those marked cache warm, where each rule file is read back from the parse "
        "cache (`engine/syntax/parsecache.py`); the floor reads the file, splits it into "
        "declarations and hashes each with sha256.",
    ]
    for run in (small, large):
        lines += [
            "",
            f"### {run.declarations:,} declarations, {run.lines:,} lines, "
            f"{run.size / 1024:,.0f} KiB",
            "",
            TABLE_HEAD,
            row("lint = read + parse + check", run.lint, "`engine.ruleset.lint_paths`"),
            row("lint, parse cache warm", run.lint_cached, "each file read back, not parsed"),
            row("hash", run.hashing, "canonical JSON + sha256 per declaration"),
            row("of which: parse", run.parse, "Lark LALR parse + AST build"),
            row("of which: check", run.check, "names, types and units, decisions, transitions"),
            row("floor", run.floor, "read, split, sha256 per declaration"),
            row("`rulecheck hash bench.rules`", run.hash_process, "whole process, parsed"),
            row(
                "`rulecheck hash bench.rules`, cache warm",
                run.hash_process_cached,
                "whole process, parse read back",
            ),
        ]
    lines += [
        "",
        "Whole processes, for scale:",
        "",
        TABLE_HEAD,
        row("`rulecheck lint rules/`", shipped, "the shipped rules, parse cache warm"),
        row("`rulecheck lint rules/`, parsed", shipped_parsed, "`RULECHECK_PARSE_CACHE=off`"),
        row("`python -c pass`", interpreter, "interpreter start-up, the floor"),
    ]
    return "\n".join(lines)


@section("answers")
def answers_section(bench: Bench) -> str:
    """`rulecheck answers` on generated B answers, beside the reference checker."""
    import answers_bench

    info = answers_bench.machine()
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    startup = answers_bench.measure_startup()
    rounds = bench.scale.repeats
    small, large = (answers_bench.measure_size(size, rounds) for size in bench.scale.answers)
    agreement = answers_bench.measure_agreement(bench.scale.agreement)
    if not (agreement.rulecheck_exact and agreement.reference_exact):
        raise RuntimeError("the checkers do not flag exactly the mutated answers")
    counts = answers_bench.count_instructions(bench.scale.counted_answers)
    for target, result in (("answers_small", small), ("answers_large", large)):
        ratio = result.jobs1.cpu / result.reference.cpu
        per_answer = growth(small.jobs1.cpu, small.size, result.jobs1.cpu, result.size)
        bench.record(
            target,
            Figure(
                f"{result.jobs1.cpu / result.size * 1000:.2f} ms/answer",
                f"reference checker: {result.reference.cpu / result.size * 1000:.2f} ms/answer",
                ratio,
                "see the larger size"
                if result is small
                else _growth_text(per_answer, small.size, large.size),
                ratio <= 1.5,
            ),
        )
    rss_growth = large.jobs1.max_rss / small.jobs1.max_rss
    bench.record(
        "answers_rss",
        Figure(
            f"{small.jobs1.max_rss / MIB:,.0f} → {large.jobs1.max_rss / MIB:,.0f} MiB",
            f"start-up (empty index): {startup.max_rss / MIB:,.0f} MiB",
            large.jobs1.max_rss / startup.max_rss,
            f"{rss_growth:.2f}× whole ({small.size:,} → {large.size:,})",
            rss_growth <= 1.05,
        ),
    )
    identical = all(r.jobs1.stdout == r.jobs2.stdout for r in (small, large))
    left = sum(r.jobs1.left_behind + r.jobs2.left_behind for r in (small, large))
    wall_ratio = large.jobs2.wall / large.jobs1.wall
    bench.record(
        "jobs2",
        Figure(
            f"{large.jobs2.wall:,.1f} s; output identical: {'yes' if identical else 'no'}; "
            f"processes left behind: {left}",
            f"`--jobs 1`: {large.jobs1.wall:,.1f} s",
            wall_ratio,
            f"{small.jobs2.wall / small.jobs1.wall:.2f}× at {small.size:,}",
            wall_ratio <= 0.55 and identical and left == 0,
        ),
    )
    return answers_bench.render([small, large], agreement, startup, info, when, counts) + (
        "\n`--jobs 2` against `--jobs 1`: the JSON output is compared byte for byte at every "
        "size, and each run starts in a session and process group of its own; after it exits, "
        f"a scan of /proc for live members of that group found {left} process(es) left behind."
    )


@section("campaign")
def campaign_section(bench: Bench) -> str:
    """`rulecheck admit` and `check` on generated campaigns, beside the parsing floor."""
    import campaign_bench

    small, large = campaign_bench.measure(bench.scale.sessions)
    cpu, rss = large.check.cpu, large.check.max_rss
    per_session = growth(small.check.cpu, small.sessions, cpu, large.sessions)
    sizes = (small.sessions, large.sessions)
    floor = f"`floor.py` read + parse: {large.floor.cpu:.2f} s"
    bench.record(
        "check_cpu",
        Figure(
            f"{cpu:,.1f} s",
            floor,
            cpu / large.floor.cpu,
            _growth_text(per_session, *sizes),
            cpu <= 12.0,
        ),
    )
    bench.record(
        "check_rss",
        Figure(
            f"{rss / MIB:,.0f} MiB",
            f"`floor.py` read + parse: {large.floor.max_rss / MIB:,.0f} MiB",
            rss / large.floor.max_rss,
            f"{large.check.max_rss / small.check.max_rss:.2f}× whole ({sizes[0]:,} → {sizes[1]:,})",
            rss <= 250 * MIB,
        ),
    )
    bench.record(
        "check_flat",
        Figure(
            f"{cpu / large.sessions * 1000:.2f} ms/session",
            f"`floor.py`: {large.floor.cpu / large.sessions * 1000:.2f} ms/session",
            cpu / large.floor.cpu,
            _growth_text(per_session, *sizes),
            per_session <= FLAT_TIME,
        ),
    )
    return campaign_bench.render([small, large])


@section("trials")
def trials_section(bench: Bench) -> str:
    """`rulecheck evaluate trials` and `check` on generated trial sets."""
    import trials_bench

    small, large = trials_bench.measure(bench.scale.trials)
    for target, step in (("trials_evaluate", "evaluate"), ("trials_check", "check")):
        cpu_small, cpu = getattr(small, step).cpu, getattr(large, step).cpu
        rise = growth(cpu_small, small.trials, cpu, large.trials)
        bench.record(
            target,
            Figure(
                f"{cpu:,.2f} s",
                f"`floor.py` read + parse: {large.floor.cpu:.2f} s",
                cpu / large.floor.cpu,
                _growth_text(rise, small.trials, large.trials),
                cpu <= 5.0 and rise <= FLAT_TIME,
            ),
        )
    return trials_bench.render([small, large])


@section("inspect")
def inspect_section(bench: Bench) -> str:
    """`rulecheck import inspect` and `check` of a generated inspect_ai log."""
    import inspect_bench

    return inspect_bench.section(bench.scale.inspect_samples)


@section("replay")
def replay_section(bench: Bench) -> str:
    """`rulecheck replay` of small bundles under two rule sets, and of campaign copies."""
    import replay_bench

    return replay_bench.section(bench.scale.replay_bundles, bench.scale.replay_campaigns)


@section("conformance")
def conformance_section(bench: Bench) -> str:
    """The replay of a generated controller trace, and `rulecheck conformance`."""
    import conformance_bench

    return conformance_bench.section(bench.scale.events)


# ---- main ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections and write the whole document."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, help="write the markdown here (default: stdout)")
    parser.add_argument(
        "--only", action="append", choices=sorted(SECTIONS), help="run only this section"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes: exercise every section in a minute or two",
    )
    args = parser.parse_args(argv)
    notes = load_notes()  # refuse a bad notes file before an hour of measuring
    # An installed package is byte-compiled; an editable checkout run with
    # PYTHONDONTWRITEBYTECODE (set on some machines) would compile every engine module
    # again in each measured process, and that would be measured as rulecheck's own time.
    compileall.compile_dir(str(ROOT / "engine"), quiet=1)
    bench = Bench(QUICK if args.quick else FULL)
    chosen = [name for name in SECTIONS if not args.only or name in args.only]
    command = shlex.join(
        ["python", "tests/bench/run.py", *(sys.argv[1:] if argv is None else argv)]
    )
    started = dt.datetime.now(dt.UTC)
    runs, parts = [], []
    for name in chosen:
        print(f"running section {name}...", file=sys.stderr, flush=True)
        load_start, wall = os.getloadavg(), time.perf_counter()
        parts.append(SECTIONS[name](bench))
        runs.append(SectionRun(name, load_start, os.getloadavg(), time.perf_counter() - wall))
    document = "\n\n".join(
        [machine(command, started, runs, args.quick), targets_table(bench, notes), *parts]
    )
    document = document.rstrip("\n") + "\n"
    if args.out:
        args.out.write_text(document, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(document)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
