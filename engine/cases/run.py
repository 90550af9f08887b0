"""Run one rule test case through the public path of `check` or `evaluate`, and compare
what the rules concluded with what the case expects."""

from __future__ import annotations

import copy as copying
import dataclasses
import hashlib
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bundle import paths
from engine.bundle.documents import FORMATS, load_document, load_documents
from engine.cases.files import Case, Edit
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.facts import Facts
from engine.evaluate.inputs import GraphResult, check_inputs, evaluate_documents
from engine.evaluate.program import Program
from engine.evaluate.protocol import (
    bundle_protocol,
    evaluate_protocol,
    protocol_freeze,
    protocol_seal,
)
from engine.freeze.lock import dump_lock
from engine.pointer import pointer_tokens
from engine.report.evaluation_report import exact
from engine.report.export import document_bytes
from engine.report.graph_report import passed as graph_passed
from engine.report.protocol_report import protocol_passed
from engine.ruleset import Ruleset


@dataclass(frozen=True, slots=True)
class RuleSeen:
    """A link rule's, gate's or budget's outcome on one case: `pass`, `fail` or `vacuous`
    (held, but bound nothing), its violations (code and ids) and failing bindings (ids)."""

    kind: str
    outcome: str
    violations: tuple[tuple[str, tuple[str, ...]], ...] = ()
    failing: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Observed:
    """What one run concluded: the exit condition, the rules' and decisions' outcomes, or
    the diagnostics it was refused with (nothing else then)."""

    passed: bool | None = None
    admitted: bool | None = None
    verdict: str | None = None
    rules: dict[str, RuleSeen] = field(default_factory=dict)
    decisions: dict[str, tuple[str | None, int | None]] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()
    graph: str | None = None
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        """True when the run stopped with diagnostics before or instead of a result."""
        return bool(self.diagnostics)


@dataclass(frozen=True, slots=True)
class Difference:
    """One expectation that does not hold: where in the case, expected and observed."""

    key: str
    expected: Any
    observed: Any


@dataclass(frozen=True, slots=True)
class Prepared:
    """A case's files as the run reads them: the bundle (or each input), edited in a copy
    when the case has edits, and how to show a copy's paths as the originals."""

    bundle: Path | None
    inputs: tuple[tuple[str, Path], ...]
    shown: tuple[tuple[str, str], ...] = ()

    def show(self, file: str) -> str:
        """A path of the copy as the path of the original it was copied from."""
        for copy, original in self.shown:
            if file == copy or file.startswith(copy + "/"):
                return original + file[len(copy) :]
        return file


def prepare(case: Case, scratch: Path, ruleset: Ruleset | None = None) -> Prepared:
    """The files a case runs on: the originals, or an edited copy under `scratch`
    (`ruleset`, the rules the case runs against, gives the values `value_of` reads of
    them).

    Raises:
        RulecheckError: exit 2 when an edit names no file of the case or no place in it.
    """
    if not case.edits and not case.reseal and not case.refreeze:
        return Prepared(case.bundle, case.inputs)
    scratch.mkdir(parents=True, exist_ok=True)
    if case.bundle is not None:
        copy = scratch / case.bundle.name
        try:
            shutil.copytree(case.bundle, copy, symlinks=True)
        except OSError as error:
            where = case.at("/check")
            message = f"cannot copy the bundle `{case.bundle}`: {error.strerror or error}"
            raise RulecheckError(
                [Diagnostic("CASES_EDIT", message, where)], ExitCode.USAGE
            ) from None
        for edit in case.edits:
            target = paths.inside(copy, edit.file, strict_segments=True)
            if target is None or not target.is_file() or target.is_symlink():
                raise _edit_error(edit, f"the bundle has no file `{edit.file}` to edit")
            if edit.value_of is not None and edit.value_of[0] == "rules_lock":
                _write_lock(edit, target, ruleset)
                continue
            _apply(_valued(edit, copy, ruleset), target)
        return Prepared(copy, (), ((str(copy), str(case.bundle)),))
    inputs = dict(case.inputs)
    shown = []
    for number, (name, original) in enumerate(case.inputs):
        if not any(edit.file == name for edit in case.edits):
            continue
        copy = scratch / str(number) / original.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(original, copy)
        except OSError as error:
            message = f"cannot copy the input `{original}`: {error.strerror or error}"
            where = case.at(f"/inputs/{name}")
            raise RulecheckError(
                [Diagnostic("CASES_EDIT", message, where)], ExitCode.USAGE
            ) from None
        for edit in case.edits:
            if edit.file == name:
                if edit.value_of is not None:
                    raise _edit_error(edit, "`value_of` reads a file of a bundle: a `check:` case")
                _apply(edit, copy)
        inputs[name] = copy
        shown.append((str(copy), str(original)))
    return Prepared(None, tuple(inputs.items()), tuple(shown))


def _valued(edit: Edit, copy: Path, ruleset: Ruleset | None) -> Edit:
    """The edit with its `value_of` computed from the copy as the edits so far left it,
    or from the rules the case runs against."""
    if edit.value_of is None:
        return edit
    measure, relative = edit.value_of
    if measure == "ruleset_hash":
        if ruleset is None:
            raise _edit_error(edit, "`ruleset_hash` reads the rules a case runs against")
        return dataclasses.replace(edit, value=ruleset.hashed.ruleset_hash)
    if measure == "record_sha256":
        return dataclasses.replace(edit, value=_record_sha256(edit, copy, relative))
    # read as the rules' `file_sha256` and `file_size` read it: inside the bundle, a
    # regular file, within the input limits
    data = Facts(root=copy).file_bytes(relative)
    if data is None:
        raise _edit_error(edit, f"`value_of` names no readable file `{relative}` of the bundle")
    value = hashlib.sha256(data).hexdigest() if measure == "file_sha256" else len(data)
    return dataclasses.replace(edit, value=value)


def _write_lock(edit: Edit, target: Path, ruleset: Ruleset | None) -> None:
    """The whole file replaced by the lock `rulecheck freeze` writes of the rules the case
    runs against, as whoever changed those rules would lock them."""
    if ruleset is None:
        raise _edit_error(edit, "`rules_lock` reads the rules a case runs against")
    if edit.pointer != "":
        raise _edit_error(edit, '`rules_lock` replaces a whole file: `pointer: ""`')
    target.write_bytes(dump_lock(ruleset.hashed).encode("utf-8"))


def _record_sha256(edit: Edit, copy: Path, named: str) -> str:
    """The sha256 of one JSON Lines record's line (`FILE#/N`), as `record_sha256` of the
    rules computes it: the line's bytes as read, without its line ending."""
    relative, _, pointer = named.partition("#")
    target = paths.inside(copy, relative, strict_segments=True)
    index = pointer.removeprefix("/")
    if target is None or not target.is_file() or target.suffix.lower() != ".jsonl":
        raise _edit_error(
            edit, f"`record_sha256` names no JSON Lines file `{relative}` of the bundle"
        )
    if not pointer.startswith("/") or not index.isdigit():
        raise _edit_error(edit, f"`record_sha256` names a record as `FILE#/N`, not `{named}`")
    try:
        lines = load_document("edited", target, "jsonl").record_lines
    except RulecheckError:
        raise _edit_error(edit, f"`{relative}` cannot be read as JSON Lines") from None
    if int(index) >= len(lines):
        raise _edit_error(edit, f"`{named}` finds no record of the file")
    return hashlib.sha256(lines[int(index)][1].rstrip(b"\r")).hexdigest()


def _edit_error(edit: Edit, message: str) -> RulecheckError:
    return RulecheckError([Diagnostic("CASES_EDIT", message, edit.where)], ExitCode.USAGE)


def _apply(edit: Edit, path: Path) -> None:
    """Set or remove the value at the edit's pointer of a JSON, JSON Lines or YAML file,
    and write the file back in its format; or replace the one occurrence of a text."""
    if edit.text is not None:
        _replace_text(edit, path)
        return
    file_format = FORMATS.get(path.suffix.lower())
    if file_format is None:
        raise _edit_error(edit, f"`{edit.file}` is no .json, .jsonl, .yaml or .yml file")
    try:
        document = load_document("edited", path, file_format)
    except RulecheckError as error:
        first = error.diagnostics[0].message if error.diagnostics else "unreadable"
        raise _edit_error(edit, f"`{edit.file}` cannot be read: {first}") from None
    value = document.value
    before = _lines_by_record(value, document.record_lines)
    if edit.pointer == "":
        if edit.remove:
            raise _edit_error(edit, "the whole document cannot be removed")
        value = edit.value
    else:
        _set(edit, value)
    if file_format == "jsonl":
        if not isinstance(value, list):
            raise _edit_error(edit, "a JSON Lines document stays a list of records")
        path.write_bytes(b"".join(_record_line(record, before) + b"\n" for record in value))
    else:
        path.write_bytes(document_bytes(value, file_format))


def _replace_text(edit: Edit, path: Path) -> None:
    """Replace the edit's one occurrence of OLD by NEW in a UTF-8 text file: one byte of
    a source changes and no other does."""
    assert edit.text is not None
    old, new = edit.text
    try:
        content = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise _edit_error(edit, f"`{edit.file}` is no UTF-8 text file") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise _edit_error(edit, f"`{edit.file}` cannot be read: {reason}") from None
    found = content.count(old)
    if found != 1:
        where = "nowhere" if found == 0 else f"{found} times"
        raise _edit_error(edit, f"`text:` is found {where} in `{edit.file}`; it must be once")
    path.write_bytes(content.replace(old, new).encode("utf-8"))


def _lines_by_record(
    records: Any, lines: Sequence[tuple[int, bytes]]
) -> dict[int, tuple[Any, bytes]]:
    """Each record of a JSON Lines file (by identity) with a copy of its value and its
    line's bytes as the loader read them, so that the records an edit leaves alone keep
    their exact bytes (a hash of one record, a seal of the file, then still hold)."""
    if not isinstance(records, list) or len(lines) != len(records):
        return {}
    return {
        id(record): (copying.deepcopy(record), line)
        for record, (_, line) in zip(records, lines, strict=True)
    }


def _record_line(record: Any, before: dict[int, tuple[Any, bytes]]) -> bytes:
    kept = before.get(id(record))
    if kept is not None and kept[0] == record:
        return kept[1]
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _set(edit: Edit, document: Any) -> None:
    if not edit.pointer.startswith("/"):
        raise _edit_error(edit, f"`{edit.pointer}` is no JSON pointer (it starts with `/`)")
    tokens = pointer_tokens(edit.pointer)
    parent = document
    for token in tokens[:-1]:
        parent = _step(edit, parent, token)
    last = tokens[-1]
    if isinstance(parent, dict):
        if edit.remove:
            if last not in parent:
                raise _edit_error(edit, f"`{edit.pointer}` finds nothing to remove")
            del parent[last]
        else:
            parent[last] = edit.value
    elif isinstance(parent, list):
        if last == "-" and not edit.remove:
            parent.append(edit.value)
            return
        if not last.isdigit() or int(last) >= len(parent):
            raise _edit_error(edit, f"`{edit.pointer}` finds no element of the list")
        if edit.remove:
            del parent[int(last)]
        else:
            parent[int(last)] = edit.value
    else:
        raise _edit_error(edit, f"`{edit.pointer}` leads into a value that is no object or list")


def _step(edit: Edit, value: Any, token: str) -> Any:
    if isinstance(value, dict) and token in value:
        return value[token]
    if isinstance(value, list) and token.isdigit() and int(token) < len(value):
        return value[int(token)]
    raise _edit_error(edit, f"`{edit.pointer}` finds nothing at `{token}`")


def run_case(program: Program, case: Case, prepared: Prepared) -> Observed:
    """The case run as `rulecheck check` or `rulecheck evaluate` runs: every refusal is
    observed as its diagnostics (with the copy's paths shown as the originals')."""
    graph = case.graph
    try:
        if prepared.bundle is not None:
            protocol = bundle_protocol(program, prepared.bundle, case.protocol)
            graph = protocol.graph[0].text
            if case.refreeze:  # measured inputs re-hashed after the edits, as a freezer would
                frozen = protocol_freeze(program, prepared.bundle, protocol)
                frozen.target.write_bytes(frozen.data)
            if case.reseal:  # sealed after the edits, as whoever made them could
                sealed = protocol_seal(program, prepared.bundle, protocol, replace=True)
                sealed.target.write_bytes(sealed.data)
            found = evaluate_protocol(program, prepared.bundle, protocol)
            verdict = found.verdict
            return _observed(
                program,
                found.graph,
                protocol_passed(found, case.strict),
                found.admitted,
                verdict.verdict if verdict is not None else None,
            )
        assert case.graph is not None
        check_inputs(program, case.graph, [name for name, _ in prepared.inputs])
        result = evaluate_documents(program, case.graph, load_documents(prepared.inputs))
        return _observed(program, result, graph_passed(result, case.strict), None, None)
    except RulecheckError as error:
        shown = tuple(_shown(d, prepared) for d in error.diagnostics)
        return Observed(diagnostics=shown, graph=graph)


def _shown(diagnostic: Diagnostic, prepared: Prepared) -> Diagnostic:
    where = diagnostic.location
    if where is None:
        return diagnostic
    file = prepared.show(where.file)
    return Diagnostic(
        diagnostic.code,
        diagnostic.message,
        Location(file, where.line, where.column, where.end_line, where.end_column, where.pointer),
        diagnostic.severity,
        diagnostic.hint,
        diagnostic.rule,
        diagnostic.rule_hash,
        diagnostic.ids,
    )


def _observed(
    program: Program,
    result: GraphResult,
    passed: bool,
    admitted: bool | None,
    verdict: str | None,
) -> Observed:
    evaluation = result.evaluation
    vacuous = {w.rule for w in evaluation.vacuous}
    rules: dict[str, RuleSeen] = {}
    for link in program.links_of(result.graph):
        found = tuple(
            sorted((v.code, tuple(v.ids)) for v in evaluation.violations if v.rule == link.name)
        )
        outcome = "fail" if found else "vacuous" if link.name in vacuous else "pass"
        rules[link.name] = RuleSeen("link", outcome, violations=found)
    for rule in (*evaluation.budgets, *evaluation.gates):
        failing = tuple(sorted(tuple(o.ids) for o in rule.observations if not o.passed))
        outcome = "fail" if not rule.passed else "vacuous" if rule.vacuous else "pass"
        rules[rule.name] = RuleSeen(rule.kind, outcome, failing=failing)
    decisions: dict[str, tuple[str | None, int | None]] = {
        d.name: (d.verdict, d.row) for d in evaluation.decisions
    }
    decisions.update({d.rule: (None, None) for d in evaluation.undecided if d.rule})
    tables = {
        t.name: [
            {column: exact(value) for column, value in zip(t.columns, values, strict=True)}
            for _ids, values in t.rows
        ]
        for t in evaluation.tables
    }
    return Observed(passed, admitted, verdict, rules, decisions, graph=result.graph, tables=tables)


def compare(case: Case, observed: Observed) -> list[Difference]:
    """Every expectation of the case that the observed run does not meet."""
    expect = case.expect
    differences: list[Difference] = []
    if observed.refused:
        refused = [diagnostic_data(d) for d in observed.diagnostics]
        if "diagnostics" in expect:
            wanted = expect["diagnostics"]
            if not _diagnostics_match(wanted, observed.diagnostics):
                shown = [{k: d.get(k) for k in _keys(wanted, i)} for i, d in enumerate(refused)]
                differences.append(Difference("diagnostics", wanted, shown))
        for key in sorted(set(expect) - {"diagnostics"}):
            differences.append(Difference(key, expect[key], {"refused": refused}))
        return differences
    if "diagnostics" in expect:
        differences.append(Difference("diagnostics", expect["diagnostics"], []))
    for key in ("passed", "admitted", "verdict"):
        if key in expect and expect[key] != getattr(observed, key):
            differences.append(Difference(key, expect[key], getattr(observed, key)))
    if "violated" in expect:
        violated = sorted(n for n, seen in observed.rules.items() if seen.violations)
        if sorted(expect["violated"]) != violated:
            differences.append(Difference("violated", sorted(expect["violated"]), violated))
    for name, wanted in sorted(expect.get("rules", {}).items()):
        seen = observed.rules.get(name)
        key = f"rules.{name}"
        if seen is None:
            differences.append(Difference(key, wanted, "not evaluated on this graph"))
            continue
        expected, got = _rule_views(wanted, seen)
        if expected != got:
            differences.append(Difference(key, expected, got))
    for name, wanted in sorted(expect.get("decisions", {}).items()):
        key = f"decisions.{name}"
        if name not in observed.decisions:
            differences.append(Difference(key, wanted, "not evaluated on this graph"))
            continue
        verdict, row = observed.decisions[name]
        if wanted is None or isinstance(wanted, str):
            if wanted != verdict:
                differences.append(Difference(key, wanted, verdict))
        else:
            got = {"verdict": verdict, "row": row}
            if wanted["verdict"] != verdict or wanted.get("row", row) != row:
                differences.append(Difference(key, wanted, got))
    for name, wanted in sorted(expect.get("tables", {}).items()):
        differences += _table_differences(name, wanted, observed.tables.get(name))
    return differences


def _table_differences(
    name: str, wanted: Any, rows: list[dict[str, Any]] | None
) -> list[Difference]:
    """Each expected row that no row of the table matches on every column it names, and
    the number of rows when `count` is given (values
    in the exact JSON form of reports: `2/3` as text, `{unavailable: [FIELD]}`); shown
    against the rows that agree on its text columns (the row's keys; an exact fraction is
    a number), else every row."""
    key = f"tables.{name}"
    if rows is None:
        return [Difference(key, wanted, "not evaluated on this graph")]
    differences = []
    if isinstance(wanted, dict):  # {rows: [...], count: N}: also exactly N rows
        if "count" in wanted and wanted["count"] != len(rows):
            differences.append(Difference(f"{key}.count", wanted["count"], len(rows)))
        wanted = wanted["rows"]
    for number, expected in enumerate(wanted):
        if any(_row_matches(row, expected) for row in rows):
            continue
        keys = {c: v for c, v in expected.items() if isinstance(v, str) and not _EXACT.match(v)}
        near = [row for row in rows if _row_matches(row, keys)] or rows
        shown = [{c: row.get(c, "(no such column)") for c in expected} for row in near]
        differences.append(Difference(f"{key}[{number}]", expected, shown))
    return differences


_EXACT = re.compile(r"-?[0-9]+(/[0-9]+)?\Z")


def _row_matches(row: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(column in row and row[column] == value for column, value in expected.items())


def _rule_views(wanted: Any, seen: RuleSeen) -> tuple[Any, Any]:
    """The expectation and the observation in the same shape, for comparing and showing."""
    if isinstance(wanted, str):
        return wanted, seen.outcome
    expected: dict[str, Any] = {}
    got: dict[str, Any] = {}
    if "outcome" in wanted:
        expected["outcome"], got["outcome"] = wanted["outcome"], seen.outcome
    if "violations" in wanted:
        expected["violations"] = sorted(
            ({"code": v["code"], "ids": list(v.get("ids", []))} for v in wanted["violations"]),
            key=lambda v: (v["code"], v["ids"]),
        )
        got["violations"] = [{"code": c, "ids": list(ids)} for c, ids in seen.violations]
    if "failing" in wanted:
        expected["failing"] = sorted(list(ids) for ids in wanted["failing"])
        got["failing"] = [list(ids) for ids in seen.failing]
    return expected, got


_DIAGNOSTIC_KEYS = ("code", "message", "file", "line", "pointer", "rule")


def diagnostic_data(diagnostic: Diagnostic) -> dict[str, Any]:
    """A diagnostic as a case compares it: code, message, file, line, pointer and rule."""
    where = diagnostic.location
    return {
        "code": diagnostic.code,
        "message": diagnostic.message,
        "file": where.file if where else None,
        "line": where.line if where else None,
        "pointer": where.pointer if where else None,
        "rule": diagnostic.rule,
    }


def _keys(wanted: list[dict[str, Any]], index: int) -> list[str]:
    named = wanted[index] if index < len(wanted) else {"code": None}
    return [k for k in _DIAGNOSTIC_KEYS if k in named]


def _diagnostics_match(wanted: list[dict[str, Any]], found: tuple[Diagnostic, ...]) -> bool:
    """The same number of diagnostics, each with what its expectation names (a file by
    the end of its path)."""
    if len(wanted) != len(found):
        return False
    for expected, diagnostic in zip(wanted, found, strict=True):
        data = diagnostic_data(diagnostic)
        for key, value in expected.items():
            if key == "file":
                shown = data["file"] or ""
                if not (shown == value or shown.endswith("/" + value)):
                    return False
            elif data[key] != value:
                return False
    return True
