"""`--format html`: one self-contained page, the decision and scorecards first, then a plot
of every gate and budget with several bindings against its bound. Rendered in headless
Chromium when one is installed (`.ci/run` installs Debian's); skipped, saying so, when not."""

from __future__ import annotations

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
    assert page.count("svg") == figures + page.count("figure", **{"class": "distribution"})
    for table in data["tables"]:
        assert f'id="table-{table["name"]}"' in campaign_page


def test_a_table_grouped_by_its_first_column_is_plotted_per_group() -> None:
    # seed 001's trials: each arm's verified progress, one dot per trial and the median
    run = CliRun(["check", str(REPO / "controls" / "trials"), "--format", "html"])
    assert run.exit_code == 0
    page = Page(run.stdout)
    names = {a.get("id") for t, a in page.tags if t == "figure"}
    assert "distribution-trial_outcomes-verified_progress" in names
    assert page.count("svg") == page.count("figure", **{"class": "distribution"}) >= 1


def test_an_unavailable_figure_names_its_missing_fields() -> None:
    # a DIRECT trial records no semantic coverage: the cell says so, never a number
    run = CliRun(["check", str(REPO / "controls" / "trials"), "--format", "html"])
    text = "".join(Page(run.stdout).text)
    assert "unavailable (missing criteria_covered)" in text
    assert "{'unavailable'" not in text


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
