"""The shipped synthetic campaign (what `make demo` checks) stays current with the rules."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from engine.cli import main

CAMPAIGN = Path(__file__).resolve().parent.parent / "controls" / "campaign"
RULES = Path(__file__).resolve().parent.parent / "rules"


def test_shipped_lock_is_the_shipped_rules() -> None:
    result = CliRunner().invoke(main, ["diff", str(CAMPAIGN / "rules.lock"), str(RULES)])
    assert result.exit_code == 0, result.output + "\nrun: python tests/campaign_builder.py"


def test_demo_campaign_advances() -> None:
    result = CliRunner().invoke(main, ["check", str(CAMPAIGN), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["banners"] == [
        "SYNTHETIC CAMPAIGN: synthetic inputs; no result about real agents"
    ]
    assert report["protocol"]["name"] == "campaign"
    assert report["admitted"] is True
    assert report["verdict"] == "ADVANCE"
    assert [t["name"] for t in report["tables"]] == [
        "campaign_identity",
        "automatic_validation",
        "human_decisions",
        "runs",
        "task_medians",
        "repository_summaries",
        "macro_averages",
        "development_round",
    ]


def test_demo_text_report_starts_with_one_screen() -> None:
    result = CliRunner().invoke(main, ["check", str(CAMPAIGN)])
    assert result.exit_code == 0
    text = result.output
    banner = "SYNTHETIC CAMPAIGN: synthetic inputs; no result about real agents"
    assert text.startswith(banner) and text.rstrip().endswith(banner)
    lines = text.splitlines()
    # the verdict and its decision row first, then the admission and the counts
    assert lines[2].startswith("ADVANCE: decision mechanism, row 2 [")
    assert lines[3] == "ADMITTED: admission gate execution_valid"
    assert re.fullmatch(r"PASSED: (\d+)/\1 gates pass, (\d+)/\2 budgets hold, .*", lines[4])
    for needle in ("source_protocol_scorecard: pass", "quality_scorecard: pass"):
        assert needle in text  # why: the gate outcomes the decision row read
    # values in the unit their bound is written in, nearest the bound first, with a margin
    assert re.search(r"session_wall_time +S\d+ +[0-9.]+ min <= 4 min +[0-9.]+ min", text)
    assert len(lines) <= 60
    assert max(len(line) for line in lines if not line.startswith("bundle ")) <= 100
    assert "automatic_validation" not in text  # the long tables wait for --verbose


def test_demo_verbose_report_holds_the_tables_and_every_gate() -> None:
    result = CliRunner().invoke(main, ["check", str(CAMPAIGN), "--verbose"])
    assert result.exit_code == 0
    text = result.output
    for needle in ("automatic_validation", "human_decisions", "GATES", "cost_time_scorecard"):
        assert needle in text
    assert "(4/5)" not in text  # exact fractions only with --exact
    exact = CliRunner().invoke(main, ["check", str(CAMPAIGN), "--verbose", "--exact"])
    assert re.search(r"0\.\d{4} \(\d+/\d+\)", exact.output)


def test_reports_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    # Several artifacts of one constant set are missing: the violations must come out in the
    # same order whatever Python's per-process string hashing is.
    import os
    import subprocess
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from campaign_builder import make_campaign, write_campaign

    campaign = make_campaign()
    dropped = {"prompt", "truth", "packet", "task_registry"}
    campaign.manifest["inputs"] = [
        entry for entry in campaign.manifest["inputs"] if entry["artifact"] not in dropped
    ]
    root = write_campaign(campaign, tmp_path / "bundle", rehash=False)
    rulecheck = Path(sys.executable).parent / "rulecheck"
    outputs = set()
    for seed in ("0", "1", "4242"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [str(rulecheck), "admit", str(root), "--format", "json"],
            capture_output=True,
            env=environment,
            check=False,
        )
        assert run.returncode == 1
        outputs.add(run.stdout)
    assert len(outputs) == 1
    codes = [v["code"] for v in json.loads(outputs.pop())["violations"]]
    assert codes.count("FREEZE_INPUT_UNDECLARED") == len(dropped)


def test_set_literal_order_does_not_change_hashes(tmp_path: Path) -> None:
    first = tmp_path / "a.rules"
    second = tmp_path / "b.rules"
    first.write_text('ruleset r version "1"\nconst s = {"A", "B", "C"}\n', encoding="utf-8")
    second.write_text('ruleset r version "1"\nconst s = {"C", "A", "B"}\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", str(first), str(second)])
    assert result.exit_code == 0, result.output


def test_the_module_forms_of_the_command_run_it() -> None:
    # `python -m engine.cli` once defined the commands and exited 0 without running any:
    # every bundle "passed"
    refused = CAMPAIGN.parent / "no-such-bundle"
    for module in ("engine", "engine.cli"):
        run = subprocess.run(
            [sys.executable, "-m", module, "check", str(refused)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 2, (module, run.stdout, run.stderr)
        assert "FILE_UNREADABLE" in run.stdout + run.stderr
