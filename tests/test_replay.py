"""`rulecheck replay --old RULES_OR_LOCK --new RULES_OR_LOCK BUNDLE...`.

The held variants are the mutations of controls/evaluator/mutations.cases.yaml, each
applied to a copy of the shipped campaign (resealed, refrozen as the case says) in a
temporary folder; the shipped campaign itself is never touched. Each case declares the
verdict its variant gets under the shipped rules: the replay must agree.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.cases.files import read_case_file
from engine.cases.run import prepare
from engine.evaluate.program import compile_program
from engine.evaluate.protocol import bundle_protocol, protocol_freeze, protocol_seal
from engine.ruleset import load_ruleset
from tests.cli_run import REPO, CliRun, copy_shipped_rules

MUTATIONS = REPO / "controls" / "evaluator" / "mutations.cases.yaml"
PROTOCOL = REPO / "tests" / "data" / "protocol"
NO_VERDICT = "NO_VERDICT_EXECUTION_INVALID"


def _variants(scratch: Path) -> list[tuple[Path, str]]:
    """Every mutation's bundle, made in `scratch`, with the verdict its case expects."""
    program = compile_program(load_ruleset([REPO / "rules"]))
    made = []
    for number, case in enumerate(read_case_file(MUTATIONS).cases):
        prepared = prepare(case, scratch / f"{number:02d}")
        bundle = prepared.bundle
        assert bundle is not None
        if bundle != case.bundle:
            protocol = bundle_protocol(program, bundle, case.protocol)
            if case.refreeze:
                frozen = protocol_freeze(program, bundle, protocol)
                frozen.target.write_bytes(frozen.data)
            if case.reseal:
                sealed = protocol_seal(program, bundle, protocol, replace=True)
                sealed.target.write_bytes(sealed.data)
        made.append((bundle, str(case.expect["verdict"])))
    return made


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, str]]:
    return _variants(tmp_path_factory.mktemp("variants"))


@pytest.fixture(scope="module")
def rule_edits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shipped rules, a copy with a stricter quality bar, and a copy with only a
    comment and blank lines added (a cosmetic edit)."""
    root = tmp_path_factory.mktemp("rules")
    stricter = copy_shipped_rules(root / "stricter" / "rules")
    _edit(
        stricter / "000_quality_gates.rules",
        "const min_macro_task_median_R = 0.90",
        "const min_macro_task_median_R = 0.95",
    )
    cosmetic = copy_shipped_rules(root / "cosmetic" / "rules")
    _edit(
        cosmetic / "000_quality_gates.rules",
        "const min_macro_task_median_R = 0.90",
        "# the macro bar, as pre-registered\n\n\nconst min_macro_task_median_R = 0.9",
    )
    return {"shipped": REPO / "rules", "stricter": stricter, "cosmetic": cosmetic}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def _replay(old: Path, new: Path, bundles: list[Path], *extra: str) -> CliRun:
    args = ["replay", "--old", str(old), "--new", str(new), *map(str, bundles), *extra]
    run = CliRun([*args, "--format", "json"])
    run.assert_clean()
    return run


def _rows(run: CliRun) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    return [line for line in lines if "bundle" in line]


def test_a_stricter_bar_flips_every_judged_campaign(
    held: list[tuple[Path, str]], rule_edits: dict[str, Path]
) -> None:
    # The campaign binds its own rules.lock (`evaluated_with_frozen_rules`): under rules
    # that differ from it, every campaign with a verdict is refused admission; those
    # already refused keep their verdict.
    bundles = [REPO / "controls" / "campaign", *(bundle for bundle, _ in held)]
    expected = ["ADVANCE", *(verdict for _, verdict in held)]
    run = _replay(rule_edits["shipped"], rule_edits["stricter"], bundles)
    rows = _rows(run)
    assert [row["old"] for row in rows] == expected
    assert all(row["new"] == NO_VERDICT for row in rows)
    flipped = [row["flipped"] for row in rows]
    assert flipped == [verdict != NO_VERDICT for verdict in expected]
    assert any(flipped) and not all(flipped)
    assert run.exit_code == 1
    first = rows[0]
    assert {"name": "evaluated_with_frozen_rules", "old": True, "new": False} in first["changed"]
    assert "mechanism" in first["declarations"]
    head = run.stdout.splitlines()[0]
    assert '"min_macro_task_median_R"' in head and '"direction":"stricter"' in head


def test_a_cosmetic_edit_flips_nothing(
    held: list[tuple[Path, str]], rule_edits: dict[str, Path]
) -> None:
    bundles = [REPO / "controls" / "campaign", *(bundle for bundle, _ in held)]
    run = _replay(rule_edits["shipped"], rule_edits["cosmetic"], bundles)
    rows = _rows(run)
    assert len(rows) == len(bundles)
    assert not any(row["flipped"] or row["changed"] for row in rows)
    assert [row["old"] for row in rows] == [row["new"] for row in rows]
    assert run.exit_code == 0
    sides = ["--old", str(rule_edits["shipped"]), "--new", str(rule_edits["cosmetic"])]
    text = CliRun(["replay", *sides, str(REPO / "controls" / "campaign")])
    assert "identical: every declaration hash is equal" in text.stdout
    assert "1 bundles: 0 verdicts flipped" in text.stdout


def _protocol_rules(root: Path, bar: str) -> Path:
    folder = root / f"rules_{bar}"
    folder.mkdir()
    shutil.copy(PROTOCOL / "answer.schema.json", folder)
    text = (PROTOCOL / "eval.rules").read_text(encoding="utf-8")
    assert text.count("const min_pass_rate = 80 %") == 1
    (folder / "eval.rules").write_text(
        text.replace("const min_pass_rate = 80 %", f"const min_pass_rate = {bar} %"),
        encoding="utf-8",
    )
    return folder


BUNDLES = [PROTOCOL / name for name in ("accepted", "just_below_bar", "refused")]


def test_a_threshold_edit_flips_the_bundle_at_the_bar(tmp_path: Path) -> None:
    run = _replay(PROTOCOL / "eval.lock", _protocol_rules(tmp_path, "90"), BUNDLES)
    rows = _rows(run)
    assert [(row["old"], row["new"], row["flipped"]) for row in rows] == [
        ("MEETS_BAR", "BELOW_BAR", True),
        ("BELOW_BAR", "BELOW_BAR", False),
        ("INVALID", "INVALID", False),
    ]
    assert rows[0]["changed"] == [{"name": "pass_rate_met", "old": True, "new": False}]
    assert rows[0]["declarations"] == ["min_pass_rate", "pass_rate_met", "verdict"]
    assert run.exit_code == 1
    args = ["--old", str(PROTOCOL / "eval.lock"), "--new", str(tmp_path / "rules_90")]
    text = CliRun(["replay", *args, str(BUNDLES[0])])
    assert "because ~ const min_pass_rate (changed): 80 % -> 90 %: stricter" in text.stdout


def test_jobs_give_the_same_output(tmp_path: Path) -> None:
    new = _protocol_rules(tmp_path, "70")
    one = _replay(PROTOCOL / "eval.rules", new, BUNDLES * 3)
    two = _replay(PROTOCOL / "eval.rules", new, BUNDLES * 3, "--jobs", "2")
    assert one.stdout == two.stdout
    assert [row["flipped"] for row in _rows(one)] == [False, True, False] * 3


def test_a_lock_whose_rules_changed_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "eval.lock"
    shutil.copy(PROTOCOL / "looser.lock", lock)  # frozen from an eval.rules not beside it
    (tmp_path / "eval.rules").write_text(
        (PROTOCOL / "eval.rules").read_text(encoding="utf-8"), encoding="utf-8"
    )
    shutil.copy(PROTOCOL / "answer.schema.json", tmp_path)
    run = _replay(lock, PROTOCOL / "eval.rules", BUNDLES[:1])
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "REPLAY_LOCK_RULES"
    missing = _replay(tmp_path / "absent.lock", PROTOCOL / "eval.rules", BUNDLES[:1])
    assert missing.exit_code == 2


def test_an_unreadable_bundle_is_reported_and_the_rest_replayed(tmp_path: Path) -> None:
    run = _replay(PROTOCOL / "eval.rules", PROTOCOL / "eval.rules", [tmp_path / "none", *BUNDLES])
    rows = _rows(run)
    assert rows[0]["old"].startswith("refused (") and len(rows) == 4
    assert run.exit_code == 2
