"""The shipped synthetic campaign (what `make demo` checks) stays current with the rules."""

from __future__ import annotations

import json
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
    assert report["synthetic"] is True
    assert report["admitted"] is True
    assert report["verdict"] == "ADVANCE"
    assert [t["name"] for t in report["tables"]] == [
        "runs",
        "task_medians",
        "repository_summaries",
        "macro_averages",
        "development_round",
    ]


def test_demo_text_report_names_the_scorecards_and_verdict() -> None:
    result = CliRunner().invoke(main, ["check", str(CAMPAIGN)])
    assert result.exit_code == 0
    text = result.output
    assert text.startswith("SYNTHETIC CAMPAIGN")
    for needle in (
        "AUTOMATIC VALIDATION",
        "RECORDED HUMAN DECISIONS",
        "source_protocol_scorecard",
        "quality_scorecard",
        "cost_time_scorecard",
        "DECISION mechanism",
        ": ADVANCE",
    ):
        assert needle in text
