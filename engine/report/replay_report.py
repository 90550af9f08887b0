"""What `rulecheck replay` prints, bundle by bundle as each is replayed: first the rule
changes in `rulecheck diff`'s words, then one block per bundle (the verdict under each
rule set, every rule whose outcome changed, the changed declarations those rules read),
then the counts. `--format json` is JSON Lines: one canonical object per line (the
rules, each bundle, the summary), so it streams too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.evaluate.replay import BundleReplay, Replayer
from engine.freeze.diff import DeclarationChange, change_lines


def _line(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def _shown(outcome: bool | None) -> str:
    return "absent" if outcome is None else "pass" if outcome else "fail"


def _change_json(change: DeclarationChange) -> dict[str, Any]:
    return {
        "name": change.name,
        "kind": change.kind,
        "status": change.status,
        "old_hash": change.old_hash,
        "new_hash": change.new_hash,
        "values": [{"old": v.old, "new": v.new, "direction": v.direction} for v in change.values],
        "via": list(change.via),
    }


@dataclass(slots=True)
class ReplayPrinter:
    """Renders a replay as it streams, keeping only the counts."""

    replayer: Replayer
    output_format: str
    bundles: int = 0
    flipped: int = 0
    changed: int = 0
    unreadable: int = 0

    def head(self) -> str:
        """The two rule sets and what changed between them."""
        diff = self.replayer.diff
        if self.output_format == "json":
            return _line(
                {
                    "old": {"label": diff.old.label, "ruleset_hash": diff.old.ruleset_hash},
                    "new": {"label": diff.new.label, "ruleset_hash": diff.new.ruleset_hash},
                    "changes": [_change_json(c) for c in diff.changes],
                }
            )
        lines = [
            f"old {diff.old.label}: ruleset {diff.old.ruleset_hash}",
            f"new {diff.new.label}: ruleset {diff.new.ruleset_hash}",
        ]
        if diff.identical:
            lines.append("identical: every declaration hash is equal")
        for change in diff.changes:
            lines += change_lines(change)
        return "\n".join(lines) + "\n\n"

    def row(self, replay: BundleReplay) -> str:
        """One bundle: its verdicts, the outcomes that changed and their changed causes."""
        self.bundles += 1
        self.flipped += replay.flipped
        self.changed += bool(replay.changed)
        self.unreadable += replay.old.unreadable or replay.new.unreadable
        causes = self.replayer.causes(replay) if replay.changed or replay.flipped else ()
        if self.output_format == "json":
            return _line(
                {
                    "bundle": replay.bundle,
                    "old": replay.old.shown(),
                    "new": replay.new.shown(),
                    "flipped": replay.flipped,
                    "changed": [
                        {"name": name, "old": old, "new": new} for name, old, new in replay.changed
                    ],
                    "declarations": [c.name for c in causes],
                }
            )
        unread = replay.old.unreadable or replay.new.unreadable
        mark = (
            "UNREAD"
            if unread
            else "FLIPPED"
            if replay.flipped
            else "changed"
            if replay.changed
            else "same"
        )
        lines = [f"{mark:8} {replay.bundle}: {replay.old.shown()} -> {replay.new.shown()}"]
        for name, old, new in replay.changed:
            lines.append(f"         {name}: {_shown(old)} -> {_shown(new)}")
        for change in causes:
            head, *details = change_lines(change)
            words = "; ".join(d.strip() for d in details if "->" in d and ":" in d)
            lines.append(f"         because {head}" + (f": {words}" if words else ""))
        return "\n".join(lines) + "\n"

    def tail(self) -> str:
        """The counts."""
        if self.output_format == "json":
            return _line(
                {
                    "bundles": self.bundles,
                    "flipped": self.flipped,
                    "changed": self.changed,
                    "unreadable": self.unreadable,
                }
            )
        unreadable = f", {self.unreadable} unreadable" if self.unreadable else ""
        return (
            f"\n{self.bundles} bundles: {self.flipped} verdicts flipped, "
            f"{self.changed} with changed rule outcomes{unreadable}\n"
        )

    def exit_code(self) -> int:
        """2 when a bundle could not be read, else 1 when a verdict flipped, else 0."""
        return 2 if self.unreadable else 1 if self.flipped else 0
