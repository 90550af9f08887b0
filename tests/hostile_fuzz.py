"""Fuzz targets for hostile input, shared by `tests/test_hostile_fuzz.py` (a bounded run in
`make test`) and `make fuzz` (a long run that writes its counts to `docs/reliability.md`).

Each target takes one input made by mutating a seed (the shipped rule files, the `shop`
and `model_eval` examples, and the corpus under `tests/data/hostile/`) with byte-level
edits and hostile fragments (deep brackets, huge numbers, `\\r`, NUL, no-break spaces,
`.nan`, anchors...), runs it through the `rulecheck` CLI in process, and classifies the
outcome. A finding is one of:

- `internal`: the CLI reported `INTERNAL_ERROR`, leaked a traceback, raised, or exited
  with a code other than 0, 1 or 2;
- `hang`: one input took longer than `HANG_SECONDS`;
- `fmt`: `rulecheck fmt` changed a file it had just written (not idempotent).

Usage: `python tests/hostile_fuzz.py --seconds 1800 --out docs/reliability.md`.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script by `make fuzz`
    sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402

from engine.cli import main  # noqa: E402

HOSTILE = ROOT / "tests" / "data" / "hostile"
SHOP = ROOT / "tests" / "data" / "evaluate"
PROTOCOL = ROOT / "tests" / "data" / "protocol"
HANG_SECONDS = 10.0
_SHOP_INPUTS = {"catalogue": "catalogue.yaml", "orders": "orders.jsonl", "policy": "policy.json"}

# Fragments a hostile user might put anywhere.
_COMMON: tuple[bytes, ...] = (
    b"\r",
    b"\r\n",
    b"\n",
    b"\x00",
    b"\t",
    "\u00a0".encode(),
    "\u2028".encode(),
    "\ufeff".encode(),
    b"\xff",
    b"\xc3",
    b'"',
    b"\\",
    b"\\u",
    b"\\ud800",
    b"9" * 5000,
    b"1e999999999",
    b"1e-999999999",
    b"-0",
    b"0.0000000000000000000001",
    b"x" * 300,
)
_RULES: tuple[bytes, ...] = (
    b"not " * 150,
    b" + 1" * 150,
    b"{" * 150,
    b"}" * 150,
    b"(" * 150,
    b")" * 150,
    b"if true then 1 else " * 120,
    b"- " * 150,
    b"#",
    b"const ",
    b"gate g require ",
    b"1_000",
    b"1__0",
    b" tokens",
    b" USD/Mtokens",
    b" %",
    b"->",
    b"<-",
    b"count(",
    b"all(v in ",
    b'kind k of g\n  records d "/x"\n',
)
_DATA: tuple[bytes, ...] = (
    b"[" * 250,
    b"]" * 250,
    b'{"a":' * 250,
    b"}" * 250,
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"null",
    b"true",
    b"[]",
    b"{}",
    b",",
    b":",
    b'"price": ',
    b'"quantity": ',
)
_YAML: tuple[bytes, ...] = (
    b".nan",
    b".inf",
    b"-.inf",
    b"!!float .NaN",
    b"&a ",
    b"*a",
    b"<<: ",
    b"? ",
    b"- ",
    b"---\n",
    b"...\n",
    b"!!python/object:os.system ",
    b"!!binary ",
    b"0x1F",
    b"0o17",
    b"1_000",
    b"190:20:30",
    b"2024-01-01",
    b"~",
    b"|\n  ",
    b"[" * 250,
    b"{a: " * 250,
)


def _seeds(suffix: str) -> list[bytes]:
    found = [p.read_bytes() for p in sorted(HOSTILE.glob(f"*{suffix}"))]
    if suffix == ".rules":
        found += [p.read_bytes() for p in sorted((ROOT / "rules").glob("*.rules"))]
        found += [(ROOT / "tests" / "data" / "evaluate" / "shop.rules").read_bytes()]
        found += [(PROTOCOL / "eval.rules").read_bytes()]
    elif suffix == ".jsonl":
        found += [(SHOP / "orders.jsonl").read_bytes()]
        found += [(PROTOCOL / "accepted" / "answers.jsonl").read_bytes()]
    elif suffix == ".json":
        found += [(SHOP / "policy.json").read_bytes()]
    elif suffix == ".yaml":
        found += [(SHOP / "catalogue.yaml").read_bytes()]
    return found


def mutate(rng: random.Random, seed: bytes, fragments: tuple[bytes, ...]) -> bytes:
    """One to four edits of `seed`: delete, duplicate, swap, flip or insert a fragment."""
    data = bytearray(seed)
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(data))
        span = rng.randint(1, 16)
        edit = rng.randrange(6)
        if edit == 0:
            del data[at : at + span]
        elif edit == 1:
            data[at:at] = data[at : at + span]
        elif edit == 2 and at + 2 * span < len(data):
            first, second = data[at : at + span], data[at + span : at + 2 * span]
            data[at : at + 2 * span] = second + first
        elif edit == 3 and at < len(data):
            data[at] = rng.randrange(256)
        else:
            data[at:at] = rng.choice(fragments)
    return bytes(data)


@dataclass
class Tally:
    """What one target met."""

    tried: int = 0
    internal: int = 0
    hangs: int = 0
    fmt: int = 0
    slowest: float = 0.0
    examples: list[str] = field(default_factory=list)

    def record(self, kind: str, detail: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {detail[:300]}")


class _Hang(BaseException):  # not caught by the CLI's catch-all
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Interrupt an input that runs longer than `seconds` (main thread, POSIX only)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _Hang

    if not hasattr(signal, "setitimer"):  # pragma: no cover - not POSIX
        yield
        return
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(args: list[str]) -> str | None:
    """Run the CLI in process; a problem description when it crashed, else None."""
    result = CliRunner().invoke(main, args)
    output = result.stdout + (result.stderr or "")
    if "INTERNAL_ERROR" in output or "Traceback" in output:
        return f"{args[0]}: {output.strip()}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        if isinstance(result.exception, _Hang):
            raise result.exception
        return f"{args[0]}: raised {type(result.exception).__name__}: {result.exception}"
    if result.exit_code not in (0, 1, 2):
        return f"{args[0]}: exit {result.exit_code}"
    return None


def check_rules(data: bytes, folder: Path, tally: Tally) -> None:
    """`lint`, `hash` and `fmt` on a rule file; `fmt` twice must write once."""
    path = folder / "input.rules"
    path.write_bytes(data)
    for command in (["lint"], ["hash"], ["fmt", "--check"]):
        problem = run_cli([*command, str(path)])
        if problem is not None:
            tally.record("internal", problem)
            return
    if path.read_bytes() != data:
        tally.record("internal", "fmt --check wrote the file")
        return
    problem = run_cli(["fmt", str(path)])
    if problem is not None:
        tally.record("internal", problem)
        return
    once = path.read_bytes()
    again = CliRunner().invoke(main, ["fmt", str(path)])
    if path.read_bytes() != once or "reformatted" in again.stdout:
        tally.record("fmt", repr(data[:200]))


def _data_checker(role: str, suffix: str) -> Callable[[bytes, Path, Tally], None]:
    def check(data: bytes, folder: Path, tally: Tally) -> None:
        path = folder / f"input{suffix}"
        path.write_bytes(data)
        args = ["evaluate", "shop", "--rules", str(SHOP / "shop.rules")]
        for name, file in _SHOP_INPUTS.items():
            args += ["--input", f"{name}={path if name == role else SHOP / file}"]
        problem = run_cli(args)
        if problem is not None:
            tally.record("internal", problem)
        elif path.read_bytes() != data:
            tally.record("internal", "the input was modified")

    return check


def check_bundle(data: bytes, folder: Path, tally: Tally) -> None:
    """The `model_eval` protocol bundle with mutated answers, through `check`."""
    bundle = folder / "bundle"
    if not bundle.exists():
        shutil.copytree(PROTOCOL / "accepted", bundle)
    (bundle / "answers.jsonl").write_bytes(data)
    problem = run_cli(["check", str(bundle), "--rules", str(PROTOCOL / "eval.rules")])
    if problem is not None:
        tally.record("internal", problem)


TARGETS: dict[str, tuple[str, tuple[bytes, ...], Callable[[bytes, Path, Tally], None]]] = {
    "rules": (".rules", _COMMON + _RULES, check_rules),
    "json": (".json", _COMMON + _DATA, _data_checker("policy", ".json")),
    "jsonl": (".jsonl", _COMMON + _DATA, _data_checker("orders", ".jsonl")),
    "yaml": (".yaml", _COMMON + _YAML, _data_checker("catalogue", ".yaml")),
    "bundle": (".jsonl", _COMMON + _DATA, check_bundle),
}


def run_one(target: str, rng: random.Random, folder: Path, tally: Tally) -> None:
    """One mutated input for `target`, classified into `tally`."""
    suffix, fragments, checker = TARGETS[target]
    seeds = _seed_cache(suffix)
    data = mutate(rng, rng.choice(seeds), fragments)
    started = time.monotonic()
    try:
        with _deadline(HANG_SECONDS):
            checker(data, folder, tally)
    except _Hang:
        tally.record("hangs", repr(data[:200]))
    elapsed = time.monotonic() - started
    tally.slowest = max(tally.slowest, elapsed)
    tally.tried += 1


_SEEDS: dict[str, list[bytes]] = {}


def _seed_cache(suffix: str) -> list[bytes]:
    if suffix not in _SEEDS:
        _SEEDS[suffix] = _seeds(suffix)
    return _SEEDS[suffix]


def peak_rss_mib() -> float:
    """This process's peak resident memory so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def campaign(seconds: float, seed: int) -> dict[str, Tally]:
    """Round-robin over every target until `seconds` have passed."""
    rng = random.Random(seed)
    tallies = {name: Tally() for name in TARGETS}
    end = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        folders = {name: Path(tmp) / name for name in TARGETS}
        for folder in folders.values():
            folder.mkdir()
        while time.monotonic() < end:
            for name in TARGETS:
                run_one(name, rng, folders[name], tallies[name])
    return tallies


_START = "<!-- fuzz:start -->"
_END = "<!-- fuzz:end -->"


def report(tallies: dict[str, Tally], seconds: float, seed: int, wall: float) -> str:
    """The markdown section `make fuzz` writes."""
    lines = [
        _START,
        f"Command: `make fuzz FUZZ_SECONDS={int(seconds)}` "
        f"(`python tests/hostile_fuzz.py --seconds {int(seconds)} --seed {seed}`); "
        f"ran {wall / 60:.1f} minutes, {time.strftime('%Y-%m-%d', time.gmtime())}, "
        "one process on a shared 2-core machine.",
        "",
        "| target | inputs tried | INTERNAL_ERROR | hangs over 10 s | fmt not idempotent "
        "| slowest input (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, tally in tallies.items():
        fmt = str(tally.fmt) if name == "rules" else "n/a"
        lines.append(
            f"| {name} | {tally.tried:,} | {tally.internal} | {tally.hangs} | {fmt} "
            f"| {tally.slowest:.2f} |"
        )
    total = sum(t.tried for t in tallies.values())
    lines += ["", f"Total inputs: {total:,}. Peak RSS of the process: {peak_rss_mib():.0f} MiB."]
    examples = [e for t in tallies.values() for e in t.examples]
    if examples:
        lines += ["", "First findings:", ""] + [f"- `{e}`" for e in examples]
    lines.append(_END)
    return "\n".join(lines) + "\n"


def write_report(out: Path, section: str) -> None:
    """Replace the fuzz section of `out` (between its markers) with `section`."""
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    if _START in text and _END in text:
        head, _, rest = text.partition(_START)
        _, _, tail = rest.partition(_END + "\n")
        text = head + section + tail
    else:
        text += "\n" + section
    out.write_text(text, encoding="utf-8")


def _main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args()
    started = time.monotonic()
    tallies = campaign(options.seconds, options.seed)
    section = report(tallies, options.seconds, options.seed, time.monotonic() - started)
    sys.stdout.write(section)
    if options.out is not None:
        write_report(options.out, section)
    return 1 if any(t.internal or t.hangs or t.fmt for t in tallies.values()) else 0


if __name__ == "__main__":
    raise SystemExit(_main())
