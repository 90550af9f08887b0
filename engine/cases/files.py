"""Rule test cases: the `*.cases.yaml` files `rulecheck test` runs (docs/testing.md).

A case file names the rules it tests (`rules:`, relative to the file; the rule files of its
own folder when absent) and its cases. Each case is one run of the public path of
`rulecheck check` (`check: BUNDLE`) or `rulecheck evaluate` (`evaluate: GRAPH` with
`inputs:`), optionally over an edited copy of its files (`edits:`), and the outcomes it
expects. Every problem of a case file is located (file, line:column, pointer) and is a
usage error (exit 2): a case that cannot be read never passes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.jsonschemas import compiled_schema
from engine.bundle.yamldoc import read_yaml, yaml_positions
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError, unreadable
from engine.limits import os_error, shown_path

CASES_SUFFIX = ".cases.yaml"
SCHEMA = "rule_cases"


@dataclass(frozen=True, slots=True)
class Edit:
    """One change to a copy of a case's files: set `value` at `pointer`, or remove it. With
    `value_of` (`("file_sha256" | "file_size" | "record_sha256", PATH)`) the value is that
    of the copy's file PATH (`FILE#/N`: record N of a JSON Lines file) as the edits before
    this one left it. With `text` (`(OLD, NEW)`) the file is
    any text file and its one occurrence of OLD is replaced by NEW, every other byte kept."""

    file: str
    pointer: str
    value: Any
    remove: bool
    where: Location
    value_of: tuple[str, str] | None = None
    text: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class RuleEdit:
    """One change to the rules a case runs against, in memory: the one occurrence of
    `text` in the rule file `file` (a path the case file writes, among its rules) replaced
    by `replace`. The rule files themselves are never written."""

    file: Path
    text: str
    replace: str
    where: Location


@dataclass(frozen=True, slots=True)
class Case:
    """One case: what it runs, over which files, and what it expects."""

    file: str
    name: str
    where: Location
    pointer: str
    folder: Path
    bundle: Path | None
    protocol: str | None
    graph: str | None
    inputs: tuple[tuple[str, Path], ...]
    edits: tuple[Edit, ...]
    strict: bool
    refreeze: bool
    reseal: bool
    expect: dict[str, Any]
    positions: dict[str, tuple[int, int]]
    rule_edits: tuple[RuleEdit, ...] = ()

    @property
    def kind(self) -> str:
        """`check` (a bundle against a protocol) or `evaluate` (a graph over inputs)."""
        return "check" if self.bundle is not None else "evaluate"

    def at(self, pointer: str) -> Location:
        """Where `pointer` (relative to the case) is written in the case file."""
        return written_at(self.file, self.positions, self.pointer + pointer)


@dataclass(frozen=True, slots=True)
class CaseFile:
    """A case file: the rule paths its cases run against, and its cases."""

    path: Path
    rules: tuple[Path, ...]
    cases: tuple[Case, ...]


def case_paths(paths: Sequence[Path]) -> list[Path]:
    """The case files PATHs name: a file as given, a folder's `*.cases.yaml` files at any
    depth (hidden folders skipped), sorted.

    Raises:
        RulecheckError: exit 2 for a path that does not exist or names no case file.
    """
    found: list[Path] = []
    for path in paths:
        try:
            is_dir = path.is_dir()
            exists = is_dir or path.exists()
        except OSError as error:
            raise os_error(path, error) from None
        if not exists:
            raise unreadable(shown_path(path), "no such file or folder")
        if not is_dir:
            found.append(path)
            continue
        inside = sorted(
            p
            for p in path.rglob(f"*{CASES_SUFFIX}")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
        )
        if not inside:
            raise unreadable(shown_path(path), f"no `*{CASES_SUFFIX}` files in this folder")
        found += inside
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def written_at(file: str, positions: dict[str, tuple[int, int]], pointer: str) -> Location:
    """`pointer` located at the line and column of its nearest ancestor written in `file`
    (a value the schema finds missing is located at the object that lacks it)."""
    probe = pointer
    while probe and probe not in positions:
        probe = probe.rsplit("/", 1)[0]
    line, column = positions.get(probe, (None, None))
    return Location(file, line, column, pointer=pointer)


def read_validated_yaml(
    path: Path, prefix: str, schema: str
) -> tuple[Any, dict[str, tuple[int, int]]]:
    """A YAML file the user writes for a command (a case file, a control table), strictly
    parsed and validated against the shipped `schema`, with the position of every value.

    Raises:
        RulecheckError: exit 2 with every located problem (`PREFIX_...` codes).
    """
    try:
        data, root = read_yaml(path, prefix)
    except RulecheckError as error:
        raise RulecheckError(error.diagnostics, ExitCode.USAGE) from None
    positions = yaml_positions(root)
    errors = compiled_schema(schema)(data)
    if errors:
        problems = [
            Diagnostic(f"{prefix}_SCHEMA", message, written_at(str(path), positions, pointer))
            for pointer, _keyword, message in errors
        ]
        raise RulecheckError(problems, ExitCode.USAGE)
    return data, positions


def read_case_files(paths: Iterable[Path]) -> list[CaseFile]:
    """Read and validate every case file; every problem of every file is reported at once.

    Raises:
        RulecheckError: exit 2 with every located problem.
    """
    files: list[CaseFile] = []
    problems: list[Diagnostic] = []
    for path in paths:
        try:
            files.append(read_case_file(path))
        except RulecheckError as error:
            problems += error.diagnostics
    if problems:
        raise RulecheckError(problems, ExitCode.USAGE)
    return files


def read_case_file(path: Path) -> CaseFile:
    """One case file, validated against `manifests/schemas/rule_cases.schema.json` and the
    rules of the format the schema cannot say.

    Raises:
        RulecheckError: exit 2 with every located problem.
    """
    file = str(path)
    data, positions = read_validated_yaml(path, "CASES", SCHEMA)

    def at(pointer: str) -> Location:
        return written_at(file, positions, pointer)

    folder = path.parent
    rules = tuple(_joined(folder, p) for p in data.get("rules", [])) or (folder,)
    cases: list[Case] = []
    problems = []
    names: set[str] = set()
    for index, spec in enumerate(data["cases"]):
        pointer = f"/cases/{index}"
        problems += _shape_problems(spec, pointer, at)
        if spec["name"] in names:
            message = f"two cases are named `{spec['name']}`"
            problems.append(Diagnostic("CASES_SCHEMA", message, at(f"{pointer}/name")))
        names.add(spec["name"])
        cases.append(_case(spec, pointer, file, folder, positions, at))
    if problems:
        raise RulecheckError(problems, ExitCode.USAGE)
    return CaseFile(path, rules, tuple(cases))


def _shape_problems(spec: dict[str, Any], pointer: str, at: Any) -> list[Diagnostic]:
    """What the schema cannot say: a case is a check or an evaluation, and each key fits."""
    problems = []

    def problem(key: str, message: str) -> None:
        problems.append(Diagnostic("CASES_SCHEMA", message, at(f"{pointer}/{key}")))

    if ("check" in spec) == ("evaluate" in spec):
        problem("name", "a case gives exactly one of `check: BUNDLE` and `evaluate: GRAPH`")
    if "evaluate" in spec and "inputs" not in spec:
        problem("evaluate", "`evaluate: GRAPH` needs `inputs:` (each document NAME: FILE)")
    for key in ("inputs",):
        if key in spec and "evaluate" not in spec:
            problem(key, f"`{key}` belongs to an `evaluate:` case")
    for key in ("protocol", "refreeze", "reseal"):
        if key in spec and "check" not in spec:
            problem(key, f"`{key}` belongs to a `check:` case")
    for key in ("admitted", "verdict"):
        if key in spec["expect"] and "check" not in spec:
            problem(f"expect/{key}", f"`{key}` is expected of a `check:` case (a protocol's)")
    for number, edit in enumerate(spec.get("edits", [])):
        changes = ("value" in edit, bool(edit.get("remove")), "value_of" in edit, "text" in edit)
        if sum(changes) != 1:
            message = (
                "an edit gives exactly one of `value:`, `value_of:`, `remove: true` and "
                "`text:` with `replace:`"
            )
            problem(f"edits/{number}", message)
        if ("text" in edit) != ("replace" in edit):
            problem(f"edits/{number}", "`text: OLD` and `replace: NEW` go together")
        if ("pointer" in edit) == ("text" in edit):
            message = "an edit names a `pointer:` into a document, or a `text:` of a text file"
            problem(f"edits/{number}", message)
        if "value_of" in edit and "check" not in spec:
            problem(
                f"edits/{number}/value_of", "`value_of` reads a file of a `check:` case's bundle"
            )
        if "evaluate" in spec and edit["file"] not in spec.get("inputs", {}):
            problem(f"edits/{number}/file", "an edit of an `evaluate:` case names an input")
    return problems


def _case(
    spec: dict[str, Any],
    pointer: str,
    file: str,
    folder: Path,
    positions: dict[str, tuple[int, int]],
    at: Any,
) -> Case:
    edits = tuple(
        Edit(
            e["file"],
            e.get("pointer", ""),
            e.get("value"),
            bool(e.get("remove")),
            at(f"{pointer}/edits/{n}"),
            next(iter(e["value_of"].items())) if "value_of" in e else None,
            (e["text"], e["replace"]) if "text" in e and "replace" in e else None,
        )
        for n, e in enumerate(spec.get("edits", []))
    )
    rule_edits = tuple(
        RuleEdit(
            _joined(folder, e["file"]), e["text"], e["replace"], at(f"{pointer}/rule_edits/{n}")
        )
        for n, e in enumerate(spec.get("rule_edits", []))
    )
    return Case(
        file=file,
        name=spec["name"],
        where=at(pointer),
        pointer=pointer,
        folder=folder,
        bundle=_joined(folder, spec["check"]) if "check" in spec else None,
        protocol=spec.get("protocol"),
        graph=spec.get("evaluate"),
        inputs=tuple((name, _joined(folder, p)) for name, p in spec.get("inputs", {}).items()),
        edits=edits,
        strict=bool(spec.get("strict", False)),
        refreeze=bool(spec.get("refreeze", False)),
        reseal=bool(spec.get("reseal", False)),
        expect=spec["expect"],
        positions=positions,
        rule_edits=rule_edits,
    )


def _joined(folder: Path, relative: str) -> Path:
    """A path the case file writes, relative to its folder, as reports show it
    (`rules/tests/../x.rules` is `rules/x.rules`)."""
    return Path(os.path.normpath(folder / relative))
