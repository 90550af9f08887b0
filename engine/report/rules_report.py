"""Reports of the rule-side commands: hash, diff, show."""

from __future__ import annotations

from typing import Any

from engine.freeze.diff import DiffResult, change_lines
from engine.freeze.hashing import HashedDeclaration, HashedRuleset
from engine.syntax.format import format_declaration


def hash_lines(hashed: HashedRuleset) -> str:
    """`<sha256>  <kind>  <name>` per declaration, then `ruleset <sha256>`."""
    lines = [f"{d.hash}  {d.kind}  {d.name}" for d in hashed.declarations]
    lines.append(f"ruleset {hashed.ruleset_hash}")
    return "\n".join(lines) + "\n"


def hash_json(hashed: HashedRuleset) -> dict[str, Any]:
    """The hashes as data."""
    return {
        "grammar_version": hashed.grammar_version,
        "ruleset_hash": hashed.ruleset_hash,
        "declarations": [
            {"name": d.name, "kind": d.kind, "hash": d.hash} for d in hashed.declarations
        ],
    }


def show_text(item: HashedDeclaration, uses: list[str]) -> str:
    """One declaration with its hash, location, source note and dependencies."""
    span = item.decl.span
    lines = [
        f"{item.kind} {item.name}",
        f"hash    {item.hash}",
        f"defined {span.file}:{span.line}:{span.column}",
        f"source  {item.decl.note or '(none)'}",
    ]
    if uses:
        lines.append("uses    " + ", ".join(uses))
    lines += ["", format_declaration(item.decl)]
    return "\n".join(lines) + "\n"


def show_json(item: HashedDeclaration, uses: list[str]) -> dict[str, Any]:
    """One declaration as data."""
    span = item.decl.span
    return {
        "name": item.name,
        "kind": item.kind,
        "hash": item.hash,
        "file": span.file,
        "line": span.line,
        "column": span.column,
        "source": item.decl.note,
        "uses": uses,
        "text": format_declaration(item.decl) + "\n",
    }


def diff_text(result: DiffResult) -> str:
    """A reviewer's summary of a diff."""
    lines = [f"old {result.old.label}: ruleset {result.old.ruleset_hash}"]
    lines.append(f"new {result.new.label}: ruleset {result.new.ruleset_hash}")
    if result.identical:
        lines.append("identical: every declaration hash is equal")
    for change in result.changes:
        lines += change_lines(change)
    for name in result.note_changes:
        lines.append(f"  note only: `{name}` changed its source note (hash unchanged)")
    counts = {
        s: sum(c.status == s for c in result.changes) for s in ("added", "removed", "changed")
    }
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines) + "\n"


def diff_json(result: DiffResult) -> dict[str, Any]:
    """A diff as data."""
    return {
        "identical": result.identical,
        "old": {"label": result.old.label, "ruleset_hash": result.old.ruleset_hash},
        "new": {"label": result.new.label, "ruleset_hash": result.new.ruleset_hash},
        "changes": [
            {
                "name": c.name,
                "kind": c.kind,
                "status": c.status,
                "old_hash": c.old_hash,
                "new_hash": c.new_hash,
                "values": [
                    {"old": v.old, "new": v.new, "direction": v.direction} for v in c.values
                ],
                "via": list(c.via),
            }
            for c in result.changes
        ],
        "note_changes": list(result.note_changes),
    }
