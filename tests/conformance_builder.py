"""Writes controls/conformance: one conforming trace per suite and one violating trace per
bullet of seed 001's dynamic conformance suites, and `expected.yaml`.

Every trace is the reference run below (a root, a node, an attempt from dispatch to
settlement), extended with what its suite exercises; a violating trace is its suite's
conforming trace with one thing the controller did wrong. Each record is written by
hand here, the controller's own `state` and `disposition` included: the traces are what
a controller would log, never what the engine computes. Run it after changing a trace:

    .venv/bin/python tests/conformance_builder.py
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "controls" / "conformance"

Record = dict[str, Any]


class Trace:
    """A controller log being written, one record per call, `seq` counting from 1."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    @property
    def next_id(self) -> str:
        return f"r{len(self.records) + 1:03d}"

    def add(self, kind: str, **fields: Any) -> Record:
        seq = len(self.records) + 1
        record = {"id": f"r{seq:03d}", "seq": seq, "type": kind, **fields}
        self.records.append(record)
        return record

    def event(
        self,
        lifecycle: str,
        entity: str,
        event: str,
        state: str,
        disposition: str = "applied",
        key: str | None = None,
        **extra: Any,
    ) -> Record:
        return self.add(
            "event",
            lifecycle=lifecycle,
            entity=entity,
            event=event,
            idempotency_key=key or f"{entity}/{event}/{len(self.records) + 1}",
            disposition=disposition,
            state=state,
            **extra,
        )

    def decided(
        self, decision: str, lifecycle: str, entity: str, event: str, state: str, **extra: Any
    ) -> Record:
        """A recorded decision, then the event that applies it."""
        decision_id = self.next_id
        self.add(
            "decision", decision=decision, ref=f"r{len(self.records) + 2:03d}", value="granted"
        )
        return self.event(lifecycle, entity, event, state, decision_ref=decision_id, **extra)

    def again(self, record: Record, disposition: str, state: str) -> Record:
        """The same event delivered again (same key and content), as the controller logged it."""
        fields = {k: v for k, v in record.items() if k not in ("id", "seq", "type")}
        fields.update(disposition=disposition, state=state)
        return self.add("event", **fields)

    def snapshot(self, lifecycle: str, entity: str, state: str) -> Record:
        return self.add("snapshot", subject_type=lifecycle, subject=entity, state=state)

    def ledger(self, settled: str) -> Record:
        return self.add("ledger", settled_usd=settled)


def dispatch(t: Trace, attempt: str, node: str, reserved: str = "0.50") -> None:
    """The capacity decision that dispatches an attempt into its own worktree."""
    t.decided(
        "capacity",
        "attempt",
        attempt,
        "dispatch",
        "DISPATCHED",
        node=node,
        reserved_usd=reserved,
        worktree=f"/run/worktrees/{attempt}/",
    )


def attempt_run(t: Trace, attempt: str, node: str, cost: str = "0.12") -> None:
    """An attempt from dispatch to settlement: result, validation, acceptance."""
    dispatch(t, attempt, node)
    t.event("attempt", attempt, "start", "RUNNING", node=node)
    t.add("access", attempt=attempt, action="write", path=f"/run/worktrees/{attempt}/src/main.py")
    t.add("access", attempt=attempt, action="network", host="model-gateway.internal")
    t.add("access", attempt=attempt, action="credential", credential="model-gateway-token")
    t.add("usage", attempt=attempt, request=f"{attempt}-q1", cost_usd=cost, final=True)
    t.event("attempt", attempt, "result", "RESULT_RECEIVED", node=node)
    t.event("attempt", attempt, "validate", "VALIDATING", node=node)
    t.event("attempt", attempt, "accept", "ACCEPTED", node=node)
    t.event("attempt", attempt, "settle", "SETTLED", node=node, cost_usd=cost)


def opening(t: Trace) -> None:
    """The root planned, the node scheduled and working."""
    t.event("root", "R1", "plan", "RUNNING")
    t.decided("scheduling", "node", "N1", "schedule", "READY")
    t.event("node", "N1", "dispatch_attempt", "WORKING")


def closing(t: Trace, settled: str = "0.12") -> None:
    """The node integrated and published, the root accepted, snapshots of the end."""
    t.event("node", "N1", "propose_integration", "INTEGRATING")
    integrated = t.event("node", "N1", "integrated", "PUBLISHING")
    t.add("artefact", authoritative=True, ref=integrated["id"], path="refs/heads/root")
    t.event("node", "N1", "publish", "DONE", paths=["src/main.py"], scope=["src/"])
    t.event("node", "N1", "settle", "NODE_SETTLED")
    t.event("root", "R1", "claim_acceptance", "ACCEPTED")
    t.event("root", "R1", "settle", "ROOT_SETTLED")
    t.snapshot("attempt", "A1", "SETTLED")
    t.snapshot("node", "N1", "NODE_SETTLED")
    t.snapshot("root", "R1", "ROOT_SETTLED")
    t.ledger(settled)


def reference(t: Trace) -> None:
    opening(t)
    attempt_run(t, "A1", "N1")
    closing(t)


# ---- Transition Completeness (dynamic): unlisted transitions are rejected ---------------


def completeness(t: Trace, illegal: str = "rejected_illegal", state: str = "RUNNING") -> None:
    opening(t)
    attempt_run(t, "A1", "N1")
    t.event("root", "R1", "settle", state, disposition=illegal)  # RUNNING has no settle
    closing(t)


# ---- Event and Replay ---------------------------------------------------------------------


def event_replay(t: Trace, wrong: str = "") -> None:
    opening(t)
    dispatch(t, "A1", "N1")
    start = t.event("attempt", "A1", "start", "RUNNING", node="N1")
    # The start delivered twice: ignored (or, wrongly, applied again).
    t.again(start, "applied" if wrong == "duplicate" else "duplicate_ignored", "RUNNING")
    # Another event reusing the start's key: rejected (or, wrongly, applied).
    t.event(
        "attempt",
        "A1",
        "result",
        "RESULT_RECEIVED" if wrong == "conflict" else "RUNNING",
        disposition="applied" if wrong == "conflict" else "rejected_conflict",
        key=start["idempotency_key"],
        node="N1",
    )
    t.add("usage", attempt="A1", request="A1-q1", cost_usd="0.12", final=True)
    t.event("attempt", "A1", "result", "RESULT_RECEIVED", node="N1")
    t.event("attempt", "A1", "validate", "VALIDATING", node="N1")
    t.event("attempt", "A1", "accept", "ACCEPTED", node="N1")
    t.event("attempt", "A1", "settle", "SETTLED", node="N1", cost_usd="0.12")
    # A proposal computed against version 1 of N1, which is at version 2: stale.
    stale = t.event(
        "node",
        "N1",
        "propose_integration",
        "WORKING",
        disposition="version_conflict",
        expected_version=1,
    )
    if wrong != "stale":
        t.event("node", "N1", "VERSION_CONFLICT_RECORDED", "WORKING", ref=stale["id"])
    if wrong == "undecided":  # the cancellation decided on the spot, never recorded
        decision = t.event("attempt", "A9", "cancel", "CANCELLED", node="N1")
    else:
        decision = t.decided("cancellation", "attempt", "A9", "cancel", "CANCELLED", node="N1")
    if wrong == "decision":  # the decision computed again on replay, and logged twice
        t.add("decision", decision="cancellation", ref=decision["id"], value="granted")
    t.snapshot("attempt", "A1", "ACCEPTED" if wrong == "snapshot" else "SETTLED")
    closing(t)


# ---- Attempt and Accounting ------------------------------------------------------------------


def accounting(t: Trace, wrong: str = "") -> None:
    opening(t)
    if wrong == "unvalidated":  # accepted straight from RUNNING
        dispatch(t, "A1", "N1")
        t.event("attempt", "A1", "start", "RUNNING", node="N1")
        t.add("usage", attempt="A1", request="A1-q1", cost_usd="0.12", final=True)
        t.event("attempt", "A1", "accept", "ACCEPTED", node="N1")
        t.event("attempt", "A1", "settle", "SETTLED", node="N1", cost_usd="0.12")
    else:
        attempt_run(t, "A1", "N1")
    # A2: validation fails with no retry left; the node replans.
    dispatch(t, "A2", "N1")
    t.event("attempt", "A2", "start", "RUNNING", node="N1")
    t.add("usage", attempt="A2", request="A2-q1", cost_usd="0.20", final=True)
    t.event("attempt", "A2", "result", "RESULT_RECEIVED", node="N1")
    t.event("attempt", "A2", "validate", "VALIDATING", node="N1")
    exhausted = t.event("attempt", "A2", "retries_exhausted", "EXHAUSTED", node="N1")
    if wrong != "exhausted":
        t.event("node", "N1", "replan", "PENDING", cause=exhausted["id"])
        t.decided("scheduling", "node", "N1", "schedule", "READY")
        t.event("node", "N1", "dispatch_attempt", "WORKING")
    t.event("attempt", "A2", "settle", "SETTLED", node="N1", cost_usd="0.20")
    # A3: times out; its usage arrives late and is settled, its late result refused.
    dispatch(t, "A3", "N1")
    t.event("attempt", "A3", "start", "RUNNING", node="N1")
    t.decided("timer", "attempt", "A3", "timeout", "TIMED_OUT", node="N1")
    t.add("usage", attempt="A3", request="A3-q1", cost_usd="0.30", final=True)
    if wrong == "late_result":  # the late result admitted as if the attempt still ran
        t.event("attempt", "A3", "result", "RESULT_RECEIVED", node="N1")
    else:
        t.event("attempt", "A3", "result", "TIMED_OUT", disposition="rejected_illegal", node="N1")
    t.event(
        "attempt",
        "A3",
        "settle",
        "SETTLED",
        node="N1",
        cost_usd="0.10" if wrong == "late_usage" else "0.30",
    )
    # A4: the provider never sends final usage: settled at the whole reservation (or,
    # wrongly, at its usage so far, under a reservation recorded as negative).
    dispatch(t, "A4", "N1", "-0.50" if wrong == "negative_reservation" else "0.50")
    t.event("attempt", "A4", "start", "RUNNING", node="N1")
    t.add("usage", attempt="A4", request="A4-q1", cost_usd="0.05", final=False)
    t.decided("timer", "attempt", "A4", "timeout", "TIMED_OUT", node="N1")
    settle = t.event(
        "attempt",
        "A4",
        "settle",
        "SETTLED",
        node="N1",
        cost_usd="0.05" if wrong in ("conservative", "negative_reservation") else "0.50",
    )
    # The settlement delivered twice is one settlement (or, wrongly, a second one).
    if wrong == "settled_twice":
        t.event("attempt", "A4", "settle", "SETTLED", node="N1", cost_usd="0.50")
    else:
        t.again(settle, "duplicate_ignored", "SETTLED")
    total = {
        "late_usage": "0.92",
        "conservative": "0.67",
        "negative_reservation": "0.67",
        "settled_twice": "1.12",
    }
    closing(t, total.get(wrong, "1.12"))


# ---- Recovery --------------------------------------------------------------------------------


def recovery(t: Trace, wrong: str = "") -> None:
    opening(t)
    attempt_run(t, "A1", "N1")
    # A5: the controller crashes before dispatching it; recovery dispatches it afresh.
    crash = t.add("crash", phase="before_dispatch", attempt="A5")
    if wrong == "before_dispatch":  # recovery resumes an attempt that never ran
        t.event(
            "attempt", "A5", "start", "CREATED", disposition="rejected_illegal", cause=crash["id"]
        )
    dispatch(t, "A5", "N1")
    # A5 then crashes after its recorded dispatch: recovery fails it.
    crash = t.add("crash", phase="after_dispatch", attempt="A5")
    if wrong == "after_dispatch":
        t.event("attempt", "A5", "start", "RUNNING", node="N1", cause=crash["id"])
        t.decided("timer", "attempt", "A5", "timeout", "TIMED_OUT", node="N1")
    else:
        t.event("attempt", "A5", "recover_fail", "FAILED", node="N1", cause=crash["id"])
    t.event("attempt", "A5", "settle", "SETTLED", node="N1", cost_usd="0.50")
    # A6: the crash comes after its result and usage were admitted; nothing is admitted twice.
    dispatch(t, "A6", "N1")
    t.event("attempt", "A6", "start", "RUNNING", node="N1")
    t.add("usage", attempt="A6", request="A6-q1", cost_usd="0.40", final=True)
    t.event("attempt", "A6", "result", "RESULT_RECEIVED", node="N1")
    crash = t.add("crash", phase="after_admission", attempt="A6")
    if wrong == "after_admission":  # the observation admitted again on recovery
        t.add("usage", attempt="A6", request="A6-q1", cost_usd="0.40", final=True)
    t.event("attempt", "A6", "recover_fail", "FAILED", node="N1", cause=crash["id"])
    t.event("attempt", "A6", "settle", "SETTLED", node="N1", cost_usd="0.40")
    # The node integrates; a crash interrupts publication; the artefact was recorded first.
    t.event("node", "N1", "propose_integration", "INTEGRATING")
    if wrong == "integration":  # the artefact is exposed before integration is recorded
        t.add("crash", phase="during_integration")
        t.add("artefact", authoritative=True, ref="unrecorded", path="refs/heads/root")
    integrated = t.event("node", "N1", "integrated", "PUBLISHING")
    t.add("crash", phase="during_publication")
    t.add("artefact", authoritative=True, ref=integrated["id"], path="refs/heads/root")
    t.event("node", "N1", "publish", "DONE", paths=["src/main.py"], scope=["src/"])
    t.event("node", "N1", "settle", "NODE_SETTLED")
    t.event("root", "R1", "claim_acceptance", "ACCEPTED")
    t.event("root", "R1", "settle", "ROOT_SETTLED")
    t.snapshot("attempt", "A5", "SETTLED")
    t.ledger("1.02")


# ---- Isolation -------------------------------------------------------------------------------


def isolation(t: Trace, wrong: str = "") -> None:
    opening(t)
    attempt_run(t, "A1", "N1")
    if wrong == "write":
        t.add("access", attempt="A1", action="write", path="/run/controller/state.json")
    if wrong == "network":
        t.add("access", attempt="A1", action="network", host="pypi.org")
    if wrong == "credential":
        t.add("access", attempt="A1", action="credential", credential="deploy-key")
    t.event("node", "N1", "propose_integration", "INTEGRATING")
    t.event("node", "N1", "integrated", "PUBLISHING")
    candidate = ["src/main.py", "tests/hidden/test_secret.py"]
    if wrong == "scope":
        t.event("node", "N1", "publish", "DONE", paths=candidate, scope=["src/"])
    else:  # the gate refuses the out-of-scope path; the node publishes within its scope
        t.event("node", "N1", "publication_rejected", "WORKING", paths=candidate, scope=["src/"])
        t.event("node", "N1", "propose_integration", "INTEGRATING")
        t.event("node", "N1", "integrated", "PUBLISHING")
        t.event("node", "N1", "publish", "DONE", paths=["src/main.py"], scope=["src/"])
    t.event("node", "N1", "settle", "NODE_SETTLED")
    t.event("root", "R1", "claim_acceptance", "ACCEPTED")
    t.event("root", "R1", "settle", "ROOT_SETTLED")
    t.ledger("0.12")


Builder = Callable[[Trace], None]

# name: (suite, bullet, builder, the rules it must violate; empty for a conforming trace)
TRACES: dict[str, tuple[str, str, Builder, list[str]]] = {
    "reference": ("reference", "the reference run", reference, []),
    "completeness/conforming": (
        "Transition Completeness",
        "unlisted transitions are rejected",
        completeness,
        [],
    ),
    "completeness/unlisted_transition_applied": (
        "Transition Completeness",
        "every unlisted transition is rejected",
        lambda t: completeness(t, "applied", "ROOT_SETTLED"),
        ["events_replay_to_recorded_state", "unlisted_transitions_rejected"],
    ),
    "event_replay/conforming": ("Event and Replay", "every bullet", event_replay, []),
    "event_replay/duplicate_applied": (
        "Event and Replay",
        "duplicate events are idempotent",
        lambda t: event_replay(t, "duplicate"),
        ["duplicate_events_idempotent"],
    ),
    "event_replay/conflicting_key_applied": (
        "Event and Replay",
        "conflicting idempotency keys are rejected",
        lambda t: event_replay(t, "conflict"),
        ["conflicting_keys_rejected", "events_replay_to_recorded_state"],
    ),
    "event_replay/stale_proposal_unrecorded": (
        "Event and Replay",
        "stale proposals produce VERSION_CONFLICT_RECORDED",
        lambda t: event_replay(t, "stale"),
        ["stale_proposals_record_version_conflict"],
    ),
    "event_replay/snapshot_diverges": (
        "Event and Replay",
        "event replay produces state and ledger equivalence",
        lambda t: event_replay(t, "snapshot"),
        ["state_snapshots_replayed"],
    ),
    "event_replay/decision_recomputed": (
        "Event and Replay",
        "timer, capacity, scheduling and cancellation decisions are replayed, not recomputed",
        lambda t: event_replay(t, "decision"),
        ["decisions_not_recomputed"],
    ),
    "event_replay/decision_not_recorded": (
        "Event and Replay",
        "timer, capacity, scheduling and cancellation decisions are replayed, not recomputed",
        lambda t: event_replay(t, "undecided"),
        ["decisions_recorded_before_use"],
    ),
    "accounting/conforming": ("Attempt and Accounting", "every bullet", accounting, []),
    "accounting/accepted_without_validation": (
        "Attempt and Accounting",
        "successful execution proceeds through result, validation and acceptance",
        lambda t: accounting(t, "unvalidated"),
        [
            "events_replay_to_recorded_state",
            "ledger_snapshots_replayed",
            "state_snapshots_replayed",
            "success_through_result_validation_acceptance",
            "unlisted_transitions_rejected",
        ],
    ),
    "accounting/exhausted_retries_unresolved": (
        "Attempt and Accounting",
        "exhausted retries leave validation through a legal replan or terminal path",
        lambda t: accounting(t, "exhausted"),
        ["exhausted_retries_leave_validation"],
    ),
    "accounting/late_result_admitted": (
        "Attempt and Accounting",
        "timeout followed by late usage settles cost without admitting a result",
        lambda t: accounting(t, "late_result"),
        [
            "events_replay_to_recorded_state",
            "late_result_not_admitted",
            "unlisted_transitions_rejected",
        ],
    ),
    "accounting/late_usage_unsettled": (
        "Attempt and Accounting",
        "timeout followed by late usage settles cost without admitting a result",
        lambda t: accounting(t, "late_usage"),
        ["late_usage_settled"],
    ),
    "accounting/settlement_not_conservative": (
        "Attempt and Accounting",
        "missing final usage causes conservative settlement",
        lambda t: accounting(t, "conservative"),
        ["missing_final_usage_settles_conservatively"],
    ),
    # A reservation recorded as negative makes any settlement conservative: the settlement
    # below is the one `settlement_not_conservative` refuses, and only the sign says so.
    "accounting/negative_reservation": (
        "Attempt and Accounting",
        "missing final usage causes conservative settlement",
        lambda t: accounting(t, "negative_reservation"),
        ["amounts_not_negative"],
    ),
    "accounting/settled_twice": (
        "Attempt and Accounting",
        "settlement is idempotent",
        lambda t: accounting(t, "settled_twice"),
        ["settlement_idempotent", "unlisted_transitions_rejected"],
    ),
    "recovery/conforming": ("Recovery", "every bullet", recovery, []),
    "recovery/crash_before_dispatch_resumed": (
        "Recovery",
        "crashes before dispatch produce no dispatched attempt",
        lambda t: recovery(t, "before_dispatch"),
        ["crash_before_dispatch_dispatches_nothing"],
    ),
    "recovery/crash_after_dispatch_not_failed": (
        "Recovery",
        "crashes after recorded dispatch fail the interrupted attempt under recovery",
        lambda t: recovery(t, "after_dispatch"),
        ["crash_after_dispatch_fails_attempt"],
    ),
    "recovery/crash_after_admission_duplicated": (
        "Recovery",
        "crashes after observation admission do not duplicate result or cost",
        lambda t: recovery(t, "after_admission"),
        ["crash_after_admission_admits_once"],
    ),
    "recovery/unrecorded_artefact_exposed": (
        "Recovery",
        "crashes during integration or publication cannot expose an unrecorded artefact",
        lambda t: recovery(t, "integration"),
        ["authoritative_artefacts_recorded"],
    ),
    "isolation/conforming": ("Isolation", "every bullet", isolation, []),
    "isolation/write_outside_worktree": (
        "Isolation",
        "sandbox escapes cannot modify controller state, Git metadata, hidden tests, "
        "credentials, host files or unrelated worktrees",
        lambda t: isolation(t, "write"),
        ["sandbox_writes_stay_in_worktree"],
    ),
    "isolation/out_of_scope_published": (
        "Isolation",
        "out-of-scope candidate paths are rejected at the publication gate",
        lambda t: isolation(t, "scope"),
        ["publication_gate_rejects_out_of_scope"],
    ),
    "isolation/network_outside_policy": (
        "Isolation",
        "network and credential restrictions are enforced",
        lambda t: isolation(t, "network"),
        ["network_within_policy"],
    ),
    "isolation/credential_outside_policy": (
        "Isolation",
        "network and credential restrictions are enforced",
        lambda t: isolation(t, "credential"),
        ["credentials_within_policy"],
    ),
}


def main(out: Path = OUT) -> None:
    """Write every trace and `expected.yaml` (the folder is rewritten whole)."""
    for child in out.iterdir() if out.exists() else []:
        if child.is_dir():
            shutil.rmtree(child)
    expected = []
    for name, (suite, bullet, build, violated) in TRACES.items():
        trace = Trace()
        build(trace)
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(r, sort_keys=True, separators=(", ", ": ")) for r in trace.records]
        (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")
        expected.append(
            {
                "trace": name,
                "suite": suite,
                "bullet": bullet,
                "conforms": not violated,
                **({"violated": violated} if violated else {}),
            }
        )
    header = (
        "# Each trace of controls/conformance and what `rulecheck conformance` must find in\n"
        "# it: `conforms: true`, or exactly the rules `violated`. Written by\n"
        "# tests/conformance_builder.py.\n"
    )
    body = yaml.safe_dump({"traces": expected}, sort_keys=False, width=100)
    (out / "expected.yaml").write_text(header + body)


if __name__ == "__main__":
    main()
