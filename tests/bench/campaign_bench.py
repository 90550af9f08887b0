"""Benchmark `rulecheck admit` and `rulecheck check` on large generated campaigns.

The synthetic campaign (tests/campaign_builder.py, 96 sessions) is scaled by repeating its
evaluation triplets with fresh session, request, receipt and rating IDs and later clock
times, until the bundle holds the wanted number of sessions. Such a bundle breaks the
pre-registered design (24 pairs, 120 sessions at most), so admission refuses it: every rule
still runs over every record, which is what is measured.

    python tests/bench/campaign_bench.py --sessions 1000 10000
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from answers_bench import MIB, ChildRun, rulecheck_command, run_child  # noqa: E402
from campaign_builder import (  # noqa: E402
    Campaign,
    blind_answer_id,
    blind_bytes,
    make_campaign,
    write_campaign,
)


def _utc_shift(text: str, seconds: float) -> str:
    from datetime import UTC, datetime, timedelta

    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return (moment + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def scaled_campaign(sessions: int) -> Campaign:
    """The default campaign with its evaluation triplets repeated up to `sessions` sessions."""
    campaign = make_campaign()
    evaluation = [t for t in campaign.manifest["triplets"] if t["phase"] == "evaluation"]
    span = max(r["monotonic_s"] for r in campaign.receipts) - min(
        q["start_monotonic_s"] for q in campaign.requests
    )
    by_triplet: dict[str, list[dict[str, Any]]] = {}
    for session in campaign.sessions:
        by_triplet.setdefault(session["triplet_id"], []).append(session)
    originals = _originals(campaign)
    copies = 0
    position = max(s["position"] for s in campaign.sessions)
    while len(campaign.sessions) < sessions:
        copies += 1
        shift = span * copies
        for triplet in evaluation:
            if len(campaign.sessions) >= sessions:
                break
            new_triplet = {**triplet, "triplet_id": f"{triplet['triplet_id']}-x{copies}"}
            campaign.manifest["triplets"].append(new_triplet)
            for session in by_triplet[triplet["triplet_id"]]:
                position += 1
                old_id = session["session_id"]
                new_id = f"S{position:06d}"
                campaign.sessions.append(
                    {
                        **session,
                        "session_id": new_id,
                        "triplet_id": new_triplet["triplet_id"],
                        "position": position,
                        "answer": f"answers/{new_id}.json",
                    }
                )
                campaign.answers[new_id] = campaign.answers[old_id]
                _copy_records(campaign, originals, old_id, new_id, shift)
    campaign.manifest["reveal_at"] = _utc_shift(campaign.manifest["reveal_at"], span * copies)
    return campaign


def _originals(campaign: Campaign) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The default campaign's requests, receipts and ratings by session (built once)."""
    seed = campaign.manifest["trial_seed"]
    by_answer = {blind_answer_id(seed, s["session_id"]): s["session_id"] for s in campaign.sessions}
    found: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, records in (("requests", campaign.requests), ("receipts", campaign.receipts)):
        for record in records:
            found.setdefault(name, {}).setdefault(record["session_id"], []).append(record)
    for rating in campaign.adjudications:
        session_id = by_answer[rating["answer_id"]]
        found.setdefault("ratings", {}).setdefault(session_id, []).append(rating)
    return found


def _copy_records(
    campaign: Campaign,
    originals: dict[str, dict[str, list[dict[str, Any]]]],
    old: str,
    new: str,
    shift: float,
) -> None:
    seed = campaign.manifest["trial_seed"]
    for request in originals["requests"].get(old, []):
        copied = {**request, "session_id": new, "request_id": f"{request['request_id']}-{new}"}
        copied["start_monotonic_s"] += shift
        copied["reserved_at_monotonic_s"] += shift
        copied["start_utc"] = _utc_shift(request["start_utc"], shift)
        campaign.requests.append(copied)
    for receipt in originals["receipts"].get(old, []):
        copied = {**receipt, "session_id": new, "receipt_id": f"{receipt['receipt_id']}-{new}"}
        if receipt.get("request_id"):
            copied["request_id"] = f"{receipt['request_id']}-{new}"
        copied["monotonic_s"] += shift
        copied["utc"] = _utc_shift(receipt["utc"], shift)
        campaign.receipts.append(copied)
    new_answer = blind_answer_id(seed, new)
    final = campaign.answers[new]["final"]
    digest = hashlib.sha256(blind_bytes(new_answer, final)).hexdigest()
    for rating in originals["ratings"].get(old, []):
        copied = copy.deepcopy(rating)
        copied.update(
            record_id=f"{rating['record_id']}-{new}",
            answer_id=new_answer,
            answer_sha256=digest,
            frozen_at=_utc_shift(rating["frozen_at"], shift),
        )
        campaign.adjudications.append(copied)


@dataclass(frozen=True)
class CampaignRun:
    """`admit` and `check` of one generated bundle, beside the plain-Python floor."""

    sessions: int
    admit: ChildRun
    check: ChildRun
    floor: ChildRun  # tests/bench/floor.py: every file of the bundle read and parsed


def measure(sizes: tuple[int, ...]) -> list[CampaignRun]:
    """One run of `admit`, `check` and the floor on a bundle of each size."""
    runs = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="rulecheck-campaign-") as folder:
            root = write_campaign(scaled_campaign(size), Path(folder) / "bundle")
            count = sum(1 for _ in (root / "sessions.jsonl").open())
            rulecheck = rulecheck_command()
            admit = run_child([*rulecheck, "admit", str(root), "--format", "json"], ROOT)
            check = run_child([*rulecheck, "check", str(root), "--format", "json"], ROOT)
            floor = run_child([sys.executable, str(HERE / "floor.py"), str(root)], ROOT)
            if floor.exit_code != 0:
                raise RuntimeError(f"the floor failed: {floor.stderr.decode(errors='replace')}")
            runs.append(CampaignRun(count, admit, check, floor))
    return runs


def render(runs: list[CampaignRun]) -> str:
    """The markdown section of the measured runs."""
    lines = [
        "## Campaign admission and check",
        "",
        "`tests/bench/campaign_bench.py`: each figure one run of a child process (CPU: its "
        "user + system time; peak RSS: its own `ru_maxrss` from `wait4`). The *floor* is "
        "`tests/bench/floor.py` on the same bundle: every file read and its JSON, JSON Lines "
        "and YAML parsed in plain Python, nothing checked.",
        "",
        "| sessions | admit wall | admit CPU | check wall | check CPU | check peak RSS "
        "| check exit | floor CPU | floor peak RSS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        lines.append(
            f"| {run.sessions:,} | {run.admit.wall:.1f} s | {run.admit.cpu:.1f} s "
            f"| {run.check.wall:.1f} s | {run.check.cpu:.1f} s "
            f"| {run.check.max_rss / MIB:,.0f} MiB | {run.check.exit_code} "
            f"| {run.floor.cpu:.2f} s | {run.floor.max_rss / MIB:,.0f} MiB |"
        )
    lines += [
        "",
        "The generated bundles repeat the synthetic campaign's evaluation triplets, so they break",
        "the pre-registered design and admission refuses them (exit 1); every rule still runs",
        "over every record, which is what is timed.",
    ]
    return "\n".join(lines) + "\n"


def section(sizes: tuple[int, ...] = (1_000, 10_000)) -> str:
    """A markdown section with admit/check time and peak RSS per campaign size."""
    return render(measure(sizes))


def main() -> None:
    """Print the section for the sizes given."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, nargs="+", default=[1_000, 10_000])
    arguments = parser.parse_args()
    sys.stdout.write(section(tuple(arguments.sessions)))


if __name__ == "__main__":
    main()
