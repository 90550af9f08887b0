"""The rules lock: a self-contained YAML record of every declaration, its hash and its text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from engine.bundle.yamldoc import load_yaml_document
from engine.check import check_rules
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.freeze.hashing import HashedRuleset, declaration_hashes, ruleset_hash
from engine.limits import read_input
from engine.resources import library_source_digest
from engine.syntax import ast, parsecache
from engine.syntax.format import format_declaration
from engine.syntax.parse import grammar_text, parse_text
from engine.verdictcache import VerdictCache, depends_on

_VERIFIED = VerdictCache("lock-")
_VERIFIED_KEPT = 16
LOCK_VERSION = 2  # 2: each entry records the files it depends on (`files`)
_LOCK_HEADER = 'ruleset locked version "lock"\n\n'


def lock_document(hashed: HashedRuleset) -> dict[str, Any]:
    """The lock as plain data, declarations in source order. Each entry records the sha256
    of every file it depends on (a protocol's schemas), so the lock verifies without them."""
    entries = []
    for item in hashed.declarations:
        span = item.decl.span
        entries.append(
            {
                "name": item.name,
                "kind": item.kind,
                "hash": item.hash,
                "file": span.file,
                "line": span.line,
                "column": span.column,
                "end_line": span.end_line,
                "end_column": span.end_column,
                "source": item.decl.note,
                "text": format_declaration(item.decl) + "\n",
                "files": dict(sorted(hashed.files.get(item.name, {}).items())),
            }
        )
    return {
        "lock_version": LOCK_VERSION,
        "grammar_version": hashed.grammar_version,
        "ruleset_hash": hashed.ruleset_hash,
        "declarations": entries,
    }


def dump_lock(hashed: HashedRuleset) -> str:
    """The lock as YAML text (deterministic)."""
    return yaml.safe_dump(
        lock_document(hashed),
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )


@dataclass(frozen=True, slots=True)
class LockedRuleset:
    """A verified lock: declarations re-parsed from their recorded text."""

    ruleset_hash: str
    grammar_version: str
    declarations: tuple[ast.Declaration, ...]
    hashes: dict[str, str]
    kinds: dict[str, str]


def read_lock(path: Path) -> LockedRuleset:
    """Load a lock and verify it: each entry's text is exactly the declaration the entry
    names (same name, kind and source note), and every text re-hashes to its recorded hash.

    Raises:
        RulecheckError: exit 2 if unreadable, exit 1 if malformed or tampered.
    """
    document = load_yaml_document(path, "rules_lock", "LOCK")
    entries = document["declarations"]
    declarations: list[ast.Declaration] = []
    problems: list[Diagnostic] = []
    for index, (entry, parsed_entry) in enumerate(
        zip(entries, _parsed(path, entries), strict=True)
    ):
        decl, problem = _entry_declaration(path, index, entry, parsed_entry)
        if problem is not None:
            problems.append(problem)
        elif decl is not None:
            declarations.append(decl)
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    parsed = ast.RuleFile(str(path), ast.Ident("locked"), "lock", tuple(declarations))
    recorded = {entry["name"]: entry["files"] for entry in entries if entry["files"]}
    checked = check_rules([parsed], recorded)
    if not checked.ok:
        index_of = {entry["name"]: index for index, entry in enumerate(entries)}
        problems = [
            Diagnostic(
                "LOCK_TAMPERED",
                f"the declarations do not check: {d.message}",
                _entry_location(path, index_of.get(d.rule or ""), "text"),
                rule=d.rule,
            )
            for d in checked.diagnostics
            if d.severity == "error"
        ]
        raise RulecheckError(problems, ExitCode.REFUSED)
    recomputed = declaration_hashes(checked)
    for index, entry in enumerate(entries):
        name = entry["name"]
        if recomputed.get(name) != entry["hash"]:
            problems.append(
                Diagnostic(
                    "LOCK_TAMPERED",
                    f"declaration `{name}` does not hash to its recorded hash",
                    _entry_location(path, index, "hash"),
                    rule=name,
                )
            )
    kinds = {entry["name"]: entry["kind"] for entry in entries}
    total = ruleset_hash(
        {name: (kinds[name], recomputed[name]) for name in kinds if name in recomputed},
        document["grammar_version"],
    )
    if total != document["ruleset_hash"]:
        problems.append(
            Diagnostic(
                "LOCK_TAMPERED",
                "the ruleset hash does not match its declarations",
                Location(str(path), pointer="/ruleset_hash"),
            )
        )
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)
    return LockedRuleset(
        document["ruleset_hash"],
        document["grammar_version"],
        parsed.declarations,
        {name: recomputed[name] for name in kinds},
        kinds,
    )


def verified_ruleset_hash(path: Path) -> str:
    """The ruleset hash a lock records, once the lock verifies (as `read_lock`).

    Verifying re-checks and re-hashes every declaration, about half a second for the
    shipped rules, and every check of a bundle asks it of the same lock; so the verdict is
    kept for the lock's exact bytes (`engine/verdictcache.py`), keyed as well by the
    engine's sources, the grammar, Python and PyYAML. Changed bytes are verified again; a
    lock that does not verify is never kept.

    Raises:
        RulecheckError: as `read_lock`.
    """
    raw = read_input(path)
    depends = _verification_depends()
    known, value = _VERIFIED.recall(raw, "verified", depends)
    if known and isinstance(value, str):
        return value
    found = read_lock(path).ruleset_hash
    if read_input(path) == raw:  # what was verified is what was read, not a later write
        _VERIFIED.keep(raw, "verified", depends, found, _VERIFIED_KEPT)
    return found


@cache
def _verification_depends() -> str:
    return depends_on(grammar_text(), library_source_digest("yaml"))


def _entry_location(path: Path, index: int | None, field: str) -> Location:
    pointer = None if index is None else f"/declarations/{index}/{field}"
    return Location(str(path), pointer=pointer)


def _parsed(path: Path, entries: list[dict[str, Any]]) -> list[tuple[ast.Declaration, ...] | str]:
    """What each entry's text declares, or why it does not parse (the first message).

    Parsing every text is most of reading a lock, and a lock is read on every check of a
    bundle, so the declarations of a lock whose texts each declared exactly one are kept
    in the parse cache as one file, keyed by all the texts: a changed text parses again."""
    where = f"{path}#/declarations"
    raw = json.dumps([entry["text"] for entry in entries]).encode()
    grammar = grammar_text()
    kept = parsecache.load(where, raw, grammar)
    if kept is not None and len(kept.declarations) == len(entries):
        return [(decl,) for decl in kept.declarations]
    found: list[tuple[ast.Declaration, ...] | str] = []
    for index, entry in enumerate(entries):
        try:
            text = _LOCK_HEADER + entry["text"]
            found.append(parse_text(text, f"{where}/{index}/text").declarations)
        except RulecheckError as error:
            found.append(error.diagnostics[0].message if error.diagnostics else "syntax error")
    every = tuple(decls[0] for decls in found if isinstance(decls, tuple) and len(decls) == 1)
    if len(every) == len(entries):
        parsecache.save(
            where, raw, grammar, ast.RuleFile(where, ast.Ident("locked"), "lock", every)
        )
    return found


def _entry_declaration(
    path: Path, index: int, entry: dict[str, Any], parsed: tuple[ast.Declaration, ...] | str
) -> tuple[ast.Declaration | None, Diagnostic | None]:
    """The one declaration an entry's text holds, or why the entry does not match its text."""
    name = entry["name"]

    def tampered(message: str, field: str) -> tuple[None, Diagnostic]:
        location = _entry_location(path, index, field)
        return None, Diagnostic("LOCK_TAMPERED", message, location, rule=name)

    if isinstance(parsed, str):
        return tampered(f"the text of `{name}` does not parse: {parsed}", "text")
    found = parsed
    if len(found) != 1:
        return tampered(
            f"the text of `{name}` must hold exactly one declaration, found {len(found)}", "text"
        )
    decl = found[0]
    if decl.name.text != name:
        return tampered(f"the text of `{name}` declares `{decl.name.text}`", "text")
    if ast.declaration_kind(decl) != entry["kind"]:
        return tampered(
            f"`{name}` is recorded as a {entry['kind']} but its text declares a "
            f"{ast.declaration_kind(decl)}",
            "kind",
        )
    if decl.note != entry["source"]:
        return tampered(f"the source note of `{name}` differs from the note in its text", "source")
    return decl, None
