"""Evaluate a campaign bundle: admission, then scorecards and the decision.

load bundle -> campaign graph -> every rule of graph `campaign` (links, budgets, gates,
tables, decisions). Which gate means "admitted" and which decision is the verdict are
named here only as entry points; what they require lives in `rules/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.campaign import Bundle, Parallel, load_bundle
from engine.evaluate.answer import AnswerChecker
from engine.evaluate.compile import Context
from engine.evaluate.program import Evaluation, Program
from engine.graph.build import build_graph

CAMPAIGN_GRAPH = "campaign"
ADMISSION_GATE = "execution_valid"
DECISION = "mechanism"
FILE_DOCUMENTS = frozenset(
    {
        "manifest",
        "tasks",
        "sessions",
        "requests",
        "receipts",
        "adjudications",
        "adjudication_manifest",
        "truth",
    }
)


@dataclass(frozen=True, slots=True)
class CampaignResult:
    """Everything `admit` and `check` report about one bundle."""

    bundle: Bundle
    evaluation: Evaluation
    ruleset_hash: str
    admission_gates: frozenset[str]

    @property
    def admitted(self) -> bool:
        """True when the admission gate passed."""
        return self.evaluation.outcomes.get(ADMISSION_GATE, False)

    @property
    def synthetic(self) -> bool:
        """True when the manifest declares a synthetic campaign."""
        manifest: dict[str, Any] = self.bundle.documents.get("manifest") or {}
        return bool(manifest.get("synthetic"))

    @property
    def verdict(self) -> str | None:
        """The verdict of the decision policy, if it was evaluated."""
        for decision in self.evaluation.decisions:
            if decision.name == DECISION:
                return decision.verdict
        return None


def evaluate_campaign(
    program: Program, root: Path, parallel: Parallel | None = None
) -> CampaignResult:
    """Load a bundle and evaluate every campaign rule on it."""
    bundle = load_bundle(root, AnswerChecker(program), parallel)
    graph = build_graph(program.graph(CAMPAIGN_GRAPH), bundle.documents)
    evaluation = program.evaluate(CAMPAIGN_GRAPH, Context(graph), FILE_DOCUMENTS)
    return CampaignResult(
        bundle, evaluation, program.ruleset.hashed.ruleset_hash, _admission_gates(program)
    )


def _admission_gates(program: Program) -> frozenset[str]:
    """The admission gate and every gate it reads, directly or through other gates."""
    checked = program.ruleset.checked
    gates = set(checked.symbols.gates)
    found: set[str] = set()
    pending = [ADMISSION_GATE] if ADMISSION_GATE in gates else []
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending += [ref for ref in checked.infos[name].references if ref in gates]
    return frozenset(found)
