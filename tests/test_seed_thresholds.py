"""Every number of the two seed specifications is encoded once, exactly, in rules/.

REGISTRY is written by hand from the seeds, not generated from the rule files. Each entry names
the constant that encodes a seed number, its exact value and unit as the seed states it, and the
seed section. Entries owned by someone else are accounted for here but must *not* be rule
constants:

- owner "schema": limits of the response JSON Schema (000 PROMPTS, exact response contract).
- owner "upstream": documented defaults of a third-party tool; the contract freezes its own
  policy for them later, so they are facts about the tool, not protocol thresholds.

Derived constants (arithmetic over other constants, or a metric call) are evaluated exactly,
so a seed total such as "24 development sessions" checks the factors it is built from.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TypeAlias

import pytest

from engine.evaluate.compile import Compiler
from engine.ruleset import load_ruleset
from engine.syntax import ast
from engine.units import Dimension, to_base

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"

RULES = "rules"
SCHEMA = "schema"
UPSTREAM = "upstream"


@dataclass(frozen=True)
class Threshold:
    """One number of a seed: the constant that encodes it and where the seed states it."""

    name: str
    value: str | dict[str, str]
    unit: str | None
    section: str
    owner: str = field(default=RULES)


T = Threshold

REGISTRY: tuple[Threshold, ...] = (
    # ---- 000 §2-§3: design counts --------------------------------------------------------
    T("dev_task_count", "4", None, "000 §2 First experiment"),
    T("eval_task_count", "8", None, "000 §2 First experiment"),
    T("dev_repetitions_per_task", "2", None, "000 §2 First experiment"),
    T("eval_repetitions_per_task", "3", None, "000 §2 First experiment"),
    T("sessions_per_triplet", "3", None, "000 §2 First experiment"),
    T("dev_session_count", "24", None, "000 §2 First experiment"),
    T("eval_session_count", "72", None, "000 §2 First experiment"),
    T("planned_session_count", "96", None, "000 §2 First experiment"),
    T("eval_pair_count", "24", None, "000 §2 First experiment"),
    T("eval_pairs_a_first", "12", None, "000 §2 First experiment"),
    T("eval_pairs_b_first", "12", None, "000 §2 First experiment"),
    T("eval_repository_count", "4", None, "000 §3 Task custody"),
    T("eval_tasks_per_repository", "2", None, "000 §3 Task custody"),
    T("dev_repository_count", "2", None, "000 §3 Task custody"),
    T("dev_tasks_per_repository", "2", None, "000 §3 Task custody"),
    T(
        "eval_tasks_per_stratum",
        {
            "behavior_explanation": "2",
            "change_impact": "2",
            "correctness_boundary": "2",
            "explicit_uncertainty": "2",
        },
        None,
        "000 §3 Task custody",
    ),
    T("packet_min_items", "6", None, "000 §3 Task custody"),
    T("packet_max_items", "12", None, "000 §3 Task custody"),
    T("task_min_truth_obligations", "4", None, "000 §3 Task custody"),
    T("task_max_truth_obligations", "8", None, "000 §3 Task custody"),
    T("task_min_answerable_obligations", "2", None, "000 §4 Final evidence"),
    # ---- 000 §4: quality scorecards ------------------------------------------------------
    T("packet_authenticity_required", "100", "%", "000 §4 Source and protocol correctness"),
    T("evidence_dispositions_per_id", "1", None, "000 §4 Source and protocol correctness"),
    T("failed_run_R", "0", None, "000 §4 Source and protocol correctness"),
    T("failed_run_U", "0", None, "000 §4 Source and protocol correctness"),
    T("max_critical_failures", "0", None, "000 §4 Final evidence, B gate 1"),
    T("min_task_median_R", "0.80", None, "000 §4 Final evidence, B gate 2"),
    T("min_macro_task_median_R", "0.90", None, "000 §4 Final evidence, B gate 2"),
    T("min_macro_R_gain_over_A", "0.10", None, "000 §4 Final evidence, B gate 3"),
    T("min_tasks_improved_over_A", "4", None, "000 §4 Final evidence, B gate 3"),
    T("max_task_median_R_decrease", "0.05", None, "000 §4 Final evidence, B gate 3"),
    # ---- 000 §4: complete cost and time (reused by §5 development round 2) ---------------
    T("max_aggregate_cost_time_ratio", "1.10", None, "000 §4 Complete cost and time"),
    T("max_task_median_cost_time_ratio", "1.15", None, "000 §4 Complete cost and time"),
    T("max_pair_cost_time_ratio", "1.25", None, "000 §4 Complete cost and time"),
    T("increased_cost_time_label_ratio", "1.00", None, "000 §4 Complete cost and time"),
    # ---- 000 §5: pricing and first-campaign ceilings --------------------------------------
    T("reference_rate_uncached_input", "4", "USD/Mtokens", "000 §5 Reference pricing"),
    T("reference_rate_cached_input", "0.40", "USD/Mtokens", "000 §5 Reference pricing"),
    T("reference_rate_billed_output", "20", "USD/Mtokens", "000 §5 Reference pricing"),
    T("campaign_reference_cost_at_token_ceilings", "24", "USD", "000 §5 Reference pricing"),
    T("session_max_wall_time", "4", "min", "000 §5 Campaign ceilings"),
    T("session_max_input_tokens", "90000", "tokens", "000 §5 Campaign ceilings"),
    T("session_max_output_tokens", "8000", "tokens", "000 §5 Campaign ceilings"),
    T("fixed_evidence_session_max_tool_calls", "0", None, "000 §5 Required records"),
    T("campaign_max_model_sessions", "120", None, "000 §5 Campaign ceilings"),
    T("campaign_max_replaced_triplets", "1", None, "000 §5 Campaign ceilings"),
    T("campaign_max_replacement_sessions", "3", None, "000 §5 Campaign ceilings"),
    T("campaign_max_wall_time", "8", "h", "000 §5 Campaign ceilings"),
    T("campaign_max_input_tokens", "3000000", "tokens", "000 §5 Campaign ceilings"),
    T("campaign_max_output_tokens", "600000", "tokens", "000 §5 Campaign ceilings"),
    T("campaign_max_reference_cost", "30", "USD", "000 §5 Campaign ceilings"),
    T("campaign_max_attributable_charge", "30", "USD", "000 §5 Campaign ceilings"),
    T("semantic_ratings_per_answer", "2", None, "000 §5 Resources, validity"),
    # ---- 000 §5: development rounds -------------------------------------------------------
    T("dev_triplets_per_task_per_round", "1", None, "000 §5 Development rounds"),
    T("dev_round_count", "2", None, "000 §5 Development rounds"),
    T("dev_round_session_count", "12", None, "000 §5 Development rounds"),
    T("dev_max_prompt_revisions", "1", None, "000 §5 Development rounds"),
    T("dev_max_critical_source_protocol_failures", "0", None, "000 §5 Development round 2"),
    T("dev_min_task_R", "0.80", None, "000 §5 Development round 2"),
    T("dev_min_mean_task_R", "0.90", None, "000 §5 Development round 2"),
    T("dev_min_mean_R_gain_over_A", "0.10", None, "000 §5 Development round 2"),
    T("dev_min_tasks_improved_over_A", "2", None, "000 §5 Development round 2"),
    T("dev_max_task_R_loss", "0.05", None, "000 §5 Development round 2"),
    # ---- 000 §6: conditional system comparison -------------------------------------------
    T("sys_system_count", "3", None, "000 §6 System comparison"),
    T("sys_task_count", "6", None, "000 §6 System comparison"),
    T("sys_repository_count", "3", None, "000 §6 System comparison"),
    T("sys_repetitions_per_task", "2", None, "000 §6 System comparison"),
    T("sys_workflow_count", "36", None, "000 §6 System comparison"),
    T("sys_provider_order_count", "6", None, "000 §6 System comparison"),
    T("sys_sessions_per_workflow", "2", None, "000 §6 System comparison"),
    T("sys_planned_session_count", "72", None, "000 §6 System comparison"),
    T("sys_workflow_max_wall_time", "12", "min", "000 §6 System comparison"),
    T("sys_workflow_max_operations", "60", None, "000 §6 System comparison"),
    T("sys_investigation_max_wall_time", "8", "min", "000 §6 System comparison"),
    T("sys_review_max_wall_time", "4", "min", "000 §6 System comparison"),
    T("sys_max_packet_tokens", "60000", "tokens", "000 PROMPTS Conditional system comparison"),
    T("sys_campaign_max_model_sessions", "90", None, "000 §6 System comparison"),
    T("sys_campaign_max_wall_time", "8", "h", "000 §6 System comparison"),
    T("sys_campaign_max_input_tokens", "3000000", "tokens", "000 §6 System comparison"),
    T("sys_campaign_max_output_tokens", "600000", "tokens", "000 §6 System comparison"),
    T("sys_campaign_max_reference_cost", "30", "USD", "000 §6 System comparison"),
    T("sys_campaign_max_attributable_charge", "30", "USD", "000 §6 System comparison"),
    T("sys_min_cost_time_improvement_vs_native", "15", "%", "000 §6 System comparison"),
    T("sys_max_macro_quality_loss_vs_serena", "0.05", None, "000 §6 System comparison"),
    T("sys_max_aggregate_cost_time_regression_vs_serena", "5", "%", "000 §6 System comparison"),
    T("sys_max_task_median_cost_time_regression", "15", "%", "000 §6 System comparison"),
    T("sys_max_pair_cost_time_regression", "25", "%", "000 §6 System comparison"),
    # ---- 000 CLI-HANDOFF and EVALUATOR-CONTROLS -------------------------------------------
    T("offline_prototype_max_working_days", "1", None, "000 CLI-HANDOFF Implementation"),
    T("offline_prototype_max_scopes", "1", None, "000 CLI-HANDOFF Implementation"),
    T("semantic_control_expected_result_reviews", "2", None, "000 EVALUATOR-CONTROLS"),
    # ---- 000 PROMPTS: response schema limits (owned by the JSON Schema) -----------------
    T("schema_max_text_scalars", "2048", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_max_claims", "32", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_max_implementation_plan", "32", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_max_verification_plan", "32", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_max_uncertainties", "32", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_max_exclusions", "64", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_max_citations", "128", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_min_obligations", "1", None, "000 PROMPTS Exact response contract", SCHEMA),
    T("schema_max_obligations", "16", None, "000 PROMPTS Exact response contract", SCHEMA),
    # ---- 000 COMPARATOR-SELECTION: Serena TypeScript defaults (upstream facts) -----------
    T("serena_ts_server_readiness_timeout", "10", "s", "000 COMPARATOR Fairness", UPSTREAM),
    T("serena_ts_indexing_completion_timeout", "30", "s", "000 COMPARATOR Fairness", UPSTREAM),
    T("serena_ts_indexing_start_grace", "5", "s", "000 COMPARATOR Fairness", UPSTREAM),
    # ---- 001 Fixed budgets: the `limits:` block -----------------------------------------
    T("trial_max_wall_clock", "3600", "s", "001 Fixed budgets"),
    T("trial_max_root_model_input_tokens", "120000", "tokens", "001 Fixed budgets"),
    T("trial_max_root_model_output_tokens", "30000", "tokens", "001 Fixed budgets"),
    T("trial_max_model_calls", "24", None, "001 Fixed budgets"),
    T("trial_max_actions", "120", None, "001 Fixed budgets"),
    T("trial_max_nodes", "30", None, "001 Fixed budgets"),
    T("trial_max_depth", "5", None, "001 Fixed budgets"),
    T("trial_max_retries_per_action_lineage", "2", None, "001 Fixed budgets"),
    T("trial_max_consecutive_same_diagnostic_failures", "2", None, "001 Fixed budgets"),
    T(
        "trial_max_concurrent_workers",
        {"DIRECT": "1", "FIXED_ONE_LEVEL": "1", "RECURSIVE_LAZY": "1", "RECURSIVE_CONCURRENT": "4"},
        None,
        "001 Fixed budgets",
    ),
    T("trial_max_children_per_node", "6", None, "001 Fixed budgets"),
    # ---- 001 Arms: the shape each arm's tree may take -----------------------------------
    T("arm_max_depth", {"DIRECT": "0", "FIXED_ONE_LEVEL": "1"}, None, "001 Arms"),
    # ---- 001 Verified progress and Fixed target -----------------------------------------
    T("default_infrastructure_only_reruns", "1", None, "001 Verified progress"),
    T("hidden_suite_executions_per_trial", "1", None, "001 Verified progress"),
    T("target_min_changed_components", "3", None, "001 Fixed target"),
    T("target_min_disjoint_write_scope_changes", "2", None, "001 Fixed target"),
    T("target_min_integration_dependencies", "1", None, "001 Fixed target"),
    # ---- 001 Attempt and Accounting: the seed asks for conservative settlement of missing
    # final usage and leaves its bound to the protocol; the rules state it.
    T("conservative_settlement_share", "100", "%", "001 Attempt and Accounting"),
    # ---- 001 Independent oracle: bidirectional coverage ---------------------------------
    T("min_criteria_per_check", "1", None, "001 Independent oracle"),
    T("non_test_oracles_per_criterion", "1", None, "001 Independent oracle"),
)

# ---- loading and exact evaluation of the rule files --------------------------------------

Quantity: TypeAlias = tuple[Fraction, Dimension]
Value: TypeAlias = Quantity | dict[str, Quantity] | str | bool


RULESET = load_ruleset([RULES_DIR])
COMPILER = Compiler(RULESET.checked)
CONSTS = [d for d in RULESET.checked.declarations() if isinstance(d, ast.ConstDecl)]
METRICS = {d.name.text: d for d in RULESET.checked.declarations() if isinstance(d, ast.MetricDecl)}
CONST_BY_NAME = {const.name.text: const for const in CONSTS}


def _evaluate(name: str) -> Value:
    """A constant's exact value from the engine, numbers paired with their dimension."""
    value = COMPILER.constant(name)
    declared = RULESET.checked.infos[name].type
    if isinstance(value, dict):
        element = declared.element
        assert element is not None
        if element.dimension is None:  # a map of texts or sets (an allowlist): no threshold
            return value  # type: ignore[no-any-return]
        return {key: (Fraction(item), element.dimension) for key, item in value.items()}
    if declared.tag == "number":
        assert declared.dimension is not None
        return Fraction(value), declared.dimension
    return value  # type: ignore[no-any-return]


def _expected(entry: Threshold) -> Value:
    if isinstance(entry.value, dict):
        return {key: to_base(Fraction(text), entry.unit) for key, text in entry.value.items()}
    return to_base(Fraction(entry.value), entry.unit)


def _is_numeric_literal(const: ast.ConstDecl) -> bool:
    value = const.value
    if isinstance(value, ast.Number):
        return True
    return isinstance(value, ast.MapLiteral) and all(
        isinstance(item, ast.Number) for _, item in value.entries
    )


def _section(text: str) -> str:
    """Seed and section of a note or registry section: `000 §4`, `001 Fixed`, `000 PROMPTS`."""
    return " ".join(text.split()[:2]).rstrip(":,")


def _freeze(value: Value | object) -> object:
    # a map may hold maps (`limits` holds the per-arm concurrency)
    if isinstance(value, dict):
        return tuple(sorted((key, _freeze(item)) for key, item in value.items()))
    return value


ENCODED = [entry for entry in REGISTRY if entry.owner == RULES]
ACCOUNTED_ELSEWHERE = [entry for entry in REGISTRY if entry.owner != RULES]
REGISTERED_NAMES = {entry.name for entry in ENCODED}


def _ids(items: list[Threshold] | list[ast.ConstDecl]) -> list[str]:
    return [item.name if isinstance(item, Threshold) else item.name.text for item in items]


# ---- tests ------------------------------------------------------------------------------


def test_registry_names_are_unique() -> None:
    repeated = [name for name, n in Counter(e.name for e in REGISTRY).items() if n > 1]
    assert not repeated


def test_registry_owners_are_known() -> None:
    assert {entry.owner for entry in REGISTRY} <= {RULES, SCHEMA, UPSTREAM}


def test_rule_names_are_unique_across_files() -> None:
    names = [const.name.text for const in CONSTS] + list(METRICS)
    repeated = [name for name, n in Counter(names).items() if n > 1]
    assert not repeated


@pytest.mark.parametrize("entry", ENCODED, ids=_ids(ENCODED))
def test_seed_number_is_encoded_once_and_exactly(entry: Threshold) -> None:
    matches = [const for const in CONSTS if const.name.text == entry.name]
    assert len(matches) == 1, f"{entry.name}: {len(matches)} constants"
    const = matches[0]
    assert _evaluate(const.name.text) == _expected(entry)
    assert const.note is not None
    assert _section(const.note) == _section(entry.section)


@pytest.mark.parametrize("entry", ACCOUNTED_ELSEWHERE, ids=_ids(ACCOUNTED_ELSEWHERE))
def test_number_owned_elsewhere_is_not_a_rule_constant(entry: Threshold) -> None:
    assert entry.name not in CONST_BY_NAME
    encoded = {
        _freeze(_evaluate(c.name.text)) for c in CONSTS if c.note and entry.section in c.note
    }
    assert _freeze(_expected(entry)) not in encoded


NUMERIC_LITERALS = [const for const in CONSTS if _is_numeric_literal(const)]


@pytest.mark.parametrize("const", NUMERIC_LITERALS, ids=_ids(NUMERIC_LITERALS))
def test_numeric_constant_is_registered(const: ast.ConstDecl) -> None:
    assert const.name.text in REGISTERED_NAMES


@pytest.mark.parametrize("decl", [*CONSTS, *METRICS.values()], ids=[*_ids(CONSTS), *METRICS])
def test_declaration_has_source_note(decl: ast.ConstDecl | ast.MetricDecl) -> None:
    assert decl.note is not None and decl.note.strip()


def test_no_duplicate_encoding() -> None:
    keys = Counter((_freeze(_evaluate(const.name.text)), const.note) for const in CONSTS)
    duplicated = [key for key, n in keys.items() if n > 1]
    assert not duplicated


def test_reference_cost_metric_matches_seed_formula() -> None:
    # (4 × uncached_input + 0.40 × cached_input + 20 × billed_output) / 1,000,000
    arguments = tuple(
        ast.Number(Fraction(count), "tokens", str(count)) for count in (1_000_000, 500_000, 100_000)
    )
    cost = COMPILER.evaluate(ast.Call("reference_token_cost", arguments))
    assert cost == Fraction("6.2")
    assert RULESET.checked.infos["reference_token_cost"].type.dimension == to_base(1, "USD")[1]
