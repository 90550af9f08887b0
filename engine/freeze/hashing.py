"""Per-declaration hashes that fold in what each declaration references, and the ruleset hash."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from engine.check import CheckedRuleset
from engine.freeze.canonical import canonical_form, canonical_json
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

    def by_name(self) -> dict[str, HashedDeclaration]:
        """Declarations by name."""
        return {d.name: d for d in self.declarations}


def declaration_hashes(checked: CheckedRuleset) -> dict[str, str]:
    """sha256 of each declaration's canonical form together with the hashes it uses."""
    hashes: dict[str, str] = {}
    declarations = checked.symbols.declarations

    def visit(name: str) -> str:
        if name not in hashes:
            decl = declarations[name]
            uses = {
                ref: visit(ref) for ref in sorted(checked.infos[name].references) if ref != name
            }
            payload = {
                "kind": ast.declaration_kind(decl),
                "form": canonical_form(decl),
                "uses": uses,
            }
            hashes[name] = sha256_hex(canonical_json(payload))
        return hashes[name]

    for name in declarations:
        visit(name)
    return hashes


def ruleset_hash(kinds_and_hashes: Mapping[str, tuple[str, str]], grammar_version: str) -> str:
    """The hash of a whole ruleset: every (name, kind, hash) plus the grammar version."""
    payload = {
        "grammar_version": grammar_version,
        "declarations": {name: {"kind": k, "hash": h} for name, (k, h) in kinds_and_hashes.items()},
    }
    return sha256_hex(canonical_json(payload))


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
    return HashedRuleset(hashed, total, grammar_version)
