"""Static checks of `protocol` declarations: the bundle's documents and its entry points.

A protocol names one graph; every document that graph's kinds read must be declared with
its path inside the bundle and its format, and a schema, if given, must be a JSON Schema
the engine can compile (its bytes are hashed into the protocol's hash). The entry points
must be of the right declaration kind: the admission a gate, the verdict a decision, the
report tables.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from engine.bundle.schemac import SchemaCompileError, Validator, compile_schema
from engine.check.schemacache import compiled_before, remember_compiled
from engine.check.symbols import SymbolTable, did_you_mean, location
from engine.errors import Diagnostic
from engine.limits import InputRefused, read_input
from engine.syntax import ast

FORMATS = ("json", "jsonl", "yaml")
_ENTRY_KINDS = {
    "admission": ast.GateDecl,
    "verdict": ast.DecisionDecl,
    "report": ast.TableDecl,
    "banner": ast.GateDecl,
    "seal": ast.TableDecl,
    "freeze": ast.TableDecl,
}


@dataclass(slots=True)
class ProtocolFacts:
    """What checking a protocol found: diagnostics, the names it uses, its schema digests."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    references: set[str] = field(default_factory=set)
    attached: dict[str, str] = field(default_factory=dict)


def schema_path(document: ast.DocumentClause) -> Path | None:
    """A document's schema file: relative to the folder of the rule file that declares it."""
    if document.schema is None:
        return None
    return Path(document.span.file).parent / document.schema


def load_schema(path: Path) -> tuple[bytes, Validator]:
    """The bytes and compiled validator of a protocol's schema file: a JSON Schema
    (`.json`), or a cerberus schema (`.yaml`, `.yml`; every field required).

    Raises:
        OSError: when the file cannot be read.
        ValueError: when it is not a schema the engine can compile.
    """
    raw = _read_schema(path)
    return raw, _compiled(raw, _is_cerberus(path))


def json_schema(path: Path, sha256: str) -> Any:
    """The JSON Schema of `path` as a JSON value, when its bytes are still those whose
    sha256 is given (the ones a validator was compiled from); None for a cerberus schema,
    a file that changed or one that cannot be read."""
    if _is_cerberus(path):
        return None
    try:
        raw = _read_schema(path)
    except OSError:
        return None
    if hashlib.sha256(raw).hexdigest() != sha256:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _read_schema(path: Path) -> bytes:
    try:
        return read_input(path)  # never a FIFO or device, never beyond the size limit
    except InputRefused as error:  # its reason, without the "cannot read `PATH`: " head
        raise OSError(0, error.reason) from None


def _is_cerberus(path: Path) -> bool:
    return path.suffix.lower() in (".yaml", ".yml")


@functools.lru_cache(maxsize=64)
def _compiled(raw: bytes, cerberus: bool) -> Validator:
    """A schema's validator, compiled once per process for the same bytes (linting the
    rules and loading a bundle both need it)."""
    if cerberus:
        import yaml  # imported only when a cerberus schema is compiled (not by a warm lint)

        from engine.bundle.yamldoc import cerberus_validator, safe_yaml

        try:
            schema = safe_yaml(raw.decode("utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as error:
            raise ValueError(f"not YAML: {error}"[:300]) from None
        if not isinstance(schema, dict):
            raise ValueError("a cerberus schema is a mapping of field names to rules")
        return cerberus_validator(schema, checked=compiled_before(raw, "cerberus"))
    schema = json.loads(raw)
    if not isinstance(schema, dict):
        raise ValueError("a JSON Schema is a JSON object")
    return compile_schema(schema)


def graph_documents(symbols: SymbolTable, graph: str) -> set[str]:
    """The documents the kinds of `graph` read."""
    return {
        records.document.text
        for kind in symbols.kinds.values()
        if graph in {g.text for g in kind.graphs}
        for records in kind.records
    }


def check_protocol(
    decl: ast.ProtocolDecl, symbols: SymbolTable, recorded: Mapping[str, str] | None = None
) -> ProtocolFacts:
    """Every problem of one protocol declaration, and what it references. A schema whose
    sha256 is `recorded` (by a rules lock) is not read."""
    facts = ProtocolFacts()
    name = decl.name.text
    graphs = {g.text for kind in symbols.kinds.values() for g in kind.graphs}
    if len(decl.graph) != 1:
        facts.diagnostics.append(
            _error(
                "PROTOCOL_CLAUSE",
                f"protocol `{name}` needs exactly one `graph` clause, found {len(decl.graph)}",
                decl.graph[1].span if len(decl.graph) > 1 else decl.name.span,
                name,
            )
        )
    graph = decl.graph[0].text if decl.graph else None
    if decl.graph and graph not in graphs:
        hint = (
            did_you_mean(graph or "", graphs) or f"the kinds declare: {', '.join(sorted(graphs))}"
        )
        facts.diagnostics.append(
            _error(
                "UNKNOWN_GRAPH",
                f"no kind belongs to graph `{graph}`",
                decl.graph[0].span,
                name,
                hint,
            )
        )
    if graph is not None:
        facts.references |= {
            kind for kind, d in symbols.kinds.items() if graph in {g.text for g in d.graphs}
        }
    _check_documents(decl, symbols, graph if graph in graphs else None, facts, recorded or {})
    _check_entries(decl, symbols, facts)
    return facts


def _check_documents(
    decl: ast.ProtocolDecl,
    symbols: SymbolTable,
    graph: str | None,
    facts: ProtocolFacts,
    recorded: Mapping[str, str],
) -> None:
    name = decl.name.text
    seen: set[str] = set()
    for document in decl.documents:
        text = document.name.text
        if text in seen:
            message = f"document `{text}` is declared twice in protocol `{name}`"
            facts.diagnostics.append(_error("DUPLICATE_NAME", message, document.name.span, name))
        seen.add(text)
        if document.table is not None:
            _check_derived(document, symbols, name, facts)
            continue
        if document.given:
            continue
        if document.format.text not in FORMATS:
            message = f"document `{text}` has format `{document.format.text}`"
            hint = f"a format is one of {', '.join(FORMATS)}"
            facts.diagnostics.append(
                _error("UNKNOWN_FORMAT", message, document.format.span, name, hint)
            )
        if not _bundle_path(document.path):
            message = f"`{document.path}` is not a path inside the bundle"
            hint = (
                "write a relative path with `/` between names, no `..`, `.` or empty segment "
                "(`*` may stand for any run of characters in the file name)"
            )
            facts.diagnostics.append(_error("INVALID_PATH", message, document.span, name, hint))
        _check_schema_code(document, symbols, name, facts)
        if document.schema is not None and document.schema in recorded:
            facts.attached[document.schema] = recorded[document.schema]
        else:
            _check_schema(document, name, facts)
    if graph is None:
        return
    for missing in sorted(graph_documents(symbols, graph) - seen):
        message = (
            f"graph `{graph}` reads document `{missing}`, which protocol `{name}` does not declare"
        )
        hint = f'add `document {missing} path "..." format json|jsonl|yaml`'
        facts.diagnostics.append(
            _error("PROTOCOL_DOCUMENT_MISSING", message, decl.name.span, name, hint)
        )


def _check_schema_code(
    document: ast.DocumentClause, symbols: SymbolTable, protocol: str, facts: ProtocolFacts
) -> None:
    """`schema "S" else reject CODE`: CODE is a declared code."""
    code = document.schema_code
    if code is None:
        return
    if code.text in symbols.codes:
        facts.references.add(code.text)
        return
    message = f"reject code `{code.text}` is not declared"
    hint = did_you_mean(code.text, symbols.codes)
    facts.diagnostics.append(_error("UNKNOWN_CODE", message, code.span, protocol, hint))


def _check_derived(
    document: ast.DocumentClause, symbols: SymbolTable, protocol: str, facts: ProtocolFacts
) -> None:
    """`document NAME from table T`: T is a table (what it may read is checked with the graphs)."""
    table = document.table
    assert table is not None
    found = symbols.declarations.get(table.text)
    if isinstance(found, ast.TableDecl):
        facts.references.add(table.text)
        return
    if found is None:
        tables = [n for n, d in symbols.declarations.items() if isinstance(d, ast.TableDecl)]
        message = f"unknown table `{table.text}`"
        hint = did_you_mean(table.text, tables)
        facts.diagnostics.append(_error("UNKNOWN_NAME", message, table.span, protocol, hint))
        return
    what = ast.declaration_kind(found)
    message = f"a derived document comes from a table; `{table.text}` is a {what}"
    facts.diagnostics.append(_error("TYPE_MISMATCH", message, table.span, protocol))


def _check_schema(document: ast.DocumentClause, protocol: str, facts: ProtocolFacts) -> None:
    path = schema_path(document)
    if path is None:
        return
    cerberus = _is_cerberus(path)
    kind = "cerberus" if cerberus else "json"
    try:
        raw = _read_schema(path)
        if not compiled_before(raw, kind):  # see engine/check/schemacache.py
            _compiled(raw, cerberus)
            remember_compiled(raw, kind)
    except OSError as error:
        reason = (error.strerror or type(error).__name__).lower()
        message = f"cannot read the schema `{document.schema}` of `{document.name.text}`: {reason}"
        facts.diagnostics.append(_error("SCHEMA_UNREADABLE", message, document.span, protocol))
        return
    except (ValueError, SchemaCompileError, RecursionError) as error:
        message = f"the schema `{document.schema}` of `{document.name.text}` is unusable: {error}"
        facts.diagnostics.append(_error("SCHEMA_INVALID", message, document.span, protocol))
        return
    facts.attached[document.schema or ""] = hashlib.sha256(raw).hexdigest()


def _check_entries(decl: ast.ProtocolDecl, symbols: SymbolTable, facts: ProtocolFacts) -> None:
    name = decl.name.text
    banners = tuple(b.gate for b in decl.banners)
    _check_seals(decl, facts)
    _check_freezes(decl, facts)
    for keyword, idents in (
        ("admission", decl.admission),
        ("verdict", decl.verdict),
        ("report", decl.report),
        ("banner", banners),
        ("seal", tuple(s.table for s in decl.seals)),
        ("freeze", tuple(f.table for f in decl.freezes)),
    ):
        if keyword in ("admission", "verdict", "seal", "freeze") and len(idents) > 1:
            message = f"protocol `{name}` has {len(idents)} `{keyword}` clauses; one at most"
            facts.diagnostics.append(_error("PROTOCOL_CLAUSE", message, idents[1].span, name))
        wanted = _ENTRY_KINDS[keyword]
        what = ast.DECLARATION_KINDS[wanted]
        for ident in idents:
            found = symbols.declarations.get(ident.text)
            if isinstance(found, wanted):
                facts.references.add(ident.text)
                continue
            candidates = [n for n, d in symbols.declarations.items() if isinstance(d, wanted)]
            if found is None:
                message = f"unknown {what} `{ident.text}`"
                facts.diagnostics.append(
                    _error(
                        "UNKNOWN_NAME",
                        message,
                        ident.span,
                        name,
                        did_you_mean(ident.text, candidates),
                    )
                )
            else:
                found_kind = ast.declaration_kind(found)
                message = f"a protocol's {keyword} is a {what}; `{ident.text}` is a {found_kind}"
                facts.diagnostics.append(_error("TYPE_MISMATCH", message, ident.span, name))


def _check_seals(decl: ast.ProtocolDecl, facts: ProtocolFacts) -> None:
    """`seal TABLE into DOCUMENT`: DOCUMENT is an optional JSON file of the protocol (a
    bundle is read before it is sealed)."""
    name = decl.name.text
    documents = {d.name.text: d for d in decl.documents}
    for seal in decl.seals:
        target = documents.get(seal.document.text)
        if target is None:
            message = f"protocol `{name}` declares no document `{seal.document.text}` to seal into"
            hint = did_you_mean(seal.document.text, documents)
            facts.diagnostics.append(
                _error("UNKNOWN_NAME", message, seal.document.span, name, hint)
            )
        elif not target.from_file or target.glob or target.format.text != "json":
            message = f"a seal is written as one JSON file; `{seal.document.text}` is not one"
            hint = f'declare `document {seal.document.text} path "seal.json" format json optional`'
            facts.diagnostics.append(
                _error("PROTOCOL_CLAUSE", message, seal.document.span, name, hint)
            )
        elif not target.optional:
            message = f"the seal document `{seal.document.text}` must be `optional`"
            hint = "a bundle is read to be sealed before its seal exists"
            facts.diagnostics.append(
                _error("PROTOCOL_CLAUSE", message, seal.document.span, name, hint)
            )


def _check_freezes(decl: ast.ProtocolDecl, facts: ProtocolFacts) -> None:
    """`freeze TABLE into DOCUMENT at "POINTER" before LATER`: DOCUMENT is one JSON or
    YAML file, POINTER a member of it, LATER a document read from files."""
    name = decl.name.text
    documents = {d.name.text: d for d in decl.documents}
    for freeze in decl.freezes:
        for ident in (freeze.document, freeze.before):
            if ident.text not in documents:
                message = f"protocol `{name}` declares no document `{ident.text}`"
                hint = did_you_mean(ident.text, documents)
                facts.diagnostics.append(_error("UNKNOWN_NAME", message, ident.span, name, hint))
        target = documents.get(freeze.document.text)
        if target is not None and (
            not target.from_file or target.glob or target.format.text not in ("json", "yaml")
        ):
            message = f"a freeze writes into one JSON or YAML file; `{target.name.text}` is not one"
            facts.diagnostics.append(_error("PROTOCOL_CLAUSE", message, freeze.document.span, name))
        later = documents.get(freeze.before.text)
        if later is not None and not later.from_file:
            message = f"`before` names a document read from files; `{later.name.text}` is not"
            facts.diagnostics.append(_error("PROTOCOL_CLAUSE", message, freeze.before.span, name))
        if not freeze.pointer.startswith("/") or "" in freeze.pointer.split("/")[1:]:
            message = f"`{freeze.pointer}` is not a JSON pointer to a member (`/inputs`)"
            facts.diagnostics.append(_error("INVALID_POINTER", message, freeze.span, name))


def entries_off_graph(
    decl: ast.ProtocolDecl, graphs: Mapping[str, frozenset[str]]
) -> list[Diagnostic]:
    """The entry points of a protocol that do not run on its graph (once graphs are known)."""
    if not decl.graph:
        return []
    graph = decl.graph[0].text
    problems = []
    derived = tuple(d.table for d in decl.documents if d.table is not None)
    banners = tuple(b.gate for b in decl.banners)
    seals = tuple(s.table for s in decl.seals) + tuple(f.table for f in decl.freezes)
    for ident in (*decl.admission, *decl.verdict, *decl.report, *derived, *banners, *seals):
        runs_on = graphs.get(ident.text)
        if runs_on is not None and graph not in runs_on:
            where = ", ".join(f"`{g}`" for g in sorted(runs_on)) or "no graph"
            message = f"`{ident.text}` runs on {where}, not on the protocol's graph `{graph}`"
            problems.append(_error("PROTOCOL_ENTRY_OFF_GRAPH", message, ident.span, decl.name.text))
    return problems


def derived_problems(
    decl: ast.ProtocolDecl, symbols: SymbolTable, infos: Mapping[str, DeclInfoLike]
) -> list[Diagnostic]:
    """The derived documents whose table reads what is not there yet when it runs.

    The tables run in the order the documents are declared, each on the graph of the
    documents read from files and those derived before it. So a table reads no rule (no
    `passed(...)`: the rules run once, on the whole graph) and no kind whose records come
    from its own document or one derived after it.
    """
    problems = []
    derived = [d for d in decl.documents if d.table is not None]
    for index, document in enumerate(derived):
        assert document.table is not None
        later = {d.name.text for d in derived[index:]}
        unready = {
            kind
            for kind, k in symbols.kinds.items()
            if any(r.document.text in later for r in k.records)
        }
        table, name = document.table.text, document.name.text
        rules, kinds = reads(table, symbols, infos)
        for rule in sorted(rules):
            message = f"table `{table}` of derived document `{name}` reads rule `{rule}`"
            hint = "a derived document's table reads kinds, metrics and constants only"
            problems.append(
                _error("DERIVED_READS_RULE", message, document.span, decl.name.text, hint)
            )
        for kind in sorted(kinds & unready):
            message = (
                f"table `{table}` of derived document `{name}` reads kind `{kind}`, "
                "whose records are not derived yet when it runs"
            )
            hint = "a table reads the documents derived before its own, never its own or later ones"
            problems.append(
                _error("DERIVED_READS_LATER", message, document.span, decl.name.text, hint)
            )
    return problems


class DeclInfoLike(Protocol):
    """What `derived_problems` needs of the type checker's facts about a declaration."""

    references: set[str]


_RULES = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl, ast.TableDecl, ast.DecisionDecl)


def reads(
    name: str, symbols: SymbolTable, infos: Mapping[str, DeclInfoLike]
) -> tuple[set[str], set[str]]:
    """The rules and the kinds `name` reads, directly or through metrics and constants
    (not through the rules it reads)."""
    rules, kinds, _used = uses(name, symbols, infos)
    return rules, kinds


def uses(
    name: str, symbols: SymbolTable, infos: Mapping[str, DeclInfoLike]
) -> tuple[set[str], set[str], set[str]]:
    """The rules, the kinds and the other declarations (metrics, constants) `name` reads,
    directly or through those other declarations (not through the rules it reads)."""
    rules: set[str] = set()
    kinds: set[str] = set()
    used: set[str] = set()
    seen: set[str] = set()
    pending = list(infos[name].references) if name in infos else []
    while pending:
        ref = pending.pop()
        if ref in seen or ref == name:
            continue
        seen.add(ref)
        if ref in symbols.kinds:
            kinds.add(ref)
        elif isinstance(symbols.declarations.get(ref), _RULES):
            rules.add(ref)
        elif ref in infos:
            used.add(ref)
            pending += infos[ref].references
    return rules, kinds, used


def _bundle_path(path: str) -> bool:
    """A relative path of exact segments; `*` (any run of characters but `/`) only in the
    file name, and never a whole hidden-file pattern such as `.*`."""
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        return False
    parts = path.split("/")
    if any("*" in part for part in parts[:-1]) or "?" in path:
        return False
    return all(part not in ("", ".", "..") for part in parts) and bool(PurePosixPath(path).parts)


def _error(
    code: str, message: str, span: ast.Span, rule: str, hint: str | None = None
) -> Diagnostic:
    return Diagnostic(code, message, location(span), hint=hint, rule=rule)
