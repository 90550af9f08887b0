"""Where reports go: `--out` on every command that writes a report (folders created, the
umask respected, `cannot write` when it cannot), and `fmt --diff`."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_run import REPO, CliRun

PROTOCOL = REPO / "tests" / "data" / "protocol"
EVAL_RULES = str(PROTOCOL / "eval.rules")
SHOP = REPO / "tests" / "data" / "evaluate"
ANSWER = REPO / "controls" / "answer"
SHOP_INPUTS = [
    f"--input={name}={SHOP / file}"
    for name, file in {
        "catalogue": "catalogue.yaml",
        "orders": "orders.jsonl",
        "policy": "policy.json",
    }.items()
]

# Each command that writes a report, and its exit code on these inputs.
REPORTS: dict[str, tuple[list[str], int]] = {
    "check": (["check", str(PROTOCOL / "refused"), "--rules", EVAL_RULES], 1),
    "evaluate": (["evaluate", "shop", "--rules", str(SHOP / "shop.rules"), *SHOP_INPUTS], 0),
    "test": (["test", str(PROTOCOL)], 0),
    "lint": (["lint", EVAL_RULES], 0),
    "admit": (["admit", str(PROTOCOL / "accepted"), "--rules", EVAL_RULES], 0),
    "answer": (
        [
            "answer",
            str(ANSWER / "answer_A.json"),
            *("--packet", str(ANSWER / "packet.json"), "--role", "A"),
            *("--draft", str(ANSWER / "draft.json"), "--source", str(ANSWER / "source")),
        ],
        0,
    ),
    "answers": (["answers", str(REPO / "tests" / "data" / "answers" / "index.jsonl")], 1),
    "explain": (["explain", str(PROTOCOL / "just_below_bar"), "--rules", EVAL_RULES], 0),
    "controls": (["controls", str(PROTOCOL / "controls.yaml")], 0),
    "hash": (["hash", EVAL_RULES], 0),
    "diff": (["diff", str(PROTOCOL / "eval.lock"), EVAL_RULES], 0),
    "show": (["show", "max_answer_tokens", "--rules", EVAL_RULES], 0),
    "inventory": (["inventory", "--rules", EVAL_RULES], 0),
    "codes": (["codes", "--rules", EVAL_RULES], 0),
    "conformance": (["conformance", str(REPO / "controls" / "conformance" / "reference")], 0),
    "replay": (
        [
            *("replay", "--old", EVAL_RULES, "--new", EVAL_RULES),
            *(str(PROTOCOL / "accepted"), str(PROTOCOL / "refused")),
        ],
        0,
    ),
}


@pytest.fixture
def umask_027() -> Iterator[None]:
    previous = os.umask(0o027)
    yield
    os.umask(previous)


# The commands that judge rules also write the CI formats (tests/test_ci_formats.py).
JUDGING = ("check", "evaluate", "test", "lint")
OUT_CASES = [
    (name, output_format)
    for name in sorted(REPORTS)
    for output_format in ("text", "json", *(("junit",) if name in JUDGING else ()))
]


@pytest.mark.parametrize(("name", "output_format"), OUT_CASES)
def test_out_writes_what_stdout_would_show(
    name: str, output_format: str, tmp_path: Path, umask_027: None
) -> None:
    args, code = REPORTS[name]
    shown = CliRun([*args, "--format", output_format])
    target = tmp_path / "reports" / "ci" / f"{name}.out"
    written = CliRun([*args, "--format", output_format, "--out", str(target)])
    assert (shown.exit_code, written.exit_code) == (code, code)
    assert written.stdout == ""
    assert target.read_text(encoding="utf-8") == shown.stdout
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # 0666 less the umask, not 0600


def test_out_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    args, _ = REPORTS["check"]
    run = CliRun([*args, "--format", "json", "--out", str(blocker / "x.json")])
    assert run.exit_code == 2
    (diagnostic,) = run.data["diagnostics"]
    assert diagnostic["code"] == "FILE_UNWRITABLE"
    assert diagnostic["message"].startswith(f"cannot write `{blocker / 'x.json'}`: ")


def test_out_never_overwrites_an_input_of_evaluate(tmp_path: Path) -> None:
    orders = tmp_path / "orders.jsonl"
    shutil.copy(SHOP / "orders.jsonl", orders)
    before = orders.read_bytes()
    args, _ = REPORTS["evaluate"]
    args = [a.replace(str(SHOP / "orders.jsonl"), str(orders)) for a in args]
    run = CliRun([*args, "--format", "json", "--out", str(orders)])
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "OUTPUT_IS_INPUT"
    assert orders.read_bytes() == before


def test_fmt_diff_shows_the_change_and_check_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "r.rules"
    source = 'ruleset r version "1"\ngate   g\n  require true\n'
    path.write_text(source, encoding="utf-8")
    path.chmod(0o644)
    run = CliRun(["fmt", "--check", "--diff", str(path)])
    assert run.exit_code == 1
    assert path.read_text(encoding="utf-8") == source
    lines = run.stdout.splitlines()
    assert lines[0] == f"would reformat {path}"
    assert lines[1:4] == [f"--- {path}", f"+++ {path}", "@@ -1,3 +1,4 @@"]
    assert "-gate   g" in lines and "+gate g" in lines and "+" in lines
    rewritten = CliRun(["fmt", str(path)])
    assert rewritten.exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # a rewritten file keeps its mode
    again = CliRun(["fmt", "--check", "--diff", "--format", "json", str(path)])
    assert again.exit_code == 0 and again.data["diffs"] == {}


def _on_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run the installed CLI with stderr on a pseudo-terminal: exit code, stdout, stderr."""
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    rulecheck = str(Path(sys.executable).parent / "rulecheck")
    done = subprocess.run(
        [rulecheck, *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: everything written has been read
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return done.returncode, done.stdout.decode("utf-8"), seen.decode("utf-8")


def test_progress_is_drawn_on_a_terminal_only_and_never_with_quiet() -> None:
    args, code = REPORTS["check"]
    piped = CliRun(args)
    status, stdout, stderr = _on_a_terminal(args)
    assert (status, stdout) == (code, piped.stdout)  # the report itself is the same
    assert "checking " in stderr and "] " in stderr
    assert stderr.endswith("\r\x1b[K")  # the bar is erased when the run ends
    assert piped.stderr == ""  # not a terminal: nothing drawn
    status, stdout, stderr = _on_a_terminal([*args, "--quiet"])
    assert (status, stdout, stderr) == (code, piped.stdout, "")
