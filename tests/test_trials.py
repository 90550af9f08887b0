"""Seed 001's hidden oracle and trial classification, through `rulecheck evaluate`.

`controls/trials/` (written by `tests/trials_builder.py`) is a synthetic trial set whose
expected classifications, progress figures and per-arm rates were worked out by hand from
seed 001's definitions (`EXPECTED_TRIALS`, `EXPECTED_ARMS`). Each coverage condition and
each execution rule then gets a failing case: one edit of that set, refused for its own
reason (its own reject code), while the unedited set passes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cli_run import CliRun
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trials_builder import (
    AT_LIMIT_TRIAL,
    CONTROLS,
    EXPECTED_ARMS,
    EXPECTED_TRIALS,
    bundle,
    write,
)

Documents = dict[str, Any]


def run(graph: str, paths: dict[str, Path]) -> dict[str, Any]:
    """`rulecheck evaluate GRAPH` on the given documents; the JSON report and exit code."""
    inputs = [f"--input={name}={path}" for name, path in paths.items()]
    result = CliRun(["evaluate", graph, *inputs, "--format", "json"])
    result.assert_clean()
    data: dict[str, Any] = result.data
    data["exit_code"] = result.exit_code
    return data


def shipped(*names: str) -> dict[str, Path]:
    files = {"oracle": "oracle.yaml", "trials": "trials.jsonl", "results": "results.jsonl"}
    return {name: CONTROLS / files[name] for name in names}


def edited(tmp_path: Path, change: Callable[[Documents], None]) -> dict[str, Path]:
    documents = bundle()
    change(documents)
    return write(tmp_path, documents)


def codes(report: dict[str, Any]) -> set[str]:
    return {violation["code"] for violation in report["violations"]}


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {decision["name"]: decision["verdict"] for decision in report["decisions"]}


def table(report: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    found = next(t for t in report["tables"] if t["name"] == name)
    return {
        row["ids"][0]: dict(zip(found["columns"], row["values"], strict=True))
        for row in found["rows"]
    }


def exact(value: Any) -> Fraction | None:
    return None if value is None else Fraction(str(value))


def test_shipped_controls_are_current(tmp_path: Path) -> None:
    fresh = write(tmp_path, bundle())
    for name, path in fresh.items():
        assert path.read_bytes() == shipped(name)[name].read_bytes(), (
            f"controls/trials/{path.name} is stale: run python tests/trials_builder.py"
        )


# ---- the valid set --------------------------------------------------------------------------


def test_the_oracle_alone_lets_trials_start() -> None:
    report = run("oracle", shipped("oracle"))
    assert report["exit_code"] == 0
    assert report["violations"] == []
    assert verdicts(report) == {"trials_may_start": "TRIALS_MAY_START"}
    assert report["tables"] == []  # nothing about trials before there are any


def test_every_trial_is_classified_as_the_seed_says() -> None:
    report = run("trials", shipped("oracle", "trials", "results"))
    assert report["exit_code"] == 0, report["violations"]
    assert verdicts(report)["trial_evidence"] == "COMPARABLE"
    rows = table(report, "trial_outcomes")
    assert sorted(rows) == sorted(EXPECTED_TRIALS)
    for trial, (label, progress, weighted) in EXPECTED_TRIALS.items():
        row = rows[trial]
        assert row["classification"] == label, trial
        assert exact(row["verified_progress"]) == progress, trial
        assert exact(row["criterion_verified_progress"]) == weighted, trial
        assert row["false_success"] is (label == "FALSE_SUCCESS")
        assert row["correctly_unresolved"] is (label == "CORRECTLY_UNRESOLVED")


def test_arm_rates_exclude_indeterminate_trials_from_their_denominators() -> None:
    report = run("trials", shipped("oracle", "trials", "results"))
    rows = table(report, "arm_outcomes")
    assert list(rows) == list(EXPECTED_ARMS)  # the four first-round arms, in seed order
    columns = (
        "trials",
        "gradeable",
        "root_acceptance_rate",
        "median_verified_progress",
        "false_success_rate",
        "correctly_unresolved_rate",
        "infrastructure_error_rate",
    )
    for arm, expected in EXPECTED_ARMS.items():
        observed = tuple(exact(rows[arm][column]) for column in columns)
        assert observed == expected, arm


def test_the_oracle_graph_reads_no_trial_documents() -> None:
    inputs = [f"--input={name}={path}" for name, path in shipped("oracle", "trials").items()]
    result = CliRun(["evaluate", "oracle", *inputs, "--format", "json"])
    assert result.exit_code == 2
    assert result.data["diagnostics"][0]["message"] == ("graph `oracle` reads no document `trials`")


def test_an_arm_without_trials_reports_no_rates(tmp_path: Path) -> None:
    def drop_direct(documents: Documents) -> None:
        kept = {t["trial_id"] for t in documents["trials"] if t["arm"] != "DIRECT"}
        documents["trials"] = [t for t in documents["trials"] if t["trial_id"] in kept]
        documents["results"] = [r for r in documents["results"] if r["trial"] in kept]

    report = run("trials", edited(tmp_path, drop_direct))
    assert report["exit_code"] == 0
    direct = table(report, "arm_outcomes")["DIRECT"]
    assert direct["trials"] == 0
    assert direct["root_acceptance_rate"] is None
    assert direct["false_success_rate"] is None


# ---- the bidirectional coverage conditions: each refused for its own reason -----------------


def _check(documents: Documents, check_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in documents["oracle"]["checks"] if c["id"] == check_id)
    return found


def _criterion(documents: Documents, criterion_id: str) -> dict[str, Any]:
    criteria = documents["oracle"]["criteria"]
    found: dict[str, Any] = next(c for c in criteria if c["id"] == criterion_id)
    return found


def _calibrations(documents: Documents, candidate: str) -> list[dict[str, Any]]:
    results = documents["oracle"]["calibration"]["results"]
    return [r for r in results if r["candidate"] == candidate]


def _calibration(documents: Documents, candidate: str, check: str) -> dict[str, Any]:
    return next(r for r in _calibrations(documents, candidate) if r["check"] == check)


def _drop_calibration(documents: Documents, candidate: str) -> None:
    calibration = documents["oracle"]["calibration"]
    calibration["candidates"] = [k for k in calibration["candidates"] if k["id"] != candidate]
    calibration["results"] = [r for r in calibration["results"] if r["candidate"] != candidate]


ORACLE_MUTATIONS: dict[str, tuple[Callable[[Documents], None], str]] = {
    "check maps to no criterion": (
        lambda d: _check(d, "H4").update(criteria=[]),
        "ORACLE_CHECK_UNMAPPED",
    ),
    "check without a criteria list": (
        lambda d: _check(d, "H4").pop("criteria"),
        "ORACLE_CHECK_UNMAPPED",
    ),
    "mandatory criterion left without checks": (
        lambda d: (
            _check(d, "H2").update(criteria=["AC1"]),
            _check(d, "H3").update(criteria=["AC1"]),
        ),
        "ORACLE_CRITERION_UNCOVERED",
    ),
    "criterion covered only by an optional check": (
        lambda d: (
            _check(d, "H3").update(mandatory=False) or _check(d, "H2").update(criteria=["AC1"])
        ),
        "ORACLE_CRITERION_UNCOVERED",
    ),
    "two non-test oracles for one criterion": (
        lambda d: d["oracle"]["checks"].append({**_check(d, "N1"), "id": "N2"}),
        "ORACLE_CRITERION_UNCOVERED",
    ),
    "mapping to an undeclared criterion": (
        lambda d: _check(d, "H1").update(criteria=["AC1", "AC9"]),
        "ORACLE_MAPPING_DANGLING",
    ),
    "mandatory check without a timeout policy": (
        lambda d: _check(d, "H1").update(timeout_policy=None),
        "ORACLE_CHECK_UNDECLARED",
    ),
    "mandatory check without an expected outcome": (
        lambda d: _check(d, "H1").pop("expected_outcome"),
        "ORACLE_CHECK_UNDECLARED",
    ),
    "mandatory check with a non-gradeable expected outcome": (
        lambda d: _check(d, "H1").update(expected_outcome="NOT_EXECUTED"),
        "ORACLE_CHECK_UNDECLARED",
    ),
    "mandatory check with weight zero": (
        lambda d: _check(d, "H1").update(weight=0),
        "ORACLE_CHECK_UNDECLARED",
    ),
    "duplicate check identifier with another mapping": (
        lambda d: d["oracle"]["checks"].append({**_check(d, "H1"), "criteria": ["AC2"]}),
        "ORACLE_CHECK_CONFLICT",
    ),
    "criterion declared twice": (
        lambda d: d["oracle"]["criteria"].append(dict(_criterion(d, "AC1"))),
        "ORACLE_CRITERION_INVALID",
    ),
    "mandatory criterion without a weight": (
        lambda d: _criterion(d, "AC2").pop("weight"),
        "ORACLE_CRITERION_INVALID",
    ),
    "oracle entry of no known type": (
        lambda d: _check(d, "H1").update(oracle_type="llm_judge"),
        "ORACLE_TYPE_UNKNOWN",
    ),
    "check without a mandatory flag": (
        lambda d: _check(d, "H3").pop("mandatory"),
        "ORACLE_MANDATORY_UNDECLARED",
    ),
    "no candidate that times out": (
        lambda d: _drop_calibration(d, "K5"),
        "CALIBRATION_MISSING",
    ),
    "calibration candidate of an unknown role": (
        lambda d: d["oracle"]["calibration"]["candidates"][0].update(role="pilot"),
        "CALIBRATION_MISSING",
    ),
    "calibration without a mandatory check": (
        lambda d: d["oracle"]["calibration"]["results"].remove(_calibration(d, "K3", "N1")),
        "CALIBRATION_MISSING",
    ),
    "known-good solution failing a check": (
        lambda d: _calibration(d, "K1", "H3").update(outcome="FAIL"),
        "CALIBRATION_FAILED",
    ),
    "unchanged repository passing every check": (
        lambda d: [r.update(outcome="PASS") for r in _calibrations(d, "K2")],
        "CALIBRATION_FAILED",
    ),
    "broken candidate passing every check": (
        lambda d: _calibration(d, "K4", "H3").update(outcome="PASS"),
        "CALIBRATION_FAILED",
    ),
    "candidate timeout relabelled as infrastructure": (
        lambda d: _calibration(d, "K5", "H2").update(outcome="ORACLE_INFRASTRUCTURE_ERROR"),
        "CALIBRATION_FAILED",
    ),
    "injected infrastructure failure recorded as a project failure": (
        lambda d: _calibration(d, "K6", "H1").update(outcome="FAIL"),
        "CALIBRATION_FAILED",
    ),
    "no rerun policy frozen": (
        lambda d: d["oracle"].pop("rerun_policy"),
        "ORACLE_RERUN_POLICY",
    ),
}


@pytest.mark.parametrize("mutation", sorted(ORACLE_MUTATIONS))
def test_an_incomplete_or_inconsistent_oracle_stops_every_trial(
    mutation: str, tmp_path: Path
) -> None:
    change, code = ORACLE_MUTATIONS[mutation]
    paths = edited(tmp_path, change)
    before = run("oracle", {"oracle": paths["oracle"]})
    assert before["exit_code"] == 1
    assert code in codes(before)
    assert verdicts(before) == {"trials_may_start": "NO_TRIAL_MAY_START"}
    after = run("trials", paths)  # the same rules run again when the trials are scored
    assert code in codes(after)
    assert verdicts(after)["trial_evidence"] == "MANIFEST_INVALID"


@pytest.mark.parametrize("graph", ["oracle", "trials"])
def test_a_mandatory_flag_written_as_text_is_refused_before_any_rule(
    graph: str, tmp_path: Path
) -> None:
    """`mandatory: "yes"` is no boolean: the graph is not built, no rule judges it."""
    paths = edited(tmp_path, lambda d: _criterion(d, "AC2").update(mandatory="yes"))
    report = run(graph, paths if graph == "trials" else {"oracle": paths["oracle"]})
    assert report["exit_code"] == 1
    [diagnostic] = report["diagnostics"]
    assert diagnostic["code"] == "ATTR_TYPE"
    assert diagnostic["message"] == (
        '`mandatory` of kind `criterion` must be a boolean, found text `"yes"`'
    )
    location = diagnostic["location"]
    assert (location["file"], location["pointer"]) == (
        str(paths["oracle"]),
        "/criteria/1/mandatory",
    )
    line = paths["oracle"].read_text(encoding="utf-8").split("\n")[location["line"] - 1]
    assert line[location["column"] - 1 :].startswith("'yes'")


def test_a_duplicate_check_with_the_same_mapping_is_one_check(tmp_path: Path) -> None:
    paths = edited(tmp_path, lambda d: d["oracle"]["checks"].append(dict(_check(d, "H3"))))
    report = run("trials", paths)
    assert report["exit_code"] == 0, report["violations"]
    assert exact(table(report, "trial_outcomes")["T02"]["verified_progress"]) == Fraction(2, 3)


# ---- hidden-suite executions: each refused for its own reason -------------------------------


def _result(documents: Documents, trial: str, check: str, run: int = 1) -> dict[str, Any]:
    found: dict[str, Any] = next(
        r for r in documents["results"] if (r["trial"], r["check"], r["run"]) == (trial, check, run)
    )
    return found


def _add_run(documents: Documents, trial: str, check: str, run: int, outcome: str) -> None:
    documents["results"].append(
        {**_result(documents, trial, check), "run": run, "outcome": outcome}
    )


RESULT_MUTATIONS: dict[str, tuple[Callable[[Documents], None], str]] = {
    "result of an unrecorded trial": (
        lambda d: _result(d, "T01", "H1").update(trial="T99"),
        "RESULT_UNKNOWN_TRIAL",
    ),
    "result of an undeclared check": (
        lambda d: d["results"].append({**_result(d, "T01", "H1"), "check": "H9"}),
        "RESULT_UNKNOWN_CHECK",
    ),
    "outcome outside the protocol": (
        lambda d: _result(d, "T01", "H1").update(outcome="FLAKY"),
        "RESULT_OUTCOME_UNKNOWN",
    ),
    "another oracle version": (
        lambda d: _result(d, "T01", "H1").update(oracle_version="hidden-suite-2"),
        "RESULT_ORACLE_VERSION",
    ),
    "another candidate tree": (
        lambda d: _result(d, "T05", "H1", 2).update(candidate_tree="tree-rebuilt"),
        "RESULT_TREE_MISMATCH",
    ),
    "another environment image": (
        lambda d: _result(d, "T01", "H2").update(environment_image="sha256:" + "cd" * 32),
        "RESULT_TREE_MISMATCH",
    ),
    "mandatory check never executed": (
        lambda d: d["results"].remove(_result(d, "T01", "H1")),
        "RESULT_FIRST_RUN",
    ),
    "hidden suite executed twice": (
        lambda d: d["results"].append(dict(_result(d, "T01", "H1"))),
        "RESULT_DUPLICATE",
    ),
    "second rerun under a one-rerun policy": (
        lambda d: _add_run(d, "T06", "H3", 3, "PASS"),
        "RESULT_RERUN_LIMIT",
    ),
    "candidate failure rerun": (
        lambda d: _add_run(d, "T02", "H3", 2, "PASS"),
        "RESULT_RERUN_NOT_ALLOWED",
    ),
    "candidate timeout rerun": (
        lambda d: _add_run(d, "T03", "H2", 2, "PASS"),
        "RESULT_RERUN_NOT_ALLOWED",
    ),
    "trial under an arm outside the first round": (
        lambda d: d["trials"][0].update(arm="MULTI_MODEL_ROUTING"),
        "TRIAL_INVALID",
    ),
    "calibration candidate scored as a trial": (
        lambda d: (
            d["trials"][0].update(trial_id="K1")
            or [r.update(trial="K1") for r in d["results"] if r["trial"] == "T01"]
        ),
        "CALIBRATION_IN_RESULTS",
    ),
    "trial recorded twice": (
        lambda d: d["trials"].append(dict(d["trials"][0])),
        "TRIAL_INVALID",
    ),
}


@pytest.mark.parametrize("mutation", sorted(RESULT_MUTATIONS))
def test_an_execution_outside_the_frozen_protocol_is_refused(mutation: str, tmp_path: Path) -> None:
    change, code = RESULT_MUTATIONS[mutation]
    report = run("trials", edited(tmp_path, change))
    assert report["exit_code"] == 1
    assert code in codes(report), codes(report)
    assert verdicts(report)["trial_evidence"] == "RESULTS_INVALID"


def test_a_second_rerun_is_allowed_when_the_frozen_policy_permits_two(tmp_path: Path) -> None:
    def two_reruns(documents: Documents) -> None:
        documents["oracle"]["rerun_policy"]["infrastructure_only_reruns"] = 2
        _add_run(documents, "T06", "H3", 3, "PASS")

    report = run("trials", edited(tmp_path, two_reruns))
    assert report["exit_code"] == 0, report["violations"]
    row = table(report, "trial_outcomes")["T06"]
    assert row["classification"] == "CORRECT_ACCEPTANCE"  # the last permitted run stands
    assert exact(row["verified_progress"]) == 1


def test_an_infrastructure_error_fixed_by_the_rerun_is_still_reported(tmp_path: Path) -> None:
    report = run("trials", shipped("oracle", "trials", "results"))
    rows = table(report, "trial_outcomes")
    assert rows["T05"]["classification"] == "CORRECT_ACCEPTANCE"
    assert rows["T05"]["infrastructure_error"] is True


# ---- hard limits: on the limit holds (T05 sits on every one), just above is refused --------

LIMIT_RULES = {
    "wall_clock_seconds": ("trial_wall_clock_within_limit", 3600.001),
    "root_model_input_tokens": ("trial_input_tokens_within_limit", 120_001),
    "root_model_output_tokens": ("trial_output_tokens_within_limit", 30_001),
    "model_calls": ("trial_model_calls_within_limit", 25),
    "actions": ("trial_actions_within_limit", 121),
    "nodes": ("trial_nodes_within_limit", 31),
    "maximum_depth": ("trial_depth_within_limit", 6),
    "retries_per_action_lineage": ("trial_retries_within_limit", 3),
    "consecutive_same_diagnostic_failures": ("trial_repeated_diagnostics_within_limit", 3),
    "concurrent_workers": ("trial_concurrency_within_its_arm_limit", 2),
    "maximum_children_per_node": ("trial_children_within_limit", 7),
}


@pytest.mark.parametrize("usage", sorted(LIMIT_RULES))
def test_a_trial_over_a_hard_limit_is_refused_by_that_limit_rule(
    usage: str, tmp_path: Path
) -> None:
    rule, above = LIMIT_RULES[usage]

    def over(documents: Documents) -> None:
        trial = next(t for t in documents["trials"] if t["trial_id"] == AT_LIMIT_TRIAL)
        trial[usage] = above
        if usage == "concurrent_workers":  # recorded as concurrency must be: only the limit breaks
            trial["concurrent_actions"] = [
                {"batch": "B1", "action": "A1", "write_scope": ["src/a.ts"]},
                {"batch": "B1", "action": "A2", "write_scope": ["src/b.ts"]},
            ]

    report = run("trials", edited(tmp_path, over))
    assert report["exit_code"] == 1
    found = [(v["code"], v["rule"], v["ids"]) for v in report["violations"]]
    assert found == [("TRIAL_OVER_LIMIT", rule, [AT_LIMIT_TRIAL])]
    assert verdicts(report)["trial_evidence"] == "RESULTS_INVALID"


def test_the_concurrent_arm_may_use_four_workers_and_no_more(tmp_path: Path) -> None:
    assert run("trials", shipped("oracle", "trials", "results"))["exit_code"] == 0  # T07: 4

    def five_workers(documents: Documents) -> None:
        next(t for t in documents["trials"] if t["trial_id"] == "T07")["concurrent_workers"] = 5

    report = run("trials", edited(tmp_path, five_workers))
    assert [v["ids"] for v in report["violations"]] == [["T07"]]


def test_a_trial_that_reports_no_usage_is_refused_not_passed(tmp_path: Path) -> None:
    report = run("trials", edited(tmp_path, lambda d: d["trials"][0].pop("model_calls")))
    assert report["exit_code"] == 1
    assert [(v["code"], v["ids"]) for v in report["violations"]] == [
        ("RULE_EVALUATION_ERROR", ["T01"])
    ]


# ---- untrusted records: any value in any field is judged, never a crash ---------------------

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.text(max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_value_in_any_field_is_judged_never_a_crash(data: st.DataObject) -> None:
    documents = bundle()
    for _ in range(data.draw(st.integers(1, 3))):
        records = data.draw(
            st.sampled_from(
                [
                    documents["trials"],
                    documents["results"],
                    documents["oracle"]["checks"],
                    documents["oracle"]["criteria"],
                    documents["oracle"]["calibration"]["results"],
                ]
            )
        )
        record = data.draw(st.sampled_from(records))
        record[data.draw(st.sampled_from(sorted(record)))] = data.draw(_VALUES)
    with tempfile.TemporaryDirectory() as folder:
        report = run("trials", write(Path(folder), documents))
    assert report["exit_code"] in (0, 1)
    # A value of another type than declared refuses the input (an attribute, a key, or the list
    # a kind's records are read from, such as `concurrent_actions`); a crash would be an
    # INTERNAL_ERROR diagnostic.
    assert {d["code"] for d in report.get("diagnostics", [])} <= {
        "ATTR_TYPE",
        "RECORDS_TYPE",
        "KEY_INVALID",
    }


# ---- arm discipline: each arm keeps its shape; one seed per trial, one image per set -------


def _trial(documents: Documents, trial_id: str) -> dict[str, Any]:
    return next(t for t in documents["trials"] if t["trial_id"] == trial_id)


ARM_MUTATIONS: dict[str, tuple[Callable[[Documents], None], str, list[list[str]]]] = {
    "trial_seeds_unique": (
        lambda d: _trial(d, "T02").update(seed=_trial(d, "T01")["seed"]),
        "TRIAL_SEED_REUSED",
        [["T01"], ["T02"]],
    ),
    "trials_share_one_image": (
        lambda d: [
            _trial(d, "T03").update(environment_image="sha256:" + "cd" * 32),
            [
                r.update(environment_image="sha256:" + "cd" * 32)
                for r in d["results"]
                if r["trial"] == "T03"
            ],
        ],
        "TRIAL_IMAGE_DIFFERS",
        [[f"T0{n}"] for n in range(1, 9)],
    ),
    "direct_is_one_node": (
        lambda d: _trial(d, "T01").update(nodes=30, maximum_children_per_node=6),
        "ARM_SHAPE_BROKEN",
        [["T01"]],
    ),
    "arm_depth_within_its_shape": (
        lambda d: _trial(d, "T04").update(maximum_depth=2),
        "ARM_SHAPE_BROKEN",
        [["T04"]],
    ),
    "concurrency_recorded": (
        lambda d: _trial(d, "T07").pop("concurrent_actions"),
        "CONCURRENCY_UNRECORDED",
        [["T07"]],
    ),
    "batches_within_workers": (
        lambda d: _trial(d, "T07").update(concurrent_workers=2),  # batch B1 ran three
        "CONCURRENCY_OVER_WORKERS",
        [[f"/6/concurrent_actions/{n}", "T07"] for n in range(3)],
    ),
    "concurrent_writes_disjoint": (
        lambda d: _trial(d, "T08")["concurrent_actions"][4].update(write_scope=["src/parser/"]),
        "WRITE_SCOPES_OVERLAP",
        [["/7/concurrent_actions/3"], ["/7/concurrent_actions/4"]],
    ),
}


@pytest.mark.parametrize("rule", sorted(ARM_MUTATIONS))
def test_a_trial_that_breaks_its_arm_or_set_is_refused(rule: str, tmp_path: Path) -> None:
    mutate, code, ids = ARM_MUTATIONS[rule]
    report = run("trials", edited(tmp_path, mutate))
    assert report["exit_code"] == 1
    found = sorted((v["code"], v["rule"], v["ids"]) for v in report["violations"])
    assert found == sorted((code, rule, i) for i in ids)
    assert verdicts(report)["trial_evidence"] == "RESULTS_INVALID"


def test_a_concurrent_action_without_its_write_scope_is_refused(tmp_path: Path) -> None:
    # An unrecorded scope would compare as disjoint with everything: it is never a pass.
    report = run(
        "trials",
        edited(tmp_path, lambda d: _trial(d, "T08")["concurrent_actions"][0].pop("write_scope")),
    )
    assert report["exit_code"] == 1
    found = {(v["code"], tuple(v["ids"])) for v in report["violations"]}
    assert found == {("CONCURRENCY_UNRECORDED", ("T08",))}


def test_concurrent_actions_that_are_no_list_are_refused_located(tmp_path: Path) -> None:
    report = run(
        "trials", edited(tmp_path, lambda d: _trial(d, "T07").update(concurrent_actions="B1"))
    )
    assert report["exit_code"] == 1
    [diagnostic] = report["diagnostics"]
    assert diagnostic["code"] == "RECORDS_TYPE"
    assert diagnostic["location"]["pointer"] == "/6/concurrent_actions"


def test_sibling_paths_that_share_a_prefix_count_as_overlapping(tmp_path: Path) -> None:
    # `src/cli` and `src/cli.ts` may be one file and its folder: not deterministically disjoint.
    def edit(documents: Documents) -> None:
        actions = _trial(documents, "T07")["concurrent_actions"]
        actions[3]["write_scope"], actions[4]["write_scope"] = ["src/cli"], ["src/cli.ts"]

    report = run("trials", edited(tmp_path, edit))
    assert report["exit_code"] == 1
    assert {v["code"] for v in report["violations"]} == {"WRITE_SCOPES_OVERLAP"}


def test_the_shipped_trials_keep_their_arms() -> None:
    report = run("trials", shipped("oracle", "trials", "results"))
    assert report["exit_code"] == 0
    gate = next(g for g in report["gates"] if g["name"] == "trials_follow_their_arms")
    assert gate["passed"] is True
    assert not [w for w in report["warnings"] if w["rule"] in ARM_MUTATIONS]
