"""`--format html`: one self-contained page, the decision and scorecards first, then a plot
of every gate and budget with several bindings against its bound. Rendered in headless
Chromium when one is installed (`.ci/run` installs Debian's); skipped, saying so, when not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import REPO, CliRun

CAMPAIGN = ["check", str(REPO / "controls" / "campaign")]
PROTOCOL = REPO / "tests" / "data" / "protocol"
REFUSED = ["check", str(PROTOCOL / "refused"), "--rules", str(PROTOCOL / "eval.rules")]
SUMMARY = REPO / "tests" / "data" / "html"
FIGURES = ("plot", "single", "ledger", "box", "distribution")


class Page(HTMLParser):
    """The tags, attributes and text of a page, as a test needs them."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def count(self, tag: str, **attributes: str) -> int:
        return sum(
            t == tag and all(a.get(k) == v for k, v in attributes.items()) for t, a in self.tags
        )


def _plotted(data: dict[str, Any]) -> int:
    """How many gates and budgets compare two or more bindings with a number."""

    def numeric(value: Any) -> bool:
        return isinstance(value, int | str) and not isinstance(value, bool)

    return sum(
        sum(numeric(o.get("observed")) and numeric(o.get("bound")) for o in rule["observations"])
        >= 2
        for rule in [*data["gates"], *data["budgets"]]
    )


@pytest.fixture(scope="module")
def campaign_page() -> str:
    run = CliRun([*CAMPAIGN, "--format", "html"])
    assert run.exit_code == 0, run.stderr
    return run.stdout


def test_the_page_is_self_contained(campaign_page: str) -> None:
    page = Page(campaign_page)
    assert page.count("script") == 0 and page.count("link") == 0 and page.count("img") == 0
    for _tag, attributes in page.tags:
        for name, value in attributes.items():
            if name in ("src", "href") or name.endswith(":href"):
                assert value.startswith("#"), (name, value)  # only links inside the page


def test_decision_and_scorecards_come_first_then_a_plot_per_compared_rule(
    campaign_page: str,
) -> None:
    order = [campaign_page.index(f'id="{part}"') for part in ("decision", "scorecards", "plots")]
    assert order == sorted(order)
    page = Page(campaign_page)
    assert "ADVANCE" in "".join(page.text)
    data = CliRun([*CAMPAIGN, "--format", "json"]).data
    figures = page.count("figure", **{"class": "plot"})
    assert figures == _plotted(data) > 0
    assert page.count("svg") == sum(page.count("figure", **{"class": c}) for c in FIGURES)
    for table in data["tables"]:
        assert f'id="table-{table["name"]}"' in campaign_page


_FAMILIES = ("outcome", "decomposition", "parallelism", "cost", "stopping")


def test_a_table_grouped_by_its_first_column_is_plotted_per_group() -> None:
    # seed 001's trials: each arm's verified progress, one dot per trial and the median
    run = CliRun(["check", str(REPO / "controls" / "trials"), "--format", "html"])
    assert run.exit_code == 0
    page = Page(run.stdout)
    names = {a.get("id") for t, a in page.tags if t == "figure"}
    assert "distribution-trial_outcomes-verified_progress" in names
    # each arm-and-metric distribution table (n, median, quartiles, min, max) is a box plot
    boxes = {f"box-{family}_distributions-value" for family in _FAMILIES}
    assert boxes <= names
    dots, box = (page.count("figure", **{"class": c}) for c in ("distribution", "box"))
    assert page.count("svg") == dots + box and dots >= 1 and box == len(boxes)


def test_an_unavailable_figure_names_its_missing_fields() -> None:
    # a DIRECT trial records no semantic coverage: the cell says so, never a number
    run = CliRun(["check", str(REPO / "controls" / "trials"), "--format", "html"])
    text = "".join(Page(run.stdout).text)
    assert "unavailable (missing criteria_covered)" in text
    assert "{'unavailable'" not in text


def _figure(page: str, name: str) -> str:
    """The text of the figure with id `name`: its SVG and its caption."""
    start = page.index(f'<figure class="{name.split("-")[0]}" id="{name}">')
    return page[start : page.index("</figure>", start)]


def test_a_gate_is_plotted_beside_the_sibling_columns_of_the_table_it_reads(
    campaign_page: str,
) -> None:
    # seed 000: B's per-task median R is what the gate reads; A's median is beside it, and
    # the line is the gate's own bound (0.80 in the rules, never in the page's code)
    figure = _figure(campaign_page, "plot-b_task_median_R")
    assert (
        "<code>median_R_A</code>, <code>median_R_B</code> of table <code>task_medians</code>"
        in (figure)
    )
    assert "median_R_A" in figure.split("<figcaption>")[0]  # the legend of the SVG
    data = CliRun([*CAMPAIGN, "--format", "json"]).data
    gate = next(g for g in data["gates"] if g["name"] == "b_task_median_R")
    assert {o["bound"] for o in gate["observations"]} == {"4/5"}
    assert f"bound ({gate['name']})" in figure


def test_a_gate_whose_column_has_no_sibling_is_plotted_alone(campaign_page: str) -> None:
    # the per-task and per-pair ratios against their bounds (1.15 and 1.25 in the rules)
    for name in ("task_cost_ratio_bound", "task_time_ratio_bound", "pair_cost_ratio_bound"):
        figure = _figure(campaign_page, f"plot-{name}")
        assert "each binding's observed value &lt;= the bound" in figure
        assert "side by side" not in figure


def test_gates_and_budgets_of_one_binding_share_a_plot_of_observed_over_bound(
    campaign_page: str,
) -> None:
    # seed 000's aggregate cost and time ratios against 1.10, beside the campaign totals
    figure = _figure(campaign_page, "single-comparisons")
    assert "aggregate_cost_ratio_bound: 1.0525 &lt;= 1.1000" in figure
    assert "aggregate_time_ratio_bound: 1.0475 &lt;= 1.1000" in figure
    assert "campaign_reference_cost: 11.9925 USD &lt;= 30 USD" in figure
    assert "0 of 13 fail" in figure


def test_the_json_report_carries_each_budget_ledger_running_total() -> None:
    data = CliRun([*CAMPAIGN, "--format", "json"]).data
    ledgers = 0
    for budget in data["budgets"]:
        for observation in budget["observations"]:
            steps = observation.get("running_totals", [])
            if steps and observation["passed"]:
                ledgers += 1
                assert steps[-1]["total"] == observation["observed"]
    assert ledgers > 2


def test_each_budget_ledger_is_plotted_against_its_ceiling(campaign_page: str) -> None:
    page = Page(campaign_page)
    names = {a.get("id") for t, a in page.tags if t == "figure" and a.get("class") == "ledger"}
    assert {"ledger-campaign_input_tokens", "ledger-campaign_reference_cost"} <= names
    figure = _figure(campaign_page, "ledger-campaign_input_tokens")
    assert "ceiling &lt;= 3,000,000" in figure and "with reservation" in figure
    # a ledger of one entry per binding is its dot among the bindings, not a ledger plot
    assert "ledger-session_input_tokens" not in names


def test_a_budget_that_breaks_its_ceiling_is_marked_at_the_entry(tmp_path: Path) -> None:
    bundle = tmp_path / "over"
    shutil.copytree(PROTOCOL / "accepted", bundle)
    answers = bundle / "answers.jsonl"
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    rows[3]["tokens"] = 1900  # 410 + 1200 + 2000 + 1900 > 5000 at Q4
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rules = ["--rules", str(PROTOCOL / "eval.rules")]
    data = CliRun(["check", str(bundle), *rules, "--format", "json"]).data
    budget = data["budgets"][0]
    assert not budget["passed"]
    assert budget["observations"][0]["running_totals"][-1] == {"entry": ["Q4"], "total": 5510}
    run = CliRun(["check", str(bundle), *rules, "--format", "html"])
    assert run.exit_code == 1
    figure = _figure(run.stdout, "ledger-total_tokens")
    assert "1 of 1 ledger break it" in figure and "breaks the ceiling" in figure


def test_a_table_of_summary_statistics_per_group_is_a_box_plot() -> None:
    # seed 001's per-arm distributions, or any table with n, min, quartiles, median, max
    run = CliRun(
        [
            "evaluate",
            "summary",
            "--rules",
            str(SUMMARY / "summary.rules"),
            "--input",
            f"arms={SUMMARY / 'arms.jsonl'}",
            "--format",
            "html",
        ]
    )
    assert run.exit_code == 0, run.stderr
    figure = _figure(run.stdout, "box-arm_seconds-seconds")
    assert "each of 3 groups" in figure
    for arm in ("DIRECT", "RECURSIVE", "FIXED_ONE_LEVEL"):
        assert arm in figure
    assert "n=12" in figure


def test_a_table_without_both_quartiles_is_no_box_plot() -> None:
    from engine.report.html_plots import summary_boxes

    table = {
        "name": "t",
        "columns": ["arm", "n", "min_s", "median_s", "max_s", "q1_s"],
        "rows": [{"ids": ["A"], "values": ["A", 3, 1, 2, 3, 1]}],
    }
    assert summary_boxes(table) == []
    table["columns"] = [*table["columns"], "q3_s"]
    table["rows"][0]["values"].append(3)
    assert summary_boxes(table) == [
        ("s", [("A", {"n": 3.0, "min": 1.0, "median": 2.0, "max": 3.0, "q1": 1.0, "q3": 3.0})])
    ]


def test_the_page_is_byte_stable(campaign_page: str) -> None:
    assert CliRun([*CAMPAIGN, "--format", "html"]).stdout == campaign_page


def test_a_refused_bundle_shows_its_violations() -> None:
    run = CliRun([*REFUSED, "--format", "html"])
    assert run.exit_code == 1
    text = "".join(Page(run.stdout).text)
    assert "INVALID" in text and "Violations (4)" in text and "ANSWER_TOO_LONG" in text


def test_without_the_html_packages_the_run_says_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)  # `import jinja2` raises ImportError
    run = CliRun([*REFUSED, "--format", "html"])
    assert run.exit_code == 2
    assert "HTML_NOT_INSTALLED" in run.stderr and "rulecheck[html]" in run.stderr


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.skipif(_browser() is None, reason="no Chromium on PATH (.ci/run installs it)")
def test_headless_chromium_renders_the_page_and_its_plots_without_console_errors(
    campaign_page: str, tmp_path: Path
) -> None:
    from matplotlib.image import imread

    page = tmp_path / "report.html"
    page.write_text(campaign_page, encoding="utf-8")
    shot = tmp_path / "report.png"
    browser = [
        str(_browser()),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1280,4000",
    ]
    rendered = subprocess.run(
        [*browser, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180
    )
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    assert ":CONSOLE" not in rendered.stderr, rendered.stderr
    dom = Page(rendered.stdout)
    shown = Page(campaign_page)
    plotted = shown.count("figure", **{"class": "plot"})
    assert dom.count("figure", **{"class": "plot"}) == plotted > 0
    assert dom.count("svg") == shown.count("svg")
    assert "ADVANCE" in "".join(dom.text)
    pictured = subprocess.run(
        [*browser, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=180
    )
    assert pictured.returncode == 0 and shot.exists()
    pixels = imread(str(shot))
    assert pixels.shape[:2] == (4000, 1280)
    assert pixels.std() > 0.05  # not a blank page
