"""The proposed live-execution manifest (manifests/evidence-reconciliation/) through
`rulecheck admit`: refused while any real identity is unmeasured, every one listed, and
admitted only when filled in with the pre-registered configuration (CLI-HANDOFF 5)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parents[1]
PROPOSAL = ROOT / "manifests" / "evidence-reconciliation"
CAMPAIGN_MANIFEST = ROOT / "controls" / "campaign" / "manifest.yaml"


def _unmeasured(value: Any, schema_keys: dict[str, Any], pointer: str = "") -> list[str]:
    """The pointers of the proposal that are null, or keys of the schema it leaves out."""
    found = []
    for key in schema_keys:
        here = f"{pointer}/{key}"
        nested = schema_keys[key].get("schema") if isinstance(schema_keys[key], dict) else None
        if key not in value or value[key] is None:
            found.append(here)
        elif isinstance(nested, dict) and schema_keys[key].get("type") == "dict":
            found += _unmeasured(value[key], nested, here)
    return found


def test_the_proposal_is_refused_and_lists_every_unmeasured_identity() -> None:
    run = CliRun(["admit", str(PROPOSAL), "--format", "json"])
    assert run.exit_code == 1
    diagnostics = run.data["diagnostics"]
    assert {d["code"] for d in diagnostics} == {"IDENTITY_MISSING"}
    listed = [d["location"]["pointer"] for d in diagnostics]
    proposal = yaml.safe_load((PROPOSAL / "live.proposed.yaml").read_text(encoding="utf-8"))
    schema_path = ROOT / "manifests" / "schemas" / "execution_manifest.yaml"
    schema = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    assert sorted(listed) == sorted(_unmeasured(proposal, schema))
    assert "/model/resolved_identifier" in listed  # the provider preflight has not run
    assert "/runtime/cli_executable_sha256" in listed
    assert "/model/identifier" not in listed  # pinned by the pre-registration, so given


def _filled(tmp_path: Path) -> Path:
    """The proposal with every identity measured: the shipped campaign's, run for real."""
    bundle = Path(shutil.copytree(PROPOSAL, tmp_path / "live"))
    manifest = yaml.safe_load(CAMPAIGN_MANIFEST.read_text(encoding="utf-8"))
    manifest["synthetic"] = False
    (bundle / "live.proposed.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    return bundle


def test_a_proposal_with_every_identity_bound_is_admitted(tmp_path: Path) -> None:
    run = CliRun(["admit", str(_filled(tmp_path)), "--format", "json"])
    assert run.exit_code == 0, run.stdout
    assert run.data["verdict"] == "IDENTITIES_BOUND"
    assert run.data["violations"] == []


EDITS = {
    "a synthetic run": (("synthetic",), True, "LIVE_MANIFEST_SYNTHETIC"),
    "no provider model identifier": (("model", "resolved_identifier"), None, "IDENTITY_MISSING"),
    "another model": (("model", "identifier"), "gpt-5.6", "CONFIGURATION_NOT_PINNED"),
    "fast mode": (("model", "fast_mode"), True, "CONFIGURATION_NOT_PINNED"),
    "another CLI": (("runtime", "cli_version"), "0.150.0", "CONFIGURATION_NOT_PINNED"),
    "another rate": (("price_card", "usd_per_million", "output"), "21", "TARIFF_MISMATCH"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_filled_proposal_off_the_pre_registration_is_refused(edit: str, tmp_path: Path) -> None:
    path, value, code = EDITS[edit]
    bundle = _filled(tmp_path)
    file = bundle / "live.proposed.yaml"
    manifest = yaml.safe_load(file.read_text(encoding="utf-8"))
    target = manifest
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    file.write_text(yaml.safe_dump(manifest), encoding="utf-8")
    run = CliRun(["admit", str(bundle), "--format", "json"])
    assert run.exit_code == 1
    assert run.data["verdict"] == "LIVE_EXECUTION_REFUSED"
    assert [v["code"] for v in run.data["violations"]] == [code]
