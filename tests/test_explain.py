"""`rulecheck explain BUNDLE [NAME]`: the causal chain of a verdict or a rule outcome.

Each file of tests/data/explain/ names a bundle (edited in a copy to fail), the rule that
fails, the counterfactual `explain` must compute, and how one unit of it is applied to the
data. The test applies exactly the counterfactual and re-checks: the rule then holds; one
unit less and it still fails. The shipped campaign's held variants (the mutations of
controls/evaluator/mutations.cases.yaml, built in temporary folders) are explained too:
every failing gate the decision read is in the chain, with its failing bindings located.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.pointer import pointer_tokens
from tests.cli_run import REPO, CliRun
from tests.test_replay import _variants

CASES = sorted((REPO / "tests" / "data" / "explain").glob("*.yaml"))


def _set_jsonl(path: Path, pointer: str, value: Any) -> None:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    index, *rest = pointer_tokens(pointer)
    target = lines[int(index)]
    for token in rest[:-1]:
        target = target[token]
    target[rest[-1]] = value
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _get_jsonl(path: Path, pointer: str) -> Any:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    index, *rest = pointer_tokens(pointer)
    value = lines[int(index)]
    for token in rest:
        value = value[token]
    return value


def _outcome(bundle: Path, rules: Path, rule: str) -> bool:
    run = CliRun(["check", str(bundle), "--rules", str(rules), "--format", "json"])
    run.assert_clean()
    results = {r["name"]: r["passed"] for r in (*run.data["gates"], *run.data["budgets"])}
    return bool(results[rule])


def _explained(bundle: Path, rules: Path, rule: str) -> dict[str, Any]:
    run = CliRun(["explain", str(bundle), rule, "--rules", str(rules), "--format", "json"])
    run.assert_clean()
    assert run.exit_code == 0, run.stdout
    data: dict[str, Any] = run.data
    return data


def _apply(spec: dict[str, Any], bundle: Path, counterfactual: dict[str, Any], units: int) -> None:
    if "units" in spec:
        for edit in spec["units"][:units]:
            _set_jsonl(bundle / edit["file"], edit["pointer"], edit["value"])
        return
    moves = spec["moves"]
    path = bundle / moves["file"]
    sign = 1 if counterfactual["direction"] == "more" else -1  # a unit: one of the number
    if moves.get("against"):
        sign = -sign
    _set_jsonl(path, moves["pointer"], _get_jsonl(path, moves["pointer"]) + sign * units)


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_the_counterfactual_flips_the_rule(case: Path, tmp_path: Path) -> None:
    spec = yaml.safe_load(case.read_text(encoding="utf-8"))
    rules = REPO / spec["rules"]
    bundle = tmp_path / "bundle"
    shutil.copytree(REPO / spec["bundle"], bundle)
    for edit in spec.get("edits", []):
        _set_jsonl(bundle / edit["file"], edit["pointer"], edit["value"])
    rule = spec["rule"]
    assert _outcome(bundle, rules, rule) is False
    chain = _explained(bundle, rules, rule)["chain"]
    assert chain[0]["name"] == rule and chain[0]["passed"] is False
    counterfactual = chain[0]["observations"][0]["counterfactual"]
    expected = spec["counterfactual"]
    assert {k: counterfactual[k] for k in expected} == expected
    units = int(counterfactual["by"])
    for applied, holds in ((units - 1, False), (units, True)):
        attempt = tmp_path / f"applied_{applied}"
        shutil.copytree(bundle, attempt)
        _apply(spec, attempt, counterfactual, applied)
        assert _outcome(attempt, rules, rule) is holds, f"{applied} of {units} units applied"


def test_the_verdict_chain_names_the_decision_row_and_its_gates() -> None:
    protocol = REPO / "tests" / "data" / "protocol"
    args = ["explain", str(protocol / "just_below_bar"), "--rules", str(protocol / "eval.rules")]
    run = CliRun([*args, "--format", "json"])
    assert run.exit_code == 0
    decision = run.data["decision"]
    assert (decision["name"], decision["row"], decision["verdict"]) == ("verdict", 3, "BELOW_BAR")
    assert decision["read"] == {"admitted": True, "pass_rate_met": False}
    assert [rule["name"] for rule in run.data["chain"]] == ["pass_rate_met"]
    observation = run.data["chain"][0]["observations"][0]
    assert observation["ratio"] == {"counted": 19, "of": 24}
    text = CliRun(args)
    assert "DECISION verdict row 3: BELOW_BAR" in text.stdout
    assert "1 more item counted by `count(a in answer where a.passed)`" in text.stdout


def test_a_refused_bundle_names_each_violation_and_its_record() -> None:
    protocol = REPO / "tests" / "data" / "protocol"
    args = [str(protocol / "refused"), "--rules", str(protocol / "eval.rules")]
    run = CliRun(["explain", *args, "--format", "json"])
    chain = {rule["name"]: rule for rule in run.data["chain"]}
    assert run.data["decision"]["verdict"] == "INVALID"
    assert set(chain) >= {"admitted", "model_pinned", "answered_once", "answer_within_ceiling"}
    violation = chain["model_pinned"]["violations"][0]
    assert violation["code"] == "WRONG_MODEL" and violation["location"].endswith(
        "answers.jsonl:2:1 (/1)"
    )


def test_an_unknown_name_is_a_usage_error() -> None:
    protocol = REPO / "tests" / "data" / "protocol"
    args = [str(protocol / "accepted"), "pass_rate_mt", "--rules", str(protocol / "eval.rules")]
    run = CliRun(["explain", *args])
    assert run.exit_code == 2
    assert "UNKNOWN_NAME" in run.stderr and "pass_rate_met" in run.stderr


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, str]]:
    return _variants(tmp_path_factory.mktemp("variants"))


def test_every_failing_gate_of_a_held_variant_is_explained(
    held: list[tuple[Path, str]],
) -> None:
    for bundle, verdict in held:
        run = CliRun(["explain", str(bundle), "--format", "json"])
        run.assert_clean()
        assert run.exit_code == 0, run.stdout
        decision = run.data["decision"]
        assert decision["verdict"] == verdict
        chain = {rule["name"]: rule for rule in run.data["chain"]}
        failed = [gate for gate, ok in decision["read"].items() if not ok]
        assert set(failed) <= set(chain), bundle
        for rule in chain.values():
            if rule["passed"]:
                continue
            assert rule["failing"] >= 1 and rule["observations"], rule["name"]
        if verdict == "DO_NOT_ADVANCE":  # the mutated answer of session S0027
            ledger = chain["b_ledger_controls_pass"]["observations"]
            assert ledger[0]["ids"] == ["S0027"]
            located = [r for r in ledger[0]["records"] if r["file"].endswith("sessions.jsonl")]
            assert located and located[0]["line"] is not None
