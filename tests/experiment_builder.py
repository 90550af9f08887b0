"""The synthetic experiment of seed 001 in `controls/experiment/`.

    python tests/experiment_builder.py            # rewrite controls/experiment/

Four first-round arms of five independently seeded trials each, published under one
experiment manifest: the project kernel and task statement it pins by hash, the fixed
target's recorded commit ancestry, the frozen hidden oracle of `controls/trials` (with its
calibration and the controller's conformance report), the trials' records and their
hidden-check executions, and two labelled unmeasured runs. Every trial records the hashes
it ran with; each one's attempts add up to its root aggregate figures. The trial records
reuse the metric-family fields of the trial set's trials (`tests/trials_builder.py`), one
template trial of the same arm each. Every value is written from the tables below, so the
bundle is the same on every run. Tests build edited copies with `bundle()` + `write()`.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import trials_builder as trial_set
import yaml

ROOT = Path(__file__).resolve().parents[1]

CONTROLS = ROOT / "controls" / "experiment"
CLAIMED = trial_set.CLAIMED
PUBLISHED_AT = "2026-10-01T09:00:00Z"
MODEL = trial_set.MODEL

# trial id -> (arm, the trial set's trial it copies its figures from, controller outcome,
# {check: outcomes of run 1, 2, ...}); unlisted checks PASS on their only run.
TRIALS: dict[str, tuple[str, str, str, dict[str, tuple[str, ...]]]] = {
    "E01": ("DIRECT", "T01", CLAIMED, {}),
    "E02": ("DIRECT", "T02", "BLOCKED", {"H3": ("FAIL",)}),
    "E03": ("DIRECT", "T01", CLAIMED, {"H2": ("FAIL",)}),
    "E04": ("DIRECT", "T02", CLAIMED, {}),
    "E05": ("DIRECT", "T01", "BUDGET_EXHAUSTED", {"H1": ("FAIL",)}),
    "E06": ("FIXED_ONE_LEVEL", "T03", CLAIMED, {}),
    "E07": ("FIXED_ONE_LEVEL", "T04", CLAIMED, {"H2": ("CANDIDATE_TIMEOUT",)}),
    "E08": ("FIXED_ONE_LEVEL", "T03", "BUDGET_EXHAUSTED", {}),
    "E09": (
        "FIXED_ONE_LEVEL",
        "T04",
        CLAIMED,
        {"H3": ("ORACLE_INFRASTRUCTURE_ERROR", "ORACLE_INFRASTRUCTURE_ERROR")},
    ),
    "E10": ("FIXED_ONE_LEVEL", "T03", CLAIMED, {}),
    "E11": ("RECURSIVE_LAZY", "T05", CLAIMED, {"H1": ("ORACLE_INFRASTRUCTURE_ERROR", "PASS")}),
    "E12": (
        "RECURSIVE_LAZY",
        "T06",
        CLAIMED,
        {"H3": ("ORACLE_INFRASTRUCTURE_ERROR", "ORACLE_INFRASTRUCTURE_ERROR")},
    ),
    "E13": ("RECURSIVE_LAZY", "T05", CLAIMED, {}),
    "E14": ("RECURSIVE_LAZY", "T06", "BLOCKED", {"H2": ("FAIL",)}),
    "E15": ("RECURSIVE_LAZY", "T05", CLAIMED, {"H1": ("FAIL",)}),
    "E16": ("RECURSIVE_CONCURRENT", "T07", CLAIMED, {"H4": ("FAIL",)}),
    "E17": ("RECURSIVE_CONCURRENT", "T08", "BLOCKED", {"N1": ("RESULT_LOST", "FAIL")}),
    "E18": ("RECURSIVE_CONCURRENT", "T07", CLAIMED, {}),
    "E19": ("RECURSIVE_CONCURRENT", "T08", CLAIMED, {"H1": ("NOT_EXECUTED", "NOT_EXECUTED")}),
    "E20": ("RECURSIVE_CONCURRENT", "T07", CLAIMED, {"H3": ("FAIL",)}),
}

# What seed 001 concludes about each trial (Verified progress), worked by hand: a
# CANDIDATE_TIMEOUT counts as FAIL, N1 is a non-test oracle and H4 is not mandatory.
EXPECTED_CLASSIFICATION: dict[str, str] = {
    "E01": "CORRECT_ACCEPTANCE",
    "E02": "CORRECTLY_UNRESOLVED",
    "E03": "FALSE_SUCCESS",
    "E04": "CORRECT_ACCEPTANCE",
    "E05": "CORRECTLY_UNRESOLVED",
    "E06": "CORRECT_ACCEPTANCE",
    "E07": "FALSE_SUCCESS",
    "E08": "MISSED_SUCCESS",
    "E09": "INDETERMINATE",
    "E10": "CORRECT_ACCEPTANCE",
    "E11": "CORRECT_ACCEPTANCE",
    "E12": "INDETERMINATE",
    "E13": "CORRECT_ACCEPTANCE",
    "E14": "CORRECTLY_UNRESOLVED",
    "E15": "FALSE_SUCCESS",
    "E16": "CORRECT_ACCEPTANCE",
    "E17": "MISSED_SUCCESS",
    "E18": "CORRECT_ACCEPTANCE",
    "E19": "INDETERMINATE",
    "E20": "FALSE_SUCCESS",
}

# The project kernel (seed 001 Project kernel): its version and nine fields.
KERNEL: dict[str, Any] = {
    "version": "kernel-synthetic-1",
    "purpose": "Add an incremental export command to a small document-conversion tool.",
    "target_users": ["maintainers of the synthetic tool", "its command-line users"],
    "desired_outcomes": [
        "documents convert through the new parser and renderer",
        "the command-line interface exposes the export",
    ],
    "current_scope": "parser, renderer and command-line interface of the tool",
    "current_non_goals": ["a graphical interface", "network formats"],
    "critical_constraints": [
        "builds and tests offline in the fixed image",
        "no personal or financial data, no external mutable services",
    ],
    "acceptance_approach": "the frozen hidden acceptance suite mapped to AC1-AC4",
    "decision_authority": "the experiment owner",
    "critical_risks": ["the parser and renderer diverge on the document model"],
}
TASK = (
    "# Task (SYNTHETIC)\n\n"
    "Add an `export` command to the tool: parse the input document with the new parser,\n"
    "render it with the new renderer, and expose both through the command-line interface.\n"
    "Root acceptance criteria AC1-AC4 (hidden) decide the result.\n"
)
# Unmeasured runs before the freeze: labelled, never trials, never assigned.
PILOTS = (
    {"run_id": "P01", "label": "pilot", "finished_at": "2026-09-28T17:00:00Z"},
    {"run_id": "P02", "label": "calibration", "finished_at": "2026-09-29T12:00:00Z"},
)


def commit_id(label: str) -> str:
    """A commit id (40 hex digits) re-derived from its label."""
    return hashlib.sha1(f"synthetic-commit:{label}".encode()).hexdigest()


# The fixed target's recorded ancestry (seed 001 Fixed target): the reference solution's
# changes, each integrated in turn into the incremental integration tree. The parser and the
# renderer write disjoint scopes; the command-line change depends on the parser, and its
# base commit is the one that integrated the parser.
COMMITS = (("c0", ()), ("c1", ("c0",)), ("c2", ("c1",)), ("c3", ("c2",)))
CHANGES: tuple[dict[str, Any], ...] = (
    {"id": "CH1", "component": "parser", "write_scope": ["src/parser/"], "base": "c0",
     "integrated": "c1", "depends_on": []},
    {"id": "CH2", "component": "render", "write_scope": ["src/render/"], "base": "c0",
     "integrated": "c2", "depends_on": []},
    {"id": "CH3", "component": "cli", "write_scope": ["src/cli.ts"], "base": "c1",
     "integrated": "c3", "depends_on": ["CH1"]},
)  # fmt: skip
ATTEMPT_LIMITS = {"model_calls": 12, "input_tokens": 64_000, "output_tokens": 16_000}


def json_sha256(value: Any) -> str:
    """What the rules' `json_sha256` computes: canonical JSON and a newline, hashed."""
    raw = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8") + b"\n").hexdigest()


@functools.cache
def default_limits() -> dict[str, Any]:
    """The rules' `limits` constant (001_limits.rules), as the manifest writes it."""
    from engine.evaluate.program import compile_program
    from engine.ruleset import load_ruleset

    program = compile_program(load_ruleset([ROOT / "rules"]))
    value = program.compiler.constant("limits")
    return json.loads(json.dumps(value, default=int))


def kernel_text() -> str:
    """kernel.yaml as written."""
    return "# SYNTHETIC project kernel\n" + yaml.safe_dump(KERNEL, sort_keys=False)


def ancestry() -> dict[str, Any]:
    """ancestry.yaml as data: each commit with its parents and all its ancestors."""
    ancestors: dict[str, list[str]] = {}
    commits = []
    for label, parents in COMMITS:
        every = sorted({a for p in parents for a in (p, *ancestors[p])})
        ancestors[label] = every
        commits.append(
            {
                "id": commit_id(label),
                "parents": [commit_id(p) for p in parents],
                "ancestors": [commit_id(a) for a in every],
            }
        )
    changes = [
        {
            "id": c["id"],
            "component": c["component"],
            "write_scope": list(c["write_scope"]),
            "base_commit": commit_id(c["base"]),
            "integrated_commit": commit_id(c["integrated"]),
            "accepted": True,
            "depends_on": list(c["depends_on"]),
            "integration": "incremental_integration_tree",
        }
        for c in CHANGES
    ]
    return {"target_commit": commit_id("c0"), "commits": commits, "changes": changes}


def attempts(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Two attempts whose model calls and tokens add up to the trial's root figures."""
    figures = ("model_calls", "root_model_input_tokens", "root_model_output_tokens")
    names = ("model_calls", "input_tokens", "output_tokens")
    first = {n: -(-record[f] // 2) for f, n in zip(figures, names, strict=True)}
    second = {n: record[f] - first[n] for f, n in zip(figures, names, strict=True)}
    return [{"attempt": "a1", **first}, {"attempt": "a2", **second}]


def bundle() -> dict[str, Any]:
    """Every document as data (fresh copies): manifest, kernel, task, ancestry, oracle,
    trials, results and pilots."""
    base = trial_set.bundle()
    oracle = base["oracle"]
    templates = {t["trial_id"]: t for t in base["trials"]}
    limits = default_limits()
    kernel = kernel_text()
    hashes = {
        "kernel_sha256": hashlib.sha256(kernel.encode("utf-8")).hexdigest(),
        "task_sha256": hashlib.sha256(TASK.encode("utf-8")).hexdigest(),
        "limits_sha256": json_sha256(limits),
    }
    trials, results = [], []
    for number, (trial_id, (arm, template, outcome, runs)) in enumerate(TRIALS.items()):
        tree = f"tree-{trial_id.lower()}"
        record = copy.deepcopy(templates[template])
        assert record["arm"] == arm, f"{trial_id} copies a trial of another arm"
        record.update(
            trial_id=trial_id,
            seed=f"seed-{trial_id.lower()}",
            controller_outcome=outcome,
            final_tree=tree,
            started_at=f"2026-10-02T{9 + number // 4:02d}:{15 * (number % 4):02d}:00Z",
            model=MODEL,
            **hashes,
        )
        for n, output in enumerate(record["routed_outputs"], start=1):
            output["output"] = f"{trial_id}-O{n}"
        record["attempts"] = attempts(record)
        trials.append(record)
        results += trial_set.check_results(trial_id, tree, runs)
    manifest = {
        "experiment_id": "orchestration-synthetic-1",
        "synthetic": True,
        "published_at": PUBLISHED_AT,
        "target": {"repository": "synthetic/doc-tool", "commit": commit_id("c0")},
        "project_kernel": {"version": KERNEL["version"], "sha256": hashes["kernel_sha256"]},
        "task": {
            "statement_path": "task.md",
            "statement_sha256": hashes["task_sha256"],
            "contract_sha256": json_sha256(oracle["criteria"]),
        },
        "visible_commands": {
            "build": "npm run build",
            "lint": "npm run lint",
            "type_check": "npx tsc --noEmit",
            "test": "npm test",
        },
        "environment_image": trial_set.IMAGE,
        "versions": {
            "controller": trial_set.CONTROLLER_VERSION,
            "reducer": "reducer-1.0",
            "policy": "policy-1.0",
            "schema": "schema-1.0",
            "tool": "tools-1.0",
            "model_adapter": "adapter-1.0",
        },
        "model": {
            "identifier": MODEL,
            "sampling": {"temperature": 0, "top_p": 1, "max_output_tokens": 4096},
        },
        "allowed_tools": ["read_file", "write_file", "run_visible_tests", "search"],
        "limits": limits,
        "attempt_limits": dict(ATTEMPT_LIMITS),
        "hidden_suite_sha256": json_sha256(oracle["checks"]),
        "assignment": [
            {"trial": t["trial_id"], "arm": t["arm"], "seed": t["seed"]} for t in trials
        ],
        "trial_count": len(trials),
        "calibration": {"results_sha256": json_sha256(oracle["calibration"]), "outcome": "passed"},
        "conformance_report_sha256": oracle["controller"]["conformance_report_sha256"],
    }
    return {
        "manifest": manifest,
        "kernel": kernel,
        "task": TASK,
        "ancestry": ancestry(),
        "oracle": oracle,
        "trials": trials,
        "results": results,
        "pilots": [dict(p) for p in PILOTS],
    }


def write(folder: Path, documents: dict[str, Any]) -> None:
    """Write the documents into `folder`, with a rulecheck.yaml naming `experiment`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rulecheck.yaml").write_text("protocol: experiment\n", encoding="utf-8")
    header = "# SYNTHETIC {} of the seed 001 experiment controls: no real experiment.\n"
    for name in ("manifest", "ancestry", "oracle"):
        text = yaml.dump(documents[name], Dumper=trial_set._NoAliases, sort_keys=False)
        (folder / f"{name}.yaml").write_text(header.format(name) + text, encoding="utf-8")
    (folder / "kernel.yaml").write_text(documents["kernel"], encoding="utf-8")
    (folder / "task.md").write_text(documents["task"], encoding="utf-8")
    for name in ("trials", "results", "pilots"):
        lines = [json.dumps(record, sort_keys=True) for record in documents[name]]
        (folder / f"{name}.jsonl").write_text("".join(line + "\n" for line in lines), "utf-8")


if __name__ == "__main__":
    write(CONTROLS, bundle())
    print(CONTROLS.relative_to(ROOT), file=sys.stderr)
