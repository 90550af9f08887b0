"""A deterministic builder of a complete synthetic campaign bundle (docs/campaign-format.md).

`make_campaign()` returns the whole bundle as plain data (a `Campaign`), which a test may
mutate before `write_campaign()` puts it on disk. The default campaign follows seed 000
§2-§5 and is meant to pass every rule and reach ADVANCE:

* 8 evaluation tasks T1..T8 in `synthetic/eval-a`..`eval-d` (two per repository, two per
  stratum) and 4 development tasks T9..T12 in `synthetic/dev-a`, `dev-b`; packet P<n> per
  task (tests/bench/generate.py `make_packet`), truth with 6 obligations per task (O1..O5
  answerable, O1 and O2 critical; O6 unanswerable).
* Development rounds 1 and 2 (one triplet per development task per round), then 3
  evaluation repetitions per task in `task_order(seed)`; 12 evaluation triplets A-first and
  12 B-first (odd tasks A,B,A; even tasks B,A,B). 96 valid, answered sessions run back to
  back on one host, each with one request (worst-case reservation), one `response` and one
  `validation` receipt.
* B reviews cost and take 5-15% more than A reviews of the same triplet (drawn per triplet).
* Blind ratings of every A/B review: B `correct` on O1..O5 and `uncertainty_credit` on O6
  (R = 1.0); A `correct` on O1..O3, `incorrect` on O4, O5 and `no_credit` on O6 (R = 0.6);
  two agreeing primary raters plus one answer-level record per rater, and one disagreement
  (rater-2 on O3 of the first evaluation B review) decided by a `third` rating of rater-3.

Options of `make_campaign(seed, **options)`:

* `campaign_id` (str): the manifest's campaign ID.
* `b_R`, `a_R` (task ID -> list of ints, one per repetition; development tasks have two,
  by round, evaluation tasks three): how many answerable obligations of that review the
  raters mark `correct`, 0..5. Obligations O1..Ok are `correct`, O(k+1)..O5 `incorrect`
  (so k < 2 fails a critical obligation). Tasks not named keep the default (B 5, A 3).
* `b_U`, `a_U` (task ID -> list of bools, one per repetition): whether the unanswerable
  obligation O6 gets `uncertainty_credit` (True) or `no_credit`. Defaults B True, A False.
* `b_cost_factor` (float, or a mapping from triplet ID or task ID to float): multiplier of
  the B review's tokens (input, cached, output, reasoning) and duration over the A review
  of the same triplet. Default: a per-triplet draw in [1.05, 1.15]; triplets a mapping does
  not name (by triplet ID first, then task ID) keep it. A float applies to every triplet,
  development included, so a large one also fails the development round-2 check (and thus
  admission); name evaluation tasks or triplets to break only the evaluation cost/time
  gates. Large factors also push B sessions toward the per-session token/time ceilings.
* `b_time_factor` (same forms): overrides the duration multiplier only, so cost and time
  gates can be broken separately. Default: the cost factor.
* `disagreement` (bool, default True): include the one rater disagreement.
* `replaced_triplets` (triplet IDs, default none): each named triplet's sessions are
  infrastructure-invalid (`platform_outage`), retained and charged, and a replacement
  triplet `<ID>-R` of the same task, round, repetition and arm order runs right after it
  (seed 000 §5 allows one; naming two shows the stop after a second). Replacements draw
  random values too, so they move every later draw and time.

Besides the files of docs/campaign-format.md the bundle holds
`schemas/response_contract.schema.json` (the shipped response contract, so the
`response_schema` input the admission rules require has bytes to hash), and tasks.yaml has
a `repositories` list (`{repository, phase}`) as manifests/schemas/task_registry.yaml
requires. Manifest `inputs` artifacts are `prompt`, `packet`, `task_registry`, `truth`,
`rules_lock` and `response_schema` (rules/000_admission.rules `required_input_artifacts`).

Every random value comes from `random.Random(seed)`, drawn in the same sequence whatever
the options, so a variant differs from the default only where its option acts (a cost or
time factor also moves every later time: receipts, rating freezes, `reveal_at`).
`python tests/campaign_builder.py` writes the default campaign to `controls/campaign/`.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import hashlib
import importlib.util
import json
import random
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from engine.bundle.jsonschemas import schema_digest, schema_text
from engine.bundle.ordering import seeded_key, seeded_order
from engine.freeze.canonical import canonical_json
from engine.freeze.hashing import sha256_hex

REPO = Path(__file__).resolve().parent.parent
CONTROLS_CAMPAIGN = REPO / "controls" / "campaign"
CONTROLS_DEVELOPMENT = REPO / "controls" / "development"
# The development-only control (seed 000 §5): the two rounds alone, B revised once.
DEVELOPMENT_OPTIONS: dict[str, Any] = {
    "campaign_id": "synthetic-741-v1.0-development",
    "stage": "development",
    "b_revision": True,
}
DEFAULT_SEED = "741-v1.0-synthetic"
RESPONSE_SCHEMA_PATH = "schemas/response_contract.schema.json"


def _load_bench_generate() -> ModuleType:
    """tests/bench/generate.py, loaded by path (tests/bench is not a package)."""
    path = Path(__file__).resolve().parent / "bench" / "generate.py"
    spec = importlib.util.spec_from_file_location("campaign_builder_bench_generate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_GENERATE = _load_bench_generate()

# ---- fixed identities -----------------------------------------------------------------------

MODEL = {
    "identifier": "gpt-5.6-sol",
    # what the provider reports for the alias: a dated identifier, not immutable weights
    "resolved_identifier": "gpt-5.6-sol-2026-08-14",
    "immutable_snapshot": False,
    "reasoning": "medium",
    "processing": "standard",
    "fast_mode": False,
    "sampling": {"temperature": "1"},
}
RUNTIME = {
    "cli": "Codex CLI",
    "cli_version": "0.149.0",
    "cli_executable_sha256": sha256_hex(b"synthetic codex executable 0.149.0\n"),
    "node": "22.22.3",
    "host": "synthetic-host-1",
}
PERMISSION_POLICY_TEXT = (
    b"fixed-evidence sessions: no tools, no repository reads, no search, no MCP, no web,\n"
    b"no memories, no inherited chats; read-only; one response per session.\n"
)
PERMISSION_POLICY = {
    "name": "fixed-evidence-no-tools",
    "sha256": sha256_hex(PERMISSION_POLICY_TEXT),
}
TOKENIZER = {"identity": "synthetic-o200k-2026-09"}
PRICE_CARD = {
    "identity": "codex-work-2026-09-05",
    "date": "2026-09-05",
    "usd_per_million": {"uncached_input": "4", "cached_input": "0.40", "output": "20"},
}
PROTOCOL = {"name": "evidence_reconciliation", "version": "1.0"}

RESERVED_INPUT_TOKENS = 90_000
RESERVED_OUTPUT_TOKENS = 8_000

# ---- fixed synthetic clock -------------------------------------------------------------------

CAMPAIGN_START = datetime(2026, 10, 1, 9, 0, 0, tzinfo=UTC)
MONOTONIC_AT_START = 3600.0  # host monotonic seconds at CAMPAIGN_START
FIRST_START_OFFSET_S = 5.0
RESERVE_LEAD_S = 0.5  # reservation before request start
VALIDATION_AFTER_S = 1.0  # validation receipt after the response receipt
REJECTED_AT = ("2026-10-01T07:30:00Z", "2026-10-01T07:40:00Z")
CUSTODY = (
    ("curator-1", "curator", "2026-10-01T07:50:00Z"),
    ("checker-1", "checker", "2026-10-01T08:10:00Z"),
)
FROZEN_AT = "2026-10-01T08:30:00Z"
ADJUDICATION_DELAY_S = 1800  # after the last receipt
ADJUDICATION_STEP_S = 60  # between rated answers
REVEAL_DELAY_S = 600  # after the adjudication manifest freezes

# ---- design ----------------------------------------------------------------------------------

# The keys of `eval_tasks_per_stratum` (rules/000_design.rules).
STRATA = ("behavior_explanation", "change_impact", "correctness_boundary", "explicit_uncertainty")
EVAL_TASKS = tuple(
    (f"T{n}", f"synthetic/eval-{'abcd'[(n - 1) // 2]}", STRATA[(n - 1) % 4]) for n in range(1, 9)
)
DEV_TASKS = tuple(
    (f"T{n}", f"synthetic/dev-{'ab'[(n - 9) // 2]}", STRATA[(n - 9) % 4]) for n in range(9, 13)
)
EVAL_REPETITIONS = 3
DEV_ROUNDS = 2
ANSWERABLE = 5  # O1..O5; O6 is unanswerable
CRITICAL = frozenset({1, 2})
DEFAULT_B_R = ANSWERABLE
DEFAULT_A_R = 3
DISAGREEMENT_OBLIGATION = 3
RATERS = ("rater-1", "rater-2")
THIRD_RATER = "rater-3"

COMMON_INSTRUCTION = (
    "You are conducting a read-only code investigation. Explain the requested behavior and "
    "propose a bounded change and verification plan from the supplied evidence. Distinguish "
    "source facts from inference and unknowns. Do not invent source content, claim complete "
    "repository coverage or treat references as proof of runtime execution. Use authentic "
    "evidence IDs and supported ranges. If evidence is insufficient, name the missing "
    "information and a specific verification step. Do not assume extra requirements beyond "
    "the task and justified source invariants. You may use an equivalent correct name or "
    "implementation path when grounded in source. Return the specified final-answer JSON. "
    "You cannot use tools or additional source material.\n"
)
ROLE_INSTRUCTIONS = {
    "D": (
        "Draft D\n\nInputs: TASK and EVIDENCE_PACKET.\n\nProduce one initial answer using the "
        "common instruction. Do not create a reconciliation record. Set reconciliation to "
        "null. This draft is not a graded treatment result and will be supplied unchanged to "
        "both review arms.\n"
    ),
    "A": (
        "Ordinary review A\n\nInputs: TASK, EVIDENCE_PACKET and COMMON_DRAFT.\n\nReview the "
        "draft against the task and source evidence. Check for omitted required behavior, "
        "unsupported claims, unjustified scope exclusions, missing verification and "
        "insufficient evidence. Correct what the evidence supports; retain precise "
        "uncertainty where it does not. Produce the revised final answer once, within the "
        "same response allowance. Set reconciliation to null.\n"
    ),
    "B": (
        "Reconciliation review B\n\nInputs: the identical TASK, EVIDENCE_PACKET and "
        "COMMON_DRAFT.\n\nReview the draft against the task and source evidence. Derive the "
        "obligations justified by the visible task and source. For each obligation, link its "
        "evidence IDs to final actions, verification steps or an explicit unresolved question "
        "or justified exclusion. Give every supplied evidence ID exactly one disposition: used "
        "in specified final statements/actions, excluded with a concrete reason, or unresolved "
        "with a concrete question. Reconcile these links against the revised final answer so "
        "no evidence or required behavior silently disappears. A complete record is not proof "
        "of truth or task completeness: verify the substance against source and preserve "
        "unknowns. Produce the revised final answer and reconciliation record once, within the "
        "same response allowance.\n"
    ),
}
# The one revision of B's instruction text round 1 may lead to (seed 000 §5), used by the
# development-only control: one added sentence, no task name, source ID or oracle fact.
B_REVISION_SENTENCE = (
    "Before giving the final answer, re-read each exclusion reason against the evidence "
    "lines it cites.\n"
)
B_PROMPT_VERSIONS = ("v1.0", "v1.1")
B_V1_0_PART = "roles/B.v1.0"
B_DIFF_PART = "diffs/B.v1.1"
# The inputs whose sha256 each development round records beside its B instruction: what
# a revision must leave unchanged (rules/000_development.rules `dev_unchanged_inputs`).
DEV_UNCHANGED_INPUTS = (
    "prompts/common.txt",
    "prompts/roles/D.txt",
    "prompts/roles/A.txt",
    "prompts/schemas/D.txt",
    "prompts/schemas/A.txt",
    "prompts/schemas/B.txt",
    "schemas/response_contract.schema.json",
    "rules.lock",
)
ROLE_SCHEMAS = {
    "D": "Response schema: final-answer schema {schema}; reconciliation: null.\n",
    "A": "Response schema: final-answer schema {schema}; reconciliation: null.\n",
    "B": "Response schema: final-answer schema {schema} with the reconciliation record.\n",
}


@dataclass
class Campaign:
    """Every document of a campaign bundle as plain data (paths as in docs/campaign-format.md).

    `packets` is keyed by packet ID (`P1`), `answers` by session ID, `prompts` by role,
    `truth` by task ID; `tasks` is the whole tasks.yaml document. `sources` holds each cited
    file at its corpus commit, by its sha256 (written as `sources/SHA256`).
    """

    manifest: dict[str, Any]
    tasks: dict[str, Any]
    sessions: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    receipts: list[dict[str, Any]]
    packets: dict[str, dict[str, Any]]
    answers: dict[str, dict[str, Any]]
    prompts: dict[str, str]
    truth: dict[str, dict[str, Any]]
    adjudications: list[dict[str, Any]]
    adjudication_manifest: dict[str, Any]
    sources: dict[str, bytes]
    prompt_parts: dict[str, str]
    # seal.json: each run record file and its sha256, as `rulecheck seal` writes it
    seal: list[dict[str, Any]] = field(default_factory=list)


def prompt_parts(schema_sha: str, *, b_revision: bool = False) -> dict[str, str]:
    """The parts each role's prompt is rendered from, by path under prompts/ (no suffix).

    With `b_revision`, B's instruction is v1.1 (v1.0 plus `B_REVISION_SENTENCE`), v1.0 is
    kept as `roles/B.v1.0` for round 1, and `diffs/B.v1.1` is the recorded unified diff
    (the `text_diff` builtin's)."""
    parts = {"common": COMMON_INSTRUCTION}
    for role in "DAB":
        parts[f"roles/{role}"] = ROLE_INSTRUCTIONS[role]
        parts[f"schemas/{role}"] = ROLE_SCHEMAS[role].format(schema=schema_sha)
    if b_revision:
        base = ROLE_INSTRUCTIONS["B"]
        parts["roles/B"] = base + "\n" + B_REVISION_SENTENCE
        parts[B_V1_0_PART] = base
        parts[B_DIFF_PART] = prompt_diff(base, parts["roles/B"])
    return parts


def prompt_diff(old: str, new: str) -> str:
    """The recorded diff of B v1.1 against v1.0, as the rules recompute it (`text_diff`)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"prompts/{B_V1_0_PART}.txt",
        tofile="prompts/roles/B.txt",
    )
    return "".join(lines)


def round_prompt(
    parts: dict[str, str], prompts: dict[str, str], triplet: Mapping[str, Any], role: str
) -> str:
    """The prompt a session ran with: round 1's B ran v1.0 when B was revised."""
    revised = B_V1_0_PART in parts
    if revised and role == "B" and triplet["phase"] == "development" and triplet["round"] == 1:
        return "\n".join((parts["common"], parts[B_V1_0_PART], parts["schemas/B"]))
    return prompts[role]


def development_rounds(parts: dict[str, str]) -> list[dict[str, Any]]:
    """The manifest's round records (their `inputs` are filled by `rehash_campaign`)."""
    revised = B_V1_0_PART in parts
    return [
        {
            "round": round_,
            "b_prompt_version": B_PROMPT_VERSIONS[1 if revised and round_ > 1 else 0],
            "b_instruction": f"prompts/{B_V1_0_PART}.txt"
            if revised and round_ == 1
            else "prompts/roles/B.txt",
            "inputs": [],
        }
        for round_ in range(1, DEV_ROUNDS + 1)
    ]


def record_round_inputs(campaign: Campaign) -> None:
    """Fill, in place, each development round's `inputs`: the artifact, path and sha256 of
    every input a revision must leave unchanged, and of the round's B instruction."""
    development = campaign.manifest.get("development")
    if not isinstance(development, dict):
        return
    measured = {path: (artifact, data) for artifact, path, data in measured_inputs(campaign)}
    for record in development.get("rounds", []):
        paths = (*DEV_UNCHANGED_INPUTS, record["b_instruction"])
        record["inputs"] = [
            {"artifact": measured[path][0], "path": path, "sha256": sha256_hex(measured[path][1])}
            for path in paths
            if path in measured
        ]


def render_prompt(parts: dict[str, str], role: str) -> str:
    """A role's prompt: the common instruction, its instruction and its schema block."""
    return "\n".join((parts["common"], parts[f"roles/{role}"], parts[f"schemas/{role}"]))


# What the task block shows an agent of its task (never its phase or its truth).
TASK_BLOCK_FIELDS = ("task_id", "repository", "stratum", "packet_id")


def input_block(label: str, body: bytes) -> bytes:
    """One labelled block of a session's input: a blank line, `=== LABEL ===`, the body."""
    return b"\n\n=== " + label.encode("utf-8") + b" ===\n" + body


def render_input(prompt: str, task: dict[str, Any], packet: bytes, draft: bytes | None) -> bytes:
    """A session's input: its role's prompt, then TASK (the canonical JSON of the task's
    shown fields and a newline), EVIDENCE_PACKET (the packet file's bytes) and, for A and
    B, COMMON_DRAFT (the D answer file's bytes), as docs/campaign-format.md says."""
    shown = {key: task[key] for key in TASK_BLOCK_FIELDS}
    task_text = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    blocks = input_block("TASK", task_text.encode("utf-8") + b"\n")
    blocks += input_block("EVIDENCE_PACKET", packet)
    if draft is not None:
        blocks += input_block("COMMON_DRAFT", draft)
    return prompt.encode("utf-8") + blocks


# ---- serialization (the exact bytes write_campaign puts on disk) -----------------------------


def json_bytes(value: Any) -> bytes:
    """A JSON file: indent 2, UTF-8, final newline."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def jsonl_line(value: Any) -> bytes:
    """One JSON Lines record, compact, without its newline."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def jsonl_bytes(values: Sequence[Any]) -> bytes:
    """A JSON Lines file: one compact object per line."""
    return b"".join(jsonl_line(value) + b"\n" for value in values)


def yaml_bytes(value: Any) -> bytes:
    """A YAML file (safe_dump, keys in insertion order), UTF-8."""
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True).encode("utf-8")


@cache
def _shipped_ruleset() -> Any:
    """The shipped rules, loaded as `rules` relative to the checkout (stable lock paths)."""
    from engine.ruleset import load_ruleset

    with contextlib.chdir(REPO):
        return load_ruleset([Path("rules")])


def shipped_ruleset_hash() -> str:
    """The hash of the shipped ruleset (what `identities.ruleset_hash` must equal)."""
    return str(_shipped_ruleset().hashed.ruleset_hash)


def rules_lock_bytes() -> bytes:
    """The rules lock of the shipped rules, as `rulecheck freeze` writes it."""
    from engine.freeze.lock import dump_lock

    return dump_lock(_shipped_ruleset().hashed).encode("utf-8")


def _number(packet_or_task_id: str) -> int:
    return int(packet_or_task_id[1:])


def measured_inputs(campaign: Campaign) -> list[tuple[str, str, bytes]]:
    """(artifact, path, bytes) of every measured input the campaign writes."""
    items: list[tuple[str, str, bytes]] = []
    for part, text in campaign.prompt_parts.items():
        items.append(("prompt", f"prompts/{part}.txt", text.encode("utf-8")))
    for role in sorted(campaign.prompts, key="DAB".index):
        items.append(("prompt", f"prompts/{role}.txt", campaign.prompts[role].encode("utf-8")))
    for packet_id in sorted(campaign.packets, key=_number):
        items.append(
            ("packet", f"packets/{packet_id}.json", json_bytes(campaign.packets[packet_id]))
        )
    for digest in sorted(campaign.sources):
        items.append(("source", f"sources/{digest}", campaign.sources[digest]))
    items.append(("task_registry", "tasks.yaml", yaml_bytes(campaign.tasks)))
    for task_id in sorted(campaign.truth, key=_number):
        items.append(("truth", f"truth/{task_id}.yaml", yaml_bytes(campaign.truth[task_id])))
    items.append(("rules_lock", "rules.lock", rules_lock_bytes()))
    items.append(("response_schema", RESPONSE_SCHEMA_PATH, schema_text("response_contract")))
    items.append(("permission_policy", "permission_policy.txt", PERMISSION_POLICY_TEXT))
    return items


def rehash_campaign(campaign: Campaign) -> Campaign:
    """Recompute, in place, every hash the manifests hold over other files: `inputs`,
    `identities.task_bytes_sha256`, `ruleset_hash`, `response_schema_sha256` and the
    adjudication manifest's records. Returns the campaign."""
    manifest = campaign.manifest
    record_round_inputs(campaign)
    inputs = measured_inputs(campaign)
    manifest["inputs"] = [
        {"artifact": artifact, "path": path, "sha256": sha256_hex(data)}
        for artifact, path, data in inputs
    ]
    identities = manifest.setdefault("identities", {})
    identities["task_bytes_sha256"] = sha256_hex(yaml_bytes(campaign.tasks))
    identities["response_schema_sha256"] = schema_digest("response_contract")
    identities["ruleset_hash"] = shipped_ruleset_hash()
    manifest["evaluator"] = evaluator_identity()
    campaign.adjudication_manifest["records"] = [
        {"record_id": record["record_id"], "sha256": sha256_hex(jsonl_line(record))}
        for record in campaign.adjudications
    ]
    return reseal_campaign(campaign)


def evaluator_identity() -> dict[str, str]:
    """What `rulecheck inventory` says of the evaluator: its version and grammar sha256."""
    from engine.evaluate.runtime import grammar_sha256, rulecheck_version

    return {"rulecheck": rulecheck_version(), "grammar_sha256": grammar_sha256()}


def rerate_truth(campaign: Campaign) -> Campaign:
    """Recompute, in place, every rating's `truth_sha256` from the truth files the
    campaign holds now: as if the raters had been given them (a mutation of the truth made
    before the ratings). Returns the campaign."""
    by_task = {t["task_id"]: sha256_hex(yaml_bytes(t)) for t in campaign.truth.values()}
    blind = {
        blind_answer_id(campaign.manifest["trial_seed"], s["session_id"]): s
        for s in campaign.sessions
    }
    triplets = {t["triplet_id"]: t for t in campaign.manifest["triplets"]}
    for rating in campaign.adjudications:
        task_id = triplets[blind[rating["answer_id"]]["triplet_id"]]["task_id"]
        rating["truth_sha256"] = by_task.get(task_id, rating["truth_sha256"])
    return campaign


RUN_RECORD_FILES = ("sessions.jsonl", "requests.jsonl", "receipts.jsonl")
MANIFEST_FILES = ("manifest.yaml",)


def reseal_campaign(campaign: Campaign) -> Campaign:
    """Recompute, in place, the seal of the run's records (`table seal_files`): the
    sessions, requests and receipts files, the manifest they ran under and every answer
    file a session names."""
    files = render(campaign)
    answers = sorted({s["answer"] for s in campaign.sessions if s["answer"] is not None})
    campaign.seal = [
        {"path": path, "sha256": sha256_hex(files[path]) if path in files else None}
        for path in sorted({*RUN_RECORD_FILES, *MANIFEST_FILES, *answers})
    ]
    return campaign


def rerender_requests(campaign: Campaign) -> Campaign:
    """Recompute, in place, every request's `input_sha256` and `input_bytes` from the
    prompts, tasks, packets and D answers the campaign holds now: as if the run had sent
    them (a mutation of an input made before the run). Returns the campaign."""
    sessions = {s["session_id"]: s for s in campaign.sessions}
    triplets = {t["triplet_id"]: t for t in campaign.manifest["triplets"]}
    tasks = {t["task_id"]: t for t in campaign.tasks["tasks"]}
    drafts = {
        s["triplet_id"]: json_bytes(campaign.answers[s["session_id"]])
        for s in campaign.sessions
        if s["role"] == "D" and s["session_id"] in campaign.answers
    }
    for request in campaign.requests:
        session = sessions[request["session_id"]]
        task = tasks[triplets[session["triplet_id"]]["task_id"]]
        draft = None if session["role"] == "D" else drafts[session["triplet_id"]]
        packet = json_bytes(campaign.packets[task["packet_id"]])
        triplet = triplets[session["triplet_id"]]
        prompt = round_prompt(campaign.prompt_parts, campaign.prompts, triplet, session["role"])
        rendered = render_input(prompt, task, packet, draft)
        request["input_sha256"] = sha256_hex(rendered)
        request["input_bytes"] = len(rendered)
    return campaign


def task_order(seed: str, task_ids: list[str]) -> list[str]:
    """The evaluation task order the rules re-derive (`seeded_order(seed, "task-order", ...)`)."""
    return seeded_order(seed, "task-order", task_ids)


def blind_answer_id(seed: str, session_id: str) -> str:
    """The anonymous ID the rules derive for a session's final answer (`blind_id`)."""
    return "ANS-" + seeded_key(seed, "blind-id", session_id)[:16]


def blind_bytes(answer_id: str, final: Any) -> bytes:
    """The bytes of one blinded answer, whose sha256 the rules compute (`json_sha256`)."""
    return canonical_json({"answer_id": answer_id, "final": final}) + b"\n"


def render(campaign: Campaign) -> dict[str, bytes]:
    """Every file of the bundle: relative path -> exact bytes (no hash is recomputed)."""
    files = {
        "rulecheck.yaml": b"protocol: campaign\n",
        "manifest.yaml": yaml_bytes(campaign.manifest),
        "sessions.jsonl": jsonl_bytes(campaign.sessions),
        "requests.jsonl": jsonl_bytes(campaign.requests),
        "receipts.jsonl": jsonl_bytes(campaign.receipts),
    }
    for _artifact, path, data in measured_inputs(campaign):
        files[path] = data
    for session_id, answer in campaign.answers.items():
        files[f"answers/{session_id}.json"] = json_bytes(answer)
    files["adjudications.jsonl"] = jsonl_bytes(campaign.adjudications)
    files["adjudication_manifest.yaml"] = yaml_bytes(campaign.adjudication_manifest)
    if campaign.seal:
        files["seal.json"] = canonical_json(campaign.seal) + b"\n"
    return files


def record_lock(campaign: Campaign, lock: bytes) -> None:
    """Record `lock` as the campaign's rules lock, as a freezer would: in the manifest's
    inputs and in both development rounds, which ran under it; the run is then sealed
    over that manifest."""
    digest = hashlib.sha256(lock).hexdigest()
    entry = next(i for i in campaign.manifest["inputs"] if i["artifact"] == "rules_lock")
    entry["sha256"] = digest
    for record in campaign.manifest["development"]["rounds"]:
        for item in record["inputs"]:
            if item["path"] == "rules.lock":
                item["sha256"] = digest
    reseal_campaign(campaign)


def write_campaign(campaign: Campaign, root: Path, *, rehash: bool = True) -> Path:
    """Write every file of the bundle under `root` (created if needed); returns `root`.

    With `rehash` (the default) the manifest's `inputs`, `identities.task_bytes_sha256`,
    `ruleset_hash`, `response_schema_sha256` and the adjudication manifest's `records` are
    first recomputed from the data being written (the campaign is updated in place). With
    `rehash=False` the manifests are written exactly as the campaign holds them, so a
    mutation made after `make_campaign()` shows up as a mismatch. `rules.lock` is always the
    freeze of the shipped rules. Existing files under `root` are overwritten, never deleted.
    """
    if rehash:
        rehash_campaign(campaign)
    root = Path(root)
    for relative, data in render(campaign).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


# ---- options ---------------------------------------------------------------------------------

_OPTION_NAMES = frozenset(
    {
        "campaign_id",
        "b_R",
        "a_R",
        "b_U",
        "a_U",
        "b_cost_factor",
        "b_time_factor",
        "disagreement",
        "replaced_triplets",
        "stage",
        "b_revision",
    }
)


@dataclass
class _Options:
    campaign_id: str
    b_R: Mapping[str, Sequence[int]]
    a_R: Mapping[str, Sequence[int]]
    b_U: Mapping[str, Sequence[bool]]
    a_U: Mapping[str, Sequence[bool]]
    b_cost_factor: float | Mapping[str, float] | None
    b_time_factor: float | Mapping[str, float] | None
    disagreement: bool
    replaced_triplets: tuple[str, ...]
    stage: str
    b_revision: bool

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> _Options:
        unknown = sorted(set(options) - _OPTION_NAMES)
        if unknown:
            raise TypeError(f"unknown campaign option(s): {', '.join(unknown)}")
        parsed = cls(
            campaign_id=str(options.get("campaign_id", "synthetic-741-v1.0")),
            b_R=options.get("b_R", {}),
            a_R=options.get("a_R", {}),
            b_U=options.get("b_U", {}),
            a_U=options.get("a_U", {}),
            b_cost_factor=options.get("b_cost_factor"),
            b_time_factor=options.get("b_time_factor"),
            disagreement=bool(options.get("disagreement", True)),
            replaced_triplets=tuple(options.get("replaced_triplets", ())),
            stage=str(options.get("stage", "evaluation")),
            b_revision=bool(options.get("b_revision", False)),
        )
        if parsed.stage not in ("evaluation", "development"):
            raise ValueError(f"stage: {parsed.stage!r} is neither evaluation nor development")
        known = {task_id for task_id, _, _ in EVAL_TASKS + DEV_TASKS}
        for name in ("b_R", "a_R", "b_U", "a_U"):
            for task_id, values in getattr(parsed, name).items():
                if task_id not in known:
                    raise ValueError(f"{name}: unknown task {task_id!r}")
                expected = DEV_ROUNDS if _number(task_id) > 8 else EVAL_REPETITIONS
                if len(values) != expected:
                    raise ValueError(f"{name}[{task_id}]: {expected} values expected")
                if name.endswith("_R") and any(not 0 <= v <= ANSWERABLE for v in values):
                    raise ValueError(f"{name}[{task_id}]: counts must be 0..{ANSWERABLE}")
        return parsed

    def correct(self, role: str, task_id: str, repetition: int) -> int:
        table, default = (self.b_R, DEFAULT_B_R) if role == "B" else (self.a_R, DEFAULT_A_R)
        return int(table[task_id][repetition - 1]) if task_id in table else default

    def uncertainty(self, role: str, task_id: str, repetition: int) -> bool:
        table, default = (self.b_U, True) if role == "B" else (self.a_U, False)
        return bool(table[task_id][repetition - 1]) if task_id in table else default

    def factors(self, triplet: Mapping[str, Any], drawn: float) -> tuple[float, float]:
        """(token factor, time factor) of B's review over A's in one triplet."""

        def pick(option: float | Mapping[str, float] | None, default: float) -> float:
            if option is None:
                return default
            if isinstance(option, Mapping):
                by_task = option.get(triplet["task_id"], default)
                return float(option.get(triplet["triplet_id"], by_task))
            return float(option)

        cost = pick(self.b_cost_factor, drawn)
        return cost, pick(self.b_time_factor, cost)


# ---- builders --------------------------------------------------------------------------------


def utc_at(monotonic_s: float) -> str:
    """The UTC time the campaign's host clock shows at `monotonic_s`."""
    moment = CAMPAIGN_START + timedelta(seconds=monotonic_s - MONOTONIC_AT_START)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _commit(label: str) -> str:
    return hashlib.sha1(label.encode("utf-8")).hexdigest()


def reference_cost(input_tokens: int, cached: int, output: int) -> Decimal:
    """Reference USD of one metered response (input includes cached, output reasoning)."""
    rates = {key: Decimal(value) for key, value in PRICE_CARD["usd_per_million"].items()}
    total = (
        rates["uncached_input"] * (input_tokens - cached)
        + rates["cached_input"] * cached
        + rates["output"] * output
    )
    return total / Decimal(1_000_000)


def _decimal_text(value: Decimal) -> str:
    """The exact decimal string of `value`, without trailing zeros (`0.52`)."""
    return format(value.normalize(), "f")


def _truth(task_id: str, stratum: str) -> dict[str, Any]:
    obligations = []
    for index in range(1, ANSWERABLE + 2):
        answerable = index <= ANSWERABLE
        subject = f"behavior {index} of the {stratum.replace('_', ' ')} task {task_id}"
        obligations.append(
            {
                "obligation_id": f"{task_id}-O{index}",
                "text": (
                    f"The answer explains {subject} from the supplied evidence and plans its "
                    "change and verification."
                    if answerable
                    else f"The answer leaves {subject} unresolved: the packet lacks the "
                    "configuration that decides it, and it names that gap and a bounded check."
                ),
                "critical": index in CRITICAL,
                "answerable": answerable,
                "alternatives": [f"An equivalent source-backed formulation of {subject}."],
                "required_verification": (
                    f"A test that exercises {subject} and asserts the documented outcome."
                    if answerable
                    else f"Read the missing configuration of {task_id} before asserting it."
                ),
                "justified_exclusions": [],
            }
        )
    return {"task_id": task_id, "version": "1", "obligations": obligations}


def _triplets(order: Sequence[str]) -> list[dict[str, Any]]:
    triplets = []
    for round_ in range(1, DEV_ROUNDS + 1):
        for task_id, _, _ in DEV_TASKS:
            first = "A" if (_number(task_id) + round_) % 2 == 0 else "B"
            triplets.append(
                {
                    "triplet_id": f"D{round_}-{task_id}",
                    "phase": "development",
                    "round": round_,
                    "task_id": task_id,
                    "repetition": round_,
                    "first_arm": first,
                }
            )
    for task_id in order:
        pattern = "ABA" if _number(task_id) % 2 == 1 else "BAB"
        for repetition in range(1, EVAL_REPETITIONS + 1):
            triplets.append(
                {
                    "triplet_id": f"E-{task_id}-{repetition}",
                    "phase": "evaluation",
                    "round": None,
                    "task_id": task_id,
                    "repetition": repetition,
                    "first_arm": pattern[repetition - 1],
                }
            )
    return triplets


def _with_replacements(
    triplets: list[dict[str, Any]], replaced: Sequence[str]
) -> list[dict[str, Any]]:
    """Each replaced triplet followed by its replacement `<ID>-R` (same task and design)."""
    known = {triplet["triplet_id"] for triplet in triplets}
    unknown = sorted(set(replaced) - known)
    if unknown:
        raise ValueError(f"replaced_triplets: unknown triplet(s) {', '.join(unknown)}")
    out = []
    for triplet in triplets:
        out.append(triplet)
        if triplet["triplet_id"] in replaced:
            out.append({**triplet, "triplet_id": f"{triplet['triplet_id']}-R"})
    return out


def _meter(rng: random.Random, role: str) -> dict[str, int]:
    """Tokens and duration (whole seconds) of a D session or an A review."""
    if role == "D":
        inp, cached = rng.randint(18_000, 20_000), rng.randint(3_000, 5_000)
        out = rng.randint(2_600, 3_600)
        reasoning, seconds = rng.randint(600, 1_200), rng.randint(60, 100)
    else:
        inp, cached = rng.randint(19_000, 22_000), rng.randint(3_000, 5_000)
        out, reasoning = rng.randint(2_200, 3_000), rng.randint(500, 1_000)
        seconds = rng.randint(50, 90)
    return {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "output_tokens": out,
        "reasoning_tokens": reasoning,
        "seconds": seconds,
    }


def _scaled(meter: Mapping[str, int], tokens: float, time: float) -> dict[str, int]:
    scaled = {key: round(value * tokens) for key, value in meter.items() if key != "seconds"}
    scaled["seconds"] = round(meter["seconds"] * time)
    return scaled


def _cut_from_source(packet: dict[str, Any], sources: dict[str, bytes]) -> None:
    """Make the packet's excerpts authentic: each file is the excerpts of it in line order
    (they cover it), stored by its sha256, which every excerpt of it records."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for item in packet["items"]:
        by_path.setdefault(item["path"], []).append(item)
    for items in by_path.values():
        data = "".join(i["text"] for i in sorted(items, key=lambda i: i["start_line"]))
        digest = sha256_hex(data.encode("utf-8"))
        sources[digest] = data.encode("utf-8")
        for item in items:
            item["file_sha256"] = digest


def make_campaign(seed: str = DEFAULT_SEED, **options: Any) -> Campaign:
    """The default ADVANCE campaign for `seed`, or a variant (see the module docstring)."""
    opts = _Options.parse(options)
    rng = random.Random(seed)
    schema_sha = schema_digest("response_contract")

    all_tasks = EVAL_TASKS + DEV_TASKS
    repositories = sorted({repo for _, repo, _ in all_tasks})
    corpus_commits = {repo: _commit(f"{seed}\x1fcorpus\x1f{repo}") for repo in repositories}
    packets: dict[str, dict[str, Any]] = {}
    sources: dict[str, bytes] = {}
    task_entries = []
    truth: dict[str, dict[str, Any]] = {}
    for task_id, repo, stratum in sorted(all_tasks, key=lambda t: _number(t[0])):
        n = _number(task_id)
        packet = _GENERATE.make_packet(n)
        packet["repository"] = repo
        packet["commit"] = corpus_commits[repo]
        _cut_from_source(packet, sources)
        packets[packet["packet_id"]] = packet
        task_entries.append(
            {
                "task_id": task_id,
                "phase": "evaluation" if n <= 8 else "development",
                "repository": repo,
                "stratum": stratum,
                "packet_id": packet["packet_id"],
            }
        )
        truth[task_id] = _truth(task_id, stratum)
    tasks = {
        "tasks": task_entries,
        "repositories": [
            {"repository": repo, "phase": phase}
            for phase, group in (("evaluation", EVAL_TASKS), ("development", DEV_TASKS))
            for repo in dict.fromkeys(repo for _, repo, _ in group)
        ],
        "rejected_candidates": [
            {
                "candidate": "synthetic/eval-x#17",
                "reason": "The repository is a close variant of an exposed qualification task.",
                "recorded_at": REJECTED_AT[0],
            },
            {
                "candidate": "synthetic/eval-b#42",
                "reason": "The requested behavior is not TypeScript/Node source behavior.",
                "recorded_at": REJECTED_AT[1],
            },
        ],
        "truth_custody": [
            {"reader": reader, "role": role, "event": "read", "at": at}
            for reader, role, at in CUSTODY
        ],
    }
    parts = prompt_parts(schema_sha, b_revision=opts.b_revision)
    prompts = {role: render_prompt(parts, role) for role in "DAB"}

    order = task_order(seed, [task_id for task_id, _, _ in EVAL_TASKS])
    triplets = _with_replacements(_triplets(order), opts.replaced_triplets)
    if opts.stage == "development":
        triplets = [t for t in triplets if t["phase"] == "development"]
    revisions: list[dict[str, Any]] = []
    tasks_by_id = {entry["task_id"]: entry for entry in task_entries}

    sessions: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    receipts: list[dict[str, Any]] = []
    answers: dict[str, dict[str, Any]] = {}
    reviews: list[tuple[dict[str, Any], str, str]] = []  # (triplet, session ID, role)
    clock = MONOTONIC_AT_START + FIRST_START_OFFSET_S
    for triplet in triplets:
        if opts.b_revision and not revisions and triplet.get("round") == 2:
            # recorded after round 1 ended, before round 2 began (the B prompt's freeze)
            revisions.append(
                {
                    "version": B_PROMPT_VERSIONS[1],
                    "revises": B_PROMPT_VERSIONS[0],
                    "base_instruction": f"prompts/{B_V1_0_PART}.txt",
                    "instruction": "prompts/roles/B.txt",
                    "diff": f"prompts/{B_DIFF_PART}.txt",
                    "recorded_at": utc_at(clock - 1),
                }
            )
        task_id = triplet["task_id"]
        n = _number(task_id)
        packet_bytes = json_bytes(packets[f"P{n}"])
        d_meter, a_meter = _meter(rng, "D"), _meter(rng, "A")
        token_factor, time_factor = opts.factors(triplet, rng.uniform(1.05, 1.15))
        meters = {"D": d_meter, "A": a_meter, "B": _scaled(a_meter, token_factor, time_factor)}
        second = "B" if triplet["first_arm"] == "A" else "A"
        draft_bytes: bytes | None = None
        for role in ("D", triplet["first_arm"], second):
            number = len(sessions) + 1
            session_id, request_id = f"S{number:04d}", f"Q{number:04d}"
            answer = _GENERATE.make_answer(n, rng)
            if role != "B":
                answer["reconciliation"] = None
            validation_s = round(rng.uniform(0.2, 0.5), 3)
            gap = rng.randint(2, 6)
            answers[session_id] = answer
            answer_bytes = json_bytes(answer)
            sessions.append(
                {
                    "session_id": session_id,
                    "triplet_id": triplet["triplet_id"],
                    "role": role,
                    "position": number,
                    "answer": f"answers/{session_id}.json",
                    "validity": "valid",
                    "invalid_reason": None,
                    "outcome": "answered",
                    "permission_sha256": sha256_hex(PERMISSION_POLICY_TEXT),
                }
            )
            if triplet["triplet_id"] in opts.replaced_triplets:
                sessions[-1].update(
                    validity="infrastructure_invalid", invalid_reason="platform_outage"
                )
            request_input = render_input(
                round_prompt(parts, prompts, triplet, role),
                tasks_by_id[task_id],
                packet_bytes,
                draft_bytes,
            )
            meter = meters[role]
            start = clock
            requests.append(
                {
                    "request_id": request_id,
                    "session_id": session_id,
                    "start_utc": utc_at(start),
                    "start_monotonic_s": start,
                    "reserved_input_tokens": RESERVED_INPUT_TOKENS,
                    "reserved_output_tokens": RESERVED_OUTPUT_TOKENS,
                    "reserved_usd": _decimal_text(
                        reference_cost(RESERVED_INPUT_TOKENS, 0, RESERVED_OUTPUT_TOKENS)
                    ),
                    "reserved_at_monotonic_s": start - RESERVE_LEAD_S,
                    "input_sha256": sha256_hex(request_input),
                    "input_bytes": len(request_input),
                    "ordinary_calls": 0,
                    "mcp_calls": 0,
                }
            )
            end = start + meter["seconds"]
            validated = end + VALIDATION_AFTER_S
            common = {"session_id": session_id, "request_id": request_id}
            receipts.append(
                {
                    "receipt_id": f"R{len(receipts) + 1:04d}",
                    **common,
                    "event": "response",
                    "utc": utc_at(end),
                    "monotonic_s": end,
                    "output_sha256": sha256_hex(answer_bytes),
                    "output_bytes": len(answer_bytes),
                    "input_tokens": meter["input_tokens"],
                    "cached_input_tokens": meter["cached_input_tokens"],
                    "input_includes_cached": True,
                    "output_tokens": meter["output_tokens"],
                    "reasoning_tokens": meter["reasoning_tokens"],
                    "output_includes_reasoning": True,
                    "model_reported": MODEL["resolved_identifier"],
                    "cli_version": RUNTIME["cli_version"],
                    "price_card": PRICE_CARD["identity"],
                    "seconds": None,
                }
            )
            receipts.append(
                {
                    "receipt_id": f"R{len(receipts) + 1:04d}",
                    **common,
                    "event": "validation",
                    "utc": utc_at(validated),
                    "monotonic_s": validated,
                    "output_sha256": None,
                    "output_bytes": None,
                    "input_tokens": None,
                    "cached_input_tokens": None,
                    "input_includes_cached": None,
                    "output_tokens": None,
                    "reasoning_tokens": None,
                    "output_includes_reasoning": None,
                    "model_reported": None,
                    "cli_version": None,
                    "price_card": None,
                    "seconds": validation_s,
                }
            )
            clock = validated + gap
            if role == "D":
                draft_bytes = answer_bytes
            else:
                reviews.append((triplet, session_id, role))

    # Blind ratings, frozen after the last receipt and before the reveal.
    adjudications: list[dict[str, Any]] = []
    rating_start = clock + ADJUDICATION_DELAY_S
    first_eval_b = next(
        (sid for t, sid, role in reviews if t["phase"] == "evaluation" and role == "B"), None
    )

    def record(**fields: Any) -> None:
        adjudications.append(
            {
                "record_id": f"J{len(adjudications) + 1:04d}",
                "answer_id": fields["answer_id"],
                "answer_sha256": fields["answer_sha256"],
                "truth_version": "1",
                "truth_sha256": fields["truth_sha256"],
                "obligation_id": fields["obligation_id"],
                "rater": fields["rater"],
                "role": fields["role"],
                "verdict": fields["verdict"],
                "critical_wrong_claims": fields.get("critical_wrong_claims"),
                "citations_support": fields.get("citations_support"),
                "frozen_at": fields["frozen_at"],
            }
        )

    flip = {
        "correct": "incorrect",
        "incorrect": "correct",
        "uncertainty_credit": "no_credit",
        "no_credit": "uncertainty_credit",
    }
    last_frozen = rating_start
    for index, (triplet, session_id, role) in enumerate(reviews):
        task_id, repetition = triplet["task_id"], triplet["repetition"]
        answer_id = blind_answer_id(seed, session_id)
        blind = {
            "answer_id": answer_id,
            "answer_sha256": sha256_hex(blind_bytes(answer_id, answers[session_id]["final"])),
            "truth_sha256": sha256_hex(yaml_bytes(truth[task_id])),
        }
        frozen_s = rating_start + ADJUDICATION_STEP_S * index
        frozen = utc_at(frozen_s)
        correct = opts.correct(role, task_id, repetition)
        credit = opts.uncertainty(role, task_id, repetition)
        for obligation in truth[task_id]["obligations"]:
            k = int(obligation["obligation_id"].rsplit("-O", 1)[1])
            if obligation["answerable"]:
                verdict = "correct" if k <= correct else "incorrect"
            else:
                verdict = "uncertainty_credit" if credit else "no_credit"
            disagree = (
                opts.disagreement and session_id == first_eval_b and k == DISAGREEMENT_OBLIGATION
            )
            for rater in RATERS:
                given = flip[verdict] if disagree and rater == RATERS[1] else verdict
                record(
                    **blind,
                    obligation_id=obligation["obligation_id"],
                    rater=rater,
                    role="primary",
                    verdict=given,
                    frozen_at=frozen,
                )
            if disagree:
                record(
                    **blind,
                    obligation_id=obligation["obligation_id"],
                    rater=THIRD_RATER,
                    role="third",
                    verdict=verdict,
                    frozen_at=utc_at(frozen_s + ADJUDICATION_STEP_S / 2),
                )
        for rater in RATERS:
            record(
                **blind,
                obligation_id=None,
                rater=rater,
                role="primary",
                verdict="rated",
                critical_wrong_claims=0,
                citations_support=True,
                frozen_at=frozen,
            )
        last_frozen = frozen_s + ADJUDICATION_STEP_S / 2
    adjudication_frozen_s = last_frozen + ADJUDICATION_STEP_S
    adjudication_manifest: dict[str, Any] = {
        "frozen_at": utc_at(adjudication_frozen_s),
        "records": [],
        "oracle_defects": [],
    }

    manifest: dict[str, Any] = {
        "manifest_version": 1,
        "campaign_id": opts.campaign_id,
        "synthetic": True,
        "stage": opts.stage,
        "protocol": dict(PROTOCOL),
        "model": copy.deepcopy(MODEL),
        "evaluator": evaluator_identity(),
        "runtime": dict(RUNTIME),
        "permission_policy": dict(PERMISSION_POLICY),
        "tokenizer": dict(TOKENIZER),
        "price_card": copy.deepcopy(PRICE_CARD),
        "trial_seed": seed,
        "task_order": order,
        "triplets": triplets,
        "development": {"rounds": development_rounds(parts), "revisions": revisions},
        "inputs": [],
        "identities": {
            "candidate_commit": _commit(f"{seed}\x1fcandidate"),
            "corpus_commits": corpus_commits,
            "task_bytes_sha256": None,
            "response_schema_sha256": None,
            "ruleset_hash": None,
        },
        "frozen_at": FROZEN_AT,
        "reveal_at": utc_at(adjudication_frozen_s + REVEAL_DELAY_S),
    }
    campaign = Campaign(
        manifest=manifest,
        tasks=tasks,
        sessions=sessions,
        requests=requests,
        receipts=receipts,
        packets=packets,
        answers=answers,
        prompts=prompts,
        truth=truth,
        adjudications=adjudications,
        adjudication_manifest=adjudication_manifest,
        sources=sources,
        prompt_parts=parts,
    )
    return rehash_campaign(campaign)


def totals(campaign: Campaign) -> dict[str, Any]:
    """Metered tokens, reference cost (physical billing: each session once) and wall time."""
    responses = [r for r in campaign.receipts if r["event"] == "response"]
    cost = sum(
        (
            reference_cost(r["input_tokens"], r["cached_input_tokens"], r["output_tokens"])
            for r in responses
        ),
        Decimal(0),
    )
    starts = [q["start_monotonic_s"] for q in campaign.requests]
    ends = [r["monotonic_s"] for r in campaign.receipts]
    return {
        "sessions": len(campaign.sessions),
        "input_tokens": sum(r["input_tokens"] for r in responses),
        "cached_input_tokens": sum(r["cached_input_tokens"] for r in responses),
        "output_tokens": sum(r["output_tokens"] for r in responses),
        "reasoning_tokens": sum(r["reasoning_tokens"] for r in responses),
        "reference_usd": _decimal_text(cost),
        "wall_seconds": max(ends) - min(starts),
    }


def main() -> int:
    """Write the default campaign to controls/campaign/ and the development-only control
    to controls/development/ (replacing what was there)."""
    for root, options in ((CONTROLS_CAMPAIGN, {}), (CONTROLS_DEVELOPMENT, DEVELOPMENT_OPTIONS)):
        if root.exists():
            shutil.rmtree(root)
        campaign = make_campaign(**options)
        write_campaign(campaign, root)
        print(f"wrote {root.relative_to(REPO)}")
        print(f"ruleset {campaign.manifest['identities']['ruleset_hash']}")
        print(json.dumps(totals(campaign)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
