"""The synthetic trial set of seed 001 in `controls/trials/`, and its expected results.

    python tests/trials_builder.py            # rewrite controls/trials/

Each trial is written from the outcome it is meant to show (`TRIALS`: the controller's
outcome and the hidden-check executions), and `EXPECTED` holds what seed 001 says the
protocol concludes about it, worked out by hand from the seed's definitions, never by
running rulecheck. Tests build edited copies with `bundle()` + `write()`.
"""

from __future__ import annotations

import copy
import functools
import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONTROLS = ROOT / "controls" / "trials"
ORACLE_VERSION = "hidden-suite-synthetic-1"
IMAGE = "sha256:" + "ab" * 32

ORACLE: dict[str, Any] = {
    "synthetic": True,
    "oracle_version": ORACLE_VERSION,
    "rerun_policy": {"infrastructure_only_reruns": 1},
    "criteria": [
        {"id": "AC1", "mandatory": True, "weight": 2},
        {"id": "AC2", "mandatory": True, "weight": 1},
        {"id": "AC3", "mandatory": True, "weight": 1},
        {"id": "AC4", "mandatory": False, "weight": 1},
    ],
    "checks": [
        {"id": "H1", "criteria": ["AC1"]},
        {"id": "H2", "criteria": ["AC1", "AC2"]},
        {"id": "H3", "criteria": ["AC2"]},
        {"id": "H4", "criteria": ["AC4"], "mandatory": False},
        {
            "id": "N1",
            "criteria": ["AC3"],
            "oracle_type": "non_test",
            "timeout_policy": "independent review within 1 h",
        },
    ],
}
# Oracle calibration (seed 001): the frozen oracle run before any trial against a candidate
# of each kind; mandatory checks not listed for a candidate passed.
CALIBRATION: dict[str, tuple[str, dict[str, str]]] = {
    "K1": ("known_good", {}),
    "K2": ("unchanged_repository", {"H1": "FAIL", "H2": "FAIL", "H3": "FAIL", "N1": "FAIL"}),
    "K3": ("broken", {"H2": "FAIL"}),
    "K4": ("broken", {"H3": "FAIL"}),
    "K5": ("timeout", {"H2": "CANDIDATE_TIMEOUT"}),
    "K6": ("infrastructure_failure", {"H1": "ORACLE_INFRASTRUCTURE_ERROR"}),
}
ORACLE["calibration"] = {
    "candidates": [{"id": key, "role": role} for key, (role, _) in CALIBRATION.items()],
    "results": [
        {"candidate": key, "check": check, "outcome": outcomes.get(check, "PASS")}
        for key, (_, outcomes) in CALIBRATION.items()
        for check in ("H1", "H2", "H3", "N1")
    ],
}
for _check in ORACLE["checks"]:
    _check.setdefault("oracle_type", "test")
    _check.setdefault("mandatory", True)
    _check.setdefault("expected_outcome", "PASS")
    _check.setdefault("timeout_policy", "120 s per check, calibrated")
    _check.setdefault("weight", 1)

CHECKS = ("H1", "H2", "H3", "H4", "N1")

# What each trial used, under the keys of seed 001's `limits:` block. AT_LIMIT_TRIAL (a
# recursive arm, the only kind that may grow a tree that deep) sits exactly on every limit
# (inclusive ceilings); the concurrent arm uses its four workers; DIRECT and
# FIXED_ONE_LEVEL trials keep their arm's shape (ARM_SHAPES).
AT_LIMITS = {
    "wall_clock_seconds": 3600,
    "root_model_input_tokens": 120_000,
    "root_model_output_tokens": 30_000,
    "model_calls": 24,
    "actions": 120,
    "nodes": 30,
    "maximum_depth": 5,
    "retries_per_action_lineage": 2,
    "consecutive_same_diagnostic_failures": 2,
    "concurrent_workers": 1,
    "maximum_children_per_node": 6,
}
TYPICAL = {
    "wall_clock_seconds": 1800.5,
    "root_model_input_tokens": 64_000,
    "root_model_output_tokens": 9_500,
    "model_calls": 11,
    "actions": 40,
    "nodes": 7,
    "maximum_depth": 2,
    "retries_per_action_lineage": 1,
    "consecutive_same_diagnostic_failures": 0,
    "concurrent_workers": 1,
    "maximum_children_per_node": 3,
}
AT_LIMIT_TRIAL = "T05"
ARM_SHAPES = {
    "DIRECT": {"nodes": 1, "maximum_depth": 0, "maximum_children_per_node": 0},
    "FIXED_ONE_LEVEL": {"nodes": 4, "maximum_depth": 1, "maximum_children_per_node": 3},
}
CLAIMED = "ACCEPTANCE_CLAIMED"
# What the concurrent arm ran at once, batch by batch, and where each action wrote: disjoint
# within a batch (a folder scope ends in `/`), at most its four workers per batch.
CONCURRENT_ACTIONS = (
    {"batch": "B1", "action": "A1", "write_scope": ["src/parser/"]},
    {"batch": "B1", "action": "A2", "write_scope": ["src/render/", "docs/render.md"]},
    {"batch": "B1", "action": "A3", "write_scope": ["test/parser.test.ts"]},
    {"batch": "B2", "action": "A4", "write_scope": ["src/parser/index.ts"]},
    {"batch": "B2", "action": "A5", "write_scope": ["src/cli.ts"]},
)

# trial id -> (arm, controller outcome, {check: outcomes of run 1, 2, ...}); unlisted: PASS.
TRIALS: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "T01": ("DIRECT", CLAIMED, {}),
    "T02": ("DIRECT", "BLOCKED", {"H3": ("FAIL",)}),
    "T03": ("FIXED_ONE_LEVEL", CLAIMED, {"H2": ("CANDIDATE_TIMEOUT",)}),
    "T04": ("FIXED_ONE_LEVEL", "BUDGET_EXHAUSTED", {}),
    "T05": ("RECURSIVE_LAZY", CLAIMED, {"H1": ("ORACLE_INFRASTRUCTURE_ERROR", "PASS")}),
    "T06": (
        "RECURSIVE_LAZY",
        CLAIMED,
        {"H3": ("ORACLE_INFRASTRUCTURE_ERROR", "ORACLE_INFRASTRUCTURE_ERROR")},
    ),
    "T07": ("RECURSIVE_CONCURRENT", CLAIMED, {"H4": ("FAIL",)}),
    "T08": ("RECURSIVE_CONCURRENT", "BLOCKED", {"N1": ("RESULT_LOST", "FAIL")}),
}

# The optional fields of the metric families (docs/trials-format.md), per trial, in the
# order of METRIC_COLUMNS. A DIRECT trial decomposes nothing, so it records no semantic
# coverage and no decomposed nodes (None: the field is left out).
METRIC_COLUMNS = [
    "regressions",
    "constraint_violations",
    "criteria_covered",
    "decomposed_nodes",
    "decompositions_proposed",
    "decompositions_rejected",
    "duplicate_actions",
    "integration_failures",
    "reused_nodes",
    "coupling_invalidations",
    "max_ready_actions",
    "action_seconds",
    "conflicts",
    "stale_results",
    "integration_seconds",
    "cancelled_actions",
    "deterministic_actions",
    "deterministic_compute_seconds",
    "retries",
    "premature_leaves",
    "unnecessary_decompositions",
    "no_progress_recursions",
]
METRICS: dict[str, tuple[Any, ...]] = {
    "T01": (0, 0, None, None, 0, 0, 0, 0, 0, 0, 1, 1800.5, 0, 0, 0, 0, 12, 300, 1, 0, 0, 0),
    "T02": (1, 0, None, None, 0, 0, 0, 0, 0, 0, 1, 900.25, 0, 0, 0, 0, 14, 360, 2, 0, 0, 0),
    "T03": (1, 1, 3, 1, 1, 0, 0, 1, 0, 1, 3, 1800.5, 0, 0, 450.125, 0, 20, 420, 1, 1, 0, 0),
    "T04": (0, 0, 2, 1, 2, 1, 1, 0, 1, 0, 3, 1800.5, 0, 0, 225.0625, 1, 22, 480, 2, 0, 1, 0),
    "T05": (0, 0, 3, 6, 8, 2, 0, 1, 2, 0, 5, 3600, 0, 2, 360, 2, 40, 900, 5, 0, 2, 1),
    "T06": (0, 0, 3, 2, 3, 0, 0, 0, 0, 0, 2, 1800.5, 0, 0, 450.125, 0, 16, 350, 1, 0, 0, 0),
    "T07": (0, 0, 3, 2, 2, 0, 0, 0, 0, 0, 4, 5401.5, 1, 1, 450.125, 1, 25, 500, 1, 0, 0, 0),
    "T08": (0, 0, 2, 2, 3, 1, 0, 1, 1, 1, 4, 3601, 2, 0, 900.25, 0, 18, 400, 2, 1, 0, 1),
}
# Money as exact decimal text: model, validation, integration, speculative cost, and the
# model cost avoided by deterministic execution.
COSTS: dict[str, tuple[str, str, str, str, str]] = {
    "T01": ("0.40", "0.06", "0.00", "0.00", "0.00"),
    "T02": ("0.44", "0.06", "0.00", "0.00", "0.00"),
    "T03": ("0.50", "0.08", "0.04", "0.00", "0.10"),
    "T04": ("0.60", "0.10", "0.05", "0.05", "0.00"),
    "T05": ("0.90", "0.20", "0.10", "0.15", "0.20"),
    "T06": ("0.70", "0.15", "0.05", "0.10", "0.05"),
    "T07": ("0.55", "0.09", "0.06", "0.04", "0.05"),
    "T08": ("0.65", "0.10", "0.05", "0.10", "0.00"),
}
MODEL = "model-adapter-synthetic-1"
# Each trial's model outputs: task type, accepted, verified, schema failed, validation
# failed, fallback, refused by the independent evaluation after passing its own, cost.
ROUTED: dict[str, tuple[tuple[str, bool, bool, bool, bool, bool, bool, str], ...]] = {
    "T01": (("implement", True, True, False, False, False, False, "0.40"),),
    "T02": (("implement", False, False, False, True, False, False, "0.44"),),
    "T03": (
        ("decompose", True, True, False, False, False, False, "0.10"),
        ("implement", True, False, False, False, False, False, "0.40"),
    ),
    "T04": (
        ("decompose", True, True, False, False, False, False, "0.12"),
        ("implement", False, False, True, False, True, False, "0.48"),
    ),
    "T05": (
        ("decompose", True, True, False, False, False, False, "0.30"),
        ("implement", True, True, False, False, False, False, "0.60"),
    ),
    "T06": (("implement", True, False, False, False, False, False, "0.70"),),
    "T07": (
        ("implement", True, True, False, False, False, False, "0.30"),
        ("implement", True, True, False, False, False, False, "0.25"),
    ),
    "T08": (
        ("implement", False, False, False, True, False, False, "0.35"),
        ("implement", False, False, False, False, False, True, "0.30"),
    ),
}


def metric_fields(trial_id: str) -> dict[str, Any]:
    """The optional metric-family fields of one trial record (docs/trials-format.md)."""
    fields = {
        name: value
        for name, value in zip(METRIC_COLUMNS, METRICS[trial_id], strict=True)
        if value is not None
    }
    names = ("model_cost_usd", "validation_cost_usd", "integration_cost_usd")
    names += ("speculative_cost_usd", "model_cost_avoided_usd")
    fields.update(zip(names, COSTS[trial_id], strict=True))
    keys = ("task_type", "accepted", "verified", "schema_failed", "validation_failed")
    keys += ("fallback", "independent_rejected", "cost_usd")
    fields["routed_outputs"] = [
        {"output": f"{trial_id}-O{n}", "model": MODEL, **dict(zip(keys, output, strict=True))}
        for n, output in enumerate(ROUTED[trial_id], start=1)
    ]
    return fields


# What seed 001 concludes (Verified progress): classification, verified_progress over the
# mandatory hidden tests H1-H3, criterion-weighted progress over AC1 (2), AC2 (1), AC3 (1).
EXPECTED_TRIALS: dict[str, tuple[str, Fraction | None, Fraction | None]] = {
    "T01": ("CORRECT_ACCEPTANCE", Fraction(1), Fraction(1)),
    "T02": ("CORRECTLY_UNRESOLVED", Fraction(2, 3), Fraction(3, 4)),  # AC2 lost (H3)
    "T03": ("FALSE_SUCCESS", Fraction(2, 3), Fraction(1, 4)),  # H2 counts as FAIL: AC1, AC2
    "T04": ("MISSED_SUCCESS", Fraction(1), Fraction(1)),
    "T05": ("CORRECT_ACCEPTANCE", Fraction(1), Fraction(1)),  # the rerun's PASS stands
    "T06": ("INDETERMINATE", None, None),  # still non-gradeable after the one rerun
    "T07": ("CORRECT_ACCEPTANCE", Fraction(1), Fraction(1)),  # H4 is not mandatory
    "T08": ("MISSED_SUCCESS", Fraction(1), Fraction(3, 4)),  # N1 failed: AC3 lost
}

# arm -> trials, gradeable, root acceptance rate, median verified progress, false-success
# rate, correctly-unresolved rate, infrastructure-error rate (rates over gradeable trials
# where the seed says so; INDETERMINATE trials leave those denominators).
EXPECTED_ARMS: dict[str, tuple[Any, ...]] = {
    "DIRECT": (2, 2, Fraction(1, 2), Fraction(5, 6), Fraction(0), Fraction(1, 2), Fraction(0)),
    "FIXED_ONE_LEVEL": (
        2,
        2,
        Fraction(1, 2),
        Fraction(5, 6),
        Fraction(1, 2),
        Fraction(0),
        Fraction(0),
    ),
    "RECURSIVE_LAZY": (2, 1, Fraction(1), Fraction(1), Fraction(0), Fraction(0), Fraction(1)),
    "RECURSIVE_CONCURRENT": (
        2,
        2,
        Fraction(1, 2),
        Fraction(1),
        Fraction(0),
        Fraction(0),
        Fraction(0),
    ),
}


CONTROLLER_VERSION = "reference-controller-1.0"
CONFORMANCE_TRACE = ROOT / "controls" / "conformance" / "reference"


@functools.cache
def _conformance_report() -> tuple[dict[str, Any], str]:
    """The conformance report of the reference controller trace under the shipped rules,
    as `rulecheck conformance --format json` writes it: an input the manifest freezes
    (like a calibration outcome), not an expected result."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from engine.evaluate.program import compile_program
    from engine.report.conformance_report import check_trace
    from engine.ruleset import load_ruleset

    program = compile_program(load_ruleset([ROOT / "rules"]))
    report = check_trace(program, CONFORMANCE_TRACE, None)
    return report["report"], report["report_sha256"]


def controller_release() -> dict[str, Any]:
    """The manifest's `controller` block: version, conformance report and its hash."""
    report, digest = _conformance_report()
    return {
        "version": CONTROLLER_VERSION,
        "conformance_report": copy.deepcopy(report),
        "conformance_report_sha256": digest,
    }


def bundle() -> dict[str, Any]:
    """The three documents as data: `oracle`, `trials` and `results` (fresh copies)."""
    trials = []
    results = []
    for trial_id, (arm, outcome, runs) in TRIALS.items():
        tree = f"tree-{trial_id.lower()}"
        trials.append(
            {
                "trial_id": trial_id,
                "arm": arm,
                "seed": f"seed-{trial_id.lower()}",
                "controller_outcome": outcome,
                "final_tree": tree,
                "environment_image": IMAGE,
                **(AT_LIMITS if trial_id == AT_LIMIT_TRIAL else TYPICAL),
                **ARM_SHAPES.get(arm, {}),
                **metric_fields(trial_id),
            }
        )
        if arm == "RECURSIVE_CONCURRENT":
            trials[-1]["concurrent_workers"] = 4
            trials[-1]["concurrent_actions"] = [dict(a) for a in CONCURRENT_ACTIONS]
        results += check_results(trial_id, tree, runs)
    oracle = {**copy.deepcopy(ORACLE), "controller": controller_release()}
    return {"oracle": oracle, "trials": trials, "results": results}


def check_results(trial_id: str, tree: str, runs: dict[str, Any]) -> list[dict[str, Any]]:
    """The oracle's results for one trial: every check once, passing, unless `runs` gives
    the outcomes of its runs in order."""
    return [
        {
            "trial": trial_id,
            "check": check,
            "run": run,
            "outcome": result,
            "oracle_version": ORACLE_VERSION,
            "candidate_tree": tree,
            "environment_image": IMAGE,
        }
        for check in CHECKS
        for run, result in enumerate(runs.get(check, ("PASS",)), start=1)
    ]


class _NoAliases(yaml.SafeDumper):
    """Writes a list shared by two records twice: rulecheck refuses YAML aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write(folder: Path, documents: dict[str, Any]) -> dict[str, Path]:
    """Write the documents as oracle.yaml, trials.jsonl and results.jsonl, and the
    bundle's rulecheck.yaml naming its protocol (`trial_set`); the documents' paths."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rulecheck.yaml").write_text("protocol: trial_set\n", encoding="utf-8")
    paths = {
        "oracle": folder / "oracle.yaml",
        "trials": folder / "trials.jsonl",
        "results": folder / "results.jsonl",
    }
    header = "# SYNTHETIC hidden-oracle manifest of the seed 001 controls: no real experiment.\n"
    oracle = yaml.dump(documents["oracle"], Dumper=_NoAliases, sort_keys=False)
    paths["oracle"].write_text(header + oracle, encoding="utf-8")
    for name in ("trials", "results"):
        lines = [json.dumps(record, sort_keys=True) for record in documents[name]]
        paths[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return paths


if __name__ == "__main__":
    for path in write(CONTROLS, bundle()).values():
        print(path.relative_to(ROOT), file=sys.stderr)
