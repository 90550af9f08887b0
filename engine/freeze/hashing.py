"""Per-declaration hashes that fold in what each declaration references, and the ruleset hash."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.check import CheckedRuleset
from engine.freeze.canonical import canonical_form, canonical_json, canonical_tree_json
from engine.gcpolicy import collector_paused
from engine.order import strong_components
from engine.syntax import ast


def sha256_hex(data: bytes) -> str:
    """sha256 of `data` as 64 lowercase hex digits."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class HashedDeclaration:
    """A declaration with its kind keyword and its hash."""

    name: str
    kind: str
    hash: str
    decl: ast.Declaration


@dataclass(frozen=True, slots=True)
class HashedRuleset:
    """Every declaration's hash, in source order, and the ruleset hash."""

    declarations: tuple[HashedDeclaration, ...]
    ruleset_hash: str
    grammar_version: str
    # by declaration, the sha256 of each file it depends on (a protocol's schemas)
    files: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def by_name(self) -> dict[str, HashedDeclaration]:
        """Declarations by name."""
        return {d.name: d for d in self.declarations}


def declaration_hashes(checked: CheckedRuleset) -> dict[str, str]:
    """sha256 of each declaration's canonical form together with the hashes it uses.

    Declarations are hashed after everything they use, iteratively (a recursive walk
    overflowed the stack on a long chain of derived constants).

    Raises:
        ValueError: if references form a cycle (a checked ruleset without errors has none).
    """
    declarations = checked.symbols.declarations
    references = {
        name: sorted(ref for ref in checked.infos[name].references if ref != name)
        for name in declarations
    }
    # A declaration points to what it uses, so each component comes after what it uses;
    # for a file that uses what it declared before, in source order, which is the order
    # the declarations sit in memory (a large ruleset hashes faster for it).
    components = strong_components(references)
    if any(len(component) > 1 for component in components):
        raise ValueError("declarations that reference each other cannot be hashed")
    hashes: dict[str, str] = {}
    for (name,) in components:
        decl = declarations[name]
        payload = {
            "kind": ast.declaration_kind(decl),
            "form": canonical_form(decl),
            "uses": {ref: hashes[ref] for ref in references[name]},
        }
        attached = checked.infos[name].attached
        if attached:  # files a declaration depends on (a protocol's schemas), by content
            payload["files"] = attached
        hashes[name] = sha256_hex(canonical_tree_json(payload))
    return {name: hashes[name] for name in declarations}


def ruleset_hash(kinds_and_hashes: Mapping[str, tuple[str, str]], grammar_version: str) -> str:
    """The hash of a whole ruleset: every (name, kind, hash) plus the grammar version."""
    payload = {
        "grammar_version": grammar_version,
        "declarations": {name: {"kind": k, "hash": h} for name, (k, h) in kinds_and_hashes.items()},
    }
    return sha256_hex(canonical_json(payload))


@collector_paused()  # see engine/gcpolicy.py: a canonical form per declaration is bulk work
def hash_ruleset(checked: CheckedRuleset, grammar_version: str) -> HashedRuleset:
    """Hash every declaration of a checked ruleset (which must have no errors)."""
    if not checked.ok:
        raise ValueError("only a ruleset without errors can be hashed")
    hashes = declaration_hashes(checked)
    hashed = tuple(
        HashedDeclaration(d.name.text, ast.declaration_kind(d), hashes[d.name.text], d)
        for d in checked.declarations()
    )
    total = ruleset_hash({d.name: (d.kind, d.hash) for d in hashed}, grammar_version)
    files = {name: dict(info.attached) for name, info in checked.infos.items() if info.attached}
    return HashedRuleset(hashed, total, grammar_version, files)
