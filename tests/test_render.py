"""`rulecheck render NAME`: a constant of the rules written out as YAML.

Seed 001's "Fixed budgets" section (kept verbatim in tests/data/seed001/fixed_budgets.md)
holds its `limits:` block between `<!-- gen:limits -->` markers: that block is generated
from the constants of rules/001_limits.rules, byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path

from cli_run import CliRun

DATA = Path(__file__).parent / "data"
SEED_SECTION = DATA / "seed001" / "fixed_budgets.md"
GENERATED = re.compile(r"<!-- gen:limits -->\n\n```yaml\n(.*?)```\n\n<!-- /gen:limits -->", re.S)


def seed_limits_block() -> str:
    """The YAML inside the seed's generated section."""
    found = GENERATED.search(SEED_SECTION.read_text(encoding="utf-8"))
    assert found is not None, "the seed section has no generated limits block"
    return found.group(1)


def test_render_limits_is_the_seeds_block_byte_for_byte() -> None:
    run = CliRun(["render", "limits"])
    run.assert_clean()
    assert run.exit_code == 0
    assert run.stdout == seed_limits_block()


def test_render_json_names_the_constant_and_its_hash() -> None:
    run = CliRun(["render", "limits", "--format", "json"])
    assert run.exit_code == 0
    assert run.data["constant"] == "limits"
    assert run.data["yaml"] == seed_limits_block()
    assert re.fullmatch(r"[0-9a-f]{64}", run.data["hash"])


def test_render_an_unknown_constant_is_a_usage_error() -> None:
    run = CliRun(["render", "limit"])
    run.assert_clean()
    assert run.exit_code == 2
    assert "UNKNOWN_NAME" in run.stderr and "limits" in run.stderr


def test_render_writes_units_in_their_base_unit_and_sets_sorted(tmp_path: Path) -> None:
    rules = tmp_path / "r.rules"
    rules.write_text(
        'ruleset r version "1"\n\n'
        'const shape = {"wait": 4 min, "share": 12.5 %, "name": "a b", "tags": {"z", "a"}, '
        '"on": true}\n',
        encoding="utf-8",
    )
    run = CliRun(["render", "shape", "--rules", str(rules)])
    assert run.exit_code == 0, run.stderr
    assert run.stdout == (
        'shape:\n  wait: 240\n  share: 0.125\n  name: "a b"\n  tags:\n    - "a"\n    - "z"\n'
        '  "on": true\n'
    )


def test_render_refuses_a_value_yaml_cannot_hold_exactly(tmp_path: Path) -> None:
    rules = tmp_path / "r.rules"
    rules.write_text('ruleset r version "1"\n\nconst third = 1 / 3\n', encoding="utf-8")
    run = CliRun(["render", "third", "--rules", str(rules)])
    run.assert_clean()
    assert run.exit_code == 2
    assert "RENDER_VALUE" in run.stderr and "1/3" in run.stderr


def test_a_map_of_mixed_entries_types_each_entry_by_its_own(tmp_path: Path) -> None:
    rules = tmp_path / "r.rules"
    rules.write_text(
        'ruleset r version "1"\n\nconst lim = {"wait": 3 s, "tokens": 2 tokens}\n\n'
        "gate g\n  require lim.wait <= 5 tokens\n",
        encoding="utf-8",
    )
    run = CliRun(["lint", str(rules)])
    assert run.exit_code == 1
    assert "UNIT_MISMATCH" in run.stdout + run.stderr
