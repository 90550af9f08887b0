"""`--verbose`, `--exact` and `--quiet`: one option decorator (`reading_options` in
engine/cli.py) on every command that writes a report, each flag where it changes what
that command shows. `--out` on the same commands: tests/test_outputs.py."""

from __future__ import annotations

import re

import pytest

from engine.cli import main
from tests.cli_run import REPO, CliRun
from tests.test_outputs import EVAL_RULES, PROTOCOL, REPORTS, _on_a_terminal

READING = ("--verbose", "--exact", "--quiet")
# Which flags each command's report has a use for; every other command takes none. A
# command with no rounded number has no `--exact`, one with no long loop no `--quiet`.
FLAGS: dict[str, set[str]] = {
    "check": {"--verbose", "--exact", "--quiet"},
    "evaluate": {"--verbose", "--exact", "--quiet"},
    "explain": {"--verbose", "--exact", "--quiet"},
    "test": {"--verbose", "--quiet"},
    "answers": {"--verbose", "--quiet"},
    "lint": {"--verbose"},
    "controls": {"--quiet"},
    "conformance": {"--quiet"},
    "replay": {"--quiet"},
}
CAMPAIGN = str(REPO / "controls" / "campaign")
FRACTION = re.compile(r" \(-?\d+/\d+\)")


def test_each_command_takes_the_reading_flags_its_report_uses() -> None:
    for name, command in main.commands.items():
        declared = {o for param in command.params for o in param.opts if o in READING}
        assert declared == FLAGS.get(name, set()), name


@pytest.mark.parametrize(
    ("args", "plain", "verbose"),
    [
        (  # every binding of a passing gate, not only the one closest to its bound
            ["explain", CAMPAIGN, "session_wall_time"],
            "0 of 96 bindings fail; closest binding:",
            "0 of 96 bindings fail; every one:\n  S0001: has 67, needs <= 240",
        ),
        (  # what each case's run observed, under its line
            ["test", str(PROTOCOL / "eval.cases.yaml")],
            "on the answer ceiling and on the pass-rate bar\nPASS",
            "on the answer ceiling and on the pass-rate bar\n"
            "  observed passed, admitted, verdict MEETS_BAR\n"
            "    decision verdict: MEETS_BAR (row 2)\n",
        ),
        (  # every answer, those that pass too
            REPORTS["answers"][0],
            "answer_A.json (role B)",
            "answer_A.json (role A)\npacket",
        ),
        (  # each file checked, before the summary
            ["lint", EVAL_RULES],
            "1 file, ",
            f"{EVAL_RULES}: ruleset model_eval, 18 declarations\n1 file, ",
        ),
    ],
    ids=["explain", "test", "answers", "lint"],
)
def test_verbose_adds_what_the_command_says_it_adds(
    args: list[str], plain: str, verbose: str
) -> None:
    short, long = CliRun(args), CliRun([*args, "--verbose"])
    assert short.exit_code == long.exit_code
    assert plain in short.stdout and verbose not in short.stdout
    assert verbose in long.stdout
    assert len(long.stdout) > len(short.stdout)


@pytest.mark.parametrize(
    "args",
    [
        ["explain", str(PROTOCOL / "just_below_bar"), "--rules", EVAL_RULES],
        ["check", str(PROTOCOL / "just_below_bar"), "--rules", EVAL_RULES, "--verbose"],
    ],
    ids=["explain", "check"],
)
def test_exact_fractions_only_with_exact(args: list[str]) -> None:
    rounded, exact = CliRun(args), CliRun([*args, "--exact"])
    assert not FRACTION.search(rounded.stdout)
    assert FRACTION.search(exact.stdout)
    assert FRACTION.sub("", exact.stdout) == rounded.stdout


@pytest.mark.parametrize("name", ["test", "controls", "conformance", "replay", "explain"])
def test_a_progress_bar_on_a_terminal_unless_quiet(name: str) -> None:
    args, code = REPORTS[name]
    piped = CliRun(args)
    status, stdout, stderr = _on_a_terminal(args)
    assert (status, stdout) == (code, piped.stdout)
    assert "\r\x1b[K" in stderr and stderr.endswith("\r\x1b[K")
    status, stdout, stderr = _on_a_terminal([*args, "--quiet"])
    assert (status, stdout, stderr) == (code, piped.stdout, "")
