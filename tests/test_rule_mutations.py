"""Seed 000's mutations of a rule file (controls/evaluator/rule_mutations.yaml): each is
applied to a copy of rules/, shown by `rulecheck diff` as a change of the declaration it
names, and caught by its owning control: the control's specimen reaches the verdict it
must not reach once evaluated by the mutated rules (frozen into the campaign as whoever
changed them would)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from campaign_builder import make_campaign, record_lock, write_campaign

from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parents[1]
MUTATIONS = yaml.safe_load(
    (ROOT / "controls" / "evaluator" / "rule_mutations.yaml").read_text(encoding="utf-8")
)["mutations"]


def _mutated_rules(mutation: dict[str, Any], tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    (tmp_path / "manifests").symlink_to(ROOT / "manifests")  # the protocols' schema paths
    target = rules / mutation["file"]
    text = target.read_text(encoding="utf-8")
    assert text.count(mutation["old"]) == 1, "a declared mutation replaces one exact text"
    target.write_text(text.replace(mutation["old"], mutation["new"]), encoding="utf-8")
    return rules


def _verdict(bundle: Path, rules: Path | None = None) -> Any:
    extra = ["--rules", str(rules)] if rules is not None else []
    run = CliRun(["check", str(bundle), "--format", "json", *extra])
    run.assert_clean()
    return run.data


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m["control"] for m in MUTATIONS])
def test_a_rule_mutation_is_a_diff_and_its_owning_control_catches_it(
    mutation: dict[str, Any], tmp_path: Path
) -> None:
    rules = _mutated_rules(mutation, tmp_path)
    diff = CliRun(["diff", str(ROOT / "rules"), str(rules), "--format", "json"])
    changed = [c["name"] for c in diff.data["changes"] if c["status"] == "changed" and not c["via"]]
    assert changed == [mutation["declaration"]]

    campaign = make_campaign(**mutation["specimen"])
    bundle = write_campaign(campaign, tmp_path / "specimen")
    honest = _verdict(bundle)
    assert (honest["admitted"], honest["verdict"]) == (True, mutation["verdict"])

    # The specimen frozen and locked under the mutated rules, as their author would.
    lock = tmp_path / "mutated.lock"
    assert CliRun(["freeze", str(rules), "--out", str(lock)]).exit_code == 0
    hashed = CliRun(["hash", str(rules)]).stdout.splitlines()[-1].split()
    assert hashed[0] == "ruleset"
    campaign.manifest["identities"]["ruleset_hash"] = hashed[1]
    record_lock(campaign, lock.read_bytes())
    write_campaign(campaign, bundle, rehash=False)
    shutil.copyfile(lock, bundle / "rules.lock")
    mutated = _verdict(bundle, rules)
    assert mutated["violations"] == []
    assert (mutated["admitted"], mutated["verdict"]) == (True, mutation["mutated_verdict"])
