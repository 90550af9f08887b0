"""End-to-end tests of `rulecheck admit` / `rulecheck check` on synthetic campaign bundles.

Every bundle is built by tests/campaign_builder.py (the default campaign reaches ADVANCE) and
mutated as little as possible, then run through the CLI (`engine.cli.main`, `--format json`).
A full run costs a few seconds, so variants that exercise independent admission links are
grouped in one bundle and the test asserts the exact set of rules the group violates (so each
mutation is shown to trigger its own rule and nothing else).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from campaign_builder import (
    DEFAULT_SEED,
    Campaign,
    blind_answer_id,
    json_bytes,
    make_campaign,
    record_lock,
    render_prompt,
    rerate_truth,
    rerender_requests,
    utc_at,
    write_campaign,
)
from cli_run import CliRun

from engine.bundle.documents import load_document
from engine.evaluate import nested
from engine.freeze.hashing import sha256_hex

SCORECARD_GATES = (
    "b_no_critical_failures",
    "b_source_rules_pass",
    "b_ledger_controls_pass",
    "b_task_median_R",
    "b_macro_R",
    "b_uncertainty_cases_pass",
    "gain_over_A",
    "tasks_improved_over_A",
    "no_task_decrease",
    "aggregate_cost_ratio_bound",
    "aggregate_time_ratio_bound",
    "task_cost_ratio_bound",
    "task_time_ratio_bound",
    "pair_cost_ratio_bound",
    "pair_time_ratio_bound",
    "sessions_within_limits",
)
EVAL_TASK_IDS = tuple(f"T{n}" for n in range(1, 9))
EVAL_TRIPLET_IDS = tuple(f"E-{t}-{n}" for t in EVAL_TASK_IDS for n in (1, 2, 3))


def eval_factor(value: float) -> dict[str, float]:
    """A B factor for every evaluation triplet (development round 2 keeps its default draws,
    so the development admission check is untouched)."""
    return dict.fromkeys(EVAL_TRIPLET_IDS, value)


# ---- running the CLI ---------------------------------------------------------------------------


class Run(CliRun):
    """One CLI invocation, with accessors for the campaign report's JSON."""

    # -- JSON accessors
    @property
    def verdict(self) -> str | None:
        return self.data.get("verdict")

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.data["violations"]

    def codes(self) -> set[str]:
        return {v["code"] for v in self.violations}

    def rules(self) -> set[str]:
        return {v["rule"] for v in self.violations}

    def gates(self) -> dict[str, dict[str, Any]]:
        return {g["name"]: g for g in self.data["gates"]}

    def failed_gates(self) -> set[str]:
        return {name for name, g in self.gates().items() if not g["passed"]}

    def budget(self, name: str) -> dict[str, Any]:
        return next(b for b in self.data["budgets"] if b["name"] == name)

    def table(self, name: str) -> dict[str, Any]:
        return next(t for t in self.data["tables"] if t["name"] == name)

    def column(self, table: str, column: str) -> dict[str, Any]:
        """{first id of the row: value} of one column."""
        data = self.table(table)
        index = data["columns"].index(column)
        return {row["ids"][0]: row["values"][index] for row in data["rows"]}


def cli(*args: str) -> Run:
    run = Run(list(args))
    run.assert_clean()
    return run


def check(campaign: Campaign, root: Path, *, rehash: bool = True) -> Run:
    write_campaign(campaign, root, rehash=rehash)
    return cli("check", str(root), "--format", "json")


# ---- campaign helpers --------------------------------------------------------------------------


def session(c: Campaign, triplet_id: str, role: str) -> dict[str, Any]:
    return next(s for s in c.sessions if s["triplet_id"] == triplet_id and s["role"] == role)


def request_of(c: Campaign, session_id: str) -> dict[str, Any]:
    return next(q for q in c.requests if q["session_id"] == session_id)


def receipt_of(c: Campaign, session_id: str, event: str) -> dict[str, Any]:
    return next(r for r in c.receipts if r["session_id"] == session_id and r["event"] == event)


def ratings_of(c: Campaign, session_id: str) -> list[dict[str, Any]]:
    answer_id = blind_answer_id(DEFAULT_SEED, session_id)
    return [r for r in c.adjudications if r["answer_id"] == answer_id]


def next_receipt_id(c: Campaign) -> str:
    return f"R{len(c.receipts) + 1 + 9000:04d}"


def undispatch(c: Campaign, session_id: str) -> None:
    """Turn a session into a recorded not-dispatched one (C23): no request, no answer, no
    rating, one `not_dispatched` receipt."""
    s = next(s for s in c.sessions if s["session_id"] == session_id)
    response = receipt_of(c, session_id, "response")
    s.update(outcome="not_dispatched", answer=None)
    c.requests[:] = [q for q in c.requests if q["session_id"] != session_id]
    template = copy.deepcopy(receipt_of(c, session_id, "validation"))
    c.receipts[:] = [r for r in c.receipts if r["session_id"] != session_id]
    template.update(
        receipt_id=next_receipt_id(c),
        request_id=None,
        event="not_dispatched",
        utc=response["utc"],
        monotonic_s=response["monotonic_s"],
        seconds=None,
    )
    c.receipts.append(template)
    c.answers.pop(session_id)
    answer_id = blind_answer_id(DEFAULT_SEED, session_id)
    c.adjudications[:] = [r for r in c.adjudications if r["answer_id"] != answer_id]


def fail_draft(c: Campaign, triplet_id: str) -> None:
    """C23: the common draft is malformed, so neither review is dispatched."""
    session(c, triplet_id, "D")["outcome"] = "malformed"
    for role in "AB":
        undispatch(c, session(c, triplet_id, role)["session_id"])


def remove_triplet(c: Campaign, triplet_id: str) -> None:
    ids = {s["session_id"] for s in c.sessions if s["triplet_id"] == triplet_id}
    answer_ids = {blind_answer_id(DEFAULT_SEED, sid) for sid in ids}
    c.manifest["triplets"] = [t for t in c.manifest["triplets"] if t["triplet_id"] != triplet_id]
    c.sessions[:] = [s for s in c.sessions if s["session_id"] not in ids]
    c.requests[:] = [q for q in c.requests if q["session_id"] not in ids]
    c.receipts[:] = [r for r in c.receipts if r["session_id"] not in ids]
    for sid in ids:
        c.answers.pop(sid)
    c.adjudications[:] = [r for r in c.adjudications if r["answer_id"] not in answer_ids]


def swap_review_positions(c: Campaign, triplet_id: str) -> None:
    """Run a triplet's two reviews the other way round (positions and clock times)."""
    a, b = session(c, triplet_id, "A")["session_id"], session(c, triplet_id, "B")["session_id"]
    order = [s["session_id"] for s in sorted(c.sessions, key=lambda s: s["position"])]
    i, j = order.index(a), order.index(b)
    order[i], order[j] = order[j], order[i]
    run_in_order(c, order)


def run_in_order(c: Campaign, order: list[str]) -> None:
    """Re-run the sessions one after the other in `order`: positions 1, 2, ... and each
    session's records moved in time, its own durations kept, 3 s apart."""
    clock = min(q["start_monotonic_s"] for q in c.requests)
    by_id = {s["session_id"]: s for s in c.sessions}
    for position, session_id in enumerate(order, start=1):
        by_id[session_id]["position"] = position
        if not any(q["session_id"] == session_id for q in c.requests):
            continue  # never dispatched: nothing ran
        start, end = _window(c, session_id)
        _shift(c, session_id, clock - start)
        clock += end - start + 3.0


def _window(c: Campaign, session_id: str) -> tuple[float, float]:
    starts = [q["start_monotonic_s"] for q in c.requests if q["session_id"] == session_id]
    ends = [r["monotonic_s"] for r in c.receipts if r["session_id"] == session_id]
    return min(starts), max(ends)


def _shift(c: Campaign, session_id: str, seconds: float) -> None:
    for q in c.requests:
        if q["session_id"] == session_id:
            q["start_monotonic_s"] += seconds
            q["reserved_at_monotonic_s"] += seconds
            q["start_utc"] = utc_at(q["start_monotonic_s"])
    for r in c.receipts:
        if r["session_id"] == session_id:
            r["monotonic_s"] += seconds
            r["utc"] = utc_at(r["monotonic_s"])


def set_first_arm(c: Campaign, triplet_id: str, arm: str) -> None:
    """Record another first arm and swap the review positions so the order stays followed."""
    triplet = next(t for t in c.manifest["triplets"] if t["triplet_id"] == triplet_id)
    assert triplet["first_arm"] != arm
    triplet["first_arm"] = arm
    swap_review_positions(c, triplet_id)


def rewrite_answer(c: Campaign, session_id: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit an answer and keep its response receipt's output hash and size in step."""
    edit(c.answers[session_id])
    data = json_bytes(c.answers[session_id])
    receipt = receipt_of(c, session_id, "response")
    receipt.update(output_sha256=sha256_hex(data), output_bytes=len(data))


def violation_ids(run: Run, code: str) -> list[list[str]]:
    return [v["ids"] for v in run.violations if v["code"] == code]


def flat(ids: list[list[str]]) -> set[str]:
    return {i for group in ids for i in group}


# ---- the default bundle ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_campaign(make_campaign(), tmp_path_factory.mktemp("default"))


@pytest.fixture(scope="module")
def default_run(default_bundle: Path) -> Run:
    return cli("check", str(default_bundle), "--format", "json")


# ---- admission mutations: one per `link` -------------------------------------------------------
#
# rule -> (reject code, mutation of the default campaign, rehash on write, ids expected in the
# violation). `rehash=False` keeps the manifests exactly as make_campaign() hashed them, so a
# change of a manifest field itself (not of a hashed file) is not papered over.

Mutation = Callable[[Campaign], None]


def _m_ruleset_hash(c: Campaign) -> None:
    c.manifest["identities"]["ruleset_hash"] = "0" * 64


def _m_schema_hash(c: Campaign) -> None:
    c.manifest["identities"]["response_schema_sha256"] = "0" * 64


def _m_task_bytes_hash(c: Campaign) -> None:
    c.manifest["identities"]["task_bytes_sha256"] = "0" * 64


def _m_input_changed(c: Campaign) -> None:
    entry = next(i for i in c.manifest["inputs"] if i["path"] == "packets/P9.json")
    entry["sha256"] = "f" * 64


def _m_draft_edited_after_receipt(c: Campaign) -> None:
    draft = session(c, "E-T2-1", "D")["session_id"]
    c.answers[draft]["final"]["claims"][0]["text"] += " (edited after the receipt)"


def _m_packet_commit(c: Campaign) -> None:
    c.packets["P7"]["commit"] = "f" * 40  # re-hashed as a freezer would: only the rule sees it
    rerender_requests(c)  # and sent as it is


def _m_excerpt_byte(c: Campaign) -> None:
    item = c.packets["P6"]["items"][2]
    item["text"] = item["text"].replace("= ", "=  ", 1)  # one byte, same lines and file hash
    rerender_requests(c)  # and sent as it is


def _m_source_unmeasured(c: Campaign) -> None:
    digest = c.packets["P5"]["items"][0]["file_sha256"]
    c.manifest["inputs"] = [i for i in c.manifest["inputs"] if i["path"] != f"sources/{digest}"]


def _m_prompt_not_rendered(c: Campaign) -> None:
    c.prompts["D"] += "Answer in fewer words.\n"  # an instruction no part holds
    rerender_requests(c)  # and sent as it is


def _m_b_instruction_to_a(c: Campaign) -> None:
    c.prompt_parts["roles/A"] += "\n" + c.prompt_parts["roles/B"]  # and rendered, consistently
    c.prompts["A"] = render_prompt(c.prompt_parts, "A")
    rerender_requests(c)  # and sent as it is


def _m_session_policy(c: Campaign) -> None:
    # A ran under another permission policy than the frozen one
    session(c, "E-T5-1", "A")["permission_sha256"] = "0" * 64


def _m_record_after_seal(c: Campaign) -> None:
    # the seal says receipts.jsonl had other bytes: it was edited after the run was sealed
    next(e for e in c.seal if e["path"] == "receipts.jsonl")["sha256"] = "0" * 64


def _m_evaluator(c: Campaign) -> None:
    c.manifest["evaluator"]["grammar_sha256"] = "0" * 64  # frozen for another grammar


def _m_seal_extra(c: Campaign) -> None:
    c.seal.append({"path": "notes.txt", "sha256": None})


def _m_request_input(c: Campaign) -> None:
    # B was sent a byte more than its session's rendered input (an instruction slipped in)
    request_of(c, session(c, "E-T4-1", "B")["session_id"])["input_bytes"] += 1


def _m_frozen_after_start(c: Campaign) -> None:
    first = min(c.requests, key=lambda q: q["start_monotonic_s"])
    c.manifest["frozen_at"] = first["start_utc"].replace(":05Z", ":06Z")


def _m_pair_allowance(c: Campaign) -> None:
    q = request_of(c, session(c, "E-T1-1", "B")["session_id"])
    q["reserved_output_tokens"] -= 1000


def _m_pair_overlap(c: Campaign) -> None:
    a = request_of(c, session(c, "E-T7-1", "A")["session_id"])
    b = request_of(c, session(c, "E-T7-1", "B")["session_id"])
    first, second = sorted((a, b), key=lambda q: q["start_monotonic_s"])
    second["start_monotonic_s"] = first["start_monotonic_s"] + 1.0
    second["reserved_at_monotonic_s"] = first["start_monotonic_s"] + 0.5


def _run_order(c: Campaign) -> list[str]:
    return [s["session_id"] for s in sorted(c.sessions, key=lambda s: s["position"])]


def _m_positions_not_from_one(c: Campaign) -> None:
    for s in c.sessions:
        s["position"] += 10  # the run order no longer starts at 1


def _m_positions_against_clock(c: Campaign) -> None:
    order = _run_order(c)  # two whole triplets trade positions, but not their times
    for s in c.sessions:
        if s["session_id"] in order[3:6] or s["session_id"] in order[6:9]:
            s["position"] += 3 if s["session_id"] in order[3:6] else -3


def _m_host_overlap(c: Campaign) -> None:
    order = _run_order(c)  # the D of the third triplet starts before the second one ends
    previous_end = _window(c, order[5])[1]
    _shift(c, order[6], previous_end - 1.0 - _window(c, order[6])[0])


def _m_arms_not_interleaved(c: Campaign) -> None:
    order = _run_order(c)  # the fourth triplet's last review runs after the fifth triplet
    order.insert(14, order.pop(11))
    run_in_order(c, order)


def _m_validation_missing(c: Campaign) -> None:
    answered = session(c, "E-T3-1", "A")["session_id"]
    c.receipts[:] = [
        r for r in c.receipts if not (r["session_id"] == answered and r["event"] == "validation")
    ]


def _m_input_undeclared(c: Campaign) -> None:
    c.manifest["inputs"] = [i for i in c.manifest["inputs"] if i["artifact"] != "truth"]


def _m_tariff(c: Campaign) -> None:
    c.manifest["price_card"]["date"] = "2026-09-06"


def _m_unterminated(c: Campaign) -> None:
    response = receipt_of(c, session(c, "D1-T10", "A")["session_id"], "response")
    c.receipts.remove(response)


def _m_billed_twice(c: Campaign) -> None:
    sid = session(c, "D1-T10", "B")["session_id"]
    extra = copy.deepcopy(receipt_of(c, sid, "validation"))
    extra.update(receipt_id=next_receipt_id(c), event="interruption", seconds=None)
    c.receipts.append(extra)


def _m_dispatched_unrecorded(c: Campaign) -> None:
    sid = session(c, "D1-T11", "A")["session_id"]
    request_id = request_of(c, sid)["request_id"]
    c.requests[:] = [q for q in c.requests if q["request_id"] != request_id]
    # the request's receipts go with it; the answer's validation receipt stays
    c.receipts[:] = [
        r for r in c.receipts if r["request_id"] != request_id or r["event"] == "validation"
    ]


def _m_undispatched_unrecorded(c: Campaign) -> None:
    fail_draft(c, "D1-T12")
    sid = session(c, "D1-T12", "A")["session_id"]
    c.receipts[:] = [r for r in c.receipts if r["session_id"] != sid]


def _m_meter_missing(c: Campaign) -> None:
    receipt_of(c, session(c, "D1-T9", "D")["session_id"], "response")["reasoning_tokens"] = None


def _m_meter_inconsistent(c: Campaign) -> None:
    # a cached subset larger than the input total that includes it: the uncached remainder
    # would be negative, and the review would cost less than it did
    receipt = receipt_of(c, session(c, "E-T1-1", "B")["session_id"], "response")
    receipt["cached_input_tokens"] = receipt["input_tokens"] + 1_000


def _m_receipt_tariff(c: Campaign) -> None:
    receipt_of(c, session(c, "D1-T9", "A")["session_id"], "response")["price_card"] = "other"


def _m_model_drift(c: Campaign) -> None:
    receipt_of(c, session(c, "D1-T9", "B")["session_id"], "response")["model_reported"] = "gpt-x"


def _m_cli_drift(c: Campaign) -> None:
    receipt_of(c, session(c, "D1-T10", "D")["session_id"], "response")["cli_version"] = "0.150.0"


def _m_tool_calls(c: Campaign) -> None:
    request_of(c, session(c, "D1-T10", "B")["session_id"])["mcp_calls"] = 1


def _m_reservation_late(c: Campaign) -> None:
    q = request_of(c, session(c, "D1-T11", "D")["session_id"])
    q["reserved_at_monotonic_s"] = q["start_monotonic_s"] + 0.25


def _m_model_not_pinned(c: Campaign) -> None:
    c.manifest["model"]["reasoning"] = "high"  # receipts still report the same model


def _m_runtime_not_pinned(c: Campaign) -> None:
    c.manifest["runtime"]["node"] = "20.11.1"


def _m_permission_identity(c: Campaign) -> None:
    c.manifest["permission_policy"]["sha256"] = "0" * 64  # another policy than the measured one


def _m_repetition_twice(c: Campaign) -> None:
    triplet = next(t for t in c.manifest["triplets"] if t["triplet_id"] == "E-T4-3")
    triplet["repetition"] = 2  # E-T4-2 and E-T4-3 both claim repetition 2 of T4


def _m_review_after_failed_draft(c: Campaign) -> None:
    session(c, "D1-T12", "D")["outcome"] = "malformed"


def _m_review_not_dispatched(c: Campaign) -> None:
    undispatch(c, session(c, "D1-T12", "B")["session_id"])


def _m_triplet_roles(c: Campaign) -> None:
    session(c, "D2-T9", "B")["role"] = "A"
    rerender_requests(c)  # and sent as it is


def _m_pair_count(c: Campaign) -> None:
    set_first_arm(c, "E-T1-3", "B")  # 11 A-first, 13 B-first; T1 still has both orders


def _m_order_balance(c: Campaign) -> None:
    set_first_arm(c, "E-T1-2", "A")  # T1 only A-first ...
    set_first_arm(c, "E-T3-1", "B")  # ... while the 12/12 count is kept


def _m_repetitions(c: Campaign) -> None:
    remove_triplet(c, "D1-T9")


def _m_arm_order(c: Campaign) -> None:
    swap_review_positions(c, "E-T2-1")


def _m_task_order(c: Campaign) -> None:
    c.manifest["task_order"] = list(reversed(c.manifest["task_order"]))


def _task_entry(c: Campaign, task_id: str) -> dict[str, Any]:
    return next(t for t in c.tasks["tasks"] if t["task_id"] == task_id)


def _m_eval_registry(c: Campaign) -> None:
    _task_entry(c, "T1")["repository"] = "synthetic/eval-b"
    rerender_requests(c)  # and sent as it is


def _m_strata(c: Campaign) -> None:
    _task_entry(c, "T1")["stratum"] = "change_impact"
    rerender_requests(c)  # and sent as it is


def _m_dev_registry(c: Campaign) -> None:
    _task_entry(c, "T9")["repository"] = "synthetic/dev-b"
    rerender_requests(c)  # and sent as it is


def _m_rejection_late(c: Campaign) -> None:
    c.tasks["rejected_candidates"][1]["recorded_at"] = "2026-10-01T12:00:00Z"


def _m_custody(c: Campaign) -> None:
    c.tasks["truth_custody"] = []


def _m_truth_file_renamed(c: Campaign) -> None:
    c.truth["T111"] = c.truth.pop("T11")  # truth/T11.yaml is gone; truth/T111.yaml names T11


def _m_truth_unregistered(c: Campaign) -> None:
    c.truth["T99"] = {**copy.deepcopy(c.truth["T12"]), "task_id": "T99"}


def _m_truth_count(c: Campaign) -> None:
    for obligation in c.truth["T10"]["obligations"][1:5]:
        obligation["answerable"] = False
    rerate_truth(c)  # the raters were given this truth


def _m_truth_repeated(c: Campaign) -> None:
    obligations = c.truth["T1"]["obligations"]  # O1 again: it would count twice in 4-8 and R
    obligations.append(copy.deepcopy(obligations[0]))
    rerate_truth(c)  # the raters were given this truth


def _m_packet(c: Campaign) -> None:
    items = c.packets["P11"]["items"]  # a 13th item: authentic, cited by no answer, one too many
    items.append({**items[0], "id": f"E{len(items) + 1}"})
    rerender_requests(c)  # and sent as it is


def _m_session_time(c: Campaign) -> None:
    over = session(c, "D2-T9", "D")
    sid = over["session_id"]
    start, end = _window(c, sid)
    receipt_of(c, sid, "response")["monotonic_s"] = start + 241
    receipt_of(c, sid, "validation")["monotonic_s"] = start + 242
    for later in c.sessions:  # the host ran the sessions after it later by as much
        if later["position"] > over["position"]:
            _shift(c, later["session_id"], start + 242 - end)


def _m_campaign_time(c: Campaign) -> None:
    c.receipts[-1]["monotonic_s"] += 8 * 3600


def _m_reservation_short(c: Campaign) -> None:
    request_of(c, session(c, "D2-T10", "A")["session_id"])["reserved_input_tokens"] = 1000


def _rating(c: Campaign, triplet_id: str, role: str, index: int) -> dict[str, Any]:
    return ratings_of(c, session(c, triplet_id, role)["session_id"])[index]


def _m_unlisted(c: Campaign) -> None:
    record = _rating(c, "E-T5-1", "A", 0)
    record["frozen_at"] = record["frozen_at"].replace("Z", ".0Z")  # same instant, other bytes


def _m_record_missing(c: Campaign) -> None:
    c.adjudication_manifest["records"].append({"record_id": "J9999", "sha256": "a" * 64})


def _m_answer_unknown(c: Campaign) -> None:
    _rating(c, "E-T5-1", "B", 0)["answer_id"] = "ANS-" + "0" * 16


def _m_answer_hash(c: Campaign) -> None:
    _rating(c, "E-T5-2", "A", 2)["answer_sha256"] = "0" * 64


def _m_after_reveal(c: Campaign) -> None:
    _rating(c, "E-T5-2", "B", 3)["frozen_at"] = "2026-10-09T00:00:00Z"


def _m_list_after_reveal(c: Campaign) -> None:
    c.adjudication_manifest["frozen_at"] = "2026-10-09T00:00:00Z"


def _m_truth_version(c: Campaign) -> None:
    _rating(c, "E-T5-3", "A", 4)["truth_version"] = "2"


def _m_incomplete(c: Campaign) -> None:
    c.adjudications.remove(_rating(c, "E-T5-3", "B", 6))


def _m_unresolved(c: Campaign) -> None:
    c.adjudications[:] = [r for r in c.adjudications if r["role"] != "third"]


def _m_raters(c: Campaign) -> None:
    records = ratings_of(c, session(c, "E-T6-1", "B")["session_id"])
    records[1]["rater"] = records[0]["rater"]


def _m_oracle_defective(c: Campaign) -> None:
    defect = {"task_id": "T6", "obligation_id": "T6-O2", "reviewers": ["rater-1", "rater-2"]}
    c.adjudication_manifest["oracle_defects"].append({**defect, "defect": "invalid syntax"})


def _m_oracle_defect_unfounded(c: Campaign) -> None:
    defect = {"task_id": "T99", "obligation_id": "T99-O2", "reviewers": ["rater-1"]}
    c.adjudication_manifest["oracle_defects"].append({**defect, "defect": "invalid syntax"})


ADMISSION_MUTATIONS: dict[str, tuple[str, Mutation, bool]] = {
    # 000_admission.rules
    "evaluated_with_frozen_rules": ("RULESET_NOT_FROZEN", _m_ruleset_hash, False),
    "response_schema_frozen": ("RESPONSE_SCHEMA_NOT_FROZEN", _m_schema_hash, False),
    "task_bytes_frozen": ("TASK_BYTES_NOT_FROZEN", _m_task_bytes_hash, False),
    "measured_inputs_unchanged": ("FREEZE_INPUT_CHANGED", _m_input_changed, False),
    "measured_inputs_declared": ("FREEZE_INPUT_UNDECLARED", _m_input_undeclared, False),
    "price_card_is_reference_card": ("TARIFF_MISMATCH", _m_tariff, True),
    "every_request_terminated": ("REQUEST_UNTERMINATED", _m_unterminated, True),
    "request_billed_once": ("REQUEST_BILLED_TWICE", _m_billed_twice, True),
    "dispatched_sessions_recorded": ("SESSION_UNRECORDED", _m_dispatched_unrecorded, True),
    "undispatched_sessions_recorded": ("SESSION_UNRECORDED", _m_undispatched_unrecorded, True),
    "receipts_metered": ("METER_MISSING", _m_meter_missing, True),
    "receipt_meters_consistent": ("METER_INCONSISTENT", _m_meter_inconsistent, True),
    "receipts_name_price_card": ("RECEIPT_TARIFF_MISMATCH", _m_receipt_tariff, True),
    "manifest_model_is_pinned": ("CONFIGURATION_NOT_PINNED", _m_model_not_pinned, True),
    "manifest_runtime_is_pinned": ("CONFIGURATION_NOT_PINNED", _m_runtime_not_pinned, True),
    "permission_policy_is_measured": (
        "PERMISSION_POLICY_UNMEASURED",
        _m_permission_identity,
        True,
    ),
    "no_model_drift": ("MODEL_DRIFT", _m_model_drift, True),
    "no_cli_drift": ("CLI_DRIFT", _m_cli_drift, True),
    "fixed_evidence_without_tools": ("TOOL_CALLS_IN_FIXED_EVIDENCE", _m_tool_calls, True),
    "reservation_before_dispatch": ("RESERVATION_MISSING", _m_reservation_late, True),
    "no_review_after_failed_draft": (
        "REVIEW_AFTER_FAILED_DRAFT",
        _m_review_after_failed_draft,
        True,
    ),
    "reviews_follow_valid_draft": ("REVIEW_NOT_DISPATCHED", _m_review_not_dispatched, True),
    "triplet_has_each_role_once": ("DESIGN_TRIPLET_ROLES", _m_triplet_roles, True),
    "evaluation_pairs_counterbalanced": ("DESIGN_PAIR_COUNT", _m_pair_count, True),
    "every_task_in_both_orders": ("DESIGN_ORDER_BALANCE", _m_order_balance, True),
    "repetitions_per_task": ("DESIGN_REPETITIONS", _m_repetitions, True),
    "valid_repetitions_distinct": ("DESIGN_REPETITIONS", _m_repetition_twice, True),
    "reviews_in_recorded_order": ("DESIGN_ARM_ORDER", _m_arm_order, True),
    "task_order_from_seed": ("TASK_ORDER_NOT_FROM_SEED", _m_task_order, True),
    "evaluation_task_registry": ("REGISTRY_EVALUATION_TASKS", _m_eval_registry, True),
    "evaluation_strata": ("REGISTRY_STRATA", _m_strata, True),
    "development_task_registry": ("REGISTRY_DEVELOPMENT_TASKS", _m_dev_registry, True),
    "rejections_recorded_first": ("REJECTIONS_RECORDED_LATE", _m_rejection_late, True),
    "truth_custody_recorded": ("TRUTH_CUSTODY_UNRECORDED", _m_custody, True),
    "truth_frozen_per_task": ("TRUTH_FILE_MISSING", _m_truth_file_renamed, True),
    "truth_of_registered_tasks": ("TRUTH_TASK_UNKNOWN", _m_truth_unregistered, True),
    "truth_obligations_per_task": ("TRUTH_OBLIGATION_COUNT", _m_truth_count, True),
    "truth_obligations_distinct": ("TRUTH_OBLIGATION_REPEATED", _m_truth_repeated, True),
    "packets_valid": ("PACKET_INVALID", _m_packet, True),
    # 000_bindings.rules
    "answers_are_as_metered": ("ANSWER_NOT_AS_METERED", _m_draft_edited_after_receipt, True),
    "packet_commit_is_corpus_commit": ("PACKET_COMMIT_NOT_CORPUS", _m_packet_commit, True),
    "excerpts_authentic": ("EXCERPT_NOT_AUTHENTIC", _m_excerpt_byte, True),
    "excerpt_sources_measured": ("SOURCE_NOT_MEASURED", _m_source_unmeasured, False),
    "prompts_rendered_from_their_parts": ("PROMPT_NOT_RENDERED", _m_prompt_not_rendered, True),
    "d_and_a_never_receive_b_instruction": (
        "PROMPT_CARRIES_B_INSTRUCTION",
        _m_b_instruction_to_a,
        True,
    ),
    "inputs_frozen_before_the_run": ("FROZEN_AFTER_RUN_START", _m_frozen_after_start, True),
    "pair_has_one_allowance": ("PAIR_ALLOWANCE_DIFFERS", _m_pair_allowance, True),
    "pair_runs_serially": ("PAIR_NOT_SERIAL", _m_pair_overlap, True),
    "session_positions_are_the_run_order": ("SESSION_POSITIONS", _m_positions_not_from_one, True),
    "positions_follow_the_clock": ("SESSION_POSITIONS", _m_positions_against_clock, True),
    "host_runs_one_request_at_a_time": ("HOST_NOT_SERIAL", _m_host_overlap, True),
    "arms_interleaved_without_snapshot": ("ARMS_NOT_INTERLEAVED", _m_arms_not_interleaved, True),
    "answered_sessions_validated_once": ("VALIDATION_RECEIPT_COUNT", _m_validation_missing, True),
    "request_input_is_rendered": ("REQUEST_INPUT_NOT_RENDERED", _m_request_input, True),
    "sessions_ran_under_frozen_policy": ("SESSION_POLICY_NOT_FROZEN", _m_session_policy, True),
    "run_records_sealed": ("RUN_NOT_SEALED", _m_record_after_seal, False),
    "seal_lists_run_records": ("SEAL_LISTS_UNKNOWN", _m_seal_extra, False),
    "evaluated_by_the_frozen_evaluator": ("EVALUATOR_NOT_FROZEN", _m_evaluator, False),
    # 000_accounting.rules
    "campaign_wall_time": ("CAMPAIGN_OVER_TIME", _m_campaign_time, True),
    "reservation_covers_use": ("RESERVATION_INSUFFICIENT", _m_reservation_short, True),
    # 000_adjudication.rules (records edited and re-hashed, except the unlisted one)
    "ratings_listed_in_manifest": ("ADJUDICATION_UNLISTED", _m_unlisted, False),
    "manifest_records_present": ("ADJUDICATION_RECORD_MISSING", _m_record_missing, False),
    "rated_answer_in_blind_view": ("RATED_ANSWER_UNKNOWN", _m_answer_unknown, True),
    "rated_answer_hash_matches": ("RATED_ANSWER_HASH_MISMATCH", _m_answer_hash, True),
    "ratings_frozen_before_reveal": ("RATING_AFTER_REVEAL", _m_after_reveal, True),
    "adjudication_frozen_before_reveal": (
        "ADJUDICATION_FROZEN_AFTER_REVEAL",
        _m_list_after_reveal,
        True,
    ),
    "ratings_use_frozen_truth": ("RATING_TRUTH_MISMATCH", _m_truth_version, True),
    "every_blind_answer_rated": ("RATINGS_INCOMPLETE", _m_incomplete, True),
    "disagreements_resolved": ("DISAGREEMENT_UNRESOLVED", _m_unresolved, True),
    "primary_raters_distinct": ("PRIMARY_RATERS_NOT_DISTINCT", _m_raters, True),
    "oracles_not_defective": ("ORACLE_DEFECTIVE", _m_oracle_defective, True),
    "oracle_defects_founded": ("ORACLE_DEFECT_UNFOUNDED", _m_oracle_defect_unfounded, True),
}

# A pair of reviews that overlaps is also two requests that overlap on the host; a copy of
# a task's truth under another task holds that task's obligation IDs a second time.
IMPLIED = {
    "pair_runs_serially": ("host_runs_one_request_at_a_time",),
    "truth_of_registered_tasks": ("truth_obligations_distinct",),
}

ADMISSION_GROUPS: tuple[tuple[bool, tuple[str, ...]], ...] = (
    (True, ("session_positions_are_the_run_order", "host_runs_one_request_at_a_time")),
    (True, ("truth_obligations_distinct",)),
    (True, ("receipt_meters_consistent",)),
    (True, ("arms_interleaved_without_snapshot", "positions_follow_the_clock")),
    # (rehash on write, rules) -- the mutations of a group touch disjoint records
    (
        True,
        (
            "answers_are_as_metered",
            "packet_commit_is_corpus_commit",
            "excerpts_authentic",
            "prompts_rendered_from_their_parts",
            "d_and_a_never_receive_b_instruction",
            "inputs_frozen_before_the_run",
            "pair_has_one_allowance",
            "pair_runs_serially",
            "answered_sessions_validated_once",
            "request_input_is_rendered",
            "sessions_ran_under_frozen_policy",
        ),
    ),
    (
        False,
        (
            "evaluated_with_frozen_rules",
            "response_schema_frozen",
            "task_bytes_frozen",
            "measured_inputs_unchanged",
            "measured_inputs_declared",
            "excerpt_sources_measured",
            "ratings_listed_in_manifest",
            "manifest_records_present",
            "run_records_sealed",
            "seal_lists_run_records",
            "evaluated_by_the_frozen_evaluator",
        ),
    ),
    (
        True,
        (
            "price_card_is_reference_card",
            "every_request_terminated",
            "request_billed_once",
            "dispatched_sessions_recorded",
            "receipts_metered",
            "receipts_name_price_card",
            "no_model_drift",
            "no_cli_drift",
            "fixed_evidence_without_tools",
            "reservation_before_dispatch",
        ),
    ),
    (
        True,
        (
            "undispatched_sessions_recorded",
            "valid_repetitions_distinct",
            "manifest_model_is_pinned",
            "manifest_runtime_is_pinned",
            "permission_policy_is_measured",
            "evaluation_pairs_counterbalanced",
            "campaign_wall_time",
            "reservation_covers_use",
        ),
    ),
    (
        True,
        (
            "no_review_after_failed_draft",
            "triplet_has_each_role_once",
            "repetitions_per_task",
            "reviews_in_recorded_order",
            "task_order_from_seed",
        ),
    ),
    (
        True,
        (
            "reviews_follow_valid_draft",
            "every_task_in_both_orders",
            "evaluation_task_registry",
            "evaluation_strata",
            "development_task_registry",
            "rejections_recorded_first",
            "truth_custody_recorded",
            "truth_frozen_per_task",
            "truth_of_registered_tasks",
            "truth_obligations_per_task",
            "packets_valid",
        ),
    ),
    (
        True,
        (
            "rated_answer_in_blind_view",
            "rated_answer_hash_matches",
            "ratings_frozen_before_reveal",
            "adjudication_frozen_before_reveal",
            "ratings_use_frozen_truth",
            "every_blind_answer_rated",
            "disagreements_resolved",
            "primary_raters_distinct",
            "oracles_not_defective",
            "oracle_defects_founded",
        ),
    ),
)


# Links about infrastructure-invalid triplets need a campaign with a replacement, which the
# builder makes (`replaced_triplets`); each has its own test below.
REPLACEMENT_LINKS = frozenset(
    {
        "at_most_one_invalid_triplet",
        "invalid_triplet_replaced_identically",
        "failures_not_relabelled",
    }
)


# The lock is always written as the freeze of the shipped rules; its test replaces it.
LOCK_LINKS = frozenset({"rules_lock_is_the_evaluated_rules"})


@pytest.mark.parametrize(
    "lock",
    [b"x" * 54, None],
    ids=["arbitrary_bytes", "a_valid_lock_of_other_rules"],
)
def test_a_lock_that_is_not_the_evaluated_rules_is_refused(
    lock: bytes | None, tmp_path: Path
) -> None:
    campaign = make_campaign()
    root = write_campaign(campaign, tmp_path / "bundle")
    if lock is None:  # a real lock, of rules that differ from the ones evaluated
        other = tmp_path / "other.rules"
        other.write_text('ruleset other version "1"\nconst x = 1\n', encoding="utf-8")
        frozen = cli("freeze", str(other), "--out", str(tmp_path / "o.lock"))
        assert frozen.exit_code == 0, frozen.stdout
        lock = (tmp_path / "o.lock").read_bytes()
    (root / "rules.lock").write_bytes(lock)
    record_lock(campaign, lock)  # re-frozen, as a freezer would
    write_campaign(campaign, root, rehash=False)
    (root / "rules.lock").write_bytes(lock)  # the writer always puts the shipped lock back
    run = cli("check", str(root), "--format", "json")
    assert run.exit_code == 1
    assert run.rules() == set(LOCK_LINKS)
    assert run.codes() == {"RULES_LOCK_NOT_THESE_RULES"}


def test_a_duplicated_validation_receipt_is_refused(tmp_path: Path) -> None:
    campaign = make_campaign()
    answered = session(campaign, "E-T3-1", "A")["session_id"]
    twin = {**receipt_of(campaign, answered, "validation"), "receipt_id": "R9999"}
    campaign.receipts.append(twin)
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.codes() == {"VALIDATION_RECEIPT_COUNT"}


def test_a_rating_frozen_after_the_list_that_freezes_it_is_refused(tmp_path: Path) -> None:
    campaign = make_campaign()
    first = min(r["frozen_at"] for r in campaign.adjudications)
    campaign.adjudication_manifest["frozen_at"] = first  # before every other rating
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.rules() == {"adjudication_frozen_before_reveal"}
    assert run.codes() == {"ADJUDICATION_FROZEN_AFTER_REVEAL"}


def _whole_answer_ratings(c: Campaign, triplet_id: str) -> list[dict[str, Any]]:
    reviewed = session(c, triplet_id, "B")["session_id"]
    return [r for r in ratings_of(c, reviewed) if r["obligation_id"] is None]


def test_primaries_disagreeing_on_critical_wrong_claims_need_a_third_rating(
    tmp_path: Path,
) -> None:
    campaign = make_campaign()
    first, _second = _whole_answer_ratings(campaign, "E-T4-1")
    first["critical_wrong_claims"] = 1  # the other primary counted 0: a disagreement
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.codes() == {"DISAGREEMENT_UNRESOLVED"}


def test_a_third_rating_of_the_whole_answer_decides(tmp_path: Path) -> None:
    campaign = make_campaign()
    first, second = _whole_answer_ratings(campaign, "E-T4-1")
    first["citations_support"] = False  # the primaries disagree on the citations
    third = {**second, "record_id": "J9999", "rater": "rater-3", "role": "third"}
    campaign.adjudications.append(third)  # ... and the third rater finds them supported
    run = check(campaign, tmp_path)
    assert run.exit_code == 0, run.violations
    reviewed = session(campaign, "E-T4-1", "B")["session_id"]
    runs = next(t for t in run.data["tables"] if t["name"] == "runs")
    columns = runs["columns"]
    row = next(r for r in runs["rows"] if r["ids"][0] == reviewed)
    assert row["values"][columns.index("source_gate")] is True


def test_every_link_has_a_mutation() -> None:
    rules_dir = Path(__file__).resolve().parents[1] / "rules"
    links = set()
    for name in ("000_admission", "000_accounting", "000_adjudication", "000_bindings"):
        text = (rules_dir / f"{name}.rules").read_text(encoding="utf-8")
        links |= {line.split()[1] for line in text.splitlines() if line.startswith("link ")}
    assert links >= REPLACEMENT_LINKS | LOCK_LINKS
    links -= REPLACEMENT_LINKS | LOCK_LINKS
    assert set(ADMISSION_MUTATIONS) == links
    grouped = [rule for _, rules in ADMISSION_GROUPS for rule in rules]
    assert len(grouped) == len(set(grouped))
    assert set(grouped) == links


def test_every_admission_link_decides_admission() -> None:
    # A link rule that no admission gate reads would report a violation and still admit.
    from engine.ruleset import load_ruleset

    checked = load_ruleset([Path(__file__).resolve().parents[1] / "rules"]).checked
    read: set[str] = set()
    pending = ["execution_valid"]
    while pending:
        name = pending.pop()
        if name not in read:
            read.add(name)
            pending += checked.infos[name].references
    rules_dir = Path(__file__).resolve().parents[1] / "rules"
    for name in ("000_admission", "000_accounting", "000_adjudication"):
        text = (rules_dir / f"{name}.rules").read_text(encoding="utf-8")
        links = {line.split()[1] for line in text.splitlines() if line.startswith("link ")}
        assert links <= read, sorted(links - read)


@pytest.mark.parametrize(
    ("rehash", "rules"), ADMISSION_GROUPS, ids=[f"group{i}" for i in range(len(ADMISSION_GROUPS))]
)
def test_admission_links_refuse(rehash: bool, rules: tuple[str, ...], tmp_path: Path) -> None:
    campaign = make_campaign()
    for rule in rules:
        ADMISSION_MUTATIONS[rule][1](campaign)
    run = check(campaign, tmp_path, rehash=rehash)
    assert run.exit_code == 1
    assert run.data["admitted"] is False
    assert run.verdict == "NO_VERDICT_EXECUTION_INVALID"
    # Each mutation triggers its own rule with its own code (and the rules that follow from
    # it, `IMPLIED`), and nothing else is violated.
    assert run.rules() == set(rules).union(*(IMPLIED.get(rule, ()) for rule in rules))
    for violation in run.violations:
        assert violation["code"] == ADMISSION_MUTATIONS[violation["rule"]][0]
        assert len(violation["rule_hash"]) == 64
        if violation["code"] == "FREEZE_INPUT_CHANGED":  # locates the manifest input entry
            pointer = violation["location"]["pointer"]
            assert pointer.startswith("/inputs/")
            entry = campaign.manifest["inputs"][int(pointer.removeprefix("/inputs/"))]
            assert entry["path"] == "packets/P9.json"
            assert violation["location"]["file"].endswith("manifest.yaml")


# ---- infrastructure-invalid triplets (seed 000 §5, C17) ---------------------------------------


def _runs_by_triplet(run: Run) -> dict[str, set[str]]:
    table = next(t for t in run.data["tables"] if t["name"] == "runs")
    triplet, validity = table["columns"].index("triplet"), table["columns"].index("validity")
    found: dict[str, set[str]] = {}
    for row in table["rows"]:
        found.setdefault(row["values"][triplet], set()).add(row["values"][validity])
    return found


def test_one_replaced_triplet_is_admitted_retained_and_not_scored(tmp_path: Path) -> None:
    run = check(make_campaign(replaced_triplets=("E-T3-2",)), tmp_path)
    assert run.exit_code == 0, run.violations
    assert run.data["admitted"] is True
    assert run.verdict == "ADVANCE"
    runs = _runs_by_triplet(run)  # the invalid attempt is reported, marked, beside its replacement
    assert runs["E-T3-2"] == {"infrastructure_invalid"}
    assert runs["E-T3-2-R"] == {"valid"}


def test_an_invalid_triplet_without_its_replacement_refuses_admission(tmp_path: Path) -> None:
    campaign = make_campaign()
    for s in campaign.sessions:
        if s["triplet_id"] == "E-T3-2":  # T3 runs A, B, A first: its only B-first repetition
            s.update(validity="infrastructure_invalid", invalid_reason="recorder_loss")
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.rules() == {
        "invalid_triplet_replaced_identically",
        "repetitions_per_task",
        "evaluation_pairs_counterbalanced",
        "every_task_in_both_orders",
    }
    assert "REPLACEMENT_MISSING" in {v["code"] for v in run.violations}


def test_a_replacement_must_repeat_the_original_design(tmp_path: Path) -> None:
    campaign = make_campaign(replaced_triplets=("D1-T9",))
    replacement = next(t for t in campaign.manifest["triplets"] if t["triplet_id"] == "D1-T9-R")
    replacement["round"] = 2  # not the round of the attempt it replaces
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.rules() == {"invalid_triplet_replaced_identically"}
    [violation] = run.violations
    assert (violation["code"], violation["ids"]) == ("REPLACEMENT_MISSING", ["D1-T9"])


def test_a_model_timeout_relabelled_as_infrastructure_is_refused(tmp_path: Path) -> None:
    # C16: the harness replaced the triplet, but its B review had timed out: a scored failure.
    campaign = make_campaign(replaced_triplets=("D1-T11",))
    session(campaign, "D1-T11", "B")["outcome"] = "timeout"
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.rules() == {"failures_not_relabelled"}
    [violation] = run.violations
    assert violation["code"] == "FAILURE_RELABELLED_INFRASTRUCTURE"


def test_a_second_invalid_triplet_stops_the_campaign(tmp_path: Path) -> None:
    run = check(make_campaign(replaced_triplets=("D1-T9", "E-T3-2")), tmp_path)
    assert run.exit_code == 1
    assert run.rules() == {"at_most_one_invalid_triplet"}
    assert run.verdict == "NO_VERDICT_EXECUTION_INVALID"


def test_session_over_time_is_a_scored_failure(tmp_path: Path) -> None:
    # A session over 4 minutes is a valid scored failure (seed 000 §4, §5), not an invalid
    # run: the bundle is admitted and the cost/time scorecard fails on that session.
    campaign = make_campaign()
    _m_session_time(campaign)
    run = check(campaign, tmp_path)
    assert run.exit_code == 0
    assert run.data["violations"] == []
    gate = run.gates()["session_wall_time"]
    assert gate["passed"] is False
    failing = [o["ids"] for o in gate["observations"] if not o["passed"]]
    assert failing == [[session(campaign, "D2-T9", "D")["session_id"]]]
    assert run.gates()["sessions_within_limits"]["passed"] is False
    assert run.verdict == "DO_NOT_ADVANCE"


# ---- 1. the default bundle ---------------------------------------------------------------------


def test_default_admitted(default_bundle: Path) -> None:
    run = cli("admit", str(default_bundle), "--format", "json")
    assert run.exit_code == 0
    assert run.data["admitted"] is True
    assert run.data["violations"] == []


def test_default_advances(default_run: Run) -> None:
    assert default_run.exit_code == 0
    assert default_run.data["admitted"] is True
    identity = default_run.table("campaign_identity")
    assert identity["rows"][0]["values"][identity["columns"].index("synthetic")] is True
    assert default_run.verdict == "ADVANCE"
    assert default_run.violations == []
    assert default_run.failed_gates() == set()
    assert all(
        b["observations"] and all(o["passed"] for o in b["observations"])
        for b in default_run.data["budgets"]
    )
    assert set(SCORECARD_GATES) <= set(default_run.gates())


def test_default_text_has_banner(default_bundle: Path) -> None:
    run = cli("check", str(default_bundle))
    assert run.exit_code == 0
    assert run.stdout.startswith("SYNTHETIC")
    assert "ADVANCE" in run.stdout


def test_default_json_deterministic(default_bundle: Path, default_run: Run) -> None:
    again = cli("check", str(default_bundle), "--format", "json")
    assert again.stdout.encode("utf-8") == default_run.stdout.encode("utf-8")


# ---- 2. verdict variants -----------------------------------------------------------------------


def test_a_as_good_as_b_stops(tmp_path: Path) -> None:
    run = check(make_campaign(a_R={t: [5, 5, 5] for t in EVAL_TASK_IDS}), tmp_path)
    assert run.exit_code == 0
    assert run.verdict == "STOP_NO_DEMONSTRATED_NEED"
    assert "gain_over_A" in run.failed_gates()
    macro = run.table("macro_averages")
    assert str(macro["rows"][0]["values"][macro["columns"].index("gain")]) == "0"


def test_costly_b_does_not_advance(tmp_path: Path) -> None:
    run = check(
        make_campaign(b_cost_factor=eval_factor(1.3), b_time_factor=eval_factor(1.05)), tmp_path
    )
    assert run.exit_code == 0
    assert run.verdict == "DO_NOT_ADVANCE"
    assert "gain_over_A" not in run.failed_gates()
    assert "aggregate_cost_ratio_bound" in run.failed_gates()


def test_model_drift_refused(tmp_path: Path) -> None:
    campaign = make_campaign()
    _m_model_drift(campaign)
    root = write_campaign(campaign, tmp_path)
    admit = cli("admit", str(root), "--format", "json")
    assert admit.exit_code == 1
    assert admit.data["admitted"] is False
    assert {v["code"] for v in admit.data["violations"]} == {"MODEL_DRIFT"}
    run = cli("check", str(root), "--format", "json")
    assert run.exit_code == 1
    assert run.verdict == "NO_VERDICT_EXECUTION_INVALID"


# ---- 3. each scorecard gate alone flips the verdict --------------------------------------------


def _triplets(task_id: str) -> list[str]:
    return [f"E-{task_id}-{n}" for n in (1, 2, 3)]


def _add_answerable_obligations(c: Campaign, task_id: str, b_correct: int, a_correct: int) -> None:
    """Add O7 and O8 (answerable, not critical) to a task's truth and rate them in every
    review of the task: B gets `b_correct` of them right, A `a_correct` (7 answerable)."""
    obligations = c.truth[task_id]["obligations"]
    template = obligations[2]
    for k in (7, 8):
        added = copy.deepcopy(template)
        added["obligation_id"] = f"{task_id}-O{k}"
        added["text"] = f"The answer explains behavior {k} of task {task_id} from the evidence."
        obligations.append(added)
    number = len(c.adjudications)
    for s in c.sessions:
        if s["role"] not in "AB" or not s["triplet_id"].startswith(f"E-{task_id}-"):
            continue
        correct = b_correct if s["role"] == "B" else a_correct
        base = ratings_of(c, s["session_id"])[0]
        for k in (7, 8):
            for rater in ("rater-1", "rater-2"):
                number += 1
                record = dict(base)
                record.update(
                    record_id=f"J{number:04d}",
                    obligation_id=f"{task_id}-O{k}",
                    rater=rater,
                    role="primary",
                    verdict="correct" if k - 6 <= correct else "incorrect",
                    critical_wrong_claims=None,
                    citations_support=None,
                )
                c.adjudications.append(record)
    rerate_truth(c)  # the raters were given this truth


def _v_citations(c: Campaign) -> None:
    for record in ratings_of(c, session(c, "E-T4-2", "B")["session_id"]):
        if record["obligation_id"] is None:
            record["citations_support"] = False


def _v_ledger(c: Campaign) -> None:
    def drop_disposition(answer: dict[str, Any]) -> None:
        answer["reconciliation"]["evidence_dispositions"].pop()

    rewrite_answer(c, session(c, "E-T4-2", "B")["session_id"], drop_disposition)


def _v_gain(c: Campaign) -> None:
    for task_id in ("T1", "T2", "T3", "T4"):
        _add_answerable_obligations(c, task_id, b_correct=2, a_correct=1)


def _v_session_input(c: Campaign) -> None:
    sid = session(c, "E-T1-1", "D")["session_id"]
    receipt_of(c, sid, "response")["input_tokens"] = 90_001
    request_of(c, sid)["reserved_input_tokens"] = 90_001


GATE_VARIANTS: dict[str, tuple[dict[str, Any], Mutation | None, str]] = {
    # gate -> (builder options, mutation, expected verdict)
    "b_no_critical_failures": ({"b_R": {"T1": [1, 5, 5]}}, None, "DO_NOT_ADVANCE"),
    "b_source_rules_pass": ({}, _v_citations, "DO_NOT_ADVANCE"),
    "b_ledger_controls_pass": ({}, _v_ledger, "DO_NOT_ADVANCE"),
    "b_task_median_R": ({"b_R": {"T1": [3, 3, 5]}}, None, "DO_NOT_ADVANCE"),
    "b_macro_R": ({"b_R": {t: [4, 4, 4] for t in EVAL_TASK_IDS}}, None, "DO_NOT_ADVANCE"),
    "b_uncertainty_cases_pass": ({"b_U": {"T1": [False, True, True]}}, None, "DO_NOT_ADVANCE"),
    # 4 tasks improve by 1/7 each, the others tie: gain 1/14 < 0.10
    "gain_over_A": (
        {"a_R": {t: [5, 5, 5] for t in EVAL_TASK_IDS}},
        _v_gain,
        "STOP_NO_DEMONSTRATED_NEED",
    ),
    "tasks_improved_over_A": (
        {"a_R": {t: [5, 5, 5] for t in ("T1", "T2", "T3", "T4", "T5")}},
        None,
        "DO_NOT_ADVANCE",
    ),
    "no_task_decrease": (
        {"b_R": {"T1": [4, 4, 4]}, "a_R": {"T1": [5, 5, 5]}},
        None,
        "DO_NOT_ADVANCE",
    ),
    "aggregate_cost_ratio_bound": (
        {"b_cost_factor": eval_factor(1.25), "b_time_factor": eval_factor(1.05)},
        None,
        "DO_NOT_ADVANCE",
    ),
    "aggregate_time_ratio_bound": (
        {"b_cost_factor": eval_factor(1.05), "b_time_factor": eval_factor(1.22)},
        None,
        "DO_NOT_ADVANCE",
    ),
    "task_cost_ratio_bound": (
        {
            "b_cost_factor": dict.fromkeys(_triplets("T1"), 1.42),
            "b_time_factor": dict.fromkeys(_triplets("T1"), 1.08),
        },
        None,
        "DO_NOT_ADVANCE",
    ),
    "task_time_ratio_bound": (
        {
            "b_cost_factor": dict.fromkeys(_triplets("T1"), 1.08),
            "b_time_factor": dict.fromkeys(_triplets("T1"), 1.42),
        },
        None,
        "DO_NOT_ADVANCE",
    ),
    # C14: aggregate and task medians green, one individual pair cost ratio > 1.25
    "pair_cost_ratio_bound": (
        {"b_cost_factor": {"E-T1-1": 1.7}, "b_time_factor": {"E-T1-1": 1.08}},
        None,
        "DO_NOT_ADVANCE",
    ),
    # C21: every gate passes except one pair regression bound -> not ADVANCE (no OR escape)
    "pair_time_ratio_bound": (
        {"b_cost_factor": {"E-T1-1": 1.08}, "b_time_factor": {"E-T1-1": 1.7}},
        None,
        "DO_NOT_ADVANCE",
    ),
    "sessions_within_limits": ({}, _v_session_input, "DO_NOT_ADVANCE"),
}


def test_gate_variants_cover_every_scorecard_gate() -> None:
    assert set(GATE_VARIANTS) == set(SCORECARD_GATES)


@pytest.mark.parametrize("gate", SCORECARD_GATES)
def test_gate_alone_flips_verdict(gate: str, tmp_path: Path) -> None:
    options, mutate, verdict = GATE_VARIANTS[gate]
    campaign = make_campaign(**options)
    if mutate is not None:
        mutate(campaign)
    run = check(campaign, tmp_path)
    assert run.exit_code == 0
    assert run.data["admitted"] is True
    assert run.violations == []
    failed = run.failed_gates() & set(SCORECARD_GATES)
    assert failed == {gate}
    assert run.verdict == verdict
    observations = run.gates()[gate]["observations"]
    assert any(not o["passed"] for o in observations)
    if gate == "pair_cost_ratio_bound":  # C14: the outlier pair is named
        bad = [o for o in observations if not o["passed"]]
        assert [o["ids"] for o in bad] == [["E-T1-1"]]
        assert Fraction(str(bad[0]["observed"])) > Fraction(5, 4)
    if gate == "sessions_within_limits":  # the session budget names the crossing session
        sid = session(campaign, "E-T1-1", "D")["session_id"]
        bad = [o for o in run.budget("session_input_tokens")["observations"] if not o["passed"]]
        assert [o["ids"] for o in bad] == [[sid]]
        assert bad[0]["observed"] == 90_001
        assert bad[0]["bound"] == 90_000


def test_c23_failed_draft_scores_zero(tmp_path: Path) -> None:
    campaign = make_campaign()
    fail_draft(campaign, "E-T2-1")
    run = check(campaign, tmp_path)
    assert run.exit_code == 0
    assert run.data["admitted"] is True
    assert run.violations == []
    reviews = {session(campaign, "E-T2-1", role)["session_id"] for role in "AB"}
    R = run.column("runs", "R")
    outcome = run.column("runs", "outcome")
    for sid in reviews:
        assert outcome[sid] == "not_dispatched"
        assert str(R[sid]) == "0"
    assert run.verdict != "NO_VERDICT_EXECUTION_INVALID"


@pytest.mark.parametrize("outcome", ["malformed", "refusal", "timeout", "budget_exhausted"])
def test_a_failed_review_is_a_valid_scored_failure(outcome: str, tmp_path: Path) -> None:
    # C16: not an infrastructure failure, no rerun: admitted, scored R=0, U=0, critical failure.
    campaign = make_campaign()
    sid = session(campaign, "E-T5-2", "B")["session_id"]
    session(campaign, "E-T5-2", "B")["outcome"] = outcome
    run = check(campaign, tmp_path)
    assert run.exit_code == 0, run.violations
    assert run.data["admitted"] is True
    assert str(run.column("runs", "R")[sid]) == "0"
    assert str(run.column("runs", "U")[sid]) == "0"
    assert run.column("runs", "critical_failure")[sid] is True
    assert run.column("runs", "critical_wrong_claims")[sid] == "unscorable"
    assert run.verdict != "ADVANCE"


def test_a_confident_critical_wrong_claim_fails_the_critical_gate(tmp_path: Path) -> None:
    # C08: both source-based ratings count one critical wrong claim in a B answer.
    campaign = make_campaign()
    sid = session(campaign, "E-T5-2", "B")["session_id"]
    for rating in ratings_of(campaign, sid):
        if rating["obligation_id"] is None:
            rating["critical_wrong_claims"] = 1
    run = check(campaign, tmp_path)
    assert run.exit_code == 0, run.violations
    assert run.column("runs", "critical_wrong_claims")[sid] == 1
    assert run.column("runs", "critical_failure")[sid] is True
    assert run.gates()["b_no_critical_failures"]["passed"] is False
    assert run.verdict != "ADVANCE"


# ---- 4b. C18 ceilings: just below / equal / just above -------------------------------------------

# A draft's request: the A and B requests of a pair must keep one output allowance.
CAMPAIGN_ENTRY = "Q0049"


def _budget_variant(c: Campaign, delta: int) -> tuple[str, str]:
    """Session input of one D session at 90,000 + delta, and the reservation of request
    CAMPAIGN_ENTRY set so that running total + reservation = 3,000,000 + delta."""
    sid = session(c, "E-T3-1", "D")["session_id"]
    receipt_of(c, sid, "response")["input_tokens"] = 90_000 + delta
    request_of(c, sid)["reserved_input_tokens"] = max(90_000, 90_000 + delta)
    used = {r["request_id"]: r["input_tokens"] for r in c.receipts if r["event"] == "response"}
    ordered = sorted(c.requests, key=lambda q: q["start_monotonic_s"])
    running = 0
    for q in ordered:
        if q["request_id"] == CAMPAIGN_ENTRY:
            q["reserved_input_tokens"] = 3_000_000 + delta - running
            break
        running += used[q["request_id"]]
    return sid, CAMPAIGN_ENTRY


def _flip_meter_flags(c: Campaign) -> list[str]:
    """Two review receipts meter differently: input without cached, output without reasoning."""
    first = receipt_of(c, session(c, "E-T6-1", "A")["session_id"], "response")
    first["input_includes_cached"] = False
    second = receipt_of(c, session(c, "E-T6-1", "B")["session_id"], "response")
    second["output_includes_reasoning"] = False
    return [first["session_id"], second["session_id"]]


@pytest.mark.parametrize("delta", [-1, 0])
def test_ceilings_held(delta: int, tmp_path: Path) -> None:
    campaign = make_campaign()
    sid, _entry = _budget_variant(campaign, delta)
    flipped = _flip_meter_flags(campaign)
    run = check(campaign, tmp_path)
    assert run.exit_code == 0
    assert run.violations == []
    session_budget = run.budget("session_input_tokens")
    assert all(o["passed"] for o in session_budget["observations"])
    observed = {tuple(o["ids"]): o["observed"] for o in session_budget["observations"]}
    assert observed[(sid,)] == 90_000 + delta
    assert all(o["passed"] for o in run.budget("campaign_input_tokens")["observations"])
    assert run.verdict == "ADVANCE"
    # 5. reference cost by hand, including the two receipts with the other meter conventions
    costs = run.column("runs", "review_cost")
    for flipped_sid in flipped:
        assert str(costs[flipped_sid]) == str(hand_cost(campaign, flipped_sid))


def test_campaign_input_ceiling_crossed(tmp_path: Path) -> None:
    campaign = make_campaign()
    _sid, entry = _budget_variant(campaign, 1)
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.verdict == "NO_VERDICT_EXECUTION_INVALID"
    budget = run.budget("campaign_input_tokens")
    bad = [o for o in budget["observations"] if not o["passed"]]
    assert len(bad) == 1
    assert bad[0]["crossing_entry"] == [entry]
    assert bad[0]["observed"] == 3_000_001
    assert bad[0]["bound"] == 3_000_000
    session_bad = [o for o in run.budget("session_input_tokens")["observations"] if not o["passed"]]
    assert [o["ids"] for o in session_bad] == [[_sid]]


def _billed_output(receipt: dict[str, Any]) -> int:
    reasoning = 0 if receipt["output_includes_reasoning"] else receipt["reasoning_tokens"]
    return int(receipt["output_tokens"]) + int(reasoning)


def _output_by_request(c: Campaign) -> dict[str, Fraction]:
    used: dict[str, Fraction] = {q["request_id"]: Fraction(0) for q in c.requests}
    for r in c.receipts:
        if r["event"] in ("response", "error"):
            used[r["request_id"]] += _billed_output(r)
    return used


def _cost_by_request(c: Campaign) -> dict[str, Fraction]:
    return {q["request_id"]: hand_cost(c, q["session_id"]) for q in c.requests}


# budget -> (reservation field, inclusive ceiling, smallest step, use of each request by hand)
RESERVED_CEILINGS: dict[str, tuple[str, Fraction, Fraction, Callable[[Campaign], Any]]] = {
    "campaign_output_tokens": (
        "reserved_output_tokens",
        Fraction(600_000),
        Fraction(1),
        _output_by_request,
    ),
    "campaign_reference_cost": (
        "reserved_usd",
        Fraction(30),
        Fraction(1, 1_000_000),
        _cost_by_request,
    ),
}


@pytest.mark.parametrize("step", [-1, 0, 1], ids=["below", "equal", "above"])
@pytest.mark.parametrize("name", sorted(RESERVED_CEILINGS))
def test_reserved_ceilings_just_below_equal_and_above(name: str, step: int, tmp_path: Path) -> None:
    # C18: the reservation of request CAMPAIGN_ENTRY brings the running total plus its
    # worst case to the ceiling minus one step, to it, or one step over: only over refuses.
    field, ceiling, unit, use_of = RESERVED_CEILINGS[name]
    campaign = make_campaign()
    used = use_of(campaign)
    running = Fraction(0)
    for q in sorted(campaign.requests, key=lambda q: q["start_monotonic_s"]):
        if q["request_id"] == CAMPAIGN_ENTRY:
            value = ceiling + step * unit - running
            q[field] = (
                int(value) if unit == 1 else str(Decimal(value.numerator) / value.denominator)
            )
            break
        running += used[q["request_id"]]
    run = check(campaign, tmp_path)
    observations = run.budget(name)["observations"]
    if step <= 0:
        assert run.exit_code == 0, run.violations
        assert all(o["passed"] for o in observations)
        assert run.verdict == "ADVANCE"
    else:
        assert run.exit_code == 1
        [bad] = [o for o in observations if not o["passed"]]
        assert bad["crossing_entry"] == [CAMPAIGN_ENTRY]
        assert Fraction(str(bad["observed"])) == ceiling + unit
        assert run.verdict == "NO_VERDICT_EXECUTION_INVALID"


@pytest.mark.parametrize("step", [-1, 0, 1], ids=["below", "equal", "above"])
def test_session_output_ceiling_just_below_equal_and_above(step: int, tmp_path: Path) -> None:
    campaign = make_campaign()
    sid = session(campaign, "E-T3-1", "D")["session_id"]
    receipt = receipt_of(campaign, sid, "response")
    receipt.update(output_tokens=8_000 + step, output_includes_reasoning=True)
    request_of(campaign, sid)["reserved_output_tokens"] = 8_000 + max(step, 0)
    run = check(campaign, tmp_path)
    observed = {tuple(o["ids"]): o for o in run.budget("session_output_tokens")["observations"]}
    assert observed[(sid,)]["observed"] == 8_000 + step
    assert observed[(sid,)]["passed"] is (step <= 0)


def test_a_request_without_its_completion_receipt_is_refused(tmp_path: Path) -> None:
    # C15, "remove a completion receipt": a started request with no response, error or
    # interruption is an invalid execution; attempts alone count for nothing.
    campaign = make_campaign()
    sid = session(campaign, "E-T2-2", "A")["session_id"]
    campaign.receipts.remove(receipt_of(campaign, sid, "response"))
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.rules() == {"every_request_terminated"}
    assert run.verdict == "NO_VERDICT_EXECUTION_INVALID"


def test_a_request_without_a_reservation_is_refused(tmp_path: Path) -> None:
    # C18, "omit one global reservation": no worst case was reserved before dispatch.
    campaign = make_campaign()
    request_of(campaign, session(campaign, "E-T5-1", "B")["session_id"])["reserved_usd"] = None
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert {v["code"] for v in run.violations} == {"RESERVATION_MISSING"}


# ---- 5. reference cost reproduced by hand --------------------------------------------------------

RATES = {"uncached": Fraction(4), "cached": Fraction(2, 5), "output": Fraction(20)}


def hand_cost(c: Campaign, session_id: str) -> Fraction:
    """(4 x uncached + 0.40 x cached + 20 x billed output) / 1,000,000 over the session's
    metered receipts, exactly."""
    total = Fraction(0)
    for r in c.receipts:
        if r["session_id"] != session_id or r["event"] not in ("response", "error"):
            continue
        cached = r["cached_input_tokens"]
        uncached = r["input_tokens"] - cached if r["input_includes_cached"] else r["input_tokens"]
        output = r["output_tokens"]
        if not r["output_includes_reasoning"]:
            output += r["reasoning_tokens"]
        total += (
            RATES["uncached"] * uncached + RATES["cached"] * cached + RATES["output"] * output
        ) / 1_000_000
    return total


def test_review_cost_by_hand(default_run: Run) -> None:
    campaign = make_campaign()
    costs = default_run.column("runs", "review_cost")
    for triplet_id, role in (("D1-T9", "A"), ("E-T4-2", "B"), ("E-T8-3", "A")):
        sid = session(campaign, triplet_id, role)["session_id"]
        assert str(costs[sid]) == str(hand_cost(campaign, sid))
    # the workflow charges the shared draft D to both arms (C20)
    workflow = default_run.column("runs", "workflow_cost")
    d = session(campaign, "E-T4-2", "D")["session_id"]
    b = session(campaign, "E-T4-2", "B")["session_id"]
    assert str(workflow[b]) == str(hand_cost(campaign, d) + hand_cost(campaign, b))


def test_physical_billing_counts_the_shared_draft_once(default_run: Run) -> None:
    # C20: each complete workflow is allocated D, but the campaign pays for D once.
    campaign = make_campaign()
    every_session = sum(hand_cost(campaign, s["session_id"]) for s in campaign.sessions)
    drafts = sum(
        hand_cost(campaign, s["session_id"]) for s in campaign.sessions if s["role"] == "D"
    )
    [row] = default_run.table("macro_averages")["rows"]
    values = dict(zip(default_run.table("macro_averages")["columns"], row["values"], strict=True))
    assert Fraction(str(values["physical_campaign_cost"])) == every_session
    assert Fraction(str(values["allocated_workflow_cost"])) == every_session + drafts


# ---- 6. tampering --------------------------------------------------------------------------------


def test_prompt_byte_changed(tmp_path: Path) -> None:
    campaign = make_campaign()
    campaign.prompts["B"] = campaign.prompts["B"].replace("once", "Once", 1)
    run = check(campaign, tmp_path, rehash=False)
    assert run.exit_code == 1
    # the frozen hash no longer matches, the prompt is no longer its parts, and no B
    # request was sent what its session renders to now
    assert run.codes() == {
        "FREEZE_INPUT_CHANGED",
        "PROMPT_NOT_RENDERED",
        "REQUEST_INPUT_NOT_RENDERED",
    }
    (violation,) = [v for v in run.violations if v["code"] == "FREEZE_INPUT_CHANGED"]
    assert violation_ids(run, "PROMPT_NOT_RENDERED") == [["B"]]
    index = next(
        i for i, e in enumerate(campaign.manifest["inputs"]) if e["path"] == "prompts/B.txt"
    )
    assert violation["location"]["pointer"] == f"/inputs/{index}"
    assert violation["location"]["file"].endswith("manifest.yaml")
    assert "prompts/B.txt" in json.dumps(violation)


def test_adjudication_line_changed_without_rehash(tmp_path: Path) -> None:
    campaign = make_campaign()
    record = _rating(campaign, "E-T7-1", "B", 0)
    record["rater"] = "rater-9"
    run = check(campaign, tmp_path, rehash=False)
    assert run.exit_code == 1
    assert "ADJUDICATION_UNLISTED" in run.codes()
    assert violation_ids(run, "ADJUDICATION_UNLISTED") == [[record["record_id"]]]


def test_missing_file(tmp_path: Path) -> None:
    root = write_campaign(make_campaign(), tmp_path)
    (root / "truth" / "T3.yaml").unlink()
    run = cli("check", str(root), "--format", "json")
    assert run.exit_code == 1
    assert run.data["admitted"] is False
    assert violation_ids(run, "TRUTH_FILE_MISSING") == [["T3"]]


def test_malformed_receipt_line(tmp_path: Path) -> None:
    root = write_campaign(make_campaign(), tmp_path)
    path = root / "receipts.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[6] = lines[6][:-1]  # line 7 loses its closing brace
    path.write_bytes(b"\n".join(lines))
    run = cli("check", str(root), "--format", "json")
    assert run.exit_code == 1
    assert "receipts.jsonl" in run.stdout
    assert ":7" in run.stdout or '"line": 7' in run.stdout


def test_bundle_path_missing(tmp_path: Path) -> None:
    for command in ("admit", "check"):
        run = cli(command, str(tmp_path / "nowhere"), "--format", "json")
        assert run.exit_code == 2
        assert run.data is not None and run.data.get("ok") is False


def test_an_excerpt_edited_with_a_new_file_hash_is_refused(tmp_path: Path) -> None:
    # Seed 000 §4: packet identity and authenticity must be 100%. The edit is re-hashed as a
    # freezer would; the bundle holds no source file with the new hash.
    campaign = make_campaign()
    item = campaign.packets["P3"]["items"][0]
    item["text"] = item["text"].replace("0", "9", 1)
    item["file_sha256"] = sha256_hex(item["text"].encode("utf-8"))
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.data["admitted"] is False
    assert {"EXCERPT_NOT_AUTHENTIC", "SOURCE_NOT_MEASURED"} <= run.codes()
    assert {v["rule"] for v in run.violations if v["code"] == "EXCERPT_NOT_AUTHENTIC"} == {
        "excerpts_authentic"
    }


# ---- model identity, as the provider reports it ------------------------------------------------


def test_a_dated_resolved_identifier_is_the_expected_model(tmp_path: Path) -> None:
    # 000 §5: a requested alias is not an immutable snapshot; the provider's resolved ID is
    # what every response must report (the shipped campaign's receipts report it).
    campaign = make_campaign()
    model = campaign.manifest["model"]
    assert model["resolved_identifier"] != model["identifier"]
    assert model["immutable_snapshot"] is False
    assert {r["model_reported"] for r in campaign.receipts if r["event"] == "response"} == {
        model["resolved_identifier"]
    }
    assert check(campaign, tmp_path).exit_code == 0


def test_a_response_reporting_the_alias_is_drift_when_an_identifier_is_resolved(
    tmp_path: Path,
) -> None:
    campaign = make_campaign()
    sid = session(campaign, "E-T6-2", "A")["session_id"]
    receipt_of(campaign, sid, "response")["model_reported"] = campaign.manifest["model"][
        "identifier"
    ]
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.codes() == {"MODEL_DRIFT"}


def test_without_a_resolved_identifier_the_alias_is_expected(tmp_path: Path) -> None:
    campaign = make_campaign()
    model = campaign.manifest["model"]
    model["resolved_identifier"] = None
    for receipt in campaign.receipts:
        if receipt["event"] == "response":
            receipt["model_reported"] = model["identifier"]
    assert check(campaign, tmp_path).exit_code == 0
    receipt_of(campaign, session(campaign, "E-T6-2", "A")["session_id"], "response")[
        "model_reported"
    ] = "gpt-5.6-sol-2026-08-14"
    assert check(campaign, tmp_path / "drifted").codes() == {"MODEL_DRIFT"}


def test_an_answer_path_too_long_for_the_file_system_is_refused_not_a_crash(
    tmp_path: Path,
) -> None:
    # The path a session names is data: a name the file system refuses is no file, said
    # by the rules that read it (the answer's check, its receipt, the seal).
    campaign = make_campaign()
    campaign.sessions[0]["answer"] = "answers/" + "a" * 300 + ".json"
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert "INTERNAL_ERROR" not in run.codes()
    assert "ANSWER_NOT_AS_METERED" in run.codes()


def test_with_an_immutable_snapshot_the_arms_need_not_be_interleaved(tmp_path: Path) -> None:
    # 000 §5 asks for interleaving only where no immutable snapshot exists.
    campaign = make_campaign()
    campaign.manifest["model"]["immutable_snapshot"] = True
    _m_arms_not_interleaved(campaign)
    run = check(campaign, tmp_path)
    assert run.exit_code == 0, run.violations
    assert run.verdict == "ADVANCE"


def test_reviews_run_the_other_way_round_keep_the_campaign_admitted(tmp_path: Path) -> None:
    # Re-timing used by the order mutations is itself admitted: only the recorded first arm
    # then disagrees (`reviews_in_recorded_order`).
    campaign = make_campaign()
    swap_review_positions(campaign, "E-T2-1")
    run = check(campaign, tmp_path)
    assert run.exit_code == 1
    assert run.rules() == {"reviews_in_recorded_order"}


def test_a_common_draft_is_parsed_once_and_judged_under_each_documents_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C23 / issue 12: each answer file of a campaign is parsed once by the answer checks,
    though a triplet's draft is also each review's `draft` document; a draft that breaks
    the response contract is its own RESPONSE_SCHEMA and its reviews' DRAFT_SCHEMA."""
    c = make_campaign()
    draft = session(c, "D1-T9", "D")["session_id"]
    rewrite_answer(c, draft, lambda answer: answer["final"]["claims"][0].update(id=5))
    parsed: list[str] = []

    def counted(name: str, path: Path, *rest: Any) -> Any:
        parsed.append(Path(path).name)
        return load_document(name, path, *rest)

    monkeypatch.setattr(nested, "load_document", counted)
    run = check(c, tmp_path)
    codes = run.column("automatic_validation", "finding_codes")
    assert "RESPONSE_SCHEMA" in codes[draft]
    for role in "AB":
        assert codes[session(c, "D1-T9", role)["session_id"]] == ["DRAFT_SCHEMA"]
    answers = [name for name in parsed if name.endswith(".json") and name.startswith("S")]
    assert answers and len(answers) == len(set(answers)) == len(c.sessions)
