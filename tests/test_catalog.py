"""The diagnostic catalog is the one list of codes: complete, and `docs/diagnostics.md` is it."""

from __future__ import annotations

import re
from pathlib import Path

from engine.catalog import CATALOG, catalog_codes
from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent
# Upper-case names in the engine that are grammar terminals or report headings, not codes,
# and the environment variables and `os` flags the grammar tables' and parse cache read.
_NOT_CODES = {"ADD_OP", "MUL_OP", "IN_ARROW", "OUT_ARROW", "TYPE_UNIT"}
_NOT_CODES |= {"RULECHECK_CACHE_DIR", "RULECHECK_PARSE_CACHE", "XDG_CACHE_HOME", "O_NOFOLLOW"}


def _engine_codes() -> set[str]:
    files = sorted(p for p in (ROOT / "engine").rglob("*.py") if p.name != "catalog.py")
    sources = "".join(p.read_text(encoding="utf-8") for p in files)
    found = set(re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"', sources))
    return found - _NOT_CODES


def test_every_code_the_engine_writes_is_in_the_catalog() -> None:
    missing = _engine_codes() - catalog_codes()
    assert not missing, f"add these to engine/catalog.py: {sorted(missing)}"


def test_every_code_is_listed_once_with_a_known_severity() -> None:
    codes = [entry.code for entry in CATALOG]
    assert len(codes) == len(set(codes))
    assert {entry.severity for entry in CATALOG} == {"error", "warning"}


def test_docs_are_generated_from_the_catalog() -> None:
    run = CliRun(["codes", "--format", "markdown"])
    assert run.exit_code == 0
    expected = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert run.stdout == expected, "run: rulecheck codes --format markdown > docs/diagnostics.md"


def test_codes_lists_the_reject_codes_of_the_rules_as_json() -> None:
    run = CliRun(["codes", "--format", "json"])
    assert run.exit_code == 0
    declared = {row["code"]: row for row in run.data["rules"]}
    assert declared["TRIAL_OVER_LIMIT"]["file"] == "001_trial_limits.rules"
    assert {row["code"] for row in run.data["engine"]} == catalog_codes()
